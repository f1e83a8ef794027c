//! One bot process's lifecycle: spawn (sandbox, limits, cgroup), pid, exit
//! status, shutdown. What is said over its stdin and stdout is the
//! [`Channel`]'s business; `spawn` hands one over with the process.
//!
//! stderr is drained by a task of its own from the moment the process starts
//! (stdout by the channel's), so a bot never blocks on a full pipe for long;
//! stderr goes to a log file up to a cap and is discarded past it: a trickle
//! is read at a bounded rate, a flood as fast as it comes (see
//! `stderr.rs`), so neither costs the referee much nor slows the bot.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use std::os::fd::{AsRawFd, OwnedFd};

use tokio::process::{Child, Command};
use tokio::time::{timeout, Instant};

use super::channel::Channel;
use super::cpu::CpuSource;
use super::pipe::Pipe;
use super::stderr::{drain_stderr, Drained};
use crate::cgroup::{Cgroup, CgroupLimits};
use crate::os::process::{self as unix, ResourceLimits};
use crate::os::reaper::{self, Remains};
use crate::os::spawner;
use crate::os::Launch;
use crate::sandbox::kept::pool::Launcher;
use crate::sandbox::Sandbox;

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
enum Proc {
    /// A process of its own (the bot, or its bubblewrap).
    Child(Child),
    /// A bot started in a kept sandbox (`slot.rs`): its status comes over
    /// the report socket, and the launcher goes back to the pool once the
    /// bot's tree is dead.
    Kept {
        report: tokio::net::UnixStream,
        /// The init's pidfd, opened while it waited for its word.
        init: Option<OwnedFd>,
        launcher: Option<Launcher>,
        sandbox: Arc<Sandbox>,
    },
}

impl Proc {
    async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        use std::os::unix::process::ExitStatusExt;
        use tokio::io::AsyncReadExt;
        match self {
            Proc::Child(child) => child.wait().await,
            Proc::Kept { report, .. } => {
                let mut code = [0u8; 4];
                Ok(match report.read_exact(&mut code).await {
                    Ok(_) => ExitStatus::from_raw(i32::from_ne_bytes(code) << 8),
                    // The init was killed before it could tell.
                    Err(_) => ExitStatus::from_raw(Signal::SIGKILL as i32),
                })
            }
        }
    }
}

impl BotProcess {
    /// Starts the process; the channel talks to its stdin and stdout.
    pub fn spawn(spec: &Spawn) -> std::io::Result<(BotProcess, Channel)> {
        if let Some(sandbox) = spec.sandbox.as_ref().filter(|_| runs_at_once(spec)) {
            sandbox.held().map_err(std::io::Error::other)?;
        }
        if let Some(sandbox) = spec.sandbox.as_ref().filter(|s| s.keeps(&spec.launch)) {
            if let Some(kept) = start_kept(sandbox, spec)? {
                return kept.finish(spec, sandbox.clone());
            }
        }
        let (cmd, parts) = command(spec)?;
        let child = spawner::spawn(cmd);
        parts.finish(child, spec)
    }

