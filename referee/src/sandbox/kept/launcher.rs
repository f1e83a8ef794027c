//! The sandbox kept across games (issue 27): `referee launcher`, run by
//! bubblewrap in place of a bot, starts one bot after another, each in fresh
//! namespaces of its own inside the sandbox.
//!
//! Building a sandbox with bubblewrap costs about 12 ms of the host's CPU
//! (the user namespace, the mount tree, 35 binds; BENCHMARKS.md), and a
//! competition starts six per game. The launcher is built once per seat
//! (`slot.rs`, the referee's side) and keeps the capabilities bubblewrap
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
//! attribute) fails there (`kept_state.rs`), and per-user-namespace
//! keyrings are refused by the inner seccomp filter.
//!
//! Before each bot but the first, the launcher proves the sandbox empty: its
//! PID namespace holds no process but bubblewrap's pid 1 and itself (every
//! process of an earlier bot, in a child PID namespace, would be listed
//! there too), its own mount table is the one it started with, and every
//! inode of its root and `/dev` is as it was (`kept_state.rs`). A launcher
//! that finds anything else refuses the bot and exits, and the referee builds
//! a new sandbox instead.

use std::ffi::{CString, OsString};
use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::Args;
use nix::libc;
use serde::{Deserialize, Serialize};

use super::state::Fingerprint;
use crate::sandbox::landlock::{LandlockArgs, Rules};

/// The hidden subcommand bubblewrap runs to keep a sandbox.
pub const SUBCOMMAND: &str = "launcher";

/// Where a sandboxed bot sees its `--scratch` directory, whatever and wherever
/// it is on the host (and `SCHMIER_SCRATCH` names this): the host path names
/// the round, matchup, game and slot, which would tell a bot which game of a
/// duplicate set it plays.
pub const SCRATCH_INSIDE: &str = "/scratch";

/// The descriptor the launcher's control socket is passed in.
pub const CONTROL_FD: RawFd = 3;

/// The largest request (JSON) and reply the control socket carries.
const MESSAGE_BYTES: usize = 1 << 16;

/// `referee launcher` (hidden).
#[derive(Args, Debug)]
pub struct LauncherArgs {
    /// The directory of `/proc` stand-ins, as the sandbox shows it.
    #[arg(long, value_name = "DIR")]
    pub masks: PathBuf,
}

/// One bot to start, as the referee sends it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The Landlock wrapper's command line (`landlock.rs`), its subcommand
    /// first, the bot's program and arguments last; bytes, as paths are.
    pub wrapper: Vec<Vec<u8>>,
    /// The bot's whole environment.
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    /// Its working directory.
    pub dir: Vec<u8>,
    /// The size of its `/tmp` and `/dev/shm`.
    pub tmpfs_bytes: u64,
    /// The size of its `/scratch`, if it has one.
    pub scratch_bytes: Option<u64>,
    /// `(path under /proc, stand-in's file name)` pairs.
    pub masks: Vec<(String, String)>,
    /// What the sandbox shows beneath `/tmp` (put back over the bot's own).
    pub keep: Vec<Vec<u8>>,
    /// `RLIMIT_AS`, `RLIMIT_CPU`, `RLIMIT_NOFILE`.
    pub limits: [Option<u64>; 3],
    /// The init's nice value: 19 for a bot built ahead of its game, so that
    /// building it takes no CPU from the game being played (the referee
    /// gives its tree nice 0 before the bot runs: `BotProcess::release`).
    pub nice: i32,
    /// Fresh mounts of the view's images put over the sandbox's binds
    /// (`image.rs`): each names a mount passed with the request.
    #[serde(default)]
    pub views: Vec<ViewMount>,
    /// Large files of the view shown as the host's own, bound over their
    /// empty stand-ins in the images (`image.rs`, [`LARGE_FILE`]): cloned
    /// from the sandbox's binds before the images cover them.
    ///
    /// [`LARGE_FILE`]: crate::sandbox::view::image::LARGE_FILE
    #[serde(default)]
    pub host_files: Vec<Vec<u8>>,
}

/// One path of the bot's view shown from a mount of its own (`image.rs`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ViewMount {
    /// Where the bot sees it.
    pub target: Vec<u8>,
    /// Which of the request's mounts (0: the first after the four stdio and
    /// report descriptors).
    pub image: usize,
    /// The path inside that mount (empty: its root).
    pub within: Vec<u8>,
}

