//! The executable this referee was started from, for the whole run.
//!
//! The referee starts itself again and again: the built-in bots (`referee
//! bot NAME`), the view's holder, the image builder, the freezer's guard,
//! and, sandboxed, the Landlock wrapper and the kept sandbox's launcher,
//! which bubblewrap runs from the referee's executable bound into every
//! sandbox. Its path may stop naming that executable while the run goes
//! on: an upgrade (a package manager, `cargo install`, a relink) renames
//! another file over it or deletes it, for a moment or for good. So:
//!
//! - the path is read once, at the start ([`remember`], from `main`), and
//!   every command line, seat command and transcript names that path, as
//!   before;
//! - a start of itself outside a sandbox execs `/proc/self/exe` ([`command`]),
//!   which the kernel resolves in the forked child to the referee's own
//!   inode, whatever its path names now (`argv[0]` is still the path);
//! - bubblewrap binds a private name of that inode ([`pinned`]) at the path:
//!   it resolves a bind's source by name (`/proc/self/fd/N` too, which it
//!   turns into the deleted file's name and then cannot find), so the name
//!   must be one nobody else renames or deletes. A hard link where the
//!   temporary folder lies on the executable's file system (then nothing is
//!   copied and nothing changes: the same inode), a copy of
//!   `/proc/self/exe` elsewhere; in a folder of the referee's own under the
//!   temporary folder, removed at the end of the run ([`forget`]), or by the
//!   next referee that finds it left behind by one that died.

use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The path of the executable, as read at the start (canonical).
static STARTED: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The private name of the running executable, once made: the file and the
/// folder it lies in (`None` where none could be made).
static PINNED: Mutex<Option<Option<Pin>>> = Mutex::new(None);

/// The prefix of the folders that hold a pinned executable, then the pid
/// and a count.
const FOLDER: &str = "schmier-exe-";

/// The magic link to the running executable, resolved by the kernel in
/// whichever process opens it.
const SELF_EXE: &str = "/proc/self/exe";

#[derive(Debug)]
struct Pin {
    file: PathBuf,
    folder: PathBuf,
}

/// Reads the executable's path now, before anything can have replaced it:
/// every later [`path`] is this one.
pub fn remember() {
    STARTED.get_or_init(read);
}

fn read() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// The path the referee was started from (canonical). Where [`remember`]
/// was not called (a test binary), the path as it is now.
pub fn path() -> std::io::Result<PathBuf> {
    let started = match STARTED.get() {
        Some(started) => started.clone(),
        None => read(),
    };
    started.ok_or_else(|| std::io::Error::other("the referee's own executable has no path"))
}

/// The command that runs `program`: the referee's own executable, whatever
/// its path names now, if `program` is that path (`argv[0]` stays
/// `program`); else `program`.
pub fn command(program: &Path) -> Command {
    if STARTED.get().is_some() && path().is_ok_and(|own| own == program) {
        let mut cmd = Command::new(SELF_EXE);
        cmd.arg0(program);
        return cmd;
    }
    Command::new(program)
}

/// A name of the running executable that only this referee can change, for
/// bubblewrap to bind (made once, on the first call); `None` where none
/// could be made (said once): the sandbox then binds [`path`].
pub fn pinned() -> Option<PathBuf> {
    let mut pinned = PINNED.lock().unwrap_or_else(|p| p.into_inner());
    let pin = pinned.get_or_insert_with(|| match pin() {
        Ok(pin) => Some(pin),
        Err(e) => {
            eprintln!(
                "referee: warning: failed to keep a private name of the referee's executable \
                 ({e}): sandboxes bind its path, so replacing the referee while it runs can \
                 stop its sandboxed bots from starting"
            );
            None
        }
    });
    pin.as_ref().map(|p| p.file.clone())
}

/// Removes the private name, at the end of the run.
pub fn forget() {
    let mut pinned = PINNED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(Some(pin)) = pinned.take() {
        let _ = std::fs::remove_dir_all(&pin.folder);
    }
}

fn pin() -> std::io::Result<Pin> {
    let tmp = std::env::temp_dir();
    remove_left_behind(&tmp);
    static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let folder = tmp.join(format!("{FOLDER}{}-{n}", std::process::id()));
    // A folder of a dead referee with this pid, or someone else's: gone or refused.
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::DirBuilder::new().mode(0o755).create(&folder)?;
    // A bind keeps its source mount's flags: from a `noexec` mount (a
    // hardened /tmp) bubblewrap could not run the referee.
    let flags = nix::sys::statvfs::statvfs(&folder).map(|s| s.flags());
    if flags.is_ok_and(|f| f.contains(nix::sys::statvfs::FsFlags::ST_NOEXEC)) {
        let _ = std::fs::remove_dir_all(&folder);
        return Err(std::io::Error::other(format!(
            "{} is mounted noexec; set TMPDIR to a folder that is not",
            tmp.display()
        )));
    }
    let name = path()?.file_name().map(PathBuf::from);
    let file = folder.join(name.unwrap_or_else(|| "referee".into()));
    let follow = nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW;
    let linked = nix::unistd::linkat(None, Path::new(SELF_EXE), None, file.as_path(), follow);
    if linked.is_err() {
        copy_self(&file).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&folder);
        })?;
    }
    let how = if linked.is_ok() { "linked" } else { "copied" };
    tracing::debug!("the referee's executable {how} to {}", file.display());
    Ok(Pin { file, folder })
}

/// Copies the running executable to `file`, with its permissions (no more
/// readable than it is): where it cannot be linked (another file system, a
/// deleted executable, a file of another owner under `protected_hardlinks`).
fn copy_self(file: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut from = std::fs::File::open(SELF_EXE)?;
    let mode = from.metadata()?.permissions().mode() & 0o777;
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(file)?;
    std::io::copy(&mut from, &mut to)?;
    to.sync_all()
}

/// Removes the folders of referees that died before removing theirs (only
/// this user's: another's are not ours to remove).
fn remove_left_behind(tmp: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    let uid = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = (name.to_str())
            .and_then(|n| n.strip_prefix(FOLDER)?.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let ours = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == uid);
        let dead = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH);
        if ours && dead {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// The private name is the running executable (the same inode where it
    /// could be linked, its bytes where copied), in a folder of its own.
    #[test]
    fn the_pinned_name_is_the_running_executable() {
        let pin = pin().unwrap();
        let (ours, exe) = (
            std::fs::metadata(&pin.file).unwrap(),
            std::fs::metadata(SELF_EXE).unwrap(),
        );
        let same = (ours.dev(), ours.ino()) == (exe.dev(), exe.ino());
        assert!(same || std::fs::read(&pin.file).unwrap() == std::fs::read(SELF_EXE).unwrap());
        assert_eq!(ours.mode() & 0o777, exe.mode() & 0o777);
        std::fs::remove_dir_all(&pin.folder).unwrap();
    }

    /// Another program is run as it is named; the referee's own path runs
    /// the running executable, named as before in `argv[0]`.
    #[test]
    fn only_the_own_path_is_run_from_the_running_executable() {
        let other = command(Path::new("/usr/bin/true"));
        assert_eq!(other.get_program(), "/usr/bin/true");
        remember();
        let own = path().unwrap();
        assert_eq!(command(&own).get_program(), SELF_EXE);
    }
}
