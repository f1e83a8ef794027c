//! The end of a bot's process tree, made sure of off the game's critical path.
//!
//! Once [`crate::bot::BotProcess::shutdown`] has sent SIGKILL to a bot's group and
//! to every process of its tree, they die on their own; what is left is to be
//! sure that they did. That check used to hold up the end of every game: a
//! sandboxed bot's bubblewrap pid 1 outlives the bubblewrap the referee started
//! by a moment, is orphaned, and stays a zombie in the bot's process group
//! until the host's init reaps it (1.7 s a bot on the test host, during which
//! `kill(-pgid, 0)` still found the group: BENCHMARKS.md). A zombie runs
//! nothing and holds nothing but its pid; what matters is that no process of
//! the tree still *runs*.
//!
//! So the shutdown hands the tree's [`Remains`] to this reaper, one thread for
//! the run, and returns: the next game can start. The reaper waits on a pidfd
//! per process of the tree (the kernel wakes it when one exits; no polling)
//! until all of them have exited and no live process is left in the bot's group
//! or its cgroup (killing any it finds), then removes the cgroup. Looking for
//! a group's live members reads all of `/proc`, so each round reads it once
//! for every tree it holds, not once a tree. The
//! referee's exit waits for it ([`wait_all`]), so nothing a bot started
//! outlives the run.

use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::group;

/// What encloses a bot's tree besides its process group (its cgroup,
/// `crate::cgroup`): killed whole until empty, removed when dropped.
pub trait Enclosure: std::fmt::Debug + Send {
    /// SIGKILLs every process left in it; `true` once none is.
    fn kill_all(&self) -> bool;
}

/// How long the reaper keeps trying to see a tree gone before it gives up on
/// it (a process stuck in an uninterruptible sleep cannot die before it wakes).
pub const GIVE_UP: Duration = Duration::from_secs(5);

/// The longest the reaper sleeps between looks at what the pidfds do not
/// report: a group member outside the tree, a cgroup, a new tree handed over.
const PAUSE: Duration = Duration::from_millis(5);

/// What is left of a bot's process tree after it was sent SIGKILL: the
/// processes to see exit, the group and cgroup to see empty.
#[derive(Debug)]
pub struct Remains {
    group: u32,
    /// A pidfd for each process of the tree that had one to open.
    pidfds: Vec<OwnedFd>,
    /// Processes with no pidfd (a kernel before 5.3): looked up by pid.
    pids: Vec<u32>,
    cgroup: Option<Box<dyn Enclosure>>,
    since: Instant,
}

impl Remains {
    /// Watches `tree` (the group leader `group` first): call before the tree is
    /// killed, so that no pid can have been reused by the time its pidfd is
    /// opened.
    pub fn watch(group: u32, tree: &[u32], cgroup: Option<Box<dyn Enclosure>>) -> Remains {
        let mut remains = Remains {
            group,
            pidfds: Vec::new(),
            pids: Vec::new(),
            cgroup,
            since: Instant::now(),
        };
        for &pid in tree {
            match pidfd_open(pid) {
                Some(fd) => remains.pidfds.push(fd),
                None => remains.pids.push(pid),
            }
        }
        remains
    }

    /// Whether nothing of the tree runs any more: every process watched has
    /// exited, and no live process is left in its group or cgroup (any found
    /// is sent SIGKILL, to be looked at again).
    #[cfg(test)]
    pub fn settled(&mut self) -> bool {
        let looked = BTreeSet::from([self.group]);
        let live = group::groups_with_live_members(&looked);
        self.settled_given(&looked, &live)
    }

    /// Forgets the processes watched that have exited; whether all have.
    fn watched_gone(&mut self) -> bool {
        self.pidfds.retain(|fd| !exited(fd));
        self.pids.retain(|&pid| group::alive(pid));
        self.pidfds.is_empty() && self.pids.is_empty()
    }

    /// [`Remains::settled`], told which of the groups `looked` at still have
    /// a live member (`live`, from one read of `/proc` for every tree the
    /// reaper holds: `group::groups_with_live_members`). A group still there
    /// but not looked at is looked at next time.
    fn settled_given(&mut self, looked: &BTreeSet<u32>, live: &BTreeSet<u32>) -> bool {
        if !self.watched_gone() {
            return false;
        }
        if group::group_alive(self.group) {
            if !looked.contains(&self.group) {
                return false;
            }
            if live.contains(&self.group) {
                group::signal_group(self.group, Signal::SIGKILL);
                return false;
            }
        }
        self.cgroup.as_ref().is_none_or(|c| c.kill_all())
    }

