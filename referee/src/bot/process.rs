//! One bot process's lifecycle: spawn (sandbox, limits, cgroup), pid, exit
//! status, shutdown. What is said over its stdin and stdout is the
//! [`Channel`]'s business; `spawn` hands one over with the process.
//!
//! stderr is drained by a task of its own from the moment the process starts
//! (stdout by the channel's), so a bot never blocks on a full pipe for long;
//! stderr goes to a log file up to a cap and is discarded past it: a trickle
//! is read at a bounded rate, a flood as fast as it comes (see
//! `stderr.rs`), so neither costs the referee much nor slows the bot.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::time::{timeout, Instant};

use super::channel::Channel;
use super::cpu::CpuSource;
use super::pipe::Pipe;
use super::stderr::{drain_stderr, Drained};
use crate::cgroup::{self, Cgroup};
use crate::os::reaper::{self, Remains};
use crate::os::{group, process, spawner, Fd, Launch, ResourceLimits, Signal};
use crate::sandbox::{BotStart, Kept, Launcher, Report, Sandbox, Start};

/// How a bot process is started.
#[derive(Clone, Debug)]
pub struct Spawn {
    /// Program, arguments and directory (never run through a shell).
    pub launch: Launch,
    /// Its whole environment: nothing of the referee's is passed on.
    pub env: Vec<(String, String)>,
    /// Run it sandboxed (`--sandbox`).
    pub sandbox: Option<Arc<Sandbox>>,
    pub max_line: usize,
    pub limits: ResourceLimits,
    /// Where its stderr goes, and how much of it is kept.
    pub stderr_log: Option<PathBuf>,
    pub stderr_cap: u64,
    /// Sandboxed: build the sandbox but run the bot only once a newline is
    /// written to its stdin (`landlock.rs`, `--hold`). Unsandboxed: ignored.
    pub hold: bool,
    /// A tournament's start check: the bot is sent hello and ended before
    /// any game is dealt, so it may run while the sandbox's view is still
    /// being held. Every other sandboxed bot runs only once it is
    /// (`Sandbox::held`): its start waits for it, or, if `hold`, the word
    /// that runs it does (`session.rs`, `greet`).
    pub before_any_game: bool,
}

pub struct BotProcess {
    pid: u32,
    child: Proc,
    stderr_task: Option<tokio::task::JoinHandle<Drained>>,
    exit: Option<ExitStatus>,
    /// Removed once the process tree is gone.
    cgroup: Option<Cgroup>,
    /// The nice value its tree runs at once released (`--bot-nice`).
    nice: i32,
    /// The CPUs its tree is pinned to once released: a held bot built ahead
    /// (its wrapper pins itself otherwise; none: it runs wherever).
    pin: Vec<usize>,
}

/// What the referee waits on for a bot's exit.
// Where the OS has no sandbox, `Kept` holds only empty stand-ins
// (`sandbox/absent.rs`) and is never made: its size there means nothing.
#[allow(clippy::large_enum_variant)]
enum Proc {
    /// A process of its own (the bot, or its bubblewrap).
    Child(Child),
    /// A bot started in a kept sandbox (`crate::sandbox`'s `kept/pool.rs`): its status comes over
    /// the report socket, and the launcher goes back to the pool once the
    /// bot's tree is dead.
    Kept {
        report: Report,
        /// The init's pidfd, opened while it waited for its word.
        init: Option<Fd>,
        launcher: Option<Launcher>,
        sandbox: Arc<Sandbox>,
    },
}

impl Proc {
    async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match self {
            Proc::Child(child) => child.wait().await,
            Proc::Kept { report, .. } => Ok(report.exit_status().await),
        }
    }
}

impl BotProcess {
    /// Starts the process; the channel talks to its stdin and stdout.
    pub fn spawn(spec: &Spawn) -> std::io::Result<(BotProcess, Channel)> {
        let Some(sandbox) = &spec.sandbox else {
            let (cmd, cgroup) = command(spec)?;
            return finish(spawner::spawn(cmd), None, cgroup, spec);
        };
        match sandbox.start(&spec.bot_start())? {
            Start::Kept(kept) => from_kept(kept, spec, sandbox.clone()),
            Start::Alone {
                command,
                stdout,
                cgroup,
            } => finish(spawner::spawn(command), Some(stdout), cgroup, spec),
        }
    }

