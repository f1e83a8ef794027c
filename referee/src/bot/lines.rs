//! Splitting a bot's stdout into lines with a hard cap on line length.
//!
//! Hand-written rather than `tokio_util::codec::LinesCodec` because the referee
//! needs three things that codec does not give together: raw bytes (invalid UTF-8
//! is a fault to report, not a stream error that ends reading), an oversized line
//! reported *and skipped* while reading goes on, and the arrival instant of each
//! newline for the clock.

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What the reader saw on a bot's stdout.
#[derive(Debug)]
pub enum Incoming {
    /// A complete line, without its `\n` (and without a trailing `\r`).
    Line { bytes: Vec<u8>, at: Instant },
    /// A line longer than the cap, reported as soon as the cap is passed (not when
    /// the line ends: it may never end). `len` is how much had arrived by then; the
    /// rest of the line up to its newline is dropped without further reports.
    Oversized { len: usize, at: Instant },
    /// stdout reached end of file (closed or the process ended).
    Eof { at: Instant },
    /// Reading failed.
    Error { message: String, at: Instant },
}

/// Reads `src` until end of file, sending each line to `tx`. Memory stays bounded
/// by `max_line` plus one read buffer plus the channel whatever the bot writes, and
/// reading never stops: when the channel is full (a bot printing hundreds of lines
/// nobody asked for), further lines are dropped, not waited on, so the bot never
/// blocks on a full pipe. Only end of file is always delivered.
pub async fn read_lines<R: AsyncRead + Unpin>(
    mut src: R,
    max_line: usize,
    tx: mpsc::Sender<Incoming>,
) {
    let mut line: Vec<u8> = Vec::with_capacity(256);
    // True while dropping the rest of an oversized line.
    let mut skipping = false;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match src.read(&mut buf).await {
            Ok(0) => {
                let at = Instant::now();
                if !skipping && !line.is_empty() {
                    // A last line without its newline is still a line.
                    let _ = tx
                        .send(Incoming::Line {
                            bytes: std::mem::take(&mut line),
                            at,
                        })
                        .await;
                }
                let _ = tx.send(Incoming::Eof { at }).await;
                return;
            }
            Ok(n) => n,
            Err(e) => {
                let _ = tx
                    .send(Incoming::Error {
                        message: e.to_string(),
                        at: Instant::now(),
                    })
                    .await;
                return;
            }
        };
        let at = Instant::now();
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let part = &chunk[..newline.unwrap_or(chunk.len())];
            if !skipping && line.len() + part.len() > max_line {
                skipping = true;
                let len = line.len() + part.len();
                line.clear();
                line.shrink_to(256);
                if !deliver(&tx, Incoming::Oversized { len, at }) {
                    return;
                }
            } else if !skipping {
                line.extend_from_slice(part);
            }
            let Some(nl) = newline else { break };
            chunk = &chunk[nl + 1..];
            if std::mem::take(&mut skipping) {
                continue;
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let bytes = std::mem::take(&mut line);
            if !deliver(&tx, Incoming::Line { bytes, at }) {
                return;
            }
        }
    }
}

/// Hands a message to the table without waiting; `false` once nobody listens.
fn deliver(tx: &mpsc::Sender<Incoming>, msg: Incoming) -> bool {
    match tx.try_send(msg) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(_)) => {
            tracing::warn!(
                "a bot printed more unread lines than the referee buffers; dropping one"
            );
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
        // The first read returns one 16 KiB buffer, which already passes the cap.
        assert_eq!(got, ["oversized 16384", "eof"]);
    }
}
