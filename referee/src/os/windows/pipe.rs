//! A bot's pipes on Windows. An anonymous pipe cannot be waited on for
//! readiness: a bot's stdout ([`Pipe`]) is read by the runtime's blocking
//! threads (`tokio::fs::File`), at once when a line comes; its stderr
//! ([`ReadEnd`]) is looked at (`PeekNamedPipe`) every
//! [`LOOK`] and read only when it holds bytes, which keeps the drain's
//! bounded rate (`crate::bot`'s `stderr.rs`) without a thread per bot.

use std::fs::File;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use windows_sys::Win32::System::Pipes::PeekNamedPipe;

/// How often an idle stderr pipe is looked at.
pub const LOOK: Duration = Duration::from_millis(10);

/// A pipe's read end (a bot's stdout).
pub struct Pipe(tokio::fs::File);

impl Pipe {
    pub fn new(handle: OwnedHandle) -> std::io::Result<Pipe> {
        Ok(Pipe(tokio::fs::File::from_std(File::from(handle))))
    }

    /// Nothing to leave: no poller holds it.
    pub fn unregister(&mut self) {}
}

impl AsyncRead for Pipe {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

/// Nothing to do: a read waits only once bytes are there (`ReadEnd`).
pub fn set_nonblocking(_: &OwnedHandle) -> std::io::Result<()> {
    Ok(())
}

/// A pipe's read end whose bytes are taken by the caller's own reads, once
/// it holds some.
pub struct ReadEnd(File);

impl ReadEnd {
    pub fn new(handle: OwnedHandle) -> ReadEnd {
        ReadEnd(File::from(handle))
    }

    /// Waits until the pipe holds bytes (or is closed), then calls `take`
    /// on it: a read then returns what is there without waiting.
    pub async fn take<T>(
        &mut self,
        mut take: impl FnMut(&File) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        loop {
            let mut available = 0u32;
            // SAFETY: a pipe handle we own; only the count is asked for.
            let ok = unsafe {
                PeekNamedPipe(
                    self.0.as_raw_handle() as _,
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                    &mut available,
                    std::ptr::null_mut(),
                )
            };
            // Closed (the read then says so) or holding bytes.
            if ok == 0 || available > 0 {
                return take(&self.0);
            }
            tokio::time::sleep(LOOK).await;
        }
    }
}

/// The capacity of a pipe std makes for a child.
pub fn grow(_: &OwnedHandle, _: usize) -> usize {
    4096
}

/// Reads up to `max` bytes of `pipe` (which holds some) and drops them.
pub fn discard(pipe: &File, _null: &File, max: usize) -> std::io::Result<usize> {
    use std::io::Read;
    let mut buf = vec![0u8; max.min(64 << 10)];
    (&*pipe).read(&mut buf)
}

/// Where bytes go to be dropped: `NUL`.
pub fn null() -> Option<File> {
    std::fs::OpenOptions::new().write(true).open("NUL").ok()
}

/// A pipe's write end for the runtime.
pub fn sender(handle: OwnedHandle) -> std::io::Result<impl AsyncWrite + Send + Unpin + 'static> {
    Ok(tokio::fs::File::from_std(File::from(handle)))
}

/// A child's stdout, as the handle it is.
pub fn child_stdout(out: tokio::process::ChildStdout) -> std::io::Result<OwnedHandle> {
    out.into_owned_handle()
}

/// A child's stderr, as the handle it is.
pub fn child_stderr(err: tokio::process::ChildStderr) -> std::io::Result<OwnedHandle> {
    err.into_owned_handle()
}
