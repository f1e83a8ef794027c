//! A byte source the line reader can pause without being woken meanwhile.
//!
//! The pipe itself is the operating system's (`crate::os::pipe::Pipe`: on
//! Unix registered with the runtime's poller only while a read waits, so a
//! bot writing one byte at a time does not wake the referee once per byte
//! while the reader sleeps; the same arrangement as stderr's drain in
//! `stderr.rs`).

use std::future::Future;
use std::time::Duration;

use tokio::io::AsyncRead;

pub use crate::os::pipe::Pipe;

/// What the line reader reads from: any `AsyncRead`, with a pause that, where
/// it can, is not woken by what arrives during it.
pub trait Source: AsyncRead + Unpin + Send {
    fn pause(&mut self, d: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(d)
    }
}

impl Source for &[u8] {}
impl Source for tokio::io::DuplexStream {}

impl Source for Pipe {
    async fn pause(&mut self, d: Duration) {
        self.unregister();
        tokio::time::sleep(d).await;
    }
}
