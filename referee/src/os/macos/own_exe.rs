//! The referee's own executable on macOS: its path, read at the start (no
//! sandbox binds it, so nothing is pinned).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

static STARTED: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Reads the executable's path now, before anything can have replaced it.
pub fn remember() {
    STARTED.get_or_init(read);
}

fn read() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// The path the referee was started from (canonical).
pub fn path() -> std::io::Result<PathBuf> {
    let started = match STARTED.get() {
        Some(started) => started.clone(),
        None => read(),
    };
    started.ok_or_else(|| std::io::Error::other("the referee's own executable has no path"))
}

/// The command that runs `program`.
pub fn command(program: &Path) -> Command {
    Command::new(program)
}

/// No sandbox binds it: nothing to pin.
pub fn pinned() -> Option<PathBuf> {
    None
}

pub fn forget() {}
