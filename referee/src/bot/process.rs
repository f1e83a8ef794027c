//! One bot process's lifecycle: spawn (sandbox, limits, cgroup), pid, exit
//! status, shutdown. What is said over its stdin and stdout is the
//! [`Channel`]'s business; `spawn` hands one over with the process.
//!
//! stderr is drained by a task of its own from the moment the process starts
//! (stdout by the channel's), so a bot never blocks on a full pipe for long;
//! stderr goes to a log file up to a cap and is discarded past it: a trickle
//! is read at a bounded rate, a flood as fast as it comes (see
//! [`STDERR_PAUSE`]), so neither costs the referee much nor slows the bot.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use std::os::fd::{AsRawFd, OwnedFd};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncWriteExt, Interest};
use tokio::process::{Child, Command};
use tokio::time::{timeout, Instant};

use super::cgroup::{Cgroup, CgroupLimits};
use super::channel::Channel;
use super::cpu::CpuSource;
use super::launch::Launch;
use super::pipe::Pipe;
use super::reaper::{self, Remains};
use super::sandbox::Sandbox;
use super::spawner;
use super::unix::{self, ResourceLimits};

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
}

pub struct BotProcess {
    pid: u32,
    child: Child,
    stderr_task: Option<tokio::task::JoinHandle<Drained>>,
    exit: Option<ExitStatus>,
    /// Removed once the process tree is gone.
    cgroup: Option<Cgroup>,
}

impl BotProcess {
    /// Starts the process; the channel talks to its stdin and stdout.
    pub fn spawn(spec: &Spawn) -> std::io::Result<(BotProcess, Channel)> {
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
        let (cmd, parts) = command(spec)?;
        let child = spawner::spawn_async(cmd).await;
        parts.finish(child, spec)
    }

    /// A held sandbox is built at the lowest priority (nice 19), so that
    /// building it takes no CPU from the game being played; before its bot
    /// runs, every process of its tree is given the usual priority back
    /// (nice 0; a root referee's right: a non-root one builds no sandbox
    /// ahead, `Sandbox::builds_ahead`).
    pub fn release(&self) {
        unix::renice_tree(self.pid, 0);
    }