    /// [`BotProcess::spawn`] without blocking the caller's thread while the
    /// process is forked and moved into its cgroup (which can take tens of
    /// milliseconds on a loaded host: `cgroup.procs` waits for an RCU grace
    /// period), so that a table builds its next game's sandboxes while it
    /// plays (`session.rs`, `Prepared`).
    pub async fn spawn_async(spec: &Spawn) -> std::io::Result<(BotProcess, Channel)> {
        let Some(sandbox) = &spec.sandbox else {
            let (cmd, cgroup) = command(spec)?;
            return finish(spawner::spawn_async(cmd).await, None, cgroup, spec);
        };
        match Sandbox::start_async(sandbox, &spec.bot_start()).await? {
            Start::Kept(kept) => from_kept(kept, spec, sandbox.clone()),
            Start::Alone {
                command,
                stdout,
                cgroup,
            } => finish(
                spawner::spawn_async(command).await,
                Some(stdout),
                cgroup,
                spec,
            ),
        }
    }

    /// A held sandbox is built at the lowest priority (nice 19), so that
    /// building it takes no CPU from the game being played; before its bot
    /// runs, every process of its tree is given the bots' priority
    /// (`--bot-nice`, 0 unless a root referee freezes waiting bots; raising
    /// it from 19 is a root referee's right: a non-root one builds no
    /// sandbox ahead, `Sandbox::builds_ahead`).
    ///
    /// A kept sandbox's init forks the held bot once given its word, which
    /// it was at its start. A process being forked takes its parent's nice
    /// value before it is listed among its children, so a renice meanwhile
    /// would miss it and leave the bot at 19 for good: the init is reniced,
    /// then its fork waited for (it is due, and nothing else forks before
    /// the bot is run), then the tree reniced again.
    ///
    /// A held bot built ahead is pinned to its CPUs here too (its wrapper
    /// confined itself unpinned, wherever a CPU was free): `false` if that
    /// failed, and then the bot must not be given its word.
    pub fn release(&self) -> bool {
        process::renice_tree(self.pid, self.nice);
        if matches!(self.child, Proc::Kept { .. }) && self.wait_for_fork() {
            process::renice_tree(self.pid, self.nice);
        }
        if self.pin.is_empty() {
            return true;
        }
        match process::pin_tree(self.pid, &self.pin) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(
                    "bot {} is not run: it could not be pinned to CPUs {:?}: {e}",
                    self.pid,
                    self.pin
                );
                false
            }
        }
    }

    /// Waits (up to 5 s, while it lives) until the process of `pid` has a
    /// child; `true` if it had none yet when asked.
    fn wait_for_fork(&self) -> bool {
        let start = Instant::now();
        let mut waited = false;
        while group::tree(self.pid).len() < 2
            && group::alive(self.pid)
            && start.elapsed() < Duration::from_secs(5)
        {
            waited = true;
            std::thread::sleep(Duration::from_micros(200));
        }
        waited
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The bot has said something, so it runs: a kept sandbox's init (the
    /// process of `pid`) has forked it into the cgroup and only waits for
    /// it from now on, so where the freezer is cgroup v2's it leaves it
    /// ([`Cgroup::freezer_exit`]), on a thread of its own (the move waits
    /// for an RCU grace period). The init's pidfd, opened while it waited
    /// for its word, proves before the move that the pid is still the
    /// init's. Killing still takes it (by pid, `shutdown`), and it ends
    /// with the bot in any case. A failure is logged, not fatal: the init
    /// then stays frozen with the bot, as before.
    pub fn started(&self) {
        let Proc::Kept {
            init: Some(init), ..
        } = &self.child
        else {
            return;
        };
        let Some(exit) = self.cgroup.as_ref().and_then(Cgroup::freezer_exit) else {
            return;
        };
        let (pid, Ok(init)) = (self.pid, init.try_clone()) else {
            return;
        };
        let leave = move || {
            if !reaper::exited(&init) {
                if let Err(e) = exit.apply(pid) {
                    tracing::debug!("the init {pid} stays in its bot's freezer: {e}");
                }
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(leave)),
            Err(_) => leave(),
        }
    }

    /// Where its CPU time is read: its cgroup's accounting (every task, exited
    /// ones included) where it has one, else its process tree.
    pub fn cpu_source(&self) -> CpuSource {
        match self.cgroup.as_ref().and_then(Cgroup::cpu_usage) {
            Some(usage) => CpuSource::Cgroup(usage),
            None => CpuSource::process_tree(self.pid),
        }
    }

    /// Freezes its whole tree (`true`) or thaws it, where it has a freezer.
    /// A failure is logged, not fatal: the bot then just keeps running.
    pub fn freeze(&self, frozen: bool) {
        if let Some(cgroup) = &self.cgroup {
            if let Err(e) = cgroup.freeze(frozen) {
                tracing::warn!(
                    "failed to {} bot {}: {e}",
                    if frozen { "freeze" } else { "thaw" },
                    self.pid
                );
            }
        }
    }

    /// The exit status if the process ends by `deadline` (`None`: waits as long as
    /// it takes).
    pub async fn exit_status_by(&mut self, deadline: Option<Instant>) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = match deadline {
                Some(d) => tokio::time::timeout_at(d, self.child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok),
                None => self.child.wait().await.ok(),
            };
        }
        self.exit
    }

    /// The exit status if the process has ended (waits up to `wait` for it).
    async fn exit_status(&mut self, wait: Duration) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = timeout(wait, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok);
        }
        self.exit
    }

    /// Ends the process once its stdin is closed (the caller has said goodbye
    /// and closed its channel): give it `grace` to exit, then SIGTERM the
    /// group, then SIGKILL it, and reap. The group is killed even if the leader
    /// exited by itself, so no grandchild outlives the referee.
    ///
    /// Returns once the process is reaped and its stderr drained; making sure
    /// that every process of its tree is gone (a sandbox's pid 1 can linger as
    /// an orphaned zombie for seconds) is the reaper's (`reaper.rs`), off the
    /// game's critical path, and the referee's exit waits for it.
    pub async fn shutdown(mut self, grace: Duration) -> Option<ExitStatus> {
        let mut status = self.exit_status(grace).await;
        if status.is_none() {
            group::signal_group(self.pid, Signal::SIGTERM);
            if matches!(self.child, Proc::Kept { .. }) {
                // A PID namespace's init ignores what it has no handler for:
                // the bot and its children get it.
                for &pid in &group::tree(self.pid)[1..] {
                    group::signal(pid, Signal::SIGTERM);
                }
            }
            status = self
                .exit_status(grace.min(Duration::from_millis(500)))
                .await;
        }
        // The tree as it is now: a sandboxed bot and its pid 1 live in a session
        // of their own, outside the group, so they are killed by pid (the pid
        // namespace takes everything else in it along). Watched before the kill,
        // so that no pid in it can have been reused.
        let tree = group::tree(self.pid);
        let cgroup = self
            .cgroup
            .take()
            .map(|c| Box::new(c) as Box<dyn reaper::Enclosure>);
        let remains = Remains::watch(self.pid, &tree, cgroup);
        group::signal_group(self.pid, Signal::SIGKILL);
        for &pid in &tree[1..] {
            group::signal(pid, Signal::SIGKILL);
        }
        // Whatever of the bot's tree escaped its process group (an unsandboxed
        // daemon), so that it lets go of stderr too.
        remains.kill_cgroup();
        if status.is_none() {
            status = self.child.wait().await.ok();
        }
        if let Some(task) = self.stderr_task.take() {
            // The group is dead, so stderr reaches EOF promptly; don't wait on a
            // descriptor some escaped process might still hold.
            let _ = timeout(Duration::from_millis(500), task).await;
        }
        reaper::hand_over(remains);
        if let Proc::Kept {
            launcher, sandbox, ..
        } = &mut self.child
        {
            if let Some(launcher) = launcher.take() {
                sandbox.give_back(launcher);
            }
        }
        status
    }
}

