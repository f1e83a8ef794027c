//! The sandbox kept across games (issue 27): `referee launcher`, run by
//! bubblewrap in place of a bot, starts one bot after another, each in fresh
//! namespaces of its own inside the sandbox.
//!
//! Building a sandbox with bubblewrap costs about 12 ms of the host's CPU
//! (the user namespace, the mount tree, 35 binds; BENCHMARKS.md), and a
//! competition starts six per game. The launcher is built once per seat
//! (`kept/pool.rs`, the referee's side) and keeps the capabilities bubblewrap
//! gives it *inside the sandbox's user namespace* (`--cap-add ALL` there:
//! none on the host). For each bot the referee sends it a [`Request`] and
//! the bot's stdin, stdout and stderr and a report socket over a Unix
//! socket; the launcher then clones an init process into new PID, mount,
//! network and IPC namespaces, which builds what is the bot's alone:
//!
//! - a fresh `/proc` of its new PID namespace (the bot is pid 2, the init
//!   pid 1, as under bubblewrap), with the constant stand-ins of
//!   `procmask.rs` bound over the host-wide files and `/proc/sys`,
//!   `sysrq-trigger`, `irq` and `bus` read-only;
//! - fresh tmpfs mounts at `/tmp`, `/dev/shm` (and `/scratch` with
//!   `--scratch`), of the sizes bubblewrap gave them, with whatever the
//!   sandbox shows beneath `/tmp` (a bot directory in a temporary folder)
//!   moved back on top;
//! - an empty network namespace (loopback down) and IPC namespace.
//!
//! The init tells the referee its pid by `SCM_CREDENTIALS` (the kernel
//! translates it into the referee's PID namespace), waits for the referee to
//! move it into the bot's cgroup, forks the bot, and reports the bot's exit
//! status as bubblewrap did (its code, or 128 + the signal), then exits,
//! which takes every process left in its PID namespace along. The bot drops
//! every capability (bounding and ambient sets included) before the Landlock
//! wrapper (`landlock.rs`) confines it exactly as it confines a bot started
//! by bubblewrap. Nothing the bot can write outlives it: every writable mount
//! and every namespace is its own, every other mount (the sandbox's root
//! and `/dev` among them) is read-only in its mount namespace, so that a
//! metadata call Landlock does not govern (a mode, times, an extended
//! attribute) fails there (`kept/state.rs`), and per-user-namespace
//! keyrings are refused by the inner seccomp filter.
//!
//! Before each bot but the first, the launcher proves the sandbox empty: its
//! PID namespace holds no process but bubblewrap's pid 1 and itself (every
//! process of an earlier bot, in a child PID namespace, would be listed
//! there too), its own mount table is the one it started with, and every
//! inode of its root and `/dev` is as it was (`kept/state.rs`). A launcher
//! that finds anything else refuses the bot and exits, and the referee builds
//! a new sandbox instead.

use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::Args;
use nix::libc;

use super::init::clone_init;
use super::message::{Reply, Request, CONTROL_FD, MESSAGE_BYTES};
use super::state::Fingerprint;

/// The hidden subcommand bubblewrap runs to keep a sandbox.
pub const SUBCOMMAND: &str = "launcher";

/// `referee launcher` (hidden).
#[derive(Args, Debug)]
pub struct LauncherArgs {
    /// The directory of `/proc` stand-ins, as the sandbox shows it.
    #[arg(long, value_name = "DIR")]
    pub masks: PathBuf,
}