/// The launcher's answer to a request.
#[derive(Serialize, Deserialize, Debug)]
pub enum Reply {
    /// The init is cloned; its pid comes over the report socket.
    Started,
    /// Nothing was started, and the launcher exits.
    Refused(String),
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
/// every bot it serves shares (`kept_state.rs`).
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

/// Clones the bot's init into new namespaces; returns its pid (in the
/// launcher's PID namespace).
fn clone_init(
    request: &Request,
    masks: &Path,
    stdio: [OwnedFd; 3],
    report: OwnedFd,
    images: &[OwnedFd],
) -> anyhow::Result<libc::pid_t> {
    let flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWIPC;
    // SAFETY: clone without a new stack behaves as fork(2): the child runs on
    // a copy of this (single-threaded) process and returns 0 here.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    match pid {
        -1 => Err(anyhow!(
            "failed to make the bot's namespaces: {}",
            std::io::Error::last_os_error()
        )),
        0 => {
            let code = match init(request, masks, stdio, &report, images) {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("referee: failed to start the bot: {e:#}");
                    127
                }
            };
            let _ = nix::unistd::write(&report, &code.to_ne_bytes());
            // SAFETY: the init ends here; its namespace goes with it.
            unsafe { libc::_exit(0) }
        }
        pid => Ok(pid as libc::pid_t),
    }
}

