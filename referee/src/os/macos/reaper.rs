//! The end of a bot's process group on macOS, made sure of off the game's
//! critical path: the shutdown hands the group over and returns; a thread
//! SIGKILLs the group until `killpg(0)` finds no process in it (or
//! [`GIVE_UP`]). The referee's exit waits for every group handed over
//! ([`wait_all`]).

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::group;

/// What encloses a bot's tree besides its group (a cgroup on Linux; none
/// here).
pub trait Enclosure: std::fmt::Debug + Send {
    /// Kills every process left in it; `true` once none is.
    fn kill_all(&self) -> bool;
}

/// How long the reaper keeps trying to see a group gone.
pub const GIVE_UP: Duration = Duration::from_secs(5);

const PAUSE: Duration = Duration::from_millis(5);

/// What is left of a bot's tree once it is to be killed: its group.
#[derive(Debug)]
pub struct Remains {
    group: u32,
    enclosure: Option<Box<dyn Enclosure>>,
}

impl Remains {
    /// Watches the group led by `group` (the tree is its members).
    pub fn watch(group: u32, _tree: &[u32], enclosure: Option<Box<dyn Enclosure>>) -> Remains {
        Remains { group, enclosure }
    }

    /// Whether no process is left in the group (any left is sent SIGKILL).
    pub fn settled(&mut self) -> bool {
        if group::group_alive(self.group) {
            group::signal_group(self.group, Signal::SIGKILL);
            return false;
        }
        self.enclosure.as_ref().is_none_or(|e| e.kill_all())
    }

    /// Kills what is in its enclosure besides the group (none here).
    pub fn kill_cgroup(&self) {
        if let Some(e) = &self.enclosure {
            e.kill_all();
        }
    }
}

static OUTSTANDING: Mutex<usize> = Mutex::new(0);
static GONE: Condvar = Condvar::new();

/// Hands `remains` to the reaper; returns at once.
pub fn hand_over(mut remains: Remains) {
    if remains.settled() {
        group::unregister(remains.group);
        return;
    }
    *OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    let reap = move || {
        let since = Instant::now();
        while !remains.settled() && since.elapsed() < GIVE_UP {
            std::thread::sleep(PAUSE);
        }
        group::unregister(remains.group);
        let mut outstanding = OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner());
        *outstanding -= 1;
        GONE.notify_all();
    };
    if std::thread::Builder::new()
        .name("bot-reaper".into())
        .spawn(reap)
        .is_err()
    {
        *OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
    }
}

/// Waits until every group handed over is gone (or given up on).
pub fn wait_all() {
    let mut outstanding = OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner());
    while *outstanding > 0 {
        outstanding = GONE.wait(outstanding).unwrap_or_else(|e| e.into_inner());
    }
}

/// Whether the process of a pidfd has exited: macOS has no pidfds, and
/// none is ever opened here (only a Linux kept sandbox's init has one).
pub(crate) fn exited(_: &super::Fd) -> bool {
    true
}
