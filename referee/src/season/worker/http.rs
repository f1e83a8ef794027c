//! The worker's side of HTTP: one request per connection (`Connection:
//! close`), HTTP/1.1 over plain TCP, to the season's server and nowhere
//! else. Enough for the few routes of `site/worker.rs`: a body of a known
//! length out, the whole answer read back (a length, a chunked body, or to
//! the end), with a bound on every wait.

use std::time::Duration;

use anyhow::{bail, Context};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long connecting may take.
const CONNECT: Duration = Duration::from_secs(20);
/// How long a whole exchange may take (a blob of tens of MiB included).
const EXCHANGE: Duration = Duration::from_secs(300);
/// The most of an answer read.
const MOST: u64 = 64 << 20;

/// The season's server and the worker's token.
pub struct Server {
    /// `HOST:PORT`.
    host: String,
    token: String,
}

/// An answer: its status and body.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    /// The `error` of a JSON refusal, or the body as text.
    pub fn why(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
            .unwrap_or_else(|| crate::names::printable(text.trim()).into_owned())
    }
}

impl Server {
    /// `http://HOST:PORT`, as the messages say it.
    pub fn url(&self) -> String {
        format!("http://{}", self.host)
    }

    /// The server at `url` (`http://HOST:PORT`, a path after it ignored).
    pub fn new(url: &str, token: String) -> anyhow::Result<Server> {
        let Some(rest) = url.strip_prefix("http://") else {
            bail!(
                "--server {url:?}: expected http://HOST:PORT (the worker speaks plain HTTP; \
                 across an untrusted network, carry it through a tunnel or a TLS proxy)"
            );
        };
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty() || !host.contains(':') {
            bail!("--server {url:?}: expected http://HOST:PORT");
        }
        Ok(Server {
            host: host.to_owned(),
            token,
        })
    }

    /// Sends `method path` with `body` (JSON if `json`); the answer, or an
    /// error if the server could not be reached or answered nothing whole.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        json: bool,
    ) -> anyhow::Result<Reply> {
        let exchange = async {
            let connect = tokio::net::TcpStream::connect(&self.host);
            let mut s = tokio::time::timeout(CONNECT, connect)
                .await
                .map_err(|_| anyhow::anyhow!("no connection within {CONNECT:?}"))??;
            let kind = match json {
                true => "application/json",
                false => "application/octet-stream",
            };
            let head = format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
                 Connection: close\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
                self.host,
                self.token,
                body.len()
            );
            s.write_all(head.as_bytes()).await?;
            s.write_all(body).await?;
            s.flush().await?;
            let mut raw = Vec::new();
            (&mut s).take(MOST).read_to_end(&mut raw).await?;
            parse(&raw)
        };
        tokio::time::timeout(EXCHANGE, exchange)
            .await
            .map_err(|_| anyhow::anyhow!("no whole answer within {EXCHANGE:?}"))?
            .with_context(|| format!("{method} http://{}{path}", self.host))
    }
}

/// An HTTP/1.1 answer read to its end.
fn parse(raw: &[u8]) -> anyhow::Result<Reply> {
    let split = (raw.windows(4).position(|w| w == b"\r\n\r\n"))
        .context("the answer ends inside its head")?;
    let head = std::str::from_utf8(&raw[..split]).context("an answer head that is not text")?;
    let rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status: u16 = (lines.next().unwrap_or_default().split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .context("an answer with no status")?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        }
    }
    let body = match (chunked, length) {
        (true, _) => dechunk(rest)?,
        (false, Some(n)) if rest.len() >= n => rest[..n].to_vec(),
        (false, Some(n)) => bail!("the answer ends after {} of its {n} bytes", rest.len()),
        (false, None) => rest.to_vec(),
    };
    Ok(Reply { status, body })
}

/// A chunked body's bytes.
fn dechunk(mut rest: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let end = (rest.windows(2).position(|w| w == b"\r\n")).context("a chunk cut off")?;
        let size = std::str::from_utf8(&rest[..end])?;
        let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
            .context("a chunk's size")?;
        rest = &rest[end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if rest.len() < size + 2 {
            bail!("a chunk cut off");
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_by_length_by_chunks_and_to_the_end() {
        let r = parse(b"HTTP/1.1 409 Conflict\r\ncontent-length: 5\r\n\r\nhello").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (409, &b"hello"[..]));
        let r = parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
            .unwrap();
        assert_eq!(r.body, b"abcde");
        assert!(parse(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nshort").is_err());
        let r =
            parse(b"HTTP/1.1 422 X\r\ncontent-length: 17\r\n\r\n{\"error\":\"wrong\"}").unwrap();
        assert_eq!(r.why(), "wrong");
        assert!(Server::new("https://x:1", String::new()).is_err());
        assert!(Server::new("http://127.0.0.1:80/", String::new()).is_ok());
    }
}
