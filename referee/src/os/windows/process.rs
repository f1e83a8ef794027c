//! How a bot process is started on Windows: suspended, put in a Job Object
//! of its own with its limits (`job.rs`), then resumed, so that it cannot
//! start a process of its own before its job holds it; in a console
//! process group of its own, so that a Ctrl-C at the referee's console
//! reaches the referee alone (which then ends every bot: `shutdown.rs`).

use std::convert::Infallible;

use tokio::process::Command;
use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME,
};

use super::job::Job;
use crate::os::ResourceLimits;

/// No cgroups: nothing for a child to enter (`crate::cgroup` makes none).
pub type ProcsFds = [Option<Infallible>; 6];

/// Makes `cmd` start suspended, in a console process group of its own;
/// [`adopt`] puts it in its job and lets it run. `limits` are the job's.
pub fn configure(
    cmd: &mut Command,
    _limits: ResourceLimits,
    _cgroup: ProcsFds,
    _seccomp: Option<Infallible>,
) {
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP);
}

/// Puts the suspended process `pid` in a job of its own with `limits`,
/// holds the job (`group.rs`), and resumes the process. On an error the
/// process is still suspended: the caller kills it.
pub fn adopt(pid: u32, limits: &ResourceLimits) -> std::io::Result<()> {
    let job = Job::new(limits)?;
    job.assign(pid)?;
    super::group::hold(pid, job);
    resume(pid)
}

/// Resumes every thread of `pid` (a process started suspended has one).
fn resume(pid: u32) -> std::io::Result<()> {
    // SAFETY: a snapshot handle, walked with a structure of the size it
    // says, closed once; each thread handle opened is closed once.
    unsafe {
        let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
        if snapshot == INVALID_HANDLE_VALUE {
            return Err(std::io::Error::last_os_error());
        }
        let mut entry: THREADENTRY32 = std::mem::zeroed();
        entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
        let mut resumed = 0;
        let mut more = Thread32First(snapshot, &mut entry) != 0;
        while more {
            if entry.th32OwnerProcessID == pid {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID);
                if !thread.is_null() {
                    if ResumeThread(thread) != u32::MAX {
                        resumed += 1;
                    }
                    CloseHandle(thread);
                }
            }
            more = Thread32Next(snapshot, &mut entry) != 0;
        }
        CloseHandle(snapshot);
        match resumed {
            0 => Err(std::io::Error::other(format!(
                "failed to resume the bot process {pid}: no thread of it found"
            ))),
            _ => Ok(()),
        }
    }
}

/// Nice values are refused on Windows (`--bot-nice`): every bot runs at 0.
pub fn renice_tree(_: u32, _: i32) {}

/// CPUs are pinned only in a kept sandbox, which Windows has not.
pub fn pin_tree(_: u32, _: &[usize]) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}