    /// SIGKILLs every process in the tree's cgroup, if it has one.
    pub fn kill_cgroup(&self) {
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill_all();
        }
    }

    /// [`Remains::settled`] where that is quick to tell: every process
    /// watched has exited and the group is gone altogether (an unsandboxed
    /// bot's, reaped by the referee). Never reads `/proc`.
    fn plainly_settled(&mut self) -> bool {
        self.pidfds.retain(|fd| !exited(fd));
        self.pidfds.is_empty()
            && self.pids.is_empty()
            && !group::group_alive(self.group)
            && self.cgroup.as_ref().is_none_or(|c| c.kill_all())
    }

    /// Lets go of the tree: its cgroup is removed, its group forgotten.
    fn bury(self) {
        drop(self.cgroup);
        group::unregister(self.group);
    }
}

/// Hands `remains` to the reaper; returns at once. Remains plainly settled
/// are buried here, without waking the reaper; anything that takes a look
/// through `/proc` is left to the reaper's thread.
pub fn hand_over(mut remains: Remains) {
    if remains.plainly_settled() {
        remains.bury();
        return;
    }
    let mut state = lock();
    state.outstanding += 1;
    state.queue.push(remains);
    reaper().notify_all();
    ensure_started();
}

/// Waits until every tree handed over is gone (or given up on, after
/// [`GIVE_UP`]). The referee calls it before it exits.
pub fn wait_all() {
    let mut state = lock();
    while state.outstanding > 0 {
        state = reaper().wait(state).unwrap_or_else(|e| e.into_inner());
    }
}

#[derive(Default)]
struct State {
    /// Handed over, not yet taken by the reaper thread.
    queue: Vec<Remains>,
    /// Handed over and not yet buried.
    outstanding: usize,
}

static STATE: Mutex<State> = Mutex::new(State {
    queue: Vec::new(),
    outstanding: 0,
});

fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Signalled when work arrives and when trees are buried.
fn reaper() -> &'static Condvar {
    static CHANGED: Condvar = Condvar::new();
    &CHANGED
}

fn ensure_started() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        std::thread::Builder::new()
            .name("bot-reaper".into())
            .spawn(run)
            .expect("failed to start the bot reaper thread");
    });
}

/// The reaper thread: takes what is handed over, sleeps in `poll` on the
/// pidfds, buries each tree once settled (or given up on).
fn run() {
    let mut mine: Vec<Remains> = Vec::new();
    loop {
        {
            let mut state = lock();
            while mine.is_empty() && state.queue.is_empty() {
                state = reaper().wait(state).unwrap_or_else(|e| e.into_inner());
            }
            mine.append(&mut state.queue);
        }
        let before = mine.len();
        // One read of /proc for every group whose watched processes have all
        // exited but which still exists (zombies, or a member outside the tree).
        let look: BTreeSet<u32> = (mine.iter_mut())
            .filter_map(|r| (r.watched_gone() && group::group_alive(r.group)).then_some(r.group))
            .collect();
        let live = group::groups_with_live_members(&look);
        let mut kept = Vec::with_capacity(before);
        for mut r in mine.drain(..) {
            if r.settled_given(&look, &live) || r.since.elapsed() > GIVE_UP {
                r.bury();
            } else {
                kept.push(r);
            }
        }
        mine = kept;
        let buried = before - mine.len();
        if buried > 0 {
            lock().outstanding -= buried;
            reaper().notify_all();
        }
        if !mine.is_empty() {
            wait_for_exits(&mine);
        }
    }
}

