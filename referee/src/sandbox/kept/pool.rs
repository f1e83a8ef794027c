//! The referee's side of the sandboxes kept across games (`launcher.rs`,
//! issue 27): a pool of launchers per bot view, each serving one bot at a
//! time, and the start of one bot through one.
//!
//! A launcher is keyed by what its sandbox shows (the bot's directory and
//! program, whether it has a `/scratch`): a bot is only ever started in a
//! sandbox built for a bot of the same view. One launcher starts one bot at
//! a time, so two bots alive at once (partners, or the same entrant at two
//! tables) never share one: each has its own user namespace (and, under a
//! root referee, its own host uid). A launcher goes back to the pool only
//! once its bot's whole tree is dead, and proves itself empty before the
//! next bot (`launcher::empty`); one that cannot is dropped, and a new
//! sandbox is built in its place.

use std::collections::HashMap;
use std::io::IoSlice;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, Context};
use nix::sys::socket::{
    recvmsg, sendmsg, setsockopt, socketpair, sockopt, AddressFamily, ControlMessage,
    ControlMessageOwned, MsgFlags, SockFlag, SockType,
};

use super::message::{Reply, Request, CONTROL_FD};
use crate::os::reaper::{self, Remains};
use crate::os::{group, process};

/// What a launcher's sandbox shows: bots of the same key may share it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub dir: PathBuf,
    pub program: PathBuf,
    pub scratch: bool,
}

/// How long a launcher may take to answer, and an init to report its pid.
const ANSWER: Duration = Duration::from_secs(10);

/// One kept sandbox: bubblewrap running `referee launcher`.
#[derive(Debug)]
pub struct Launcher {
    /// bubblewrap's pid, the leader of the sandbox's process group.
    pid: u32,
    child: std::process::Child,
    control: OwnedFd,
    key: Key,
    /// Bots it has started, for the log.
    served: u32,
}

/// A started bot: its init's pid on the host and the socket its exit status
/// comes on.
pub struct Started {
    pub pid: u32,
    pub report: OwnedFd,
}

impl Launcher {
    /// Starts bubblewrap with `program args` (the launcher) on the spawner
    /// thread, so that it dies with the referee; `uid`: the host user it
    /// runs as (a root referee's bot user).
    pub fn start(
        program: PathBuf,
        args: Vec<std::ffi::OsString>,
        env: &[(String, String)],
        uid: Option<u32>,
        seccomp: std::sync::Arc<seccompiler::BpfProgram>,
        key: Key,
    ) -> anyhow::Result<Launcher> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .context("failed to make the sandbox's control socket")?;
        let env = env.to_vec();
        let child = crate::os::spawner::on_thread(move || {
            use std::os::unix::process::CommandExt;
            let mut cmd = std::process::Command::new(&program);
            cmd.args(&args)
                .env_clear()
                .envs(env)
                .current_dir("/")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .process_group(0);
            if let Some(id) = uid {
                cmd.uid(id).gid(id);
            }
            process::die_with_referee(&mut cmd);
            let fd = theirs.as_raw_fd();
            // SAFETY: dup2 and fcntl on descriptors opened before the fork:
            // then the outer seccomp filter (`seccomp.rs`): async-signal-safe
            // system calls on data prepared before the fork. Runs after `die_with_referee`'s hook, which
            // marks every inherited descriptor close-on-exec.
            unsafe {
                cmd.pre_exec(move || {
                    if fd == CONTROL_FD {
                        nix::fcntl::fcntl(
                            fd,
                            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
                        )?;
                    } else {
                        nix::unistd::dup2(fd, CONTROL_FD)?;
                    }
                    nix::sys::prctl::set_no_new_privs()?;
                    seccompiler::apply_filter(&seccomp).map_err(|e| match e {
                        seccompiler::Error::Seccomp(e) | seccompiler::Error::Prctl(e) => e,
                        _ => std::io::Error::from_raw_os_error(nix::libc::EINVAL),
                    })?;
                    Ok(())
                });
            }
            let child = cmd.spawn();
            drop(theirs);
            child
        })
        .with_context(|| format!("failed to run {}", key.program.display()))?;
        let pid = child.id();
        group::register(pid);
        tracing::debug!("sandbox {pid} built for {}", key.dir.display());
        Ok(Launcher {
            pid,
            child,
            control: ours,
            key,
            served: 0,
        })
    }

    /// Starts one bot: sends `request`, its stdio and the mounts of its
    /// view (`images`, as `request.views` names them), waits for the init's
    /// pid, lets `place` move it into its cgroup (and set its priority), then gives it the word.
    pub fn launch(
        &mut self,
        request: &Request,
        stdio: &[OwnedFd; 3],
        images: &[OwnedFd],
        place: impl FnOnce(u32) -> std::io::Result<()>,
    ) -> anyhow::Result<Started> {
        let (report, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .context("failed to make a bot's report socket")?;
        setsockopt(&report, sockopt::PassCred, &true)?;
        let text = serde_json::to_vec(request)?;
        let mut fds = vec![
            stdio[0].as_raw_fd(),
            stdio[1].as_raw_fd(),
            stdio[2].as_raw_fd(),
            theirs.as_raw_fd(),
        ];
        fds.extend(images.iter().map(|fd| fd.as_raw_fd()));
        sendmsg::<()>(
            self.control.as_raw_fd(),
            &[IoSlice::new(&text)],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            None,
        )
        .context("the sandbox is gone")?;
        drop(theirs);
        wait_readable(&self.control, "the sandbox")?;
        let mut buf = vec![0u8; 1 << 16];
        let n = nix::sys::socket::recv(self.control.as_raw_fd(), &mut buf, MsgFlags::empty())?;
        match serde_json::from_slice::<Reply>(&buf[..n]) {
            Ok(Reply::Started) => {}
            Ok(Reply::Refused(why)) => return Err(anyhow!("the sandbox refused the bot: {why}")),
            Err(_) => return Err(anyhow!("the sandbox ended")),
        }
        wait_readable(&report, "the bot's init")?;
        let pid = credentials(&report)?;
        place(pid).context("failed to move the bot into its cgroup or give it its priority")?;
        nix::unistd::write(&report, b"g").context("failed to give the bot its word")?;
        self.served += 1;
        tracing::debug!(
            "sandbox {} started bot {} (its {})",
            self.pid,
            pid,
            self.served
        );
        Ok(Started { pid, report })
    }
}

