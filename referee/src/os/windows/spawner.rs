//! Starting a bot on Windows: on the calling thread (nothing is tied to the
//! thread that starts a process, unlike Linux's parent-death signal; the
//! bot's job ends it with the referee: `job.rs`).

use tokio::process::{Child, Command};

/// Spawns `cmd`.
pub fn spawn(mut cmd: Command) -> std::io::Result<Child> {
    cmd.spawn()
}

/// [`spawn`], awaitable like Unix's.
pub async fn spawn_async(mut cmd: Command) -> std::io::Result<Child> {
    cmd.spawn()
}

/// Runs `f` and returns what it returns.
pub fn on_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    f()
}