/// Serves requests until the control socket closes. Runs single-threaded
/// (the referee's `main` starts no runtime for this subcommand), so the
/// forked children may allocate.
pub fn run(args: &LauncherArgs) -> anyhow::Result<()> {
    // SAFETY: descriptor 3 is the control socket bubblewrap passed on; owned
    // here from now on.
    let control = unsafe { OwnedFd::from_raw_fd(CONTROL_FD) };
    let mounts = own_mounts()?;
    let kept = shared_state()?;
    let mut init: Option<libc::pid_t> = None;
    loop {
        let mut buf = vec![0u8; MESSAGE_BYTES];
        let (len, fds) = receive(&control, &mut buf)?;
        if len == 0 {
            return Ok(());
        }
        if let Some(pid) = init.take() {
            reap(pid);
        }
        let reply = match empty(&mounts, &kept).and_then(|()| {
            let request: Request =
                serde_json::from_slice(&buf[..len]).context("a malformed request")?;
            let mut fds = fds;
            if fds.len() < 4 {
                return Err(anyhow!("{} descriptors, not 4 or more", fds.len()));
            }
            let images = fds.split_off(4);
            let [stdin, stdout, stderr, report] = <[OwnedFd; 4]>::try_from(fds)
                .map_err(|fds| anyhow!("{} descriptors, not 4", fds.len()))?;
            let pid = clone_init(
                &request,
                &args.masks,
                [stdin, stdout, stderr],
                report,
                &images,
            )?;
            init = Some(pid);
            Ok(())
        }) {
            Ok(()) => Reply::Started,
            Err(e) => Reply::Refused(format!("{e:#}")),
        };
        let refused = matches!(reply, Reply::Refused(_));
        let text = serde_json::to_vec(&reply).expect("a reply serialises");
        nix::sys::socket::send(
            control.as_raw_fd(),
            &text,
            nix::sys::socket::MsgFlags::empty(),
        )?;
        if refused {
            return Ok(());
        }
    }
}

/// One message and the descriptors that came with it.
fn receive(control: &OwnedFd, buf: &mut [u8]) -> anyhow::Result<(usize, Vec<OwnedFd>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut space = nix::cmsg_space!([RawFd; 16]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = loop {
        match recvmsg::<()>(
            control.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            other => break other?,
        }
    };
    let mut fds = Vec::new();
    for c in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            // SAFETY: the kernel just installed these descriptors for us.
            fds.extend(
                raw.into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    Ok((msg.bytes, fds))
}

/// Waits for the previous bot's init: once it is reaped its PID namespace
/// is gone, every process in it with it.
fn reap(pid: libc::pid_t) {
    let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None);
    // Any other child (none is expected) too, without waiting.
    while let Ok(s) = nix::sys::wait::waitpid(None, Some(nix::sys::wait::WaitPidFlag::WNOHANG)) {
        if s == nix::sys::wait::WaitStatus::StillAlive {
            break;
        }
    }
}

/// This launcher's mount table, without the mount ids: what it must still
/// be before each bot.
fn own_mounts() -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .context("failed to read the launcher's mount table")?;
    // Fields 5 on (mount point, options, ...): ids change with nothing.
    Ok(text
        .lines()
        .map(|l| l.split(' ').skip(4).collect::<Vec<_>>().join(" "))
        .collect())
}

/// What the sandbox's own tmpfs mounts (its root and `/dev`) hold, which
/// every bot it serves shares (`kept/state.rs`).
fn shared_state() -> anyhow::Result<Fingerprint> {
    Fingerprint::take(&[Path::new("/"), Path::new("/dev")])
        .context("failed to read the sandbox's root and /dev")
}

/// The sandbox holds nothing of an earlier bot: no process in its PID
/// namespace but pid 1 and this launcher, the same mounts as at its start,
/// and its root and `/dev` as they were, inode for inode.
pub fn empty(mounts: &[String], kept: &Fingerprint) -> anyhow::Result<()> {
    let me = std::process::id();
    let mut others = Vec::new();
    for entry in std::fs::read_dir("/proc").context("failed to list /proc")? {
        let name = entry?.file_name();
        if let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) {
            if pid != 1 && pid != me {
                others.push(pid);
            }
        }
    }
    if !others.is_empty() {
        return Err(anyhow!("the sandbox still holds processes {others:?}"));
    }
    if own_mounts()? != mounts {
        return Err(anyhow!("the sandbox's mounts changed"));
    }
    if let Some(change) = shared_state()?.changed_since(kept) {
        return Err(anyhow!("the sandbox's shared files changed: {change}"));
    }
    Ok(())
}