impl Drop for Launcher {
    /// Kills the sandbox; the reaper makes sure it is gone.
    fn drop(&mut self) {
        let tree = group::tree(self.pid);
        let remains = Remains::watch(self.pid, &tree, None);
        group::signal_group(self.pid, nix::sys::signal::Signal::SIGKILL);
        for &pid in &tree {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.wait();
        reaper::hand_over(remains);
    }
}

/// Waits up to [`ANSWER`] for `fd` to have something to read.
fn wait_readable(fd: &OwnedFd, what: &str) -> anyhow::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    let timeout = PollTimeout::try_from(ANSWER.as_millis() as i32).unwrap_or(PollTimeout::MAX);
    loop {
        match poll(&mut fds, timeout) {
            Ok(0) => return Err(anyhow!("{what} did not answer within {ANSWER:?}")),
            Ok(_) => return Ok(()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(anyhow!("failed to wait for {what}: {e}")),
        }
    }
}

/// The host pid the init sent with its first byte.
fn credentials(report: &OwnedFd) -> anyhow::Result<u32> {
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!(nix::sys::socket::UnixCredentials);
    let msg = recvmsg::<()>(
        report.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::empty(),
    )?;
    // With SO_PASSCRED every message carries its sender's pid: only the
    // init's word "p" says its mounts are built.
    let pid = (msg.cmsgs()?).find_map(|c| match c {
        ControlMessageOwned::ScmCredentials(creds) if creds.pid() > 0 => Some(creds.pid()),
        _ => None,
    });
    let bytes = msg.bytes;
    match (bytes, byte, pid) {
        (1, [b'p'], Some(pid)) => Ok(pid as u32),
        (1, [b'p'], None) => Err(anyhow!("the bot's init sent no pid")),
        _ => Err(anyhow!("the bot's init failed before it started the bot")),
    }
}

/// At most this many sandboxes are kept idle in a run; past it, the one idle
/// longest is ended. Without a bound a run of many entrants kept up to
/// 2 × jobs sandboxes of each entrant to its end (two processes, their
/// namespaces and their memory each) long after its last game; 48 idle
/// sandboxes cover what four tables at once play and build ahead (six
/// each), and a sandbox ended too early only costs its rebuilding.
pub const MAX_IDLE: usize = 48;

/// The idle launchers of a run, by key.
pub type Pool = Idle<Launcher>;

/// What an idle [`Pool`] keeps: anything with a key (a launcher; a stand-in
/// in tests).
pub trait Keyed {
    fn key(&self) -> &Key;
}

impl Keyed for Launcher {
    fn key(&self) -> &Key {
        &self.key
    }
}

/// Idle `L`s by key, at most [`MAX_IDLE`] of them: see [`Pool`].
#[derive(Debug)]
pub struct Idle<L> {
    inner: Mutex<IdleInner<L>>,
}

#[derive(Debug)]
struct IdleInner<L> {
    /// Each key's idle ones, in the order they were given back, each with
    /// its turn (`next` when it was given back).
    by_key: HashMap<Key, Vec<(u64, L)>>,
    next: u64,
}

impl<L> Default for Idle<L> {
    fn default() -> Self {
        Idle {
            inner: Mutex::new(IdleInner {
                by_key: HashMap::new(),
                next: 0,
            }),
        }
    }
}

impl<L: Keyed> Idle<L> {
    /// An idle one for `key` (the last given back), if there is one.
    pub fn take(&self, key: &Key) -> Option<L> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (_, taken) = inner.by_key.get_mut(key)?.pop()?;
        Some(taken)
    }

