//! A Job Object per bot: the Windows enclosure of a bot's process tree.
//!
//! Every process the bot starts is in its job (a child joins its parent's
//! job unless the job lets it break away, which a bot's never does). The
//! job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when its last
//! handle closes — the reaper's, at the latest when the referee exits,
//! whichever way it exits — Windows kills every process still in it, so
//! nothing a bot starts outlives the run. It also carries the bot's limits
//! (`--limit-procs`: active processes; `--limit-memory-mb`: the committed
//! memory of the whole tree; `--limit-cpu-s`: user-mode CPU per process),
//! is killed whole ([`Job::terminate`]), counts its live processes (the
//! tree is gone at 0) and the CPU time of every process it ever held,
//! exited ones included (`--clock cpu`).

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::time::Duration;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation,
    JobObjectBasicProcessIdList, JobObjectExtendedLimitInformation, QueryInformationJobObject,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_ACTIVE_PROCESS,
    JOB_OBJECT_LIMIT_JOB_MEMORY, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOB_OBJECT_LIMIT_PROCESS_TIME,
};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE};

use crate::os::ResourceLimits;

/// The exit code of a process the referee killed.
pub const KILLED: u32 = 1;

/// One bot's job; closed (and whatever is left in it killed) when dropped.
#[derive(Debug)]
pub struct Job(OwnedHandle);

impl Job {
    /// An anonymous job with `limits` and kill-on-close.
    pub fn new(limits: &ResourceLimits) -> std::io::Result<Job> {
        // SAFETY: no security attributes, no name; a new handle or null.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a handle just returned to us and owned by nobody else.
        let job = Job(unsafe { OwnedHandle::from_raw_handle(handle) });
        // SAFETY: an all-zero JOBOBJECT_EXTENDED_LIMIT_INFORMATION is valid
        // (plain integers).
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        let basic = &mut info.BasicLimitInformation;
        basic.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        if let Some(n) = limits.processes {
            basic.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
            basic.ActiveProcessLimit = n.min(u32::MAX as u64) as u32;
        }
        if let Some(s) = limits.cpu_seconds {
            // In 100-nanosecond units.
            basic.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_TIME;
            basic.PerProcessUserTimeLimit =
                s.saturating_mul(10_000_000).min(i64::MAX as u64) as i64;
        }
        if let Some(bytes) = limits.memory_bytes {
            info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
            info.JobMemoryLimit = bytes.min(usize::MAX as u64) as usize;
        }
        // SAFETY: the class's structure, of its size, on a job handle we own.
        let ok = unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    fn raw(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }

    /// Puts the process `pid` in the job (before it runs: it was started
    /// suspended, `process.rs`).
    pub fn assign(&self, pid: u32) -> std::io::Result<()> {
        // SAFETY: OpenProcess takes plain values; a handle or null.
        let process = unsafe { OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid) };
        if process.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: two handles we hold; the process handle closed after.
        let ok = unsafe { AssignProcessToJobObject(self.raw(), process) };
        let error = std::io::Error::last_os_error();
        // SAFETY: the handle OpenProcess returned, closed once.
        unsafe { CloseHandle(process) };
        match ok {
            0 => Err(error),
            _ => Ok(()),
        }
    }

    /// Kills every process in the job.
    pub fn terminate(&self) {
        // SAFETY: a job handle we own.
        unsafe { TerminateJobObject(self.raw(), KILLED) };
    }

    /// What the job has counted: its processes' CPU time (user and kernel,
    /// exited processes included) and how many of them are alive.
    pub fn accounting(&self) -> Option<(Duration, u32)> {
        // SAFETY: all-zero is a valid value of this plain structure.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the class's structure, of its size, written by the call.
        let ok = unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicAccountingInformation,
                (&mut info as *mut JOBOBJECT_BASIC_ACCOUNTING_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return None;
        }
        let ticks = (info.TotalUserTime as u64).saturating_add(info.TotalKernelTime as u64);
        Some((
            Duration::from_nanos(ticks.saturating_mul(100)),
            info.ActiveProcesses,
        ))
    }

    /// How many processes of the job are alive (0 if it cannot be read:
    /// then nothing can be found in it either).
    pub fn active(&self) -> u32 {
        self.accounting().map_or(0, |(_, n)| n)
    }

    /// The pids of the job's live processes (at most 1,024).
    pub fn pids(&self) -> Vec<u32> {
        // The list's header (two u32s), then the pids, as pointer-sized ints.
        let mut buf = vec![0usize; 2 + 1024];
        // SAFETY: a buffer of the size given, written by the call.
        let ok = unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicProcessIdList,
                buf.as_mut_ptr().cast(),
                (buf.len() * std::mem::size_of::<usize>()) as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Vec::new();
        }
        // The header is two u32s: on 64 bits, one usize holds both.
        let header = 8usize.div_ceil(std::mem::size_of::<usize>());
        // SAFETY: the header's second u32 is the count of pids listed.
        let listed = unsafe { *(buf.as_ptr() as *const u32).add(1) } as usize;
        buf[header..header + listed.min(1024)]
            .iter()
            .map(|&p| p as u32)
            .collect()
    }
}
