//! A bot's pipes on macOS: Unix's (`unix/pipe.rs`). A macOS pipe grows by
//! itself up to 64 KiB and cannot be asked for more; bytes past a stderr
//! cap are read and dropped (no `splice`).

use std::fs::File;
use std::os::fd::OwnedFd;

pub use crate::os::unix::pipe::*;

/// The capacity a pipe grows to.
pub fn grow(_: &OwnedFd, _: usize) -> usize {
    64 * 1024
}

/// Reads up to `max` bytes of `pipe` (non-blocking) and drops them.
pub fn discard(pipe: &File, _null: &File, max: usize) -> std::io::Result<usize> {
    use std::io::Read;
    let mut buf = vec![0u8; max.min(64 << 10)];
    (&*pipe).read(&mut buf)
}