/// The process and its channel, for a bot started in a kept sandbox.
fn from_kept(
    kept: Kept,
    spec: &Spawn,
    sandbox: Arc<Sandbox>,
) -> std::io::Result<(BotProcess, Channel)> {
    let Kept {
        pid,
        report,
        init,
        pin,
        launcher,
        stdin,
        stdout,
        stderr,
        cgroup,
    } = kept;
    let stdin = crate::os::pipe::sender(stdin)?;
    let channel = Channel::new(Pipe::new(stdout)?, stdin, spec.max_line);
    crate::os::pipe::set_nonblocking(&stderr)?;
    let stderr_task = tokio::spawn(drain_stderr(
        stderr,
        spec.stderr_log.clone(),
        spec.stderr_cap,
    ));
    let report = Report::new(report)?;
    let process = BotProcess {
        pid,
        child: Proc::Kept {
            report,
            init,
            launcher: Some(launcher),
            sandbox,
        },
        stderr_task: Some(stderr_task),
        exit: None,
        cgroup,
        nice: spec.limits.nice,
        pin,
    };
    Ok((process, channel))
}

/// The command that starts `spec`'s bot unsandboxed (its limits and
/// cgroup), and the cgroup.
fn command(spec: &Spawn) -> std::io::Result<(Command, Option<Cgroup>)> {
    let launch = &spec.launch;
    let mut cmd = Command::from(crate::os::own_exe::command(launch.invoked()));
    cmd.args(&launch.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&launch.dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let cgroup = cgroup::for_bot(&spec.limits, 0)?;
    let fds = cgroup.as_ref().map_or([None; 6], Cgroup::procs_fds);
    process::configure(&mut cmd, spec.limits, fds, None);
    Ok((cmd, cgroup))
}

/// The process and its channel, once `child` is forked; `stdout_pipe`: a
/// sandboxed bot's own stdout (read end, write end), `cgroup` its cgroup.
fn finish(
    child: std::io::Result<Child>,
    stdout_pipe: Option<(Fd, Fd)>,
    cgroup: Option<Cgroup>,
    spec: &Spawn,
) -> std::io::Result<(BotProcess, Channel)> {
    // Ours closed whatever happened: the bot's is its only writer.
    let stdout_read = stdout_pipe.map(|(r, _)| r);
    let mut child = child?;
    let pid = child.id().expect("a just-spawned child has a pid");
    group::register(pid);
    if let Err(e) = process::adopt(pid, &spec.limits) {
        let _ = child.start_kill();
        return Err(e);
    }
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = match stdout_read {
        Some(fd) => fd,
        None => crate::os::pipe::child_stdout(child.stdout.take().expect("stdout is piped"))?,
    };
    let stderr = child.stderr.take().expect("stderr is piped");
    let channel = Channel::new(Pipe::new(stdout)?, stdin, spec.max_line);
    let stderr = crate::os::pipe::child_stderr(stderr)?;
    crate::os::pipe::set_nonblocking(&stderr)?;
    let stderr_task = tokio::spawn(drain_stderr(
        stderr,
        spec.stderr_log.clone(),
        spec.stderr_cap,
    ));
    let process = BotProcess {
        pid,
        child: Proc::Child(child),
        stderr_task: Some(stderr_task),
        exit: None,
        cgroup,
        nice: spec.limits.nice,
        pin: Vec::new(),
    };
    Ok((process, channel))
}

impl Spawn {
    /// What a sandboxed start is asked for.
    fn bot_start(&self) -> BotStart {
        BotStart {
            launch: self.launch.clone(),
            env: self.env.clone(),
            limits: self.limits,
            hold: self.hold,
            before_any_game: self.before_any_game,
        }
    }
}

// A Linux bot: `/bin/cat`, forked with the parent-death signal.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::bot::Incoming;

    fn cat() -> Spawn {
        let program = std::fs::canonicalize("/bin/cat").expect("cat is installed");
        Spawn {
            launch: Launch {
                dir: program.parent().unwrap().to_path_buf(),
                program,
                args: Vec::new(),
                scratch: None,
                slot: None,
                invoked: None,
            },
            env: crate::config::Isolation::env(&[]),
            sandbox: None,
            max_line: 1024,
            limits: ResourceLimits::default(),
            stderr_log: None,
            stderr_cap: 0,
            hold: false,
            before_any_game: false,
        }
    }

    /// The parent-death signal is tied to the thread that forks; a bot forked from
    /// a blocking-pool thread was killed when that thread ended after its idle
    /// keep-alive (10 s by default, 1 ms here).
    #[test]
    fn a_bot_outlives_the_thread_that_started_it() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_keep_alive(Duration::from_millis(1))
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (bot, thread) =
                tokio::task::spawn_blocking(|| (BotProcess::spawn(&cat()), nix::unistd::gettid()))
                    .await
                    .unwrap();
            let (bot, mut channel) = bot.expect("cat starts");
            // Wait until that thread has ended: its /proc entry goes only after
            // its exit is complete, death signals sent.
            let task = format!("/proc/self/task/{thread}");
            let start = Instant::now();
            while std::path::Path::new(&task).exists() {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "the thread never ended"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            channel.queue(b"ping");
            channel.flush(Some(Duration::from_secs(30))).await.unwrap();
            match channel
                .next_line(Some(Instant::now() + Duration::from_secs(30)))
                .await
            {
                Some(Incoming::Line { bytes, .. }) => assert_eq!(&bytes[..], b"ping"),
                other => panic!("the bot died with the thread that started it: {other:?}"),
            }
            channel.close_writer();
            bot.shutdown(Duration::ZERO).await;
        });
    }
}
