//! A sandboxed bot's start, from the bot's side's one question to the
//! process it gets: in a kept sandbox where it can be (an idle one of its
//! view, else a new one: `kept/pool.rs`), else in a sandbox of its own,
//! bubblewrap's command made ready to fork. The bot's side
//! (`crate::bot`'s `process.rs`) asks [`Sandbox::start`] and reads the
//! answer; this file asks the sandbox's parts and the operating system
//! (`crate::os`), never the bot's side back.

use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::Command;

use super::kept::pool::{Key, Launcher};
use super::Sandbox;
use crate::cgroup::{self, Cgroup};
use crate::os::{process, reaper, Launch, ResourceLimits};

/// What a sandboxed start is asked for: the bot's part of
/// `crate::bot::Spawn`.
#[derive(Clone, Debug)]
pub struct BotStart {
    /// Program, arguments and directory (never run through a shell).
    pub launch: Launch,
    /// Its whole environment: nothing of the referee's is passed on.
    pub env: Vec<(String, String)>,
    pub limits: ResourceLimits,
    /// Build the sandbox but run the bot only once a newline is written to
    /// its stdin (`landlock.rs`, `--hold`).
    pub hold: bool,
    /// A tournament's start check's bot: it may run while the view is still
    /// being held (`crate::bot::Spawn::before_any_game`).
    pub before_any_game: bool,
}

/// A sandboxed bot, started or ready to be.
pub enum Start {
    /// Started in a kept sandbox.
    Kept(Kept),
    /// A sandbox of its own: bubblewrap's command, to be forked from the
    /// spawner thread (`crate::os::spawner`). The bot's stdout is a pipe of
    /// its own, handed over in a descriptor other than 1 (`landlock.rs`,
    /// `--stdout-fd`): its read end, and its write end, to be dropped once
    /// the command is forked. Bubblewrap's own stdout goes nowhere.
    Alone {
        command: Command,
        stdout: (OwnedFd, OwnedFd),
        cgroup: Option<Cgroup>,
    },
}

/// A bot started in a kept sandbox, before its channel is made.
pub struct Kept {
    /// Its init's pid on the host.
    pub pid: u32,
    /// The socket its exit status comes over.
    pub report: OwnedFd,
    /// The init's pidfd, opened while it waited for its word.
    pub init: Option<OwnedFd>,
    /// The CPUs the referee pins it to once released (a bot built ahead).
    pub pin: Vec<usize>,
    /// The launcher that started it: back to [`Sandbox::give_back`] once
    /// its tree is dead.
    pub launcher: Launcher,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub cgroup: Option<Cgroup>,
}

/// Where a kept sandbox's init reports its bot's exit: the report socket,
/// read by the runtime.
#[derive(Debug)]
pub struct Report(tokio::net::UnixStream);

impl Report {
    /// Reads `socket` (the [`Kept`]'s `report`) without blocking.
    pub fn new(socket: OwnedFd) -> std::io::Result<Report> {
        let socket = std::os::unix::net::UnixStream::from(socket);
        socket.set_nonblocking(true)?;
        Ok(Report(tokio::net::UnixStream::from_std(socket)?))
    }

    /// The bot's exit status, once the init tells it; killed (SIGKILL) if
    /// the init was killed before it could.
    pub async fn exit_status(&mut self) -> std::process::ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        use tokio::io::AsyncReadExt;
        let mut code = [0u8; 4];
        match self.0.read_exact(&mut code).await {
            Ok(_) => std::process::ExitStatus::from_raw(i32::from_ne_bytes(code) << 8),
            Err(_) => std::process::ExitStatus::from_raw(nix::sys::signal::Signal::SIGKILL as i32),
        }
    }
}

impl Sandbox {
    /// Starts `bot` sandboxed, or makes its sandbox's command ready. A bot
    /// that runs at once waits for the view to be held first.
    pub fn start(&self, bot: &BotStart) -> std::io::Result<Start> {
        if runs_at_once(bot) {
            self.held().map_err(std::io::Error::other)?;
        }
        if self.keeps(&bot.launch) {
            if let Some(kept) = start_kept(self, bot)? {
                return Ok(Start::Kept(kept));
            }
        }
        self.alone(bot)
    }

    /// [`Sandbox::start`] without blocking the caller's thread while the
    /// view is held or a kept sandbox starts the bot and moves it into its
    /// cgroup (which can take tens of milliseconds on a loaded host:
    /// `cgroup.procs` waits for an RCU grace period).
    pub async fn start_async(sandbox: &Arc<Sandbox>, bot: &BotStart) -> std::io::Result<Start> {
        if runs_at_once(bot) {
            Sandbox::held_async(sandbox)
                .await
                .map_err(std::io::Error::other)?;
        }
        if sandbox.keeps(&bot.launch) {
            let (sb, b) = (sandbox.clone(), bot.clone());
            let kept = tokio::task::spawn_blocking(move || start_kept(&sb, &b))
                .await
                .map_err(std::io::Error::other)??;
            if let Some(kept) = kept {
                return Ok(Start::Kept(kept));
            }
        }
        sandbox.alone(bot)
    }

