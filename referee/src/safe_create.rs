//! Writing the referee's output files: never through a planted symlink, never
//! half-visible, and durable before anything counts on them.
//!
//! A bot without `--sandbox` runs as the same user as the referee; had it planted
//! a symlink named like the next transcript (`game-0003.jsonl.partial` ->
//! `~/.bashrc`), a plain `File::create` would follow it and overwrite the target.
//! So a leftover entry is unlinked (never followed) and the file is created anew
//! with `O_CREAT | O_EXCL | O_NOFOLLOW`: if anything reappears at that name in
//! between, creation fails loudly instead of writing through it.
//!
//! [`AtomicFile`] is the one writer of whole files (transcripts, timings,
//! standings, the manifest, the sorted journal): it writes `NAME.partial`, and
//! [`AtomicFile::commit`] fsyncs it, renames it to `NAME` and fsyncs the folder,
//! so after a crash or power loss a file with its final name is whole and on
//! disk. The tournament appends a game's journal line only after its transcript's
//! commit returned. A write that fails (a full disk) is a [`WriteError`] naming
//! the file and the OS's reason, and the `.partial` is removed: it could never
//! become whole, and on a full disk its blocks are better given back.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::os::files;

/// Creates `path` as a new, empty regular file, replacing a leftover file or
/// symlink of that name without following it.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    create_new_with_mode(path, 0o666)
}

/// [`create_new`] with permission bits `mode` (less the umask): 0o600 for a
/// file only its owner may read.
fn create_new_with_mode(path: &Path, mode: u32) -> std::io::Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_dir() => std::fs::remove_file(path)?,
        _ => {}
    }
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    files::no_follow(files::with_mode(&mut options, mode)).open(path)
}

/// An output file that could not be written: which file, what was being done,
/// and the OS's reason (e.g. "No space left on device (os error 28)").
#[derive(Debug, thiserror::Error)]
#[error("failed to {action} {}: {error}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    pub action: &'static str,
    /// Not a `source`: the message already ends with it.
    pub error: std::io::Error,
}

/// A file written under `NAME.partial`, given its final name by [`commit`].
/// Dropped without a commit (an interrupted game), the `.partial` stays.
///
/// [`commit`]: AtomicFile::commit
pub struct AtomicFile {
    path: PathBuf,
    partial: PathBuf,
    /// `None` once a write failed and the `.partial` was removed.
    out: Option<BufWriter<File>>,
    /// Test-only fault injection: writes past this many bytes fail with ENOSPC.
    #[cfg(test)]
    room: Option<usize>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> Result<AtomicFile, WriteError> {
        AtomicFile::create_with_mode(path, 0o666)
    }

    /// An atomic file only its owner may read or write (mode 0600): a secret.
    pub fn create_private(path: &Path) -> Result<AtomicFile, WriteError> {
        AtomicFile::create_with_mode(path, 0o600)
    }

    /// [`AtomicFile::create`] with permission bits `mode` (less the umask),
    /// set as the `.partial` is created, so the file is never more readable.
    pub fn create_with_mode(path: &Path, mode: u32) -> Result<AtomicFile, WriteError> {
        let partial = crate::layout::partial(path);
        let file = create_new_with_mode(&partial, mode).map_err(|source| WriteError {
            path: partial.clone(),
            action: "create",
            error: source,
        })?;
        Ok(AtomicFile {
            path: path.to_owned(),
            partial,
            out: Some(BufWriter::new(file)),
            #[cfg(test)]
            room: faults::room_for(path),
        })
    }

    /// Appends `bytes`; on failure the `.partial` is removed.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        #[cfg(test)]
        if let Some(room) = self.room.as_mut() {
            if *room < bytes.len() {
                let source = files::disk_full();
                return Err(self.fail("write", source));
            }
            *room -= bytes.len();
        }
        let result = match self.out.as_mut() {
            Some(out) => out.write_all(bytes),
            None => Err(gone()),
        };
        result.map_err(|source| self.fail("write", source))
    }

    /// Flushes and fsyncs the file, renames it to its final name and fsyncs the
    /// folder, so that the name and the contents are both on disk on return.
    pub fn commit(mut self) -> Result<PathBuf, WriteError> {
        let synced = match self.out.as_mut() {
            Some(out) => out.flush().and_then(|()| out.get_ref().sync_all()),
            None => Err(gone()),
        };
        if let Err(source) = synced {
            return Err(self.fail("write", source));
        }
        if let Err(source) = std::fs::rename(&self.partial, &self.path) {
            return Err(self.fail("rename into place", source));
        }
        #[cfg(test)]
        faults::note(faults::Step::Committed, &self.path);
        sync_dir(&self.path)?;
        #[cfg(test)]
        faults::note(faults::Step::Durable, &self.path);
        Ok(self.path)
    }

    /// Removes the `.partial` without giving it its final name.
    pub fn discard(mut self) {
        self.out = None;
        let _ = std::fs::remove_file(&self.partial);
    }

    /// The error for `action`, after removing the `.partial`: it can never be
    /// whole now. What is still buffered is dropped with it.
    fn fail(&mut self, action: &'static str, source: std::io::Error) -> WriteError {
        if let Some(out) = self.out.take() {
            // Unlinked first, so the buffer dropped with it goes nowhere.
            let _ = std::fs::remove_file(&self.partial);
            drop(out.into_parts());
        }
        WriteError {
            // The game's own name: the `.partial` is gone, and an implementation
            // detail besides.
            path: self.path.clone(),
            action,
            error: source,
        }
    }
}

