//! Splitting a bot's stdout into lines with a hard cap on line length.
//!
//! Hand-written rather than `tokio_util::codec::LinesCodec` because the referee
//! needs three things that codec does not give together: raw bytes (invalid UTF-8
//! is a fault to report, not a stream error that ends reading), an oversized line
//! reported *and skipped* while reading goes on, and the arrival instant of each
//! newline for the clock.
//!
//! What a line costs the referee is one read from the pipe and one search for
//! its newline: the bytes are read into one buffer, and a long line (a 60 KB
//! stale reply) is handed over as a slice of that buffer, never copied; only
//! short lines are copied out, so that none of them keeps a whole buffer alive.
//! Once the table says a pending request has had its stale reply
//! ([`SkipStale`]), a line opening as a reply to another request is not
//! handed over at all: it is known by its opening and the rest of it is only
//! searched for its newline, in a read buffer that is then reused.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::pipe::Source;

/// What the reader saw on a bot's stdout.
#[derive(Debug)]
pub enum Incoming {
    /// A complete line, without its `\n` (and without a trailing `\r`).
    Line { bytes: Bytes, at: Instant },
    /// A complete line of `len` bytes (counted as for [`Incoming::Line`])
    /// that opens as a reply to request `other`, read no further than that
    /// opening: it ended while the table had said (through [`SkipStale`])
    /// that request `during` had had its stale reply already.
    Stale {
        other: u64,
        during: u64,
        len: usize,
        at: Instant,
    },
    /// A line longer than the cap, reported as soon as the cap is passed (not when
    /// the line ends: it may never end). `len` is how much had arrived by then; the
    /// rest of the line up to its newline is dropped without further reports.
    Oversized { len: usize, at: Instant },
    /// stdout reached end of file (closed or the process ended).
    Eof { at: Instant },
    /// Reading failed.
    Error { message: String, at: Instant },
}

/// How long the reader pauses once a bot has spent its [`IDLE_READS`].
pub const READ_PAUSE: Duration = Duration::from_millis(10);

/// Reads a window of [`READ_PAUSE`] may take without handing over a line of a
/// reply's size ([`USEFUL_LINE`] bytes or more); past them the reader pauses
/// until the window ends. An honest bot writes each line in one write or a few
/// and is never paused, however fast it answers: every read of it hands a
/// reply over. A bot that writes its output a byte at a time (or in empty
/// lines, or lines nobody has room for) woke the referee once per write; now
/// at most `IDLE_READS` times per window, whatever it does, and it waits on its
/// own full pipe, on its own time.
pub const IDLE_READS: u32 = 16;
/// The shortest line that counts as progress: a minimal reply is 35 bytes.
const USEFUL_LINE: usize = 32;
/// Room for one read: a pipe's default capacity.
const READ_BYTES: usize = 64 * 1024;
/// Lines shorter than this are copied out of the read buffer (a reply is about
/// 50 bytes); longer ones are handed over as a slice of it. A slice keeps its
/// buffer alive until the table drops it, so each buffer a line keeps alive
/// holds at least this much of the line.
const SHARE_LINE: usize = 16 * 1024;
/// How much of a line is looked at to know it for another request's reply
/// ([`SkipStale`]): a line whose opening does not lie within this, or that
/// is shorter, is handed over whole.
const OPENING: usize = 256;

/// Which pending request, if any, has had its stale reply: set by the table,
/// read by the line reader. While it is set to request `P`, a line of at
/// least [`OPENING`] bytes that opens as a reply to request `N ≠ P`
/// (`{"type":"reply","id":N,`, as `reply.rs` reads openings) is handed over
/// as [`Incoming::Stale`] without its bytes: it would be judged a reply to
/// `N` by its opening alone (`reply::read_reply` after a stale reply), and
/// none of the rest needs to be kept.
#[derive(Debug, Default)]
pub struct SkipStale(AtomicU64);

impl SkipStale {
    /// Request `during` has had its stale reply (`None`: no request has, or
    /// none is pending).
    pub fn set(&self, during: Option<u64>) {
        let v = during.map_or(0, |id| id.saturating_add(1));
        self.0.store(v, Ordering::Release);
    }

    fn during(&self) -> Option<u64> {
        self.0.load(Ordering::Acquire).checked_sub(1)
    }
}

