//! A bot's pipes on Unix: read ends made non-blocking and registered with
//! the runtime's poller only while a read waits, so that a pause is a pause.
//!
//! tokio keeps a child's stdout registered with its poller for good, and
//! epoll, edge-triggered as tokio uses it, reports every single write to a
//! registered pipe: a bot writing one byte at a time woke the referee once
//! per byte even while the reader slept. [`Pipe`] (a bot's stdout) and
//! [`ReadEnd`] (its stderr, `crate::bot`'s `stderr.rs`) register their
//! descriptor only while a read waits.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// A non-blocking pipe's read end, registered with the runtime only while a
/// read waits.
pub struct Pipe {
    registered: Option<AsyncFd<File>>,
    idle: Option<File>,
}

impl Pipe {
    /// Reads `fd`, which it makes non-blocking (tokio hands a child's pipe
    /// over blocking).
    pub fn new(fd: OwnedFd) -> std::io::Result<Pipe> {
        set_nonblocking(&fd)?;
        Ok(Pipe {
            registered: None,
            idle: Some(File::from(fd)),
        })
    }

    /// Leaves the poller until the next read: nothing that arrives
    /// meanwhile wakes the referee.
    pub fn unregister(&mut self) {
        if let Some(fd) = self.registered.take() {
            self.idle = Some(fd.into_inner());
        }
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
fn read_into(file: &File, buf: &mut ReadBuf<'_>) -> std::io::Result<()> {
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
    let flags = OFlag::from_bits_truncate(fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL)?);
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// A non-blocking pipe's read end whose bytes are taken by the caller's
/// own reads: registered with the poller only while [`ReadEnd::take`]
/// waits.
pub struct ReadEnd(Option<File>);

impl ReadEnd {
    pub fn new(fd: OwnedFd) -> ReadEnd {
        ReadEnd(Some(File::from(fd)))
    }

    /// Waits until the pipe has bytes (or is closed), then calls `take` on
    /// it, which must not block (the pipe is non-blocking); again if it
    /// found nothing after all.
    pub async fn take<T>(
        &mut self,
        mut take: impl FnMut(&File) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let file = self.0.take().ok_or(std::io::ErrorKind::BrokenPipe)?;
        // SAFETY: the `File` owns its descriptor, which stays open and the same
        // for as long as the `AsyncFd` holds it.
        let pipe = unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) }?;
        let got = loop {
            let mut ready = match pipe.readable().await {
                Ok(ready) => ready,
                Err(e) => break Err(e),
            };
            match ready.try_io(|p| take(p.get_ref())) {
                Ok(got) => break got,
                Err(_would_block) => continue,
            }
        };
        // Deregistered until the next take.
        self.0 = Some(pipe.into_inner());
        got
    }
}

/// Where bytes go to be dropped: `/dev/null`.
pub fn null() -> Option<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .ok()
}

/// A pipe's write end for the runtime (a bot's stdin), non-blocking.
pub fn sender(fd: OwnedFd) -> std::io::Result<impl AsyncWrite + Send + Unpin + 'static> {
    set_nonblocking(&fd)?;
    tokio::net::unix::pipe::Sender::from_owned_fd(fd)
}

/// A child's stdout, as the descriptor it is.
pub fn child_stdout(out: tokio::process::ChildStdout) -> std::io::Result<OwnedFd> {
    out.into_owned_fd()
}

/// A child's stderr, as the descriptor it is.
pub fn child_stderr(err: tokio::process::ChildStderr) -> std::io::Result<OwnedFd> {
    err.into_owned_fd()
}
