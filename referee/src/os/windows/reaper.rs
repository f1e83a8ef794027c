//! The end of a bot's process tree on Windows, made sure of off the game's
//! critical path: the shutdown hands the tree's [`Remains`] (its job) over
//! and returns; a thread of the reaper's terminates the job until none of
//! its processes is alive (or [`GIVE_UP`]), then closes it — and closing
//! the last handle of a kill-on-close job kills whatever is left in any
//! case. The referee's exit waits for every tree handed over
//! ([`wait_all`]).

use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::WAIT_OBJECT_0;
use windows_sys::Win32::System::Threading::WaitForSingleObject;

use super::job::Job;

/// What encloses a bot's tree besides its job (a cgroup on Linux; none
/// here): killed whole until empty, removed when dropped.
pub trait Enclosure: std::fmt::Debug + Send {
    /// Kills every process left in it; `true` once none is.
    fn kill_all(&self) -> bool;
}

/// How long the reaper keeps trying to see a tree gone.
pub const GIVE_UP: Duration = Duration::from_secs(5);

const PAUSE: Duration = Duration::from_millis(5);

/// What is left of a bot's tree once it is to be killed: its job.
#[derive(Debug)]
pub struct Remains {
    job: Option<Arc<Job>>,
    enclosure: Option<Box<dyn Enclosure>>,
}

impl Remains {
    /// Takes the job of the bot whose first process is `group` (`tree` is
    /// the job's own list: nothing to watch besides it).
    pub fn watch(group: u32, _tree: &[u32], enclosure: Option<Box<dyn Enclosure>>) -> Remains {
        Remains {
            job: super::group::take(group),
            enclosure,
        }
    }

    /// Whether no process of the job is alive (any left is killed again).
    pub fn settled(&mut self) -> bool {
        match &self.job {
            Some(job) if job.active() > 0 => {
                job.terminate();
                false
            }
            _ => self.enclosure.as_ref().is_none_or(|e| e.kill_all()),
        }
    }

    /// Kills what is in its enclosure besides the job (none here).
    pub fn kill_cgroup(&self) {
        if let Some(job) = &self.job {
            job.terminate();
        }
    }
}

static OUTSTANDING: Mutex<usize> = Mutex::new(0);
static GONE: Condvar = Condvar::new();

/// Hands `remains` to the reaper; returns at once.
pub fn hand_over(mut remains: Remains) {
    if remains.settled() {
        return;
    }
    *OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    let reap = move || {
        let since = Instant::now();
        while !remains.settled() && since.elapsed() < GIVE_UP {
            std::thread::sleep(PAUSE);
        }
        if !remains.settled() {
            tracing::warn!("a bot's job still had live processes after {GIVE_UP:?}");
        }
        drop(remains);
        let mut outstanding = OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner());
        *outstanding -= 1;
        GONE.notify_all();
    };
    if std::thread::Builder::new()
        .name("bot-reaper".into())
        .spawn(reap)
        .is_err()
    {
        let mut outstanding = OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner());
        *outstanding -= 1;
    }
}

/// Waits until every tree handed over is gone (or given up on).
pub fn wait_all() {
    let mut outstanding = OUTSTANDING.lock().unwrap_or_else(|e| e.into_inner());
    while *outstanding > 0 {
        outstanding = GONE.wait(outstanding).unwrap_or_else(|e| e.into_inner());
    }
}

/// Whether the process of `handle` has exited.
pub(crate) fn exited(handle: &OwnedHandle) -> bool {
    // SAFETY: a process handle we hold, waited on without waiting.
    unsafe { WaitForSingleObject(handle.as_raw_handle() as _, 0) == WAIT_OBJECT_0 }
}
