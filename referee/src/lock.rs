//! One run per output folder. `play`, `tournament`, `sprt` and `merge` hold an
//! exclusive `flock` on a lock file in their output folder (its name is
//! `layout.rs`'s) from before they look at the folder until they exit; a second
//! run into the same folder fails at once, before it changes anything, saying
//! which run holds it: "DIR is in use by another referee run (pid N, since …)".
//!
//! Why `flock` on a file of its own rather than a pid file checked by hand: the
//! kernel releases the lock when the process dies, however it dies (SIGKILL, an
//! out-of-memory kill, a crash), so a stale lock never blocks a folder, and no
//! pid is ever guessed alive or dead. The lock belongs to the open file, which
//! is close-on-exec: bot processes never hold it. A run removes the file as it
//! ends, still holding it; a run that locked the file just before it was
//! removed sees that the name no longer leads to it and locks the new one, so
//! two runs never hold two files of one name. What the file says, the holder's
//! pid and start, is only for the message.
//!
//! The lock file is the one output not written through `safe_create.rs`: it
//! must stay the same file while it is held, so it is opened in place (never
//! following a symlink) and rewritten there.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::os::files::{self, FileLock, LockError};

/// A held lock: the folder is this run's until it is dropped. Dropped, it
/// removes its file (still holding it) and the folder, if the lock made it and
/// nothing else is in it, so a refused run leaves nothing behind.
pub struct FolderLock {
    lock: Option<FileLock>,
    path: PathBuf,
    /// The folder did not exist before the lock made it.
    created: Option<PathBuf>,
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Removed while held: a run that opens it now finds, once it holds the
        // lock, that the name no longer leads to its file, and opens anew.
        let _ = std::fs::remove_file(&self.path);
        drop(self.lock.take());
        if let Some(dir) = &self.created {
            let _ = std::fs::remove_dir(dir); // only if empty
        }
    }
}

/// Takes the lock file `lock` of the output `what` (in the folder `folder`,
/// created if missing), or fails at once if another run holds it.
pub fn hold(what: &str, folder: &Path, lock: &Path) -> anyhow::Result<FolderLock> {
    let created = match folder.as_os_str().is_empty() || folder.exists() {
        true => None,
        false => {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("failed to create {}", folder.display()))?;
            Some(folder.to_path_buf())
        }
    };
    let mut held = FolderLock {
        lock: None,
        path: lock.to_path_buf(),
        created,
    };
    // A holder removes the file as it ends: the lock taken must be on the file
    // the name leads to now, else it is taken again on the new one.
    let (start, mut replaced) = (std::time::Instant::now(), 0);
    while replaced < 100 {
        let file = open(lock)?;
        let mut locked = match FileLock::try_lock(file) {
            Ok(l) => l,
            Err(LockError::Held(file)) => {
                let said = holder(file);
                if start.elapsed() < LEFT_BEHIND && holder_gone(&said) {
                    // Not a run: a process of a run that died (below).
                    std::thread::sleep(LEFT_BEHIND_POLL);
                    continue;
                }
                // Not ours to remove: a refused run leaves the holder's file.
                held.path = PathBuf::new();
                if holder_gone(&said) {
                    bail!(
                        "{what} is locked, but the referee run that locked it is gone ({said}): \
                         a process it started still holds the lock; end it \
                         (`fuser {}` names it) and run again",
                        lock.display()
                    );
                }
                bail!("{what} is in use by another referee run ({said})");
            }
            Err(LockError::Failed(e)) => bail!("failed to lock {}: {e}", lock.display()),
        };
        if !files::same_file(locked.file(), lock) {
            replaced += 1;
            continue;
        }
        let line = format!(
            "pid {}, since {}\n",
            std::process::id(),
            utc(std::time::SystemTime::now())
        );
        let write = |f: &mut File| -> std::io::Result<()> {
            f.set_len(0)?;
            f.rewind()?;
            f.write_all(line.as_bytes())
        };
        write(locked.file()).with_context(|| format!("failed to write {}", lock.display()))?;
        held.lock = Some(locked);
        return Ok(held);
    }
    bail!("failed to lock {}: it keeps being replaced", lock.display())
}

