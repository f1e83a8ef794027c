//! Bots on other machines: a seat served over the network. The organiser's
//! referee listens (`--listen`, [`hub`]); a bot's owner runs `referee connect`
//! ([`connect`]), which starts the unchanged bot once per seat and bridges its
//! stdin and stdout to the seat. On the referee's side a remote seat is a
//! [`crate::bot::Channel`] over in-memory pipes that a link task ([`link`])
//! keeps joined to the current connection, seated by
//! [`crate::player::Player::over`]: the table does not know.
//!
//! One concept a file: [`args`] the flags, [`announce`] the token files and
//! the organiser's instructions, [`token`] seat tokens, [`tls`]
//! certificates and pinning, [`frame`] the socket's line framing,
//! [`handshake`] the challenge and proof, [`admission`] the slots of
//! connections not yet proved, [`descriptors`] the open-file limit,
//! [`hub`] the listener and who is connected, [`wait`] the wait for every
//! name's connector before the first game, [`link`] one seat's link
//! (resend, reconnect, a restarted bot taking its seat over), [`heartbeat`]
//! the measured round trip and the clock's credit, [`downtime`] the link-down
//! time a pending decision has off its clock, [`seat`] a remote seat for a
//! session, [`connect`] the bot side. The wire is PROTOCOL.md's "Remote
//! seats"; the trust model SECURITY.md's "Remote seats".

pub mod admission;
pub mod announce;
pub mod args;
pub mod connect;
pub mod descriptors;
pub mod downtime;
pub mod frame;
pub mod handshake;
pub mod heartbeat;
pub mod hub;
pub mod link;
pub mod seat;
pub mod tls;
pub mod token;
pub mod wait;

pub use args::{RemoteArgs, RemoteSpec};
pub use hub::Hub;

use tokio::io::{AsyncRead, AsyncWrite};

/// A connection, plain TCP or TLS over it.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
pub type Stream = Box<dyn Io>;

/// The prefix of a seat or entrant served over the network: `remote:NAME`.
pub const PREFIX: &str = "remote:";

/// A remote name: 1 to 32 of `[A-Za-z0-9_-]` (it names a file and a line of
/// the wire).
pub fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !ok {
        anyhow::bail!("remote name {name:?}: use 1 to 32 letters, digits, '_' or '-'");
    }
    Ok(())
}
