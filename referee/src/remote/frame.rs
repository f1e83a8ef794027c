//! The socket's framing, the same on both ends: lines ending in `\n`. A line
//! is the bot protocol's own (PROTOCOL.md, byte for byte) unless it starts
//! with one `~`: then it is the link's (handshake, heartbeat, end of file).
//! A bot line that itself starts with `~` is sent with one more `~` in front,
//! which the receiver takes off. Reading is cancel-safe (usable in
//! `select!`): the only await is the socket read, and the buffer is kept
//! across calls.

use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest link line (handshake and heartbeats are far shorter).
pub const MAX_CONTROL: usize = 4096;

/// What one line of the socket was.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A bot protocol line, unescaped, without its `\n`.
    Line(Vec<u8>),
    /// A bot line longer than the reader's cap: dropped up to its newline.
    Long,
    /// A link line, without its `~`: the word and the rest.
    Control(String, String),
    /// A link line longer than [`MAX_CONTROL`]: a broken peer.
    BadControl,
    /// The connection ended.
    Eof,
}

/// Reads frames from one direction of a connection.
pub struct FrameReader<R> {
    src: R,
    buf: Vec<u8>,
    start: usize,
    cap: usize,
    skipping: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Lines longer than `cap` bytes are [`Frame::Long`].
    pub fn new(src: R, cap: usize) -> FrameReader<R> {
        FrameReader {
            src,
            buf: Vec::new(),
            start: 0,
            cap,
            skipping: false,
        }
    }

    pub fn set_cap(&mut self, cap: usize) {
        self.cap = cap;
    }

    /// The next frame; a read error is the end of the connection.
    pub async fn next(&mut self) -> Frame {
        loop {
            if let Some(frame) = self.take() {
                return frame;
            }
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            let mut chunk = [0u8; 16 * 1024];
            match self.src.read(&mut chunk).await {
                Ok(0) | Err(_) => return Frame::Eof,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    fn take(&mut self) -> Option<Frame> {
        loop {
            let pending = &self.buf[self.start..];
            match memchr::memchr(b'\n', pending) {
                Some(i) => {
                    let line = pending[..i].to_vec();
                    self.start += i + 1;
                    if std::mem::take(&mut self.skipping) {
                        continue;
                    }
                    return Some(classify(line, self.cap));
                }
                None if self.skipping => {
                    self.start = self.buf.len();
                    return None;
                }
                None if pending.len() > self.cap.max(MAX_CONTROL) => {
                    let control = is_control(pending);
                    self.skipping = true;
                    self.start = self.buf.len();
                    return Some(if control {
                        Frame::BadControl
                    } else {
                        Frame::Long
                    });
                }
                None => return None,
            }
        }
    }
}

fn is_control(line: &[u8]) -> bool {
    line.first() == Some(&b'~') && line.get(1) != Some(&b'~')
}

fn classify(line: Vec<u8>, cap: usize) -> Frame {
    if is_control(&line) {
        if line.len() > MAX_CONTROL {
            return Frame::BadControl;
        }
        let text = String::from_utf8_lossy(&line[1..]).into_owned();
        let (word, rest) = text.split_once(' ').unwrap_or((&text, ""));
        return Frame::Control(word.to_owned(), rest.to_owned());
    }
    let body = match line.first() {
        Some(b'~') => line[1..].to_vec(),
        _ => line,
    };
    if body.len() > cap {
        return Frame::Long;
    }
    Frame::Line(body)
}

/// Appends bot line `line` (no `\n`) to `out`, escaped.
pub fn bot_line(out: &mut Vec<u8>, line: &[u8]) {
    if line.first() == Some(&b'~') {
        out.push(b'~');
    }
    out.extend_from_slice(line);
    out.push(b'\n');
}

/// A link line: `~WORD REST\n` (`rest` must hold no newline).
pub fn control(word: &str, rest: &str) -> Vec<u8> {
    let mut line = format!("~{word}");
    if !rest.is_empty() {
        line.push(' ');
        line.push_str(rest);
    }
    line.push('\n');
    line.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bot_lines_that_look_like_link_lines_survive_and_long_ones_are_dropped() {
        let mut wire = Vec::new();
        bot_line(&mut wire, b"~pong 1 2");
        bot_line(&mut wire, b"{\"type\":\"reply\"}");
        wire.extend(control("ping", "7 3"));
        bot_line(&mut wire, &[b'x'; 40]);
        bot_line(&mut wire, b"after");
        let mut r = FrameReader::new(&wire[..], 20);
        assert_eq!(r.next().await, Frame::Line(b"~pong 1 2".to_vec()));
        assert_eq!(
            r.next().await,
            Frame::Line(b"{\"type\":\"reply\"}".to_vec())
        );
        assert_eq!(r.next().await, Frame::Control("ping".into(), "7 3".into()));
        assert_eq!(r.next().await, Frame::Long);
        assert_eq!(r.next().await, Frame::Line(b"after".to_vec()));
        assert_eq!(r.next().await, Frame::Eof);
    }

    #[tokio::test]
    async fn an_endless_line_is_reported_once_and_skipped_in_bounded_memory() {
        let mut wire = vec![b'y'; 10 * MAX_CONTROL];
        wire.extend_from_slice(b"\nok\n");
        let mut r = FrameReader::new(&wire[..], 10);
        assert_eq!(r.next().await, Frame::Long);
        assert_eq!(r.next().await, Frame::Line(b"ok".to_vec()));
        let mut bad = vec![b'~'; 1];
        bad.extend(vec![b'z'; 2 * MAX_CONTROL]);
        let mut r = FrameReader::new(&bad[..], 10);
        assert_eq!(r.next().await, Frame::BadControl);
    }
}