    /// `idle` is idle again (a launcher: its bot's tree is dead). If that
    /// makes more than [`MAX_IDLE`], the one idle longest is taken out and
    /// returned, for the caller to end.
    #[must_use = "the sandbox returned is to be ended"]
    pub fn give_back(&self, idle: L) -> Option<L> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let turn = inner.next;
        inner.next += 1;
        inner
            .by_key
            .entry(idle.key().clone())
            .or_default()
            .push((turn, idle));
        match inner.count() > MAX_IDLE {
            true => inner.retire_oldest(),
            false => None,
        }
    }
}

impl<L> IdleInner<L> {
    /// How many are idle.
    fn count(&self) -> usize {
        self.by_key.values().map(Vec::len).sum()
    }

    /// Takes out the one given back longest ago.
    fn retire_oldest(&mut self) -> Option<L> {
        let key = (self.by_key.iter())
            .filter_map(|(key, idle)| idle.first().map(|(turn, _)| (*turn, key)))
            .min_by_key(|(turn, _)| *turn)
            .map(|(_, key)| key.clone())?;
        let idle = self.by_key.get_mut(&key)?;
        let (_, oldest) = idle.remove(0);
        if idle.is_empty() {
            self.by_key.remove(&key);
        }
        Some(oldest)
    }
}

impl Key {
    pub fn of(launch: &crate::os::Launch) -> Key {
        Key {
            dir: launch.dir.clone(),
            program: launch.program.clone(),
            scratch: launch.scratch.is_some(),
        }
    }
}

/// Paths as the bytes a request carries.
pub fn bytes(p: &std::path::Path) -> Vec<u8> {
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A stand-in for a launcher that counts how many were ended (dropped).
    struct Sandbox {
        key: Key,
        ended: Arc<AtomicUsize>,
    }

    impl Keyed for Sandbox {
        fn key(&self) -> &Key {
            &self.key
        }
    }

    impl Drop for Sandbox {
        fn drop(&mut self) {
            self.ended.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn key(n: usize) -> Key {
        Key {
            dir: PathBuf::from(format!("/bots/{n}")),
            program: PathBuf::from("/usr/bin/python3"),
            scratch: false,
        }
    }

    /// Past [`MAX_IDLE`], each sandbox given back ends the one idle longest;
    /// the others stay to be taken, the last given back first.
    #[test]
    fn at_most_max_idle_sandboxes_are_kept_and_the_longest_idle_goes_first() {
        let pool = Idle::default();
        let ended = Arc::new(AtomicUsize::new(0));
        let extra = 7;
        // Two of each key, given back in turn: 0, 0, 1, 1, 2, 2, ...
        for n in 0..(MAX_IDLE + extra) {
            let retired = pool.give_back(Sandbox {
                key: key(n / 2),
                ended: ended.clone(),
            });
            assert_eq!(retired.is_some(), n >= MAX_IDLE);
            drop(retired);
            assert_eq!(ended.load(Ordering::SeqCst), n.saturating_sub(MAX_IDLE - 1));
        }
        assert_eq!(ended.load(Ordering::SeqCst), extra);
        // The first seven given back (keys 0 to 2 and one of key 3) are gone.
        for k in 0..3 {
            assert!(pool.take(&key(k)).is_none(), "key {k} was idle longest");
        }
        assert!(pool.take(&key(3)).is_some());
        assert!(pool.take(&key(3)).is_none());
        let last = (MAX_IDLE + extra - 1) / 2;
        assert!(pool.take(&key(last)).is_some());
        // The two taken were ended here, as they were dropped; nothing else was.
        assert_eq!(ended.load(Ordering::SeqCst), extra + 2);
        let left = pool.inner.lock().unwrap().count();
        assert_eq!(left, MAX_IDLE - 2);
        drop(pool);
        assert_eq!(ended.load(Ordering::SeqCst), MAX_IDLE + extra);
    }
}
