//! Files on Windows: a symlink opened as itself, never followed; locked
//! with `LockFileEx`; told apart by volume and file index; the space left
//! on a volume.
//!
//! A folder cannot be fsynced through std on Windows (it cannot be opened
//! as a file): NTFS journals its entries itself, so [`sync_dir`] does
//! nothing. `std::fs::rename` replaces an existing file (`MoveFileExW`
//! with `MOVEFILE_REPLACE_EXISTING`), which the atomic writer relies on.

use std::fs::{File, OpenOptions};
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Win32::Foundation::ERROR_LOCK_VIOLATION;
use windows_sys::Win32::Storage::FileSystem::{
    GetDiskFreeSpaceExW, GetFileInformationByHandle, LockFileEx, BY_HANDLE_FILE_INFORMATION,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, LOCKFILE_EXCLUSIVE_LOCK,
    LOCKFILE_FAIL_IMMEDIATELY,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

/// Makes `options` open a symlink (a reparse point) as itself, never
/// what it points to.
pub fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
}

/// Unix permission bits have no meaning here: a new file takes its
/// folder's access rules.
pub fn with_mode(options: &mut OpenOptions, _mode: u32) -> &mut OpenOptions {
    options
}

/// Unix permission bits have no meaning here (see [`with_mode`]).
pub fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// Makes the folder `dir` and its missing parents; `mode` has no meaning
/// here (see [`with_mode`]).
pub fn make_dirs(dir: &Path, _mode: u32) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// A path from raw bytes (an archive's entry name): Windows names are
/// Unicode, so bytes that are not UTF-8 name no path.
pub fn path_from_bytes(raw: &[u8]) -> Option<std::path::PathBuf> {
    std::str::from_utf8(raw).ok().map(std::path::PathBuf::from)
}

/// Nothing to do on Windows (see the module's note).
pub fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// An exclusive lock on an open file, held until dropped (closing the
/// file lets it go).
#[derive(Debug)]
pub struct FileLock(File);

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another open file holds it.
    Held(File),
    Failed(std::io::Error),
}

impl FileLock {
    /// Takes `file`'s exclusive lock without waiting. The lock covers one
    /// byte far past the end, not the content: a Windows lock is
    /// mandatory, and a run refused must still read who holds the file.
    pub fn try_lock(file: File) -> Result<FileLock, LockError> {
        // SAFETY: all-zero is a valid OVERLAPPED; its offset is the lock's.
        let mut at: OVERLAPPED = unsafe { std::mem::zeroed() };
        at.Anonymous.Anonymous.Offset = u32::MAX;
        at.Anonymous.Anonymous.OffsetHigh = i32::MAX as u32;
        let flags = LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY;
        // SAFETY: a file handle we own, a valid OVERLAPPED, a synchronous
        // handle (the call completes before it returns).
        let ok = unsafe { LockFileEx(file.as_raw_handle() as _, flags, 0, 1, 0, &mut at) };
        if ok != 0 {
            return Ok(FileLock(file));
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            Some(code) if code as u32 == ERROR_LOCK_VIOLATION => Err(LockError::Held(file)),
            _ => Err(LockError::Failed(error)),
        }
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.0
    }
}

/// The volume and file index of an open file.
fn identity(file: &File) -> Option<(u32, u64)> {
    // SAFETY: all-zero is a valid value of this plain structure, written by
    // the call on a handle we hold.
    unsafe {
        let mut info: BY_HANDLE_FILE_INFORMATION = std::mem::zeroed();
        if GetFileInformationByHandle(file.as_raw_handle() as _, &mut info) == 0 {
            return None;
        }
        let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
        Some((info.dwVolumeSerialNumber, index))
    }
}

/// Opens `path` itself (a folder or a symlink too) to read what it is.
fn open_itself(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// Whether `path` (not followed) names the open `file`.
pub fn same_file(file: &File, path: &Path) -> bool {
    match (
        identity(file),
        open_itself(path).ok().as_ref().and_then(identity),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The error of a write to a full disk (`ERROR_DISK_FULL`).
pub fn disk_full() -> std::io::Error {
    std::io::Error::from_raw_os_error(windows_sys::Win32::Foundation::ERROR_DISK_FULL as i32)
}

/// The volume `path` is on.
pub fn device(path: &Path) -> Option<u64> {
    identity(&open_itself(path).ok()?).map(|(volume, _)| u64::from(volume))
}

/// The bytes available to this user on the volume holding `dir`.
pub fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    use std::os::windows::ffi::OsStrExt;
    let wide: Vec<u16> = dir.as_os_str().encode_wide().chain([0]).collect();
    let mut free = 0u64;
    // SAFETY: a NUL-terminated wide string; only the first count asked.
    let ok = unsafe {
        GetDiskFreeSpaceExW(
            wide.as_ptr(),
            &mut free,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    match ok {
        0 => Err(std::io::Error::last_os_error()),
        _ => Ok(free),
    }
}

/// The first program `name` in `path`'s folders (`;`-separated): `name`
/// itself if it has an extension, else with each of `PATHEXT`'s (`.COM`,
/// `.EXE`, `.BAT`, `.CMD` where none is set), as Windows' own search does.
pub fn on_path(name: &str, path: &str) -> Option<std::path::PathBuf> {
    let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
    let names: Vec<String> = match Path::new(name).extension() {
        Some(_) => vec![name.to_owned()],
        None => pathext
            .split(';')
            .filter(|e| !e.is_empty())
            .map(|e| format!("{name}{}", e.to_ascii_lowercase()))
            .collect(),
    };
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file()))
}
