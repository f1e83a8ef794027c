//! The CPU time of a bot's tree on Windows, for `--clock cpu`: its job's
//! accounting (`JobObjectBasicAccountingInformation`: user and kernel time
//! of every process the job ever held, exited ones included).

use std::time::Duration;

/// The CPU time of the bot whose first process is `pid`, while its job is
/// held (`None` after, or if it cannot be read).
pub fn tree_cpu_time(pid: u32) -> Option<Duration> {
    super::group::job(pid)?.accounting().map(|(cpu, _)| cpu)
}
