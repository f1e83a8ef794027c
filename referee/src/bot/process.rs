//! One bot process: spawn, buffered writes with a deadline, lines in, shutdown.
//!
//! stdout and stderr are drained by their own tasks from the moment the process
//! starts, so a bot never blocks on a full pipe; stderr goes to a log file up to a
//! cap and is discarded past it.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::{timeout, Instant};

use super::lines::{read_lines, Incoming};
use super::unix::{self, ResourceLimits};

/// How a bot process is started.
#[derive(Clone, Debug)]
pub struct Spawn {
    /// Program and arguments (never run through a shell).
    pub argv: Vec<String>,
    pub max_line: usize,
    pub limits: ResourceLimits,
    /// Where its stderr goes, and how much of it is kept.
    pub stderr_log: Option<PathBuf>,
    pub stderr_cap: u64,
}

/// Why writing to a bot failed.
#[derive(Debug)]
pub enum WriteError {
    /// It did not take the bytes within the deadline (it stopped reading).
    Timeout,
    /// The pipe is closed.
    Closed(String),
}

pub struct BotProcess {
    pid: u32,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Incoming>,
    /// Messages queued for the next write.
    pending: Vec<u8>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    exit: Option<ExitStatus>,
}

impl BotProcess {
    pub fn spawn(spec: &Spawn) -> std::io::Result<BotProcess> {
        let (program, args) = spec.argv.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command")
        })?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        unix::configure(&mut cmd, spec.limits);
        let mut child = cmd.spawn()?;
        let pid = child.id().expect("a just-spawned child has a pid");
        unix::register(pid);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel(256);
        tokio::spawn(read_lines(stdout, spec.max_line, tx));
        let stderr_task = tokio::spawn(drain_stderr(
            stderr,
            spec.stderr_log.clone(),
            spec.stderr_cap,
        ));
        Ok(BotProcess {
            pid,
            child,
            stdin,
            lines,
            pending: Vec::new(),
            stderr_task: Some(stderr_task),
            exit: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Queues one message (a JSON line) for the next [`BotProcess::flush`].
    pub fn queue(&mut self, line: &[u8]) {
        self.pending.extend_from_slice(line);
        self.pending.push(b'\n');
    }

    /// Drops queued messages (for a seat nobody is listening to any more).
    pub fn discard_queue(&mut self) {
        self.pending.clear();
    }

    /// Writes as much of the queue as the pipe takes right now, without waiting;
    /// the rest stays queued for the next write. A closed pipe is not reported
    /// here: the next [`BotProcess::flush`] reports it, at a point of the game
    /// that does not depend on when the referee noticed.
    pub fn try_flush(&mut self) -> bool {
        use std::pin::Pin;
        use std::task::{Context, Poll, Waker};
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        let mut cx = Context::from_waker(Waker::noop());
        let mut written = 0;
        while written < self.pending.len() {
            match tokio::io::AsyncWrite::poll_write(
                Pin::new(&mut *stdin),
                &mut cx,
                &self.pending[written..],
            ) {
                Poll::Ready(Ok(n)) if n > 0 => written += n,
                Poll::Ready(Ok(_)) | Poll::Ready(Err(_)) => {
                    self.pending.drain(..written);
                    return false;
                }
                Poll::Pending => break,
            }
        }
        self.pending.drain(..written);
        true
    }

    /// Writes everything queued in one write, giving up after `limit`.
    pub async fn flush(&mut self, limit: Option<Duration>) -> Result<(), WriteError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let Some(stdin) = self.stdin.as_mut() else {
            self.pending.clear();
            return Err(WriteError::Closed("stdin already closed".into()));
        };
        let write = stdin.write_all(&self.pending);
        let result = match limit {
            Some(limit) => timeout(limit, write)
                .await
                .map_err(|_| WriteError::Timeout)?,
            None => write.await,
        };
        self.pending.clear();
        result.map_err(|e| WriteError::Closed(e.to_string()))
    }

    /// The next thing seen on stdout, or `None` at `deadline`.
    pub async fn next_line(&mut self, deadline: Option<Instant>) -> Option<Incoming> {
        let recv = self.lines.recv();
        let got = match deadline {
            Some(d) => tokio::time::timeout_at(d, recv).await.ok()?,
            None => recv.await,
        };
        // After Eof the channel closes; keep reporting Eof.
        Some(got.unwrap_or(Incoming::Eof { at: Instant::now() }))
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
    pub async fn exit_status(&mut self, wait: Duration) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = timeout(wait, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok);
        }
        self.exit
    }

    /// Ends the process: close stdin, give it `grace` to exit, then SIGTERM the
    /// group, then SIGKILL it, and reap. The group is killed even if the leader
    /// exited by itself, so no grandchild outlives the referee.
    pub async fn shutdown(mut self, grace: Duration) -> Option<ExitStatus> {
        let _ = self.flush(Some(grace)).await;
        drop(self.stdin.take());
        let mut status = self.exit_status(grace).await;
        if status.is_none() {
            unix::signal_group(self.pid, Signal::SIGTERM);
            status = self
                .exit_status(grace.min(Duration::from_millis(500)))
                .await;
        }
        unix::signal_group(self.pid, Signal::SIGKILL);
        if status.is_none() {
            status = self.child.wait().await.ok();
        }
        // SIGKILL is delivered asynchronously: wait (briefly) until the whole group,
        // grandchildren included, is gone, so nothing outlives the referee's exit.
        let start = Instant::now();
        while unix::group_alive(self.pid) && start.elapsed() < Duration::from_secs(2) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        unix::unregister(self.pid);
        if let Some(task) = self.stderr_task.take() {
            // The group is dead, so stderr reaches EOF promptly; don't wait on a
            // descriptor some escaped process might still hold.
            let _ = timeout(Duration::from_millis(500), task).await;
        }
        status
    }
}

/// Copies stderr to `log` up to `cap` bytes, then keeps reading (so the bot never
/// blocks) and notes how much was dropped.
async fn drain_stderr(mut src: tokio::process::ChildStderr, log: Option<PathBuf>, cap: u64) {
    let mut file = match &log {
        Some(path) => match tokio::fs::File::create(path).await {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::warn!("failed to create bot stderr log {}: {e}", path.display());
                None
            }
        },
        None => None,
    };
    let mut kept: u64 = 0;
    let mut dropped: u64 = 0;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match src.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let room = cap.saturating_sub(kept).min(n as u64) as usize;
        if let (Some(f), true) = (file.as_mut(), room > 0) {
            if f.write_all(&buf[..room]).await.is_err() {
                file = None;
            }
        }
        kept += room as u64;
        dropped += (n - room) as u64;
    }
    if let Some(f) = file.as_mut() {
        if dropped > 0 {
            let note = format!(
                "\n[referee: stderr cap of {cap} bytes reached; {dropped} further bytes dropped]\n"
            );
            let _ = f.write_all(note.as_bytes()).await;
        }
        let _ = f.flush().await;
    }
}