/// The bot's pid 1: builds its mounts, reports its pid, waits for the word,
/// forks the bot and returns its exit status as bubblewrap's would be.
fn init(
    request: &Request,
    masks: &Path,
    stdio: [OwnedFd; 3],
    report: &OwnedFd,
    images: &[OwnedFd],
) -> anyhow::Result<i32> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
    if request.nice != 0 {
        // SAFETY: setpriority(2) on this process.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, request.nice) } != 0 {
            return Err(anyhow!(
                "failed to lower the bot's priority: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    mounts(request, masks, images)?;
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, UnixCredentials};
    let creds = UnixCredentials::new();
    sendmsg::<()>(
        report.as_raw_fd(),
        &[std::io::IoSlice::new(b"p")],
        &[ControlMessage::ScmCredentials(&creds)],
        MsgFlags::empty(),
        None,
    )
    .context("failed to tell the referee the bot's pid")?;
    let mut word = [0u8; 1];
    loop {
        match nix::unistd::read(report.as_raw_fd(), &mut word) {
            Ok(1) => break,
            Ok(_) => std::process::exit(0),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(anyhow!("failed to hear from the referee: {e}")),
        }
    }
    // SAFETY: fork of a single-threaded process.
    let bot = match unsafe { nix::unistd::fork() }? {
        nix::unistd::ForkResult::Child => {
            let e = bot(request, stdio);
            eprintln!("referee: {e:#}");
            // SAFETY: the bot's process ends without running our destructors.
            unsafe { libc::_exit(127) }
        }
        nix::unistd::ForkResult::Parent { child } => child,
    };
    drop(stdio);
    use nix::sys::wait::{waitpid, WaitStatus};
    loop {
        match waitpid(None, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == bot => return Ok(code),
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == bot => {
                return Ok(128 + signal as i32)
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(anyhow!("failed to wait for the bot: {e}")),
        }
    }
}

fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: nix::mount::MsFlags,
    data: Option<&str>,
) -> anyhow::Result<()> {
    nix::mount::mount(source, target, fstype, flags, data)
        .with_context(|| format!("failed to mount {}", target.display()))
}

/// The bot's own mounts (module doc).
fn mounts(request: &Request, masks: &Path, images: &[OwnedFd]) -> anyhow::Result<()> {
    use nix::mount::MsFlags;
    let none: Option<&str> = None;
    mount(
        none,
        Path::new("/"),
        none,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        none,
    )?;
    own_proc(request, masks)?;
    let safe = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    // What the sandbox shows beneath /tmp, taken out before the fresh /tmp
    // covers it and put back on top.
    let kept: Vec<(PathBuf, OwnedFd)> = (request.keep.iter())
        .map(|p| {
            let path = PathBuf::from(OsString::from_vec(p.clone()));
            clone_tree(&path).map(|fd| (path, fd))
        })
        .collect::<anyhow::Result<_>>()?;
    let tmpfs = |at: &str, bytes: u64| {
        let data = format!("mode=0755,size={bytes}");
        mount(
            Some("tmpfs"),
            Path::new(at),
            Some("tmpfs"),
            safe,
            Some(&data),
        )
    };
    tmpfs("/tmp", request.tmpfs_bytes)?;
    tmpfs("/dev/shm", request.tmpfs_bytes)?;
    if let Some(bytes) = request.scratch_bytes {
        tmpfs(SCRATCH_INSIDE, bytes)?;
    }
    for (path, tree) in kept {
        put_back(&path, &tree)?;
    }
    show_views(request, images)?;
    // Last: every mount but the bot's own fresh ones read-only, so that no
    // metadata call leaves anything on what the next bot shares.
    let own = [
        Path::new("/tmp"),
        Path::new("/dev/shm"),
        Path::new(SCRATCH_INSIDE),
    ];
    super::state::seal(&own)
}

/// The bot's fresh `/proc`, with the constant stand-ins bound over its
/// host-wide files and its kernel knobs read-only, and the stand-ins'
/// folder out of sight.
fn own_proc(request: &Request, masks: &Path) -> anyhow::Result<()> {
    use nix::mount::MsFlags;
    let none: Option<&str> = None;
    let proc = Path::new("/proc");
    let safe = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(
        Some("proc"),
        proc,
        Some("proc"),
        safe | MsFlags::MS_NOEXEC,
        none,
    )?;
    let read_only = |path: &Path, source: &Path| -> anyhow::Result<()> {
        nix::mount::mount(
            Some(source),
            path,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .with_context(|| format!("failed to bind {}", path.display()))?;
        let ro = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | safe;
        mount(none, path, none, ro, none)
    };
    for sub in ["sys", "sysrq-trigger", "irq", "bus"] {
        let path = proc.join(sub);
        if path.exists() {
            read_only(&path, &path)?;
        }
    }
    for (target, name) in &request.masks {
        read_only(Path::new(target), &masks.join(name))?;
    }
    // Out of sight: unmounted where the sandbox's mounts are its own, else
    // (bubblewrap run as root makes them locked) covered by an empty tmpfs.
    if nix::mount::umount2(masks, nix::mount::MntFlags::MNT_DETACH).is_err() {
        let ro = safe | MsFlags::MS_RDONLY | MsFlags::MS_NOEXEC;
        mount(
            Some("tmpfs"),
            masks,
            Some("tmpfs"),
            ro,
            Some("size=4k,mode=0555"),
        )?;
    }
    Ok(())
}

/// Last, over the binds (and what was put back beneath /tmp): the view
/// from mounts of its own, whose caches no other bot shares (`image.rs`).
fn show_views(request: &Request, images: &[OwnedFd]) -> anyhow::Result<()> {
    // The large files, from the host's binds still seen here: a file has no
    // names beneath it to cache, and the holder keeps its pages resident.
    let files = (request.host_files.iter())
        .map(|file| {
            let path = PathBuf::from(OsString::from_vec(file.clone()));
            let tree = open_tree(libc::AT_FDCWD, file, 0)
                .with_context(|| format!("failed to keep {}", path.display()))?;
            Ok((path, tree))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    for view in &request.views {
        let image = (images.get(view.image))
            .ok_or_else(|| anyhow!("no mount {} was passed", view.image))?;
        let target = PathBuf::from(OsString::from_vec(view.target.clone()));
        let tree = clone_within(image, &view.within)
            .with_context(|| format!("failed to show {} from its image", target.display()))?;
        put_back(&target, &tree)?;
    }
    for (path, tree) in &files {
        attach(path, tree)?;
    }
    Ok(())
}

/// A detached copy of the tree at `within` (empty: the root) in the
/// detached mount `image`.
fn clone_within(image: &OwnedFd, within: &[u8]) -> anyhow::Result<OwnedFd> {
    let empty = match within.is_empty() {
        true => libc::AT_EMPTY_PATH as libc::c_uint,
        false => 0,
    };
    Ok(open_tree(image.as_raw_fd(), within, empty)?)
}

/// `open_tree(2)` with `OPEN_TREE_CLONE`, close-on-exec, and `flags`.
fn open_tree(dir: RawFd, path: &[u8], flags: libc::c_uint) -> std::io::Result<OwnedFd> {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    let c = CString::new(path)?;
    let flags = flags | OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint;
    // SAFETY: a directory (or mount) descriptor, a path and flags; returns
    // a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, dir, c.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A detached copy of the mount tree at `path` (`open_tree(2)`).
fn clone_tree(path: &Path) -> anyhow::Result<OwnedFd> {
    let recursive = libc::AT_RECURSIVE as libc::c_uint;
    open_tree(libc::AT_FDCWD, path.as_os_str().as_bytes(), recursive)
        .map_err(|e| anyhow!("failed to keep {}: {e}", path.display()))
}

/// Attaches `tree` at `path`, making the directories (or file) it needs.
fn put_back(path: &Path, tree: &OwnedFd) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("failed to make {}", parent.display()))?;
    }
    let is_dir = nix::sys::stat::fstat(tree.as_raw_fd())
        .map(|s| s.st_mode & libc::S_IFMT == libc::S_IFDIR)
        .unwrap_or(true);
    let made = match is_dir {
        true => std::fs::create_dir(path),
        false => std::fs::write(path, b""),
    };
    if let Err(e) = made.or_else(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Ok(()),
        _ => Err(e),
    }) {
        return Err(anyhow!("failed to make {}: {e}", path.display()));
    }
    attach(path, tree)
}

/// Attaches the detached `tree` at `path`, which exists.
fn attach(path: &Path, tree: &OwnedFd) -> anyhow::Result<()> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
    let c = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a detached tree's descriptor and a path.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            c.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if r != 0 {
        return Err(anyhow!(
            "failed to show {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The bot's process: its stdio, environment, directory and limits, every
/// capability dropped, then the Landlock wrapper's confinement and exec.
/// Returns only on failure.
fn bot(request: &Request, stdio: [OwnedFd; 3]) -> anyhow::Error {
    match prepare_bot(request, stdio) {
        Ok(args) => crate::sandbox::landlock::exec(&args),
        Err(e) => e.context("failed to start the bot"),
    }
}

fn prepare_bot(request: &Request, stdio: [OwnedFd; 3]) -> anyhow::Result<LandlockArgs> {
    for (fd, target) in stdio.iter().zip(0..) {
        nix::unistd::dup2(fd.as_raw_fd(), target)?;
    }
    drop(stdio);
    close_from(3);
    for (key, _) in std::env::vars_os() {
        std::env::remove_var(key);
    }
    for (key, value) in &request.env {
        std::env::set_var(
            OsString::from_vec(key.clone()),
            OsString::from_vec(value.clone()),
        );
    }
    let dir = OsString::from_vec(request.dir.clone());
    std::env::set_current_dir(Path::new(&dir)).context("cannot enter its directory")?;
    // As bubblewrap's `--chdir` sets it.
    std::env::set_var("PWD", &dir);
    use nix::sys::resource::{setrlimit, Resource};
    let resources = [
        Resource::RLIMIT_AS,
        Resource::RLIMIT_CPU,
        Resource::RLIMIT_NOFILE,
    ];
    for (r, v) in resources.into_iter().zip(request.limits) {
        if let Some(v) = v {
            setrlimit(r, v, v)?;
        }
    }
    // No priority above the one it was given (`--bot-nice`), whatever
    // limit the host gave the referee.
    setrlimit(Resource::RLIMIT_NICE, 0, 0)?;
    nix::sys::prctl::set_no_new_privs()?;
    drop_capabilities()?;
    parse_wrapper(&request.wrapper)
}

/// The wrapper's arguments from its command line (`Rules::command_line`).
pub fn parse_wrapper(words: &[Vec<u8>]) -> anyhow::Result<LandlockArgs> {
    use clap::Parser;
    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: LandlockArgs,
    }
    let words = words.iter().skip(1).map(|w| OsString::from_vec(w.clone()));
    Wrapper::try_parse_from(std::iter::once(OsString::from("referee")).chain(words))
        .map(|w| w.args)
        .map_err(|e| anyhow!("a malformed wrapper command line: {e}"))
}

/// The wrapper's command line for `rules` and the bot's `command`, as bytes.
pub fn wrapper_line(rules: &Rules, command: Vec<OsString>, hold: bool) -> Vec<Vec<u8>> {
    (rules.command_line(command, None, hold).into_iter())
        .map(OsString::into_vec)
        .collect()
}

/// Closes every descriptor from `first` on.
fn close_from(first: libc::c_uint) {
    // SAFETY: close_range closes descriptors only.
    unsafe { libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) };
}

/// Every capability gone: bounding set, ambient set, and the effective,
/// permitted and inheritable sets.
fn drop_capabilities() -> anyhow::Result<()> {
    let last = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse::<libc::c_ulong>().ok())
        .unwrap_or(63);
    for cap in 0..=last {
        // SAFETY: prctl with plain integers.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINVAL) {
                return Err(anyhow!("failed to drop capability {cap}: {e}"));
            }
        }
    }
    // SAFETY: prctl with plain integers.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset with a version-3 header and its two data words.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
        return Err(anyhow!(
            "failed to drop the capabilities: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
