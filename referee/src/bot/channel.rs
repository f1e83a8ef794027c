//! A bot's line channel: messages out as queued lines with a write deadline,
//! lines in through the capped splitter of `lines.rs`. It knows byte streams
//! only (`AsyncRead`/`AsyncWrite`), never a process: a bot's stdin and stdout
//! today, a socket's halves or an in-memory pipe as well.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::{timeout, Instant};

use super::lines::{read_lines, Incoming, SkipStale};
use super::pipe::Source;

/// Why writing to a bot failed.
#[derive(Debug)]
pub enum WriteError {
    /// It did not take the bytes within the deadline (it stopped reading).
    Timeout,
    /// The pipe is closed.
    Closed(String),
}

type Writer = Box<dyn AsyncWrite + Send + Unpin>;

pub struct Channel {
    /// `None` once closed from our side.
    writer: Option<Writer>,
    lines: mpsc::Receiver<Incoming>,
    /// Messages queued for the next write.
    pending: Vec<u8>,
    /// Shared with the line reader: see [`Channel::skip_stale`].
    skip: std::sync::Arc<SkipStale>,
}

impl Channel {
    /// A channel writing to `writer` and reading lines of at most `max_line`
    /// bytes from `reader`, which is drained by a task of its own from now on,
    /// so the other side never blocks on a full pipe for long.
    pub fn new<R, W>(reader: R, writer: W, max_line: usize) -> Channel
    where
        R: Source + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (tx, lines) = mpsc::channel(256);
        let skip = std::sync::Arc::<SkipStale>::default();
        tokio::spawn(read_lines(reader, max_line, skip.clone(), tx));
        Channel {
            writer: Some(Box::new(writer)),
            lines,
            pending: Vec::new(),
            skip,
        }
    }

    /// Tells the line reader that request `during` has had its stale reply
    /// (`None`: no pending request has): from now on, until told otherwise,
    /// a long line opening as a reply to another request comes as
    /// [`Incoming::Stale`], its bytes unread past that opening.
    pub fn skip_stale(&self, during: Option<u64>) {
        self.skip.set(during);
    }

    /// Queues one message (a line, without its `\n`) for the next write.
    pub fn queue(&mut self, line: &[u8]) {
        self.pending.extend_from_slice(line);
        self.pending.push(b'\n');
    }

    /// Queues `msg` as one JSON line, serialised straight into the queue;
    /// returns how many bytes that queued (with the `\n`).
    pub fn queue_json<T: serde::Serialize>(&mut self, msg: &T) -> usize {
        let before = self.pending.len();
        serde_json::to_writer(&mut self.pending, msg).expect("messages serialize");
        self.pending.push(b'\n');
        self.pending.len() - before
    }

    /// Whether everything queued has been written.
    pub fn written(&self) -> bool {
        self.pending.is_empty()
    }

    /// Drops queued messages (for a bot nobody is listening to any more).
    pub fn discard_queue(&mut self) {
        self.pending.clear();
    }

    /// Writes as much of the queue as the other side takes right now, without
    /// waiting; the rest stays queued for the next write. A closed pipe is not
    /// reported here (`false` only says so for a log line): the next
    /// [`Channel::flush`] reports it, at a point of the game that does not
    /// depend on when the referee noticed.
    pub fn try_flush(&mut self) -> bool {
        let Some(writer) = self.writer.as_mut() else {
            return false;
        };
        let mut cx = Context::from_waker(Waker::noop());
        let mut written = 0;
        while written < self.pending.len() {
            match Pin::new(&mut **writer).poll_write(&mut cx, &self.pending[written..]) {
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
        let Some(writer) = self.writer.as_mut() else {
            self.pending.clear();
            return Err(WriteError::Closed("stdin already closed".into()));
        };
        let write = writer.write_all(&self.pending);
        let result = match limit {
            Some(limit) => timeout(limit, write)
                .await
                .map_err(|_| WriteError::Timeout)?,
            None => write.await,
        };
        self.pending.clear();
        result.map_err(|e| WriteError::Closed(e.to_string()))
    }

    /// The next thing the other side sent, or `None` at `deadline`.
    pub async fn next_line(&mut self, deadline: Option<Instant>) -> Option<Incoming> {
        let recv = self.lines.recv();
        let got = match deadline {
            Some(d) => tokio::time::timeout_at(d, recv).await.ok()?,
            None => recv.await,
        };
        // After Eof the reader is gone; keep reporting Eof.
        Some(got.unwrap_or(Incoming::Eof { at: Instant::now() }))
    }

    /// Closes our side for writing (the bot reads end of file). Reading goes
    /// on while the channel lives, so a bot that writes as it ends never meets
    /// a broken pipe.
    pub fn close_writer(&mut self) {
        drop(self.writer.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// A far-off deadline: only a guard so a regression fails instead of
    /// hanging the suite, never a timing assertion.
    fn guard() -> Option<Instant> {
        Some(Instant::now() + Duration::from_secs(60))
    }

    /// What a future TCP transport needs: the whole conversation over two
    /// in-memory pipes, no process anywhere.
    #[tokio::test]
    async fn a_conversation_runs_over_in_memory_pipes() {
        let (to_bot, bot_in) = tokio::io::duplex(64);
        let (mut bot_out, from_bot) = tokio::io::duplex(64);
        let mut channel = Channel::new(from_bot, to_bot, 100);
        // Two messages queued, one write; more than the 64-byte pipe holds, so
        // the write only completes because the bot reads as it goes.
        channel.queue(br#"{"type":"hello"}"#);
        let queued = channel.queue_json(&["x".repeat(80)]);
        assert_eq!(queued, 85);
        let bot = tokio::spawn(async move {
            let mut lines = BufReader::new(bot_in).lines();
            let mut got = Vec::new();
            while let Some(line) = lines.next_line().await.unwrap() {
                got.push(line);
            }
            got
        });
        channel.flush(Some(Duration::from_secs(60))).await.unwrap();
        channel.close_writer();
        let heard = bot.await.unwrap();
        assert_eq!(heard.len(), 2, "{heard:?}");
        assert_eq!(heard[0], r#"{"type":"hello"}"#);
        assert_eq!(heard[1], format!(r#"["{}"]"#, "x".repeat(80)));

        bot_out
            .write_all(b"{\"type\":\"reply\"}\r\npartial")
            .await
            .unwrap();
        drop(bot_out);
        let mut seen = Vec::new();
        loop {
            match channel.next_line(guard()).await.expect("within the guard") {
                Incoming::Line { bytes, .. } => {
                    seen.push(String::from_utf8(bytes.to_vec()).unwrap())
                }
                Incoming::Eof { .. } => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(seen, [r#"{"type":"reply"}"#, "partial"]);
        // End of file is sticky: asking again does not wait for the deadline.
        assert!(matches!(
            channel.next_line(None).await,
            Some(Incoming::Eof { .. })
        ));
    }

    #[tokio::test]
    async fn a_peer_that_stops_reading_times_the_write_out_and_a_closed_one_is_reported() {
        let (to_bot, bot_in) = tokio::io::duplex(8);
        let (_bot_out, from_bot) = tokio::io::duplex(8);
        let mut channel = Channel::new(from_bot, to_bot, 100);
        channel.queue(b"more than eight bytes");
        // Nobody reads: the write cannot finish, however fast or slow the host.
        let slow = channel.flush(Some(Duration::from_millis(10))).await;
        assert!(matches!(slow, Err(WriteError::Timeout)), "{slow:?}");
        drop(bot_in);
        channel.queue(b"to nobody");
        let closed = channel.flush(Some(Duration::from_secs(60))).await;
        assert!(matches!(closed, Err(WriteError::Closed(_))), "{closed:?}");
        // A deadline with nothing to read gives nothing.
        assert!(channel.next_line(Some(Instant::now())).await.is_none());
    }

    #[tokio::test]
    async fn try_flush_writes_what_fits_and_keeps_the_rest() {
        let (to_bot, mut bot_in) = tokio::io::duplex(8);
        let (_bot_out, from_bot) = tokio::io::duplex(8);
        let mut channel = Channel::new(from_bot, to_bot, 100);
        channel.queue(b"abcdefghijkl");
        assert!(channel.try_flush());
        let mut buf = [0u8; 16];
        let n = tokio::io::AsyncReadExt::read(&mut bot_in, &mut buf)
            .await
            .unwrap();
        assert_eq!(&buf[..n], b"abcdefgh");
        channel
            .flush(Some(Duration::from_secs(60)))
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        let n = tokio::io::AsyncReadExt::read(&mut bot_in, &mut buf)
            .await
            .unwrap();
        assert_eq!(&buf[..n], b"ijkl\n");
    }
}
