//! A connection's first lines: the referee's challenge (the run and a fresh
//! nonce), the connector's proof of its token for one role (the control
//! connection of a name, or one seat), and the referee's answer — `welcome`,
//! or `refused` with nothing said about what was wrong. The referee gives a
//! connection [`LIMIT`] to prove itself, then drops it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};

use super::frame::{control, Frame, FrameReader, MAX_CONTROL};
use super::token::{random_hex, Token};
use super::Stream;

/// How long a connection has from accept to a valid proof (TLS included).
pub const LIMIT: Duration = Duration::from_millis(1500);
/// Wire version of the link.
pub const VERSION: u32 = 1;

/// The connection of a name that is told which seats to serve.
pub const CONTROL: &str = "control";
/// The connection of one seat.
pub const SEAT: &str = "seat";

#[derive(Serialize, Deserialize, Debug)]
pub struct Challenge {
    pub v: u32,
    pub run: String,
    pub nonce: String,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Auth {
    pub name: String,
    pub role: String,
    #[serde(default)]
    pub seat: String,
    /// Link lines: how many of the referee's lines it has (a reconnect).
    #[serde(default)]
    pub received: u64,
    pub mac: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct Welcome {
    /// How many of the connector's lines the referee has.
    pub received: u64,
    pub max_line: usize,
    pub grace_ms: u64,
}

pub type Reader = FrameReader<ReadHalf<Stream>>;
pub type Writer = WriteHalf<Stream>;

/// Writes `bytes` within `limit`; `false` if it could not.
pub async fn send<W: AsyncWrite + Unpin>(w: &mut W, bytes: &[u8], limit: Duration) -> bool {
    matches!(
        tokio::time::timeout(limit, async {
            w.write_all(bytes).await?;
            w.flush().await
        })
        .await,
        Ok(Ok(()))
    )
}

/// The referee's side: challenges `stream` and reads its proof. `admits`
/// judges it (the token, and that the seat is the name's); the caller holds
/// it to [`LIMIT`]. `None`: refused (told so) or broken.
pub async fn challenge(
    stream: Stream,
    run: &str,
    admits: impl FnOnce(&str, &Auth) -> bool,
) -> Option<(Auth, Reader, Writer)> {
    let (r, mut w) = tokio::io::split(stream);
    let mut reader = FrameReader::new(r, MAX_CONTROL);
    let nonce = random_hex(16).ok()?;
    let hello = Challenge {
        v: VERSION,
        run: run.to_owned(),
        nonce: nonce.clone(),
    };
    let line = control("challenge", &serde_json::to_string(&hello).ok()?);
    if !send(&mut w, &line, LIMIT).await {
        return None;
    }
    let auth = match reader.next().await {
        Frame::Control(word, rest) if word == "auth" => serde_json::from_str::<Auth>(&rest).ok(),
        _ => None,
    };
    match auth {
        Some(auth) if admits(&nonce, &auth) => Some((auth, reader, w)),
        _ => {
            let _ = send(&mut w, &control("refused", ""), LIMIT).await;
            None
        }
    }
}

/// Why the connector's side of the handshake failed.
#[derive(Debug)]
pub enum Refused {
    /// The referee refused the proof.
    Token,
    /// The connection broke or spoke something else.
    Broken(String),
}

/// The connector's side: answers the challenge with a proof of `token` for
/// `role` (and `seat`), having `received` of the referee's lines.
pub async fn prove(
    stream: Stream,
    token: &Token,
    role: &str,
    seat: &str,
    received: u64,
) -> Result<(Welcome, Reader, Writer), Refused> {
    let (r, mut w) = tokio::io::split(stream);
    let mut reader = FrameReader::new(r, MAX_CONTROL);
    let broken = |what: &str| Refused::Broken(what.to_owned());
    let challenge = match reader.next().await {
        Frame::Control(word, rest) if word == "challenge" => {
            serde_json::from_str::<Challenge>(&rest).map_err(|_| broken("a bad challenge"))?
        }
        Frame::Eof => return Err(broken("the referee closed the connection")),
        _ => return Err(broken("not a Schmier referee's remote listener")),
    };
    if token.run != "*" && token.run != challenge.run {
        return Err(Refused::Broken(format!(
            "the token is for run {}, the referee runs {}",
            token.run, challenge.run
        )));
    }
    let auth = Auth {
        name: token.name.clone(),
        role: role.to_owned(),
        seat: seat.to_owned(),
        received,
        mac: token.prove(&challenge.run, &challenge.nonce, role, seat),
    };
    let line = control("auth", &serde_json::to_string(&auth).expect("serializes"));
    if !send(&mut w, &line, LIMIT).await {
        return Err(broken("the referee stopped reading"));
    }
    match reader.next().await {
        Frame::Control(word, rest) if word == "welcome" => {
            let welcome = serde_json::from_str(&rest).map_err(|_| broken("a bad welcome"))?;
            Ok((welcome, reader, w))
        }
        Frame::Control(word, _) if word == "refused" => Err(Refused::Token),
        Frame::Eof => Err(broken("the referee closed the connection")),
        _ => Err(broken("an unexpected answer to the proof")),
    }
}