/// Reads `src` until end of file, sending each line to `tx`. Memory stays bounded
/// by `max_line` plus one read buffer plus the channel whatever the bot writes
/// (a line the channel holds as a slice keeps its read buffer, of at most
/// `max_line` plus 128 KiB, alive until the table drops it; a line handed
/// over as [`Incoming::Stale`] keeps nothing), and
/// reading never stops for long: when the channel is full (a bot printing hundreds
/// of lines nobody asked for), further lines are dropped, not waited on (nor
/// copied), so the bot never blocks on a full pipe for good. Only end of file is
/// always delivered.
pub async fn read_lines<R: Source>(
    mut src: R,
    max_line: usize,
    skip: Arc<SkipStale>,
    tx: mpsc::Sender<Incoming>,
) {
    let mut splitter = Splitter::new(max_line, skip);
    let mut window = (Instant::now(), 0u32);
    loop {
        splitter.make_room();
        let n = match src.read_buf(&mut splitter.buf).await {
            Ok(0) => {
                let at = Instant::now();
                if let Some(last) = splitter.rest(at) {
                    // A last line without its newline is still a line.
                    let _ = tx.send(last).await;
                }
                let _ = tx.send(Incoming::Eof { at }).await;
                tracing::trace!(
                    "stdout ended; {} bytes of short lines copied, {} lines read \
                     no further than their opening",
                    splitter.copied,
                    splitter.unread
                );
                return;
            }
            Ok(n) => n,
            Err(e) => {
                let message = e.to_string();
                let _ = tx
                    .send(Incoming::Error {
                        message,
                        at: Instant::now(),
                    })
                    .await;
                return;
            }
        };
        let at = Instant::now();
        let Some(useful) = splitter.split(n, at, &tx) else {
            return;
        };
        if at.duration_since(window.0) >= READ_PAUSE {
            window = (at, 0);
        }
        if !useful {
            window.1 += 1;
            if window.1 >= IDLE_READS {
                src.pause(READ_PAUSE.saturating_sub(at.duration_since(window.0)))
                    .await;
                window = (Instant::now(), 0);
            }
        }
        if std::mem::take(&mut splitter.handed_long) {
            // The table may answer a long line by having the next ones read
            // no further than their opening (`SkipStale`): it runs before
            // the next read, not after a task's whole budget of them (the
            // line's wake-up put it on this worker, behind this task).
            tokio::task::yield_now().await;
        }
    }
}

/// The read buffer: the line being assembled across reads at its front, each
/// read appended after it.
struct Splitter {
    max_line: usize,
    buf: BytesMut,
    /// True while dropping the rest of an oversized line, or of one nobody
    /// has room for.
    skipping: bool,
    /// Bytes copied out of the read buffer into lines (short lines only).
    copied: u64,
    /// Lines handed over as [`Incoming::Stale`].
    unread: u64,
    /// Whether a line of [`OPENING`] bytes or more was handed over whole
    /// since the last read.
    handed_long: bool,
    skip: Arc<SkipStale>,
    /// The line being read no further than its opening, if one is.
    dropping: Option<Dropping>,
}

/// A line known by its opening as a reply to request `other`, its bytes
/// dropped as they come: how many have come, and the last of them.
struct Dropping {
    other: u64,
    during: u64,
    len: usize,
    last: u8,
}

impl Dropping {
    fn add(&mut self, bytes: &[u8]) {
        self.len += bytes.len();
        self.last = bytes.last().copied().unwrap_or(self.last);
    }

    /// The line ended with `tail` (its `\n` last): its length with a `\r`
    /// before the `\n` (as [`Incoming::Oversized`] counts) and without it
    /// (as [`Incoming::Line`] does).
    fn end(&mut self, tail: &[u8]) -> (usize, usize) {
        self.add(&tail[..tail.len() - 1]);
        (self.len, self.len - usize::from(self.last == b'\r'))
    }
}

impl Splitter {
    fn new(max_line: usize, skip: Arc<SkipStale>) -> Splitter {
        Splitter {
            max_line,
            buf: BytesMut::with_capacity(READ_BYTES),
            skipping: false,
            copied: 0,
            unread: 0,
            handed_long: false,
            skip,
            dropping: None,
        }
    }

    /// Room for one more read after the line being assembled: the buffer's
    /// own space back once the table has dropped every line taken from it,
    /// else a new buffer (the line so far moved into it).
    fn make_room(&mut self) {
        if self.buf.capacity() - self.buf.len() < READ_BYTES / 2 {
            self.buf.reserve(READ_BYTES);
        }
    }

    /// What is left at end of file, as a last line.
    fn rest(&mut self, at: Instant) -> Option<Incoming> {
        if let Some(d) = self.dropping.take() {
            self.unread += 1;
            let (other, during, len) = (d.other, d.during, d.len);
            return Some(Incoming::Stale {
                other,
                during,
                len,
                at,
            });
        }
        (!self.skipping && !self.buf.is_empty()).then(|| Incoming::Line {
            bytes: self.buf.split().freeze(),
            at,
        })
    }

