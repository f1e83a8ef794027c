//! The init of one bot in a kept sandbox: cloned by the launcher into new
//! PID, mount, network and IPC namespaces, it builds the bot's mounts
//! (`mounts.rs`), tells the referee its pid, waits for its word, forks the
//! bot (every capability dropped, then the Landlock wrapper) and reports
//! its exit status.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use anyhow::{anyhow, Context};
use nix::libc;

use super::message::{parse_wrapper, Request};
use super::mounts::mounts;
use crate::sandbox::landlock::LandlockArgs;

/// Clones the bot's init into new namespaces; returns its pid (in the
/// launcher's PID namespace).
pub(super) fn clone_init(
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
pub(super) fn init(
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

/// The bot's process: its stdio, environment, directory and limits, every
/// capability dropped, then the Landlock wrapper's confinement and exec.
/// Returns only on failure.
pub(super) fn bot(request: &Request, stdio: [OwnedFd; 3]) -> anyhow::Error {
    match prepare_bot(request, stdio) {
        Ok(args) => crate::sandbox::landlock::exec(&args),
        Err(e) => e.context("failed to start the bot"),
    }
}

pub(super) fn prepare_bot(request: &Request, stdio: [OwnedFd; 3]) -> anyhow::Result<LandlockArgs> {
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

/// Closes every descriptor from `first` on.
pub(super) fn close_from(first: libc::c_uint) {
    // SAFETY: close_range closes descriptors only.
    unsafe { libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) };
}

/// Every capability gone: bounding set, ambient set, and the effective,
/// permitted and inheritable sets.
pub(super) fn drop_capabilities() -> anyhow::Result<()> {
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
