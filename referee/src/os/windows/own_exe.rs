//! The referee's own executable on Windows: its path, read at the start.
//! A running executable cannot be deleted or replaced on Windows (its
//! file is open without share-delete), so the path keeps naming it for the
//! whole run and nothing needs pinning.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use std::process::Command;

static STARTED: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Reads the executable's path now.
pub fn remember() {
    STARTED.get_or_init(read);
}

fn read() -> Option<PathBuf> {
    std::env::current_exe().ok()
}

/// The path the referee was started from.
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
