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

/// Reads `src` until end of file, sending each line to `tx`. Memory stays bounded
/// by `max_line` plus one read buffer plus the channel whatever the bot writes
/// (a line the channel holds as a slice keeps its read buffer, of at most
/// `max_line` plus 128 KiB, alive until the table drops it), and
/// reading never stops for long: when the channel is full (a bot printing hundreds
/// of lines nobody asked for), further lines are dropped, not waited on (nor
/// copied), so the bot never blocks on a full pipe for good. Only end of file is
/// always delivered.
pub async fn read_lines<R: Source>(mut src: R, max_line: usize, tx: mpsc::Sender<Incoming>) {
    let mut splitter = Splitter::new(max_line);
    let mut window = (Instant::now(), 0u32);
    loop {
        splitter.make_room();
        let n = match src.read_buf(&mut splitter.buf).await {
            Ok(0) => {
                let at = Instant::now();
                if let Some(bytes) = splitter.rest() {
                    // A last line without its newline is still a line.
                    let _ = tx.send(Incoming::Line { bytes, at }).await;
                }
                let _ = tx.send(Incoming::Eof { at }).await;
                tracing::trace!(
                    "stdout ended; {} bytes of short lines copied",
                    splitter.copied
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
}

impl Splitter {
    fn new(max_line: usize) -> Splitter {
        Splitter {
            max_line,
            buf: BytesMut::with_capacity(READ_BYTES),
            skipping: false,
            copied: 0,
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
    fn rest(&mut self) -> Option<Bytes> {
        (!self.skipping && !self.buf.is_empty()).then(|| self.buf.split().freeze())
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
            let len = line.len() - 1;
            if len > self.max_line {
                if !deliver(tx, Incoming::Oversized { len, at }) {
                    return None;
                }
                continue;
            }
            if tx.capacity() == 0 {
                // Nobody has room for it: dropped without being copied.
                dropped_a_line();
                continue;
            }
            let bytes = self.line(line);
            useful |= bytes.len() >= USEFUL_LINE;
            if !deliver(tx, Incoming::Line { bytes, at }) {
                return None;
            }
        }
        if self.skipping {
            self.buf.clear();
        } else if self.buf.len() > self.max_line {
            // Reported now: the line may never end.
            let len = self.buf.len();
            self.skipping = true;
            self.buf.clear();
            if !deliver(tx, Incoming::Oversized { len, at }) {
                return None;
            }
        }
        Some(useful)
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
        read_lines(input, max, tx).await;
        let mut out = Vec::new();
        while let Some(m) = rx.recv().await {
            out.push(match m {
                Incoming::Line { bytes, .. } => format!("line {}", String::from_utf8_lossy(&bytes)),
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
        let reader = tokio::spawn(read_lines(referee, 100, tx));
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
        let mut splitter = Splitter::new(64 * 1024);
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
        let reader = tokio::spawn(read_lines(src, 1 << 16, tx));
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
        let reader = tokio::spawn(read_lines(src, 1 << 16, tx));
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
