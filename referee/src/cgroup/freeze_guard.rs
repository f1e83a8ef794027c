//! The guard of cgroup v1's freezer: a task frozen there ignores SIGKILL
//! until it is thawed. The referee thaws a seat before it kills it
//! (`Cgroup::kill_all`, its drop, the panic hook), but a referee that dies
//! abruptly (SIGKILL, the OOM killer) would leave its waiting seats frozen
//! for good: processes in uninterruptible sleep that nothing can kill, and
//! their cgroups.
//!
//! So the first v1 freezer cgroup the referee makes starts the guard,
//! `referee freeze-guard`: a process of its own, in a session of its own,
//! whose stdin is a pipe only the referee holds open. When the referee is
//! gone, however it went, the pipe closes; the guard then thaws every
//! freezer cgroup the referee made (`schmier-PID-*` under its parent), kills
//! what is left in them and removes them, and exits. While the referee
//! lives the guard sleeps in `read`, costing nothing.
//!
//! Only the referee's own binary starts it ([`enable`], from `main`): a test
//! binary's `current_exe` is not the referee, and must not be run as one.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use clap::Args;

/// `referee freeze-guard`: whose cgroups to thaw once stdin closes.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct GuardArgs {
    /// The cgroup v1 freezer directory the referee makes its bots' cgroups in.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The referee's pid: its cgroups are DIR/schmier-PID-*.
    #[arg(long, value_name = "PID")]
    pub pid: u32,
}

static ENABLED: AtomicBool = AtomicBool::new(false);

/// The write end of the guard's stdin, held until the referee exits.
static GUARD: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();

/// Lets this process start the guard (the referee binary's `main`).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// The prefix of every cgroup this referee makes (`crate::cgroup`).
pub fn prefix(pid: u32) -> String {
    format!("schmier-{pid}-")
}

/// Starts the guard for the v1 freezer directory `dir`, once per process.
/// A guard that cannot start is logged: the run goes on, as before the
/// guard existed.
pub fn ensure(dir: &Path) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    GUARD.get_or_init(|| Mutex::new(start(dir)));
}

fn start(dir: &Path) -> Option<ChildStdin> {
    let started = crate::os::own_exe::path().and_then(|exe| {
        crate::os::own_exe::command(&exe)
            .arg("freeze-guard")
            .arg("--dir")
            .arg(dir)
            .arg("--pid")
            .arg(std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
    });
    match started {
        // The child is not waited for: it ends only after the referee.
        Ok(mut child) => child.stdin.take(),
        Err(e) => {
            tracing::warn!(
                "failed to start the freezer's guard ({e}): if the referee is killed \
                 abruptly, its frozen bots stay frozen"
            );
            None
        }
    }
}

/// `referee freeze-guard`: waits for stdin to close, then thaws, kills and
/// removes every cgroup of the referee's left under `args.dir`.
pub fn run(args: &GuardArgs) -> anyhow::Result<()> {
    // Out of the referee's session and process group: a signal to the
    // group (Ctrl-C, `kill -- -PGID`) is the referee's to handle; the guard
    // waits for its end.
    let _ = nix::unistd::setsid();
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    while !matches!(stdin.read(&mut sink), Ok(0) | Err(_)) {}
    release(&args.dir, args.pid, Duration::from_secs(10));
    Ok(())
}

/// Thaws every v1 freezer cgroup this referee made, if its freezer is v1's
/// (the first step of killing every bot, `crate::bot::kill_all`: a v1-frozen
/// bot dies of SIGKILL only once thawed).
pub fn thaw_own() {
    if let Some(dir) = super::v1_freezer_parent() {
        thaw_all(&dir, std::process::id());
    }
}

/// Thaws every cgroup of referee `pid` under `dir`.
pub fn thaw_all(dir: &Path, pid: u32) {
    for cgroup in cgroups(dir, pid) {
        thaw(&cgroup);
    }
}

/// Writes `THAWED` to `cgroup`'s `freezer.state`, if it has one (never
/// creating the file).
fn thaw(cgroup: &Path) {
    use std::io::Write;
    let state = std::fs::OpenOptions::new()
        .write(true)
        .open(cgroup.join("freezer.state"));
    if let Ok(mut state) = state {
        let _ = state.write_all(b"THAWED");
    }
}

/// Thaws, kills and removes referee `pid`'s cgroups under `dir` until none
/// is left, or `within` has passed.
fn release(dir: &Path, pid: u32, within: Duration) {
    let start = Instant::now();
    loop {
        let left = cgroups(dir, pid);
        if left.is_empty() || start.elapsed() > within {
            return;
        }
        for cgroup in &left {
            thaw(cgroup);
            let procs = std::fs::read_to_string(cgroup.join("cgroup.procs")).unwrap_or_default();
            for task in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(task),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            // Fails while a killed task is still on its way out: tried again.
            let _ = std::fs::remove_dir(cgroup);
        }
        // A killed task leaves its cgroup within microseconds; this only
        // paces the retries.
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Referee `pid`'s cgroups under `dir`.
fn cgroups(dir: &Path, pid: u32) -> Vec<PathBuf> {
    let prefix = prefix(pid);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_referees_own_cgroups_are_released() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "schmier-41-0",
            "schmier-41-7",
            "schmier-411-0",
            "other-41-0",
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        let mut found: Vec<String> = cgroups(dir.path(), 41)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        found.sort();
        assert_eq!(found, ["schmier-41-0", "schmier-41-7"]);
        // Plain directories stand in for cgroups: released, they are removed
        // (the writes of freezer.state fail, as they may on a host).
        release(dir.path(), 41, Duration::from_secs(5));
        assert!(cgroups(dir.path(), 41).is_empty());
        assert!(dir.path().join("schmier-411-0").is_dir());
        assert!(dir.path().join("other-41-0").is_dir());
    }
}
