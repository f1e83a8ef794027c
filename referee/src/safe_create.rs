//! Creating the referee's output files so that nobody can redirect them.
//!
//! A bot without `--sandbox` runs as the same user as the referee; had it planted
//! a symlink named like the next transcript (`game-0003.jsonl.partial` ->
//! `~/.bashrc`), a plain `File::create` would follow it and overwrite the target.
//! So a leftover entry is unlinked (never followed) and the file is created anew
//! with `O_CREAT | O_EXCL | O_NOFOLLOW`: if anything reappears at that name in
//! between, creation fails loudly instead of writing through it.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Creates `path` as a new, empty regular file, replacing a leftover file or
/// symlink of that name without following it.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_dir() => std::fs::remove_file(path)?,
        _ => {}
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_symlink_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let partial = dir.path().join("game-0003.jsonl.partial");
        std::os::unix::fs::symlink(&victim, &partial).unwrap();
        use std::io::Write;
        create_new(&partial)
            .unwrap()
            .write_all(b"transcript")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&partial).unwrap(), "transcript");
        assert!(!std::fs::symlink_metadata(&partial).unwrap().is_symlink());
    }
}