/// How long a run waits for a lock whose run is gone. The lock belongs to
/// the open file, and a process forked by the run shares it until it runs
/// its program (the file is close-on-exec) or dies (a bot's start checks
/// that the referee lives, and dies with it): a moment, but on a loaded host
/// a killed run's child can hold it for some milliseconds after the run is
/// gone, and a run started at once (`season run` again after `kill -9`)
/// would be refused.
const LEFT_BEHIND: std::time::Duration = std::time::Duration::from_secs(10);
const LEFT_BEHIND_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Whether the holder's file names a process that no longer exists.
fn holder_gone(said: &str) -> bool {
    let pid = (said.strip_prefix("pid "))
        .and_then(|rest| rest.split(',').next())
        .and_then(|pid| pid.parse::<u32>().ok());
    pid.is_some_and(|pid| pid != std::process::id() && !crate::os::group::alive(pid))
}

fn open(lock: &Path) -> anyhow::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    files::no_follow(&mut options)
        .open(lock)
        .with_context(|| format!("failed to open the lock file {}", lock.display()))
}

/// What the holder wrote in its lock file: "pid N, since …".
fn holder(mut file: File) -> String {
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    match text.trim() {
        "" => "it has not yet said its pid".to_owned(),
        t => t.to_owned(),
    }
}

/// `2026-12-01 21:30:05 UTC`. Written here, not with a date crate: one
/// format of one timestamp, for one message.
fn utc(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_the_calendar_s() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(59), (1970, 3, 1));
        // 2000-02-29 (a leap day of a century divisible by 400) and 2026-12-01.
        assert_eq!(civil(11_016), (2000, 2, 29));
        assert_eq!(civil(20_423), (2025, 12, 1));
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_764_624_605);
        assert_eq!(utc(t), "2025-12-01 21:30:05 UTC");
    }

    /// A run killed while a process it forked has not yet run its program:
    /// that process holds the lock for a moment after the run is gone. The
    /// next run waits for it rather than being refused as if a run held it.
    #[cfg(unix)] // an open file inherited by a child: Windows' handles are not
    #[test]
    fn a_lock_left_held_by_a_gone_runs_child_is_waited_for() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("referee.lock");
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id();
        gone.wait().unwrap();
        std::fs::write(&lock, format!("pid {pid}, since then\n")).unwrap();
        let mut locked = FileLock::try_lock(open(&lock).unwrap()).unwrap();
        // The child's copy of the open file: not close-on-exec, as between
        // fork and exec.
        let copy = nix::unistd::dup(locked.file().as_raw_fd()).unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("0.5")
            .spawn()
            .unwrap();
        nix::unistd::close(copy).unwrap();
        // The run dies: its descriptor is closed, never unlocked (a drop
        // would unlock the open file, the child's copy with it).
        let fd = locked.file().as_raw_fd();
        std::mem::forget(locked);
        nix::unistd::close(fd).unwrap();
        let what = dir.path().display().to_string();
        let held = hold(&what, dir.path(), &lock);
        child.wait().unwrap();
        let held = held.unwrap();
        assert!(std::fs::read_to_string(&lock)
            .unwrap()
            .starts_with(&format!("pid {}, ", std::process::id())));
        drop(held);
    }

    #[test]
    fn a_second_holder_is_refused_with_the_first_s_pid_and_the_lock_is_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("out");
        let lock = folder.join("referee.lock");
        let what = folder.display().to_string();
        let first = hold(&what, &folder, &lock).unwrap();
        let err = hold(&what, &folder, &lock).err().unwrap().to_string();
        let pid = format!("(pid {}, since ", std::process::id());
        assert!(
            err.starts_with(&format!(
                "{} is in use by another referee run {pid}",
                folder.display()
            )),
            "{err}"
        );
        // The refused run left the holder's file.
        assert!(lock.is_file());
        drop(first);
        // The folder the lock made, and its file, are gone with it.
        assert!(!folder.exists());
        let again = hold(&what, &folder, &lock).unwrap();
        std::fs::write(folder.join("kept"), b"x").unwrap();
        drop(again);
        assert!(!lock.exists() && folder.join("kept").is_file());
    }
}
