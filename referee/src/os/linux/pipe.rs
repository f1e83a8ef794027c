//! A bot's pipes on Linux: Unix's (`unix/pipe.rs`), and what only Linux
//! has of them: a pipe grown (`F_SETPIPE_SZ`), bytes dropped by `splice`
//! without passing through the referee's memory.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};

pub use crate::os::unix::pipe::*;

/// Asks for a pipe of `bytes`; returns the capacity it has.
pub fn grow(pipe: &OwnedFd, bytes: usize) -> usize {
    use nix::fcntl::{fcntl, FcntlArg};
    let fd = pipe.as_raw_fd();
    let _ = fcntl(fd, FcntlArg::F_SETPIPE_SZ(bytes as i32));
    fcntl(fd, FcntlArg::F_GETPIPE_SZ).map_or(64 * 1024, |n| n.max(4096) as usize)
}

/// Moves up to `max` bytes of `pipe` (non-blocking) into `null`; how many.
pub fn discard(pipe: &File, null: &File, max: usize) -> std::io::Result<usize> {
    use nix::fcntl::{splice, SpliceFFlags};
    let flags = SpliceFFlags::SPLICE_F_NONBLOCK | SpliceFFlags::SPLICE_F_MOVE;
    Ok(splice(pipe, None, null, None, max, flags)?)
}
