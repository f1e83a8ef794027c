//! Every bot is forked from one thread that lives as long as the referee.
//!
//! A bot dies with the referee through `PR_SET_PDEATHSIG`, and Linux sends that
//! signal when the *thread* that forked the process ends, not the process. Forked
//! from a tokio worker or a blocking-pool thread (which ends after 10 s idle), a
//! bot would be killed mid-match. Forking from this thread, which never ends,
//! arms the signal for the referee's lifetime.

use std::sync::mpsc;
use std::sync::OnceLock;

use tokio::process::{Child, Command};

type Job = Box<dyn FnOnce() + Send>;

/// Spawns `cmd` on the spawner thread, inside the caller's tokio runtime (which
/// will reap the child), and waits for the result.
pub fn spawn(mut cmd: Command) -> std::io::Result<Child> {
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _entered = runtime.enter();
        let _ = tx.send(cmd.spawn());
    });
    spawner()
        .send(job)
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    rx.recv()
        .map_err(|_| std::io::Error::other("the spawner thread panicked"))?
}

/// [`spawn`] awaited rather than waited for: the caller's thread goes on with
/// other tasks while the spawner forks.
pub async fn spawn_async(mut cmd: Command) -> std::io::Result<Child> {
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _entered = runtime.enter();
        let _ = tx.send(cmd.spawn());
    });
    spawner()
        .send(job)
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    rx.await
        .map_err(|_| std::io::Error::other("the spawner thread panicked"))?
}

/// Runs `f` on the spawner thread and returns what it returns: for a helper
/// process of the referee's own (`holder.rs`) that must die with the referee.
pub fn on_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    if spawner().send(job).is_err() {
        panic!("the bot spawner thread is gone");
    }
    rx.recv().expect("the bot spawner thread panicked")
}

fn spawner() -> &'static mpsc::Sender<Job> {
    static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("bot-spawner".into())
            .spawn(move || {
                // The sender lives in a static, so this loop never ends.
                for job in rx {
                    job();
                }
            })
            .expect("failed to start the bot spawner thread");
        tx
    })
}
