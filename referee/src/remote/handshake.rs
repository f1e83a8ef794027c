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
    /// A seat connection for a bot process that has had nothing of the seat
    /// (a first connection, or a restarted connector's): it is sent the
    /// seat's start, not what another process missed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
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

/// What the referee makes of a proof.
pub enum Verdict<T> {
    /// Proved, and what the connection is to serve.
    Admit(T),
    /// Not proved (or not for a role its name may take): `refused`.
    Refuse,
    /// Proved, but over its name's bounds: `busy`, and why.
    Busy(String),
}

/// The referee's side: challenges `stream` and reads its proof. `judge`
/// decides (the token, that the seat is the name's, the name's bounds); the
/// caller holds it to [`LIMIT`]. `None`: refused or turned away (told so),
/// or broken.
pub async fn challenge<T>(
    stream: Stream,
    run: &str,
    judge: impl FnOnce(&str, &Auth) -> Verdict<T>,
) -> Option<(Auth, T, Reader, Writer)> {
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
    let verdict = match &auth {
        Some(auth) => judge(&nonce, auth),
        None => Verdict::Refuse,
    };
    let answer = match (verdict, auth) {
        (Verdict::Admit(ticket), Some(auth)) => return Some((auth, ticket, reader, w)),
        (Verdict::Busy(why), _) => control("busy", &serde_json::json!({ "why": why }).to_string()),
        _ => control("refused", ""),
    };
    let _ = send(&mut w, &answer, LIMIT).await;
    None
}

/// The referee's words as this side prints them: no control characters
/// (a referee's text must not move the owner's terminal), at most 300.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(300).collect()
}

/// Why the connector's side of the handshake failed.
#[derive(Debug)]
pub enum Refused {
    /// The referee refused the proof.
    Token,
    /// The connection broke, spoke something else, or was turned away
    /// (`busy`): worth trying again.
    Broken(String),
}

/// How long the connector waits for each of the referee's handshake lines
/// (its challenge, its answer to the proof) before it gives the connection
/// up as broken (and tries again).
pub const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// The next frame within [`ANSWER_LIMIT`], or why not.
async fn answer(reader: &mut Reader, what: &str) -> Result<Frame, Refused> {
    tokio::time::timeout(ANSWER_LIMIT, reader.next())
        .await
        .map_err(|_| {
            Refused::Broken(format!(
                "the referee sent no {what} within {} s",
                ANSWER_LIMIT.as_secs()
            ))
        })
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
    prove_as(stream, token, role, seat, received, false).await
}

/// [`prove`], for a seat's connection saying whether its bot process is
/// `fresh` (has had nothing of the seat).
pub async fn prove_as(
    stream: Stream,
    token: &Token,
    role: &str,
    seat: &str,
    received: u64,
    fresh: bool,
) -> Result<(Welcome, Reader, Writer), Refused> {
    let (r, mut w) = tokio::io::split(stream);
    let mut reader = FrameReader::new(r, MAX_CONTROL);
    let broken = |what: &str| Refused::Broken(what.to_owned());
    let challenge = match answer(&mut reader, "challenge").await? {
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
        fresh,
        mac: token.prove(&challenge.run, &challenge.nonce, role, seat),
    };
    let line = control("auth", &serde_json::to_string(&auth).expect("serializes"));
    if !send(&mut w, &line, LIMIT).await {
        return Err(broken("the referee stopped reading"));
    }
    match answer(&mut reader, "answer to the proof").await? {
        Frame::Control(word, rest) if word == "welcome" => {
            let welcome = serde_json::from_str(&rest).map_err(|_| broken("a bad welcome"))?;
            Ok((welcome, reader, w))
        }
        Frame::Control(word, _) if word == "refused" => Err(Refused::Token),
        Frame::Control(word, rest) if word == "busy" => {
            let why = serde_json::from_str::<serde_json::Value>(&rest)
                .ok()
                .and_then(|v| v.get("why")?.as_str().map(printable))
                .unwrap_or_default();
            Err(Refused::Broken(format!(
                "the referee turned the connection away: {why}"
            )))
        }
        Frame::Eof => Err(broken("the referee closed the connection")),
        _ => Err(broken("an unexpected answer to the proof")),
    }
}