    /// [`BotProcess::spawn`] without blocking the caller's thread while the
    /// process is forked and moved into its cgroup (which can take tens of
    /// milliseconds on a loaded host: `cgroup.procs` waits for an RCU grace
    /// period), so that a table builds its next game's sandboxes while it
    /// plays (`session.rs`, `Prepared`).
    pub async fn spawn_async(spec: &Spawn) -> std::io::Result<(BotProcess, Channel)> {
        if let Some(sandbox) = spec.sandbox.as_ref().filter(|_| runs_at_once(spec)) {
            Sandbox::held_async(sandbox)
                .await
                .map_err(std::io::Error::other)?;
        }
        if let Some(sandbox) = spec.sandbox.as_ref().filter(|s| s.keeps(&spec.launch)) {
            let (sb, sp) = (sandbox.clone(), spec.clone());
            let kept = tokio::task::spawn_blocking(move || start_kept(&sb, &sp))
                .await
                .map_err(std::io::Error::other)??;
            if let Some(kept) = kept {
                return kept.finish(spec, sandbox.clone());
            }
        }
        let (cmd, parts) = command(spec)?;
        let child = spawner::spawn_async(cmd).await;
        parts.finish(child, spec)
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
        unix::renice_tree(self.pid, self.nice);
        if matches!(self.child, Proc::Kept { .. }) && self.wait_for_fork() {
            unix::renice_tree(self.pid, self.nice);
        }
        if self.pin.is_empty() {
            return true;
        }
        match unix::pin_tree(self.pid, &self.pin) {
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
        while unix::tree(self.pid).len() < 2
            && unix::alive(self.pid)
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
            if !crate::os::reaper::exited(&init) {
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
            unix::signal_group(self.pid, Signal::SIGTERM);
            if matches!(self.child, Proc::Kept { .. }) {
                // A PID namespace's init ignores what it has no handler for:
                // the bot and its children get it.
                for &pid in &unix::tree(self.pid)[1..] {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid as i32),
                        Signal::SIGTERM,
                    );
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
        let tree = unix::tree(self.pid);
        let remains = Remains::watch(self.pid, &tree, self.cgroup.take());
        unix::signal_group(self.pid, Signal::SIGKILL);
        for &pid in &tree[1..] {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGKILL);
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
            // The init is dead, so its PID namespace is empty; the launcher
            // proves it before its next bot.
            if let Some(launcher) = launcher.take() {
                if let Some(retired) = sandbox.pool().give_back(launcher) {
                    // Ending a sandbox waits for its bubblewrap: not here.
                    let _ = std::thread::Builder::new()
                        .name("sandbox-retire".into())
                        .spawn(move || drop(retired));
                }
            }
        }
        status
    }
}

/// A bot started in a kept sandbox, before its channel is made.
struct Kept {
    started: crate::sandbox::kept::pool::Started,
    init: Option<OwnedFd>,
    pin: Vec<usize>,
    launcher: Launcher,
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
    cgroup: Option<Cgroup>,
}

/// Starts `spec`'s bot in a kept sandbox (`slot.rs`): an idle one of its
/// view, else a new one. `None` where that fails (the caller then builds a
/// sandbox for this bot alone, as before), unless the bot was to be shown
/// its view from mounts of its own (`image.rs`): a sandbox of its own would
/// show it the host's directories, so that fails closed, an error.
fn start_kept(sandbox: &Arc<Sandbox>, spec: &Spawn) -> std::io::Result<Option<Kept>> {
    let needs_images = sandbox.shows_images(&spec.launch, spec.before_any_game);
    match try_kept(sandbox, spec) {
        Ok(kept) => Ok(Some(kept)),
        Err(e) if needs_images => Err(std::io::Error::other(format!(
            "failed to start the bot in a sandbox showing it its own view, and it is not \
             started without one: {e:#}"
        ))),
        Err(e) => {
            tracing::warn!("a kept sandbox failed, so this bot gets one of its own: {e:#}");
            Ok(None)
        }
    }
}

fn try_kept(sandbox: &Arc<Sandbox>, spec: &Spawn) -> anyhow::Result<Kept> {
    use nix::fcntl::OFlag;
    let launch = &spec.launch;
    let cgroup = own_cgroup(spec, 1)?;
    let (stdin_r, stdin_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (stdout_r, stdout_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (stderr_r, stderr_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let stdio = [stdin_r, stdout_w, stderr_w];
    let mut request = sandbox.request(launch, &spec.env, spec.limits, spec.hold);
    let images = sandbox.view_mounts(launch, spec.before_any_game, &mut request)?;
    let key = crate::sandbox::kept::pool::Key::of(launch);
    // The init is given the bots' priority before its word (it cannot lower
    // its own nice value in its user namespace), unless it is built ahead
    // at nice 19 and raised when released (`BotProcess::release`).
    let nice = (request.nice == 0 && spec.limits.nice != 0).then_some(spec.limits.nice);
    // The init's pidfd, opened while it is certainly alive (waiting for its
    // word): `BotProcess::started` proves with it that the pid is still its.
    let init = std::cell::RefCell::new(None);
    let place = |pid: u32| {
        *init.borrow_mut() = crate::os::reaper::pidfd_open(pid);
        if let Some(c) = &cgroup {
            c.add(pid)?;
        }
        match nice {
            Some(n) => unix::set_nice(pid, n),
            None => Ok(()),
        }
    };
    let mut last = None;
    // An idle sandbox first; if it refuses (it could not prove itself
    // empty), a new one.
    for fresh in [false, true] {
        let mut launcher = match sandbox.pool().take(&key).filter(|_| !fresh) {
            Some(l) => l,
            None => {
                let (program, args) = sandbox.wrap_launcher(launch);
                Launcher::start(
                    program,
                    args,
                    &spec.env,
                    sandbox.run_as(launch),
                    sandbox.seccomp.clone(),
                    key.clone(),
                )?
            }
        };
        match launcher.launch(&request, &stdio, &images, place) {
            Ok(started) => {
                return Ok(Kept {
                    started,
                    init: init.take(),
                    pin: match sandbox.built_ahead(spec.hold) {
                        true => sandbox.cpus(launch),
                        false => Vec::new(),
                    },
                    launcher,
                    stdin: stdin_w,
                    stdout: stdout_r,
                    stderr: stderr_r,
                    cgroup,
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| anyhow::anyhow!("no sandbox")))
}

impl Kept {
    fn finish(self, spec: &Spawn, sandbox: Arc<Sandbox>) -> std::io::Result<(BotProcess, Channel)> {
        let Kept {
            started,
            init,
            pin,
            launcher,
            stdin,
            stdout,
            stderr,
            cgroup,
        } = self;
        super::pipe::set_nonblocking(&stdin)?;
        let stdin = tokio::net::unix::pipe::Sender::from_owned_fd(stdin)?;
        let channel = Channel::new(Pipe::new(stdout)?, stdin, spec.max_line);
        super::pipe::set_nonblocking(&stderr)?;
        let stderr_task = tokio::spawn(drain_stderr(
            stderr,
            spec.stderr_log.clone(),
            spec.stderr_cap,
        ));
        let report = std::os::unix::net::UnixStream::from(started.report);
        report.set_nonblocking(true)?;
        let report = tokio::net::UnixStream::from_std(report)?;
        let process = BotProcess {
            pid: started.pid,
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
}

/// What is made before a bot's fork and kept for after it: the sandboxed
/// stdout's pipe, the cgroup.
struct Parts {
    stdout_pipe: Option<(OwnedFd, OwnedFd)>,
    cgroup: Option<Cgroup>,
}

/// The command that starts `spec`'s bot (its sandbox, limits and cgroup).
fn command(spec: &Spawn) -> std::io::Result<(Command, Parts)> {
    let launch = &spec.launch;
    // Sandboxed, the bot's stdout is a pipe of its own, handed over in a
    // descriptor other than 1 (see `landlock.rs`, `--stdout-fd`).
    let stdout_pipe = match spec.sandbox {
        Some(_) => Some(sandboxed_stdout()?),
        None => None,
    };
    let passed = stdout_pipe.as_ref().map(|(_, w)| w.as_raw_fd());
    let mut cmd = match &spec.sandbox {
        None => {
            let mut cmd = Command::from(crate::os::own_exe::command(launch.invoked()));
            cmd.args(&launch.args);
            cmd
        }
        Some(sandbox) => {
            let (program, args) = sandbox.wrap(launch, passed, spec.hold);
            let mut cmd = Command::new(program);
            cmd.args(args);
            match sandbox.run_as(launch) {
                // std also drops the supplementary groups when root changes uid.
                Some(id) => _ = cmd.uid(id).gid(id),
                // bubblewrap as root maps the bot's user to the host's root,
                // the owner of the device nodes it binds (`devices.rs`).
                None if sandbox.runs_as_root() => crate::sandbox::devices::read_only_for(&mut cmd),
                None => {}
            }
            cmd
        }
    };
    // bubblewrap changes into the bot's directory itself, inside the sandbox.
    let cwd = if spec.sandbox.is_some() {
        Path::new("/")
    } else {
        &launch.dir
    };
    // Cleared for the sandbox's helper processes too: bubblewrap's pid 1 would
    // show the referee's environment at /proc/1/environ.
    cmd.env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let seccomp = spec.sandbox.as_ref().map(|s| s.seccomp.clone());
    let helpers = if spec.sandbox.is_some() { 2 } else { 0 };
    let cgroup = own_cgroup(spec, helpers)?;
    let fds = cgroup.as_ref().map_or([None; 6], Cgroup::procs_fds);
    unix::configure(&mut cmd, spec.limits, fds, seccomp);
    if let Some(fd) = passed {
        pass_stdout(&mut cmd, fd);
    }
    if spec
        .sandbox
        .as_ref()
        .is_some_and(|s| s.built_ahead(spec.hold))
    {
        unix::lowest_priority(&mut cmd);
    }
    Ok((
        cmd,
        Parts {
            stdout_pipe,
            cgroup,
        },
    ))
}

impl Parts {
    /// The process and its channel, once `child` is forked.
    fn finish(
        self,
        child: std::io::Result<Child>,
        spec: &Spawn,
    ) -> std::io::Result<(BotProcess, Channel)> {
        // Ours closed whatever happened: the bot's is its only writer.
        let stdout_read = self.stdout_pipe.map(|(r, _)| r);
        let mut child = child?;
        let pid = child.id().expect("a just-spawned child has a pid");
        unix::register(pid);
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = match stdout_read {
            Some(fd) => fd,
            None => child
                .stdout
                .take()
                .expect("stdout is piped")
                .into_owned_fd()?,
        };
        let stderr = child.stderr.take().expect("stderr is piped");
        let channel = Channel::new(Pipe::new(stdout)?, stdin, spec.max_line);
        let stderr = stderr.into_owned_fd()?;
        super::pipe::set_nonblocking(&stderr)?;
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
            cgroup: self.cgroup,
            nice: spec.limits.nice,
            pin: Vec::new(),
        };
        Ok((process, channel))
    }
}

/// Runs a sandboxed bot with bubblewrap's stdout on /dev/null and the bot's in
/// descriptor `fd`, kept open across the exec (see `landlock.rs`).
fn pass_stdout(cmd: &mut Command, fd: i32) {
    cmd.stdout(Stdio::null());
    // SAFETY: one fcntl on a descriptor opened before the fork:
    // async-signal-safe. Run after `configure`'s hook, which marks every
    // inherited descriptor close-on-exec.
    unsafe {
        cmd.pre_exec(move || {
            nix::fcntl::fcntl(
                fd,
                nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
            )?;
            Ok(())
        });
    }
}

/// A pipe for a sandboxed bot's stdout, both ends close-on-exec (the bot's is
/// opened for its exec alone).
fn sandboxed_stdout() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use nix::fcntl::OFlag;
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    Ok((read, write))
}

/// The cgroup that limits a bot's processes and CPU (and its tree's memory,
/// where the host allows; `RLIMIT_AS` limits each process in any case). The
/// sandbox's two helper processes (bubblewrap and its pid 1) are not counted
/// against the bot's processes.
fn own_cgroup(spec: &Spawn, helpers: u64) -> std::io::Result<Option<Cgroup>> {
    let limits = spec.limits;
    let wanted = CgroupLimits {
        processes: limits.processes.map(|n| n + helpers),
        memory: limits.memory_bytes,
        cpu_millicores: limits.cpu_millicores,
        // Only a cpu cgroup's share needs it (else the tasks' nice value
        // ranks them against the host's, and no cgroup is made for it).
        cpu_nice: limits.cpu_millicores.map_or(0, |_| limits.nice),
        cpu_accounting: limits.cpu_accounting,
        freezer: limits.freezer,
    };
    if wanted == CgroupLimits::default() {
        return Ok(None);
    }
    // The memory cgroup is a best effort on top of RLIMIT_AS; the others were
    // promised (and probed before the run).
    let required = CgroupLimits {
        memory: None,
        ..wanted
    };
    match Cgroup::create_with(wanted) {
        Ok(c) => Ok(Some(c)),
        Err(_) if required == CgroupLimits::default() => Ok(None),
        Err(_) => Cgroup::create_with(required)
            .map(Some)
            .map_err(std::io::Error::other),
    }
}

/// Whether `spec`'s bot runs as soon as it is started and must therefore
/// wait for the sandbox's view to be held (see [`Spawn::before_any_game`]).
fn runs_at_once(spec: &Spawn) -> bool {
    !spec.before_any_game && !spec.hold
}

#[cfg(test)]
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
