//! Files on Unix: opened never through a symlink, created with permission
//! bits, locked with `flock`, told apart by device and inode; a folder's
//! entries made durable; the space left on a filesystem.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

/// Makes `options` fail on a symlink at the last component (`O_NOFOLLOW`).
pub fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(nix::libc::O_NOFOLLOW)
}

/// Gives a file `options` creates the permission bits `mode` (less the
/// umask).
pub fn with_mode(options: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    options.mode(mode)
}

/// Sets the permission bits of `path` to exactly `mode`, whatever the
/// umask left of them when it was made.
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Makes the folder `dir` and its missing parents with the permission bits
/// `mode` (less the umask).
pub fn make_dirs(dir: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
}

/// A path from raw bytes (an archive's entry name): any bytes name a path
/// on Unix.
pub fn path_from_bytes(raw: &[u8]) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    Some(Path::new(std::ffi::OsStr::from_bytes(raw)).to_path_buf())
}

/// Fsyncs the folder `dir`, which makes a rename or a new name in it
/// durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir).and_then(|d| d.sync_all())
}

/// An exclusive lock on an open file, held until dropped.
#[derive(Debug)]
pub struct FileLock(Flock<File>);

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another open file holds it.
    Held(File),
    Failed(std::io::Error),
}

impl FileLock {
    /// Takes `file`'s exclusive lock without waiting.
    pub fn try_lock(file: File) -> Result<FileLock, LockError> {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(FileLock(lock)),
            Err((file, nix::errno::Errno::EWOULDBLOCK)) => Err(LockError::Held(file)),
            Err((_, e)) => Err(LockError::Failed(e.into())),
        }
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.0
    }
}

/// Whether `path` (not followed) names the open `file`.
pub fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The error of a write to a full disk (`ENOSPC`).
pub fn disk_full() -> std::io::Error {
    std::io::Error::from_raw_os_error(nix::libc::ENOSPC)
}

/// The filesystem `path` is on, as a number two paths on the same one
/// share.
pub fn device(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.dev())
}

/// The bytes available to this user on the filesystem holding `dir`.
pub fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    let stat = nix::sys::statvfs::statvfs(dir)?;
    // The field types are the platform's (32 bits on some); widened for all.
    #[allow(clippy::useless_conversion)]
    let free = u64::from(stat.blocks_available()) * u64::from(stat.fragment_size());
    Ok(free)
}

/// The first executable file `name` in `path`'s folders (`:`-separated),
/// as found there (a link not followed).
pub fn on_path(name: &str, path: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
