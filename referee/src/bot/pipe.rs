//! A byte source the line reader can pause without being woken meanwhile.
//!
//! tokio keeps a child's stdout registered with its poller for good, and epoll,
//! edge-triggered as tokio uses it, reports every single write to a registered
//! pipe: a bot writing one byte at a time woke the referee once per byte even
//! while the reader slept. [`Pipe`] registers its descriptor only while a read
//! waits, so a pause is a pause (the same arrangement as stderr's drain in
//! `process.rs`).

use std::future::Future;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};

/// What the line reader reads from: any `AsyncRead`, with a pause that, where
/// it can, is not woken by what arrives during it.
pub trait Source: AsyncRead + Unpin + Send {
    fn pause(&mut self, d: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(d)
    }
}

impl Source for &[u8] {}
impl Source for tokio::io::DuplexStream {}

/// A non-blocking pipe's read end, registered with the runtime only while a
/// read waits.
pub struct Pipe {
    registered: Option<AsyncFd<std::fs::File>>,
    idle: Option<std::fs::File>,
}

impl Pipe {
    /// Reads `fd`, which it makes non-blocking (tokio hands a child's pipe
    /// over blocking).
    pub fn new(fd: OwnedFd) -> std::io::Result<Pipe> {
        set_nonblocking(&fd)?;
        Ok(Pipe {
            registered: None,
            idle: Some(std::fs::File::from(fd)),
        })
    }
}

impl Source for Pipe {
    async fn pause(&mut self, d: Duration) {
        if let Some(fd) = self.registered.take() {
            self.idle = Some(fd.into_inner());
        }
        tokio::time::sleep(d).await;
    }
}

impl AsyncRead for Pipe {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if let Some(file) = this.idle.take() {
            // SAFETY: the `File` owns its descriptor, which stays open and the
            // same for as long as the `AsyncFd` holds it.
            let fd = unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) };
            this.registered = Some(fd?);
        }
        let Some(fd) = this.registered.as_ref() else {
            return Poll::Ready(Ok(())); // unreachable: registered just above
        };
        loop {
            let mut guard = ready!(fd.poll_read_ready(cx))?;
            match guard.try_io(|f| read_into(f.get_ref(), buf)) {
                Ok(Ok(())) => return Poll::Ready(Ok(())),
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

/// One `read(2)` into `buf`'s unfilled part, which need not be initialised
/// first: zeroing a 64 KiB buffer before every read cost as much as the read.
fn read_into(file: &std::fs::File, buf: &mut ReadBuf<'_>) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the memory is only written, never read, by read(2), which writes
    // at most `len` bytes; the bytes it wrote are then initialised.
    unsafe {
        let unfilled = buf.unfilled_mut();
        let n = nix::libc::read(
            file.as_raw_fd(),
            unfilled.as_mut_ptr().cast(),
            unfilled.len(),
        );
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        buf.assume_init(n as usize);
        buf.advance(n as usize);
    }
    Ok(())
}

/// Makes `fd` non-blocking: a read woken by readiness must never wait.
pub fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    use std::os::fd::AsRawFd;
    let flags = OFlag::from_bits_truncate(fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL)?);
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}
