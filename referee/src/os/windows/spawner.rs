//! Starting a bot on Windows: on the calling thread (nothing is tied to the
//! thread that starts a process, unlike Linux's parent-death signal; the
//! bot's job ends it with the referee: `job.rs`).

use tokio::process::{Child, Command};

/// Spawns `cmd`.
pub fn spawn(mut cmd: Command) -> std::io::Result<Child> {
    cmd.spawn()
}

/// [`spawn`], awaitable like Unix's. A start the host refused for want of
/// its own resources (not the bot's doing: no program, no permission) is
/// tried again, twice, after a pause: a bot is not charged a start fault,
/// and its game not changed, for the host's moment of pressure.
pub async fn spawn_async(mut cmd: Command) -> std::io::Result<Child> {
    let mut pause = std::time::Duration::from_millis(50);
    for _ in 0..2 {
        match cmd.spawn() {
            Err(e) if host_refused(&e) => {
                tokio::time::sleep(pause).await;
                pause *= 4;
            }
            started => return started,
        }
    }
    cmd.spawn()
}

/// Whether CreateProcess failed for the host's sake: out of memory or
/// system resources, or an internal error (wine under load gives 1359).
fn host_refused(e: &std::io::Error) -> bool {
    const NOT_ENOUGH_MEMORY: i32 = 8;
    const OUTOFMEMORY: i32 = 14;
    const INTERNAL_ERROR: i32 = 1359;
    const NO_SYSTEM_RESOURCES: i32 = 1450;
    const COMMITMENT_LIMIT: i32 = 1455;
    matches!(
        e.raw_os_error(),
        Some(
            NOT_ENOUGH_MEMORY
                | OUTOFMEMORY
                | INTERNAL_ERROR
                | NO_SYSTEM_RESOURCES
                | COMMITMENT_LIMIT
        )
    )
}

/// Runs `f` and returns what it returns.
pub fn on_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    f()
}