/// The reason given for a write after one failed.
fn gone() -> std::io::Error {
    std::io::Error::other("an earlier write to it failed, and it was removed")
}

/// Fsyncs the folder holding `path`, which makes a rename into it (or a new
/// file's name) durable.
pub fn sync_dir(path: &Path) -> Result<(), WriteError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    files::sync_dir(dir).map_err(|source| WriteError {
        path: dir.to_owned(),
        action: "sync the folder",
        error: source,
    })
}

/// Writes a whole file through [`AtomicFile`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit().map(drop)
}

/// [`write_atomic`] for a file only its owner may read (mode 0600): a
/// tournament's seed secret.
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mut f = AtomicFile::create_with_mode(path, 0o600)?;
    f.write_all(bytes)?;
    f.commit().map(drop)
}

/// Test-only: fault injection (a file whose writes fail after N bytes, as on a
/// full disk) and a record of the order in which files became durable.
#[cfg(test)]
pub(crate) mod faults {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Step {
        /// Renamed to its final name.
        Committed,
        /// Its folder fsynced after the rename.
        Durable,
        /// A journal line appended and fsynced.
        Journaled,
    }

    static ROOM: Mutex<Vec<(PathBuf, usize)>> = Mutex::new(Vec::new());
    static STEPS: Mutex<Vec<(Step, PathBuf)>> = Mutex::new(Vec::new());

    /// The next file created at `path` fails its writes with ENOSPC once `room`
    /// bytes are written (once: a file created there later has room again).
    pub fn fill_disk_at(path: &Path, room: usize) {
        ROOM.lock().unwrap().push((path.to_owned(), room));
    }

    pub(super) fn room_for(path: &Path) -> Option<usize> {
        let mut room = ROOM.lock().unwrap();
        let i = room.iter().position(|(p, _)| p == path)?;
        Some(room.remove(i).1)
    }

    pub fn note(step: Step, path: &Path) {
        STEPS.lock().unwrap().push((step, path.to_owned()));
    }

    /// The steps noted for files under `dir` (tests run in parallel), in order.
    pub fn steps_under(dir: &Path) -> Vec<(Step, PathBuf)> {
        let steps = STEPS.lock().unwrap();
        steps
            .iter()
            .filter(|(_, p)| p.starts_with(dir))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)] // a symlink made by a user with no privilege
    #[test]
    fn a_planted_symlink_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let partial = dir.path().join("game-0003.jsonl.partial");
        std::os::unix::fs::symlink(&victim, &partial).unwrap();
        create_new(&partial)
            .unwrap()
            .write_all(b"transcript")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&partial).unwrap(), "transcript");
        assert!(!std::fs::symlink_metadata(&partial).unwrap().is_symlink());
    }

    #[cfg(unix)] // a symlink made by a user with no privilege
    #[test]
    fn the_atomic_writer_does_not_follow_a_planted_partial_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let path = dir.path().join("standings.json");
        std::os::unix::fs::symlink(&victim, crate::layout::partial(&path)).unwrap();
        write_atomic(&path, b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
    }

    #[test]
    fn a_commit_leaves_only_the_final_name_made_durable_after_the_rename() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("game-0001.jsonl");
        std::fs::write(&path, "an older file of that name").unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"line 1\n").unwrap();
        // Until the commit, readers see the old file, never half of the new.
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "an older file of that name"
        );
        f.write_all(b"line 2\n").unwrap();
        assert_eq!(f.commit().unwrap(), path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "line 1\nline 2\n");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["game-0001.jsonl"], "no temporary file is left");
        assert_eq!(
            faults::steps_under(dir.path()),
            [
                (faults::Step::Committed, path.clone()),
                (faults::Step::Durable, path.clone())
            ]
        );
    }

    #[test]
    fn a_full_disk_is_an_error_naming_the_file_and_leaves_no_partial() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("game-0002.jsonl");
        faults::fill_disk_at(&path, 10);
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"0123456789").unwrap();
        let err = f.write_all(b"x").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("failed to write"), "{msg}");
        assert!(msg.contains("game-0002.jsonl:"), "{msg}");
        assert!(msg.contains("No space left on device"), "{msg}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A later commit cannot resurrect it.
        assert!(f.commit().is_err());
        assert!(!path.exists());
    }
}