/// Sleeps until a watched process exits, or [`PAUSE`].
fn wait_for_exits(remains: &[Remains]) {
    let mut fds: Vec<nix::libc::pollfd> = remains
        .iter()
        .flat_map(|r| &r.pidfds)
        .map(|fd| nix::libc::pollfd {
            fd: fd.as_raw_fd(),
            events: nix::libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: poll(2) on a valid array of `fds.len()` entries; the pidfds stay
    // open for the call (`remains` is borrowed).
    unsafe {
        nix::libc::poll(
            fds.as_mut_ptr(),
            fds.len() as nix::libc::nfds_t,
            PAUSE.as_millis() as nix::libc::c_int,
        );
    }
}

/// A pidfd for `pid` (`None`: gone already, or a kernel without pidfds).
pub(crate) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new descriptor
    // (close-on-exec) or -1.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid as nix::libc::pid_t, 0) };
    // SAFETY: a descriptor just returned to us and owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether the process of `pidfd` has exited (every thread of it): a pidfd
/// polls readable then, zombie or reaped.
pub(crate) fn exited(pidfd: &OwnedFd) -> bool {
    let mut fd = nix::libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: nix::libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) on one valid entry, without waiting.
    let n = unsafe { nix::libc::poll(&mut fd, 1, 0) };
    n == 1 && fd.revents & (nix::libc::POLLIN | nix::libc::POLLHUP) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn own_group(cmd: &mut std::process::Command) -> std::process::Child {
        cmd.process_group(0).spawn().expect("the command starts")
    }

    fn poll_until(what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A tree is not settled while any process of it runs, and is once it has
    /// exited, reaped or not.
    #[test]
    fn remains_settle_only_once_every_process_has_exited() {
        let mut child = own_group(std::process::Command::new("sleep").arg("600"));
        let pid = child.id();
        let mut remains = Remains::watch(pid, &[pid], None);
        assert!(!remains.pidfds.is_empty(), "this kernel has pidfds");
        assert!(!remains.settled(), "a sleeping process is not gone");
        group::signal_group(pid, Signal::SIGKILL);
        // Still unreaped: a zombie, which runs nothing.
        poll_until("the killed process settles", || remains.settled());
        assert!(!group::alive(pid));
        child.wait().unwrap();
    }

    /// A live member of the group outside the tree watched is found and
    /// killed: the group is what was killed, the tree only a snapshot of it.
    #[test]
    fn a_group_member_outside_the_tree_is_found_and_killed() {
        let mut leader = own_group(std::process::Command::new("sleep").arg("600"));
        let group = leader.id();
        let mut other = std::process::Command::new("sleep")
            .arg("600")
            .process_group(group as i32)
            .spawn()
            .unwrap();
        let mut remains = Remains::watch(group, &[group], None);
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(group as i32), Signal::SIGKILL).unwrap();
        leader.wait().unwrap();
        assert!(group::alive(other.id()));
        assert!(!remains.settled(), "a live process is left in the group");
        poll_until("the group's other member is killed", || remains.settled());
        assert!(!group::alive(other.id()));
        other.wait().unwrap();
    }

    /// One read of `/proc` tells of several groups at once: the one still
    /// running is found, the killed one (a zombie, unreaped) is not.
    #[test]
    fn one_read_of_proc_tells_which_of_several_groups_still_run() {
        let mut running = own_group(std::process::Command::new("sleep").arg("600"));
        let mut killed = own_group(std::process::Command::new("sleep").arg("600"));
        group::signal_group(killed.id(), Signal::SIGKILL);
        poll_until("the killed one is a zombie", || !group::alive(killed.id()));
        let groups = BTreeSet::from([running.id(), killed.id()]);
        assert!(
            group::group_alive(killed.id()),
            "unreaped, its group is still there"
        );
        assert_eq!(
            group::groups_with_live_members(&groups),
            BTreeSet::from([running.id()])
        );
        group::signal_group(running.id(), Signal::SIGKILL);
        running.wait().unwrap();
        killed.wait().unwrap();
    }

    /// What is handed over is waited for: `wait_all` returns only once the
    /// tree is gone.
    #[test]
    fn wait_all_returns_once_the_trees_handed_over_are_gone() {
        let mut child = own_group(std::process::Command::new("sleep").arg("600"));
        let pid = child.id();
        group::register(pid);
        hand_over(Remains::watch(pid, &[pid], None));
        let waiter = std::thread::spawn(wait_all);
        assert!(group::alive(pid), "nothing has killed it yet");
        group::signal_group(pid, Signal::SIGKILL);
        waiter.join().unwrap();
        assert!(!group::alive(pid), "wait_all returned while it ran");
        child.wait().unwrap();
    }
}
