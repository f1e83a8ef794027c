//! A bot's stderr, drained by a task of its own from the moment the process
//! starts, so a bot never blocks on a full pipe for long: kept in its log file
//! up to a cap and discarded past it (spliced to `/dev/null`), a trickle read
//! at a bounded rate, a flood as fast as it comes (see [`STDERR_PAUSE`]), so
//! neither costs the referee much nor slows the bot. `process.rs` starts the
//! task and waits for its [`Drained`] at shutdown.

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::os::pipe::ReadEnd;
use crate::os::Fd;

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
pub(super) async fn drain_stderr(src: Fd, log: Option<PathBuf>, cap: u64) -> Drained {
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
    let mut src = ReadEnd::new(src);
    loop {
        // Registered with the poller only while this waits (`crate::os::pipe`).
        let (n, full) = src.take(|p| sink.take(p)).await.unwrap_or((0, false));
        if n == 0 {
            break;
        }
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
fn grow_pipe(pipe: &Fd) -> usize {
    crate::os::pipe::grow(pipe, STDERR_PIPE_BYTES)
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
                self.null = crate::os::pipe::null();
            }
            if let Some(null) = &self.null {
                let n = crate::os::pipe::discard(pipe, null, self.capacity)?;
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

// Linux's pipes: grown to STDERR_PIPE_BYTES, made by `nix`.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use tokio::time::Instant;

    use super::*;

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

    fn nonblocking_pipe() -> (Fd, Fd) {
        let (referee, bot) = nix::unistd::pipe().unwrap();
        nix::fcntl::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&referee),
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        (referee, bot)
    }
}
