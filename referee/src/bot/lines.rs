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
mod tests {
    use super::*;

    async fn collect(input: &[u8], max: usize) -> Vec<String> {
        let (tx, mut rx) = mpsc::channel(100);
        read_lines(input, max, Default::default(), tx).await;
        let mut out = Vec::new();
        while let Some(m) = rx.recv().await {
            out.push(match m {
                Incoming::Line { bytes, .. } => format!("line {}", String::from_utf8_lossy(&bytes)),
                Incoming::Stale { other, .. } => format!("stale {other}"),
                Incoming::Oversized { len, .. } => format!("oversized {len}"),
                Incoming::Eof { .. } => "eof".into(),
                Incoming::Error { message, .. } => format!("error {message}"),
            });
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_caps_long_ones_without_losing_the_next() {
        let got = collect(b"ab\r\nxxxxxxxxxx\ncd\nlast", 5).await;
        assert_eq!(
            got,
            ["line ab", "oversized 10", "line cd", "line last", "eof"]
        );
    }

    #[tokio::test]
    async fn a_flood_of_lines_is_dropped_not_waited_on() {
        use tokio::io::AsyncWriteExt;
        let (tx, mut rx) = mpsc::channel(4);
        // A 16-byte pipe: the writer can only finish if the reader keeps taking
        // bytes although nobody empties the channel after its first four lines.
        let (mut bot, referee) = tokio::io::duplex(16);
        let reader = tokio::spawn(read_lines(referee, 100, Default::default(), tx));
        let flood = "x\n".repeat(1000);
        // Not a timing assertion: only a guard so a regression fails instead of
        // hanging the suite.
        tokio::time::timeout(
            std::time::Duration::from_secs(60),
            bot.write_all(flood.as_bytes()),
        )
        .await
        .expect("the reader stalled on a full channel")
        .unwrap();
        drop(bot);
        let mut got = Vec::new();
        while let Some(m) = rx.recv().await {
            got.push(matches!(m, Incoming::Eof { .. }));
        }
        // Four lines fill the channel; of the rest, only what was still in the
        // 16-byte pipe when the writer finished (8 lines at most) can find room
        // later. Everything else was dropped, not waited on. End of file is last
        // and always delivered.
        let (eof, lines) = got.split_last().unwrap();
        assert!(*eof, "{got:?}");
        assert!(lines.iter().all(|e| !e));
        assert!(
            (4..=12).contains(&lines.len()),
            "{} lines kept",
            lines.len()
        );
        reader.await.unwrap();
    }

    #[tokio::test]
    async fn an_endless_line_is_reported_once_as_soon_as_it_passes_the_cap() {
        let big = vec![b'x'; 100_000];
        let got = collect(&big, 1000).await;
        // The first read returns one 64 KiB buffer, which already passes the cap.
        assert_eq!(got, ["oversized 65536", "eof"]);
    }

    /// A 60 KB line (a long stale reply) is handed over as a slice of the read
    /// buffer, never copied; a short one is copied out (so that it keeps no
    /// buffer alive). Counted, not timed.
    #[test]
    fn a_long_line_is_handed_over_without_a_copy() {
        let (tx, mut rx) = mpsc::channel(8);
        let mut splitter = Splitter::new(64 * 1024, Default::default());
        let long = format!(
            "{{\"type\":\"reply\",\"id\":9,\"pad\":\"{}\"}}",
            "p".repeat(60_000)
        );
        let short = r#"{"type":"reply","id":3,"action":"pass"}"#;
        // As two reads would bring them: the long line split across both.
        let all = format!("{long}\n{short}\n");
        for chunk in [&all.as_bytes()[..40_000], &all.as_bytes()[40_000..]] {
            splitter.make_room();
            splitter.buf.extend_from_slice(chunk);
            assert!(splitter.split(chunk.len(), Instant::now(), &tx).is_some());
        }
        let mut got = Vec::new();
        while let Ok(Incoming::Line { bytes, .. }) = rx.try_recv() {
            got.push(bytes);
        }
        assert_eq!(got.len(), 2);
        assert_eq!(&got[0][..], long.as_bytes());
        assert_eq!(&got[1][..], short.as_bytes());
        assert_eq!(
            splitter.copied,
            short.len() as u64,
            "only the short line was copied"
        );
    }

    fn stale_line(id: u64, pad: usize) -> String {
        format!(
            "{{\"type\":\"reply\",\"id\":{id},\"pad\":\"{}\"}}",
            "p".repeat(pad)
        )
    }

    fn describe(m: Incoming) -> String {
        match m {
            Incoming::Line { bytes, .. } => format!("line of {}", bytes.len()),
            Incoming::Stale {
                other, during, len, ..
            } => format!("stale {other} during {during}, {len} bytes"),
            Incoming::Oversized { len, .. } => format!("oversized {len}"),
            Incoming::Eof { .. } => "eof".into(),
            Incoming::Error { message, .. } => format!("error {message}"),
        }
    }

    /// Once told that request 5 has had its stale reply, a long line that
    /// opens as a reply to another request is handed over by its opening and
    /// length, in whatever reads it comes; the rest is handed over whole: a
    /// reply to 5, another opening, a short line, and every line before the
    /// table said so. Nothing of a skipped line is kept or copied: the same
    /// read buffer takes every read. Counted, not timed.
    #[test]
    fn once_told_of_a_stale_reply_long_lines_of_other_requests_are_read_no_further() {
        let (tx, mut rx) = mpsc::channel(32);
        let skip = Arc::<SkipStale>::default();
        let mut splitter = Splitter::new(64 * 1024, Arc::clone(&skip));
        let feed = |splitter: &mut Splitter, text: &str| {
            for chunk in text.as_bytes().chunks(READ_BYTES) {
                splitter.make_room();
                splitter.buf.extend_from_slice(chunk);
                assert!(splitter.split(chunk.len(), Instant::now(), &tx).is_some());
            }
        };
        let stale = stale_line(1005, 60_000);
        feed(&mut splitter, &format!("{stale}\n"));
        // The table reads that line (then drops it) and tells of its fault.
        let mut got = vec![describe(rx.try_recv().unwrap())];
        skip.set(Some(5));
        splitter.make_room();
        let base = splitter.buf.as_ptr() as usize;
        let short = stale_line(1005, 10);
        let crlf = stale_line(7, 300);
        feed(&mut splitter, &format!("{stale}\n{stale}\n{crlf}\r\n"));
        // Only stale lines since: every read went into the same buffer.
        let end = splitter.buf.as_ptr() as usize;
        assert!((base..base + READ_BYTES).contains(&end), "a new buffer");
        let right = stale_line(5, 60_000);
        let other = format!("{{\"id\":1005,{}", &stale[1..]);
        feed(
            &mut splitter,
            &format!("{right}\n{other}\n{short}\n{stale}"),
        );
        got.extend(std::iter::from_fn(|| rx.try_recv().ok()).map(describe));
        let n = stale.len();
        let expected = [
            format!("line of {n}"),
            format!("stale 1005 during 5, {n} bytes"),
            format!("stale 1005 during 5, {n} bytes"),
            format!("stale 7 during 5, {} bytes", crlf.len()),
            format!("line of {}", right.len()),
            format!("line of {}", other.len()),
            format!("line of {}", short.len()),
        ];
        assert_eq!(got, expected);
        assert_eq!(splitter.unread, 3);
        assert_eq!(splitter.copied, short.len() as u64);
        // The last line has no newline yet: read no further, and at end of
        // file still a line.
        assert_eq!(
            splitter.rest(Instant::now()).map(describe),
            Some(format!("stale 1005 during 5, {n} bytes"))
        );
        skip.set(None);
        feed(&mut splitter, &format!("{stale}\n"));
        assert_eq!(rx.try_recv().map(describe), Ok(format!("line of {n}")));
    }

    /// A line read no further than its opening is still capped: past the cap
    /// it is reported oversized once, as soon as the cap is passed, and the
    /// next line is read as ever.
    #[test]
    fn a_skipped_line_past_the_cap_is_oversized() {
        let (tx, mut rx) = mpsc::channel(8);
        let skip = Arc::<SkipStale>::default();
        skip.set(Some(5));
        let mut splitter = Splitter::new(50_000, skip);
        let long = stale_line(1005, 100_000);
        let text = format!("{long}\n{}\n", stale_line(1005, 1_000));
        for chunk in text.as_bytes().chunks(30_000) {
            splitter.make_room();
            splitter.buf.extend_from_slice(chunk);
            assert!(splitter.split(chunk.len(), Instant::now(), &tx).is_some());
        }
        let got: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(describe)
            .collect();
        let next = stale_line(1005, 1_000).len();
        assert_eq!(
            got,
            [
                "oversized 60000".to_owned(),
                format!("stale 1005 during 5, {next} bytes")
            ]
        );
    }

    /// The table tells the reader of a stale reply after it has read one: the
    /// reader lets it run after handing over a long line whole, so the lines
    /// already waiting in the pipe behind it are not all read whole first.
    /// On one thread, so the order is the runtime's, not the host's speed.
    #[tokio::test(flavor = "current_thread")]
    async fn after_a_long_line_the_table_can_answer_before_the_next_read() {
        use tokio::io::AsyncWriteExt;
        let (mut bot, referee) = tokio::io::duplex(1 << 20);
        let stale = stale_line(1005, 60_000);
        bot.write_all(format!("{stale}\n").repeat(10).as_bytes())
            .await
            .unwrap();
        drop(bot);
        let skip = Arc::<SkipStale>::default();
        let (tx, mut rx) = mpsc::channel(32);
        let reader = tokio::spawn(read_lines(referee, 1 << 16, Arc::clone(&skip), tx));
        let first = rx.recv().await.map(describe);
        assert_eq!(first, Some(format!("line of {}", stale.len())));
        skip.set(Some(5));
        let mut rest = Vec::new();
        while let Some(m) = rx.recv().await {
            rest.push(describe(m));
        }
        reader.await.unwrap();
        let skipped = format!("stale 1005 during 5, {} bytes", stale.len());
        assert_eq!(rest.len(), 10, "{rest:?}");
        assert!(rest[..9].iter().all(|m| *m == skipped), "{rest:?}");
    }

    /// A duplex pipe that counts its reads and pauses.
    struct Counted {
        inner: tokio::io::DuplexStream,
        reads: std::sync::Arc<std::sync::atomic::AtomicU32>,
        pauses: std::sync::Arc<std::sync::atomic::AtomicU32>,
    }

    impl tokio::io::AsyncRead for Counted {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let got = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
            if got.is_ready() {
                self.reads
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            got
        }
    }

    impl Source for Counted {
        async fn pause(&mut self, d: Duration) {
            self.pauses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(d).await;
        }
    }

    fn counted(
        size: usize,
    ) -> (
        tokio::io::DuplexStream,
        Counted,
        [std::sync::Arc<std::sync::atomic::AtomicU32>; 2],
    ) {
        let (bot, referee) = tokio::io::duplex(size);
        let counters = [Default::default(), Default::default()];
        let src = Counted {
            inner: referee,
            reads: std::sync::Arc::clone(&counters[0]),
            pauses: std::sync::Arc::clone(&counters[1]),
        };
        (bot, src, counters)
    }

    /// Not a timing assertion a busy host can break: however slow the host, a
    /// window of [`READ_PAUSE`] holds at most [`IDLE_READS`] reads that hand
    /// no reply-sized line over, so the reads are bounded by the elapsed time.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_byte_trickle_is_read_in_batches() {
        use std::sync::atomic::Ordering;
        use tokio::io::AsyncWriteExt;
        let (mut bot, src, [reads, _]) = counted(64 * 1024);
        let (tx, mut rx) = mpsc::channel(4);
        let start = Instant::now();
        let reader = tokio::spawn(read_lines(src, 1 << 16, Default::default(), tx));
        for _ in 0..20_000 {
            bot.write_all(b" ").await.unwrap();
        }
        bot.write_all(b"{}\n").await.unwrap();
        drop(bot);
        reader.await.unwrap();
        let windows = start.elapsed().as_millis() as u32 / READ_PAUSE.as_millis() as u32 + 2;
        let reads = reads.load(Ordering::Relaxed);
        assert!(
            reads <= IDLE_READS * windows,
            "{reads} reads in {:?} (at most {})",
            start.elapsed(),
            IDLE_READS * windows
        );
        let mut line = None;
        while let Some(Incoming::Line { bytes, .. }) = rx.recv().await {
            line = Some(bytes.len());
        }
        assert_eq!(line, Some(20_002), "the trickled line arrived whole");
    }

    /// A bot that answers each request at once, with a line per write, is never
    /// paused, however many lines it sends.
    #[tokio::test]
    async fn reply_sized_lines_are_never_paused() {
        use std::sync::atomic::Ordering;
        use tokio::io::AsyncWriteExt;
        let (mut bot, src, [reads, pauses]) = counted(1024);
        let (tx, mut rx) = mpsc::channel(4);
        let reader = tokio::spawn(read_lines(src, 1 << 16, Default::default(), tx));
        for id in 0..1000 {
            let reply = format!("{{\"type\":\"reply\",\"id\":{id},\"action\":\"pass\"}}\n");
            bot.write_all(reply.as_bytes()).await.unwrap();
            // Asked, answered, heard: the next is written once this is read.
            assert!(matches!(rx.recv().await, Some(Incoming::Line { .. })));
        }
        drop(bot);
        reader.await.unwrap();
        assert!(reads.load(Ordering::Relaxed) >= 1000);
        assert_eq!(pauses.load(Ordering::Relaxed), 0);
    }
}