    pub fn pid(&self) -> u32 {
        self.pid
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
        status
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
            let mut cmd = Command::new(&launch.program);
            cmd.args(&launch.args);
            cmd
        }
        Some(sandbox) => {
            let (program, args) = sandbox.wrap(launch, passed, spec.hold);
            let mut cmd = Command::new(program);
            cmd.args(args);
            if let Some(id) = sandbox.run_as(launch) {
                // std also drops the supplementary groups when root changes uid.
                cmd.uid(id).gid(id);
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
    let cgroup = own_cgroup(spec)?;
    let fds = cgroup.as_ref().map_or([None; 6], Cgroup::procs_fds);
    unix::configure(&mut cmd, spec.limits, fds, seccomp);
    if let Some(fd) = passed {
        pass_stdout(&mut cmd, fd);
    }
    if spec.hold && spec.sandbox.as_ref().is_some_and(|s| s.builds_ahead()) {
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
            child,
            stderr_task: Some(stderr_task),
            exit: None,
            cgroup: self.cgroup,
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
fn own_cgroup(spec: &Spawn) -> std::io::Result<Option<Cgroup>> {
    let limits = spec.limits;
    let helpers = if spec.sandbox.is_some() { 2 } else { 0 };
    let wanted = CgroupLimits {
        processes: limits.processes.map(|n| n + helpers),
        memory: limits.memory_bytes,
        cpu_millicores: limits.cpu_millicores,
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

/// The pause after a read of a bot's stderr that found the pipe less than half
/// full. A bot that writes one byte at a time as fast as it can would otherwise
/// wake the referee for every write (a flood capped at `--stderr-cap` still cost
/// a wake-up per write: 3.2 s of the referee's CPU against 0.08 s of the bot's,
/// measured). With the pause the referee takes a trickle at most 100 times a
/// second, whatever the bot does. A read that finds the pipe at least half full
/// is not followed by a pause: each such read moves half a megabyte or more, so
/// a heavy but honest logger is drained as fast as it writes (the pipe is made
/// [`STDERR_PIPE_BYTES`] large) at a small cost per byte, and past the cap the
/// bytes go to `/dev/null` by `splice`, never through the referee's memory.
/// Closing the pipe instead would kill honest verbose bots (SIGPIPE, or a
/// panicking `eprintln!`); not reading at all would hang them.
pub const STDERR_PAUSE: Duration = Duration::from_millis(10);

/// The capacity asked for a bot's stderr pipe (Linux's default unprivileged
/// maximum, `/proc/sys/fs/pipe-max-size`); where the kernel refuses, the pipe
/// keeps its default 64 KiB and the drain is slower, never wrong.
pub const STDERR_PIPE_BYTES: usize = 1 << 20;

/// What draining one bot's stderr took.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Reads (or splices) that returned bytes.
    pub reads: u64,
    /// Pauses of [`STDERR_PAUSE`] after them.
    pub pauses: u64,
    /// Bytes kept in the log, and dropped past the cap.
    pub kept: u64,
    pub dropped: u64,
}

/// Copies stderr to `log` up to `cap` bytes, then discards the rest (so the bot
/// never blocks for good) and notes how much was dropped.
///
/// The pipe is registered with the runtime's poller only while a read waits:
/// epoll, edge-triggered as tokio uses it, reports every single write to a
/// registered pipe, so a registration kept through the pause would still wake
/// the referee once per write of the bot.
async fn drain_stderr(src: OwnedFd, log: Option<PathBuf>, cap: u64) -> Drained {
    let mut file = match &log {
        Some(path) => match crate::safe_create::create_new(path) {
            Ok(f) => Some(tokio::fs::File::from_std(f)),
            Err(e) => {
                tracing::warn!("failed to create bot stderr log {}: {e}", path.display());
                None
            }
        },
        None => None,
    };
    let capacity = grow_pipe(&src);
    let mut sink = StderrSink::new(cap, capacity);
    let mut src = Some(std::fs::File::from(src));
    while let Some(pipe) = src.take() {
        // SAFETY: the `File` owns its descriptor, which stays open and the same
        // for as long as the `AsyncFd` holds it.
        let Ok(pipe) = (unsafe { AsyncFd::register_with_interest(pipe, Interest::READABLE) })
        else {
            break;
        };
        let (n, full) = loop {
            let Ok(mut ready) = pipe.readable().await else {
                break (0, false);
            };
            match ready.try_io(|p| sink.take(p.get_ref())) {
                Ok(Ok(got)) => break got,
                Ok(Err(_)) => break (0, false),
                Err(_would_block) => continue,
            }
        };
        if n == 0 {
            break;
        }
        // Deregistered until the pause is over.
        src = Some(pipe.into_inner());
        sink.done.reads += 1;
        if let Some(bytes) = sink.count(n) {
            if let Some(f) = file.as_mut() {
                if f.write_all(bytes).await.is_err() {
                    file = None;
                }
            }
        }
        if !full {
            sink.done.pauses += 1;
            tokio::time::sleep(STDERR_PAUSE).await;
        }
    }
    if let Some(f) = file.as_mut() {
        if sink.done.dropped > 0 {
            let note = format!(
                "\n[referee: stderr cap of {cap} bytes reached; {} further bytes dropped]\n",
                sink.done.dropped
            );
            let _ = f.write_all(note.as_bytes()).await;
        }
        let _ = f.flush().await;
    }
    sink.done
}

/// Asks for a [`STDERR_PIPE_BYTES`] pipe; returns the capacity it has.
fn grow_pipe(pipe: &OwnedFd) -> usize {
    use nix::fcntl::{fcntl, FcntlArg};
    use std::os::fd::AsRawFd;
    let fd = pipe.as_raw_fd();
    let _ = fcntl(fd, FcntlArg::F_SETPIPE_SZ(STDERR_PIPE_BYTES as i32));
    fcntl(fd, FcntlArg::F_GETPIPE_SZ).map_or(64 * 1024, |n| n.max(4096) as usize)
}

/// Where a drained stderr's bytes go: into a buffer for the log below the cap,
/// into `/dev/null` past it.
struct StderrSink {
    cap: u64,
    /// Bytes a full pipe holds.
    capacity: usize,
    buf: Vec<u8>,
    /// `/dev/null`, once past the cap (`None` if it cannot be opened: then
    /// the bytes are read and dropped).
    null: Option<std::fs::File>,
    done: Drained,
}

impl StderrSink {
    fn new(cap: u64, capacity: usize) -> StderrSink {
        StderrSink {
            cap,
            capacity,
            buf: Vec::new(),
            null: None,
            done: Drained::default(),
        }
    }

    /// Takes what the pipe holds, without blocking: how many bytes, and
    /// whether the pipe was at least half full (more is likely waiting).
    fn take(&mut self, pipe: &std::fs::File) -> std::io::Result<(usize, bool)> {
        use std::io::Read;
        if self.done.kept >= self.cap {
            if self.null.is_none() {
                self.null = std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/null")
                    .ok();
            }
            if let Some(null) = &self.null {
                use nix::fcntl::{splice, SpliceFFlags};
                let flags = SpliceFFlags::SPLICE_F_NONBLOCK | SpliceFFlags::SPLICE_F_MOVE;
                let n = splice(pipe, None, null, None, self.capacity, flags)?;
                return Ok((n, n >= self.capacity / 2));
            }
        }
        // Below the cap at most what the log still takes (and a pipe's worth),
        // so the bytes past the cap are spliced away on the next take.
        let room = self.cap.saturating_sub(self.done.kept);
        let want = match room {
            0 => self.capacity,
            room => room.min(self.capacity as u64) as usize,
        };
        self.buf.resize(want, 0);
        let n = (&*pipe).read(&mut self.buf[..want])?;
        Ok((n, n >= want.div_ceil(2).min(self.capacity / 2)))
    }

    /// Counts the `n` bytes just taken; the part of them to write to the log.
    fn count(&mut self, n: usize) -> Option<&[u8]> {
        if self.done.kept >= self.cap && self.null.is_some() {
            self.done.dropped += n as u64;
            return None;
        }
        let room = self.cap.saturating_sub(self.done.kept).min(n as u64) as usize;
        self.done.kept += room as u64;
        self.done.dropped += (n - room) as u64;
        (room > 0).then(|| &self.buf[..room])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::Incoming;

    /// Not a timing assertion a busy host can break: every read that finds the
    /// pipe less than half full is followed by a pause of at least
    /// [`STDERR_PAUSE`], and a trickle of 20,000 bytes never fills half of it,
    /// so however slow the host, the reads are at most the elapsed time over
    /// the pause (plus the last, at EOF, and one as the cap is reached).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stderr_is_read_at_a_bounded_rate_however_the_bot_writes_it() {
        use std::io::Write;
        let (referee, bot) = nonblocking_pipe();
        let drain = tokio::spawn(drain_stderr(referee, None, 100));
        // One byte per write, 20,000 writes with a millisecond's sleep every 20:
        // a reader that kept up would read about a thousand times.
        let start = Instant::now();
        tokio::task::spawn_blocking(move || {
            let mut bot = std::fs::File::from(bot);
            for i in 0..20_000u32 {
                bot.write_all(b"x").unwrap();
                if i % 20 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        })
        .await
        .unwrap();
        let done = drain.await.unwrap();
        let allowed = start.elapsed().as_millis() as u64 / STDERR_PAUSE.as_millis() as u64 + 3;
        assert!(
            (1..=allowed).contains(&done.reads),
            "{done:?} in {:?} (at most {allowed} reads)",
            start.elapsed()
        );
        assert_eq!((done.kept, done.dropped), (100, 20_000 - 100), "{done:?}");
    }

    /// A heavy logger is drained to the last byte through a pipe grown to
    /// [`STDERR_PIPE_BYTES`], the log cut at the cap and saying how much was
    /// dropped (the rate is a benchmark: BENCHMARKS.md, "Heavy logging").
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_of_stderr_is_drained_to_the_end_and_the_log_says_what_was_cut() {
        use std::io::Write;
        let (referee, bot) = nonblocking_pipe();
        assert_eq!(grow_pipe(&referee), STDERR_PIPE_BYTES);
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("bot.log");
        let drain = tokio::spawn(drain_stderr(referee, Some(log.clone()), 1000));
        let total: u64 = 40 << 20;
        tokio::task::spawn_blocking(move || {
            let mut bot = std::fs::File::from(bot);
            let chunk = vec![b'e'; 1 << 20];
            for _ in 0..(total >> 20) {
                bot.write_all(&chunk).unwrap();
            }
        })
        .await
        .unwrap();
        let done = drain.await.unwrap();
        assert_eq!((done.kept, done.dropped), (1000, total - 1000), "{done:?}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.starts_with(&"e".repeat(1000)),
            "{}",
            &text[..1100.min(text.len())]
        );
        assert!(
            text[1000..].contains(&format!("{} further bytes dropped", total - 1000)),
            "{}",
            &text[1000..]
        );
    }

    fn nonblocking_pipe() -> (OwnedFd, OwnedFd) {
        let (referee, bot) = nix::unistd::pipe().unwrap();
        nix::fcntl::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&referee),
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        (referee, bot)
    }

    fn cat() -> Spawn {
        let program = std::fs::canonicalize("/bin/cat").expect("cat is installed");
        Spawn {
            launch: Launch {
                dir: program.parent().unwrap().to_path_buf(),
                program,
                args: Vec::new(),
                scratch: None,
                slot: None,
            },
            env: crate::config::Isolation::env(&[]),
            sandbox: None,
            max_line: 1024,
            limits: ResourceLimits::default(),
            stderr_log: None,
            stderr_cap: 0,
            hold: false,
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
                Some(Incoming::Line { bytes, .. }) => assert_eq!(bytes, b"ping"),
                other => panic!("the bot died with the thread that started it: {other:?}"),
            }
            channel.close_writer();
            bot.shutdown(Duration::ZERO).await;
        });
    }
}