    /// `(other, during)` if `line` (whole or its start) is to be read no
    /// further than its opening: see [`SkipStale`].
    fn stale_opening(&self, line: &[u8]) -> Option<(u64, u64)> {
        if line.len() < OPENING {
            return None;
        }
        let during = self.skip.during()?;
        let other = crate::reply::opening_id(&line[..OPENING])?;
        (other != during).then_some((other, during))
    }

    /// Splits what the last read appended (its last `n` bytes), handing
    /// complete lines to `tx`: `None` once nobody listens, else whether a line
    /// of a reply's size was handed over.
    fn split(&mut self, n: usize, at: Instant, tx: &mpsc::Sender<Incoming>) -> Option<bool> {
        let mut useful = false;
        // Only the new bytes are searched: what precedes them holds no newline.
        let mut from = self.buf.len() - n;
        while let Some(i) = memchr::memchr(b'\n', &self.buf[from..]) {
            let line = self.buf.split_to(from + i + 1);
            from = 0;
            if std::mem::take(&mut self.skipping) {
                continue;
            }
            let Some(msg) = self.take(line, at, tx.capacity() > 0) else {
                continue;
            };
            useful |= match &msg {
                Incoming::Line { bytes, .. } => bytes.len() >= USEFUL_LINE,
                Incoming::Stale { .. } => true,
                _ => false,
            };
            if !deliver(tx, msg) {
                return None;
            }
        }
        if self.skipping {
            self.buf.clear();
            return Some(useful);
        }
        if self.dropping.is_none() && self.buf.len() <= self.max_line {
            self.dropping = self
                .stale_opening(&self.buf)
                .map(|(other, during)| Dropping {
                    other,
                    during,
                    len: 0,
                    last: 0,
                });
        }
        let len = match self.dropping.as_mut() {
            Some(d) => {
                d.add(&self.buf);
                self.buf.clear();
                d.len
            }
            None => self.buf.len(),
        };
        if len > self.max_line {
            // Reported now: the line may never end.
            self.dropping = None;
            self.skipping = true;
            self.buf.clear();
            if !deliver(tx, Incoming::Oversized { len, at }) {
                return None;
            }
        }
        Some(useful)
    }

    /// What to hand over of a complete `line` (with its `\n`), if anything:
    /// `room` says whether the channel has room for it.
    fn take(&mut self, line: BytesMut, at: Instant, room: bool) -> Option<Incoming> {
        let (len, stale) = match self.dropping.take() {
            Some(mut d) => {
                let (len, stripped) = d.end(&line);
                (len, Some((d.other, d.during, stripped)))
            }
            None => {
                let stripped = line.len() - 1 - usize::from(line.ends_with(b"\r\n"));
                let stale = (self.stale_opening(&line[..stripped]))
                    .map(|(other, during)| (other, during, stripped));
                (line.len() - 1, stale)
            }
        };
        if len > self.max_line {
            return Some(Incoming::Oversized { len, at });
        }
        if !room {
            // Nobody has room for it: dropped without being copied.
            dropped_a_line();
            return None;
        }
        if let Some((other, during, len)) = stale {
            self.unread += 1;
            return Some(Incoming::Stale {
                other,
                during,
                len,
                at,
            });
        }
        let bytes = self.line(line);
        self.handed_long |= bytes.len() >= OPENING;
        Some(Incoming::Line { bytes, at })
    }

    /// A line taken from the buffer with its `\n`, as it is handed over:
    /// without the `\n` and a `\r` before it; copied only if short.
    fn line(&mut self, mut line: BytesMut) -> Bytes {
        line.truncate(line.len() - 1);
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        if line.len() >= SHARE_LINE {
            return line.freeze();
        }
        self.copied += line.len() as u64;
        Bytes::copy_from_slice(&line)
    }
}

/// Says (once a second at most) that a bot's unread lines are being dropped.
fn dropped_a_line() {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if LAST.swap(now, Ordering::Relaxed) != now {
        tracing::warn!("a bot printed more unread lines than the referee buffers; dropping them");
    }
}

/// Hands a message to the table without waiting; `false` once nobody listens.
fn deliver(tx: &mpsc::Sender<Incoming>, msg: Incoming) -> bool {
    match tx.try_send(msg) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(_)) => {
            dropped_a_line();
            true
        }
        Err(mpsc::error::TrySendError::Closed(_)) => false,
    }
}

#[cfg(test)]
mod tests;