    /// Takes back the launcher of a bot whose tree is dead (its init is,
    /// so its PID namespace is empty; the launcher proves it before its
    /// next bot).
    pub fn give_back(&self, launcher: Launcher) {
        if let Some(retired) = self.pool().give_back(launcher) {
            // Ending a sandbox waits for its bubblewrap: not on this thread.
            let _ = std::thread::Builder::new()
                .name("sandbox-retire".into())
                .spawn(move || drop(retired));
        }
    }

    /// The bubblewrap command that starts `bot` in a sandbox of its own,
    /// with its limits and cgroup.
    fn alone(&self, bot: &BotStart) -> std::io::Result<Start> {
        let launch = &bot.launch;
        let (stdout_read, stdout_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let passed = stdout_write.as_raw_fd();
        let (program, args) = self.wrap(launch, Some(passed), bot.hold);
        let mut cmd = Command::new(program);
        cmd.args(args);
        match self.run_as(launch) {
            // std also drops the supplementary groups when root changes uid.
            Some(id) => _ = cmd.uid(id).gid(id),
            // bubblewrap as root maps the bot's user to the host's root,
            // the owner of the device nodes it binds (`devices.rs`).
            None if self.runs_as_root() => super::devices::read_only_for(&mut cmd),
            None => {}
        }
        // Cleared for the sandbox's helper processes too: bubblewrap's pid 1
        // would show the referee's environment at /proc/1/environ. bubblewrap
        // changes into the bot's directory itself, inside the sandbox.
        cmd.env_clear()
            .envs(bot.env.iter().map(|(k, v)| (k, v)))
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // bubblewrap and its pid 1 are not counted against the bot's processes.
        let cgroup = cgroup::for_bot(&bot.limits, 2)?;
        let fds = cgroup.as_ref().map_or([None; 6], Cgroup::procs_fds);
        process::configure(&mut cmd, bot.limits, fds, Some(self.seccomp.clone()));
        pass_stdout(&mut cmd, passed);
        if self.built_ahead(bot.hold) {
            process::lowest_priority(&mut cmd);
        }
        Ok(Start::Alone {
            command: cmd,
            stdout: (stdout_read, stdout_write),
            cgroup,
        })
    }
}

/// Starts `bot` in a kept sandbox (`kept/pool.rs`): an idle one of its view,
/// else a new one. `None` where that fails (the caller then builds a
/// sandbox for this bot alone, as before), unless the bot was to be shown
/// its view from mounts of its own (`view/image.rs`): a sandbox of its own
/// would show it the host's directories, so that fails closed, an error.
fn start_kept(sandbox: &Sandbox, bot: &BotStart) -> std::io::Result<Option<Kept>> {
    let needs_images = sandbox.shows_images(&bot.launch, bot.before_any_game);
    match try_kept(sandbox, bot) {
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

fn try_kept(sandbox: &Sandbox, bot: &BotStart) -> anyhow::Result<Kept> {
    use nix::fcntl::OFlag;
    let launch = &bot.launch;
    // The kept sandbox's init is not counted against the bot's processes.
    let cgroup = cgroup::for_bot(&bot.limits, 1)?;
    let (stdin_r, stdin_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (stdout_r, stdout_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (stderr_r, stderr_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let stdio = [stdin_r, stdout_w, stderr_w];
    let mut request = sandbox.request(launch, &bot.env, bot.limits, bot.hold);
    let images = sandbox.view_mounts(launch, bot.before_any_game, &mut request)?;
    let key = Key::of(launch);
    // The init is given the bots' priority before its word (it cannot lower
    // its own nice value in its user namespace), unless it is built ahead
    // at nice 19 and raised when released (`BotProcess::release`).
    let nice = (request.nice == 0 && bot.limits.nice != 0).then_some(bot.limits.nice);
    // The init's pidfd, opened while it is certainly alive (waiting for its
    // word): `BotProcess::started` proves with it that the pid is still its.
    let init = std::cell::RefCell::new(None);
    let place = |pid: u32| {
        *init.borrow_mut() = reaper::pidfd_open(pid);
        if let Some(c) = &cgroup {
            c.add(pid)?;
        }
        match nice {
            Some(n) => process::set_nice(pid, n),
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
                    &bot.env,
                    sandbox.run_as(launch),
                    sandbox.seccomp.clone(),
                    key.clone(),
                )?
            }
        };
        match launcher.launch(&request, &stdio, &images, place) {
            Ok(started) => {
                return Ok(Kept {
                    pid: started.pid,
                    report: started.report,
                    init: init.take(),
                    pin: match sandbox.built_ahead(bot.hold) {
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

/// Keeps descriptor `fd` (the bot's stdout) open across bubblewrap's exec
/// (see `landlock.rs`).
fn pass_stdout(cmd: &mut Command, fd: i32) {
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

/// Whether `bot` runs as soon as it is started and must therefore wait for
/// the sandbox's view to be held (see [`BotStart::before_any_game`]).
fn runs_at_once(bot: &BotStart) -> bool {
    !bot.before_any_game && !bot.hold
}
