//! The organiser's flags for remote seats (`play`, `tournament`, `sprt`), and
//! their validated form.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use clap::Args;

/// How much of a decision's time the link's round trip may be credited with
/// when `--latency-cap-ms` is not given.
pub const LATENCY_CAP_MS: u64 = 250;
/// How long a dropped seat may take to reconnect when
/// `--reconnect-grace-ms` is not given.
pub const RECONNECT_GRACE_MS: u64 = 10_000;

/// The most seats of one remote name that `tables` tables open at once: a
/// table's six (a bound: a name holds fewer of a game's seats).
pub fn seats_at_once(tables: usize) -> u32 {
    u32::try_from(tables.saturating_mul(6)).unwrap_or(u32::MAX)
}

#[derive(Args, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// Serve the `remote:NAME` seats on ADDR:PORT (port 0: any free port, printed).
    /// Plain TCP on a loopback address (unless --cert is given); TLS on any other,
    /// with a certificate made for the run (or --cert/--key) whose SHA-256 is
    /// printed for `referee connect --fingerprint`. See docs/remote.md.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,

    /// Seat tokens made by the organiser, one line per remote name in the token
    /// file format (docs/remote.md); names without one get a fresh token.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub tokens: Option<PathBuf>,

    /// The listener's TLS certificate chain (PEM) instead of a self-signed one;
    /// with it even a loopback listener is TLS. Its SHA-256 is still what
    /// `referee connect --fingerprint` pins.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,

    /// The private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,

    /// Each decision of a remote seat is credited the link's measured round trip,
    /// at most this much [default: 250].
    #[arg(long, value_name = "MS")]
    pub latency_cap_ms: Option<u64>,

    /// How long a remote seat whose connection dropped may take to reconnect
    /// before it is a `disconnected` fault [default: 10000].
    #[arg(long, value_name = "MS")]
    pub reconnect_grace_ms: Option<u64>,
}

/// The validated remote settings of a run.
#[derive(Clone, Debug)]
pub struct RemoteSpec {
    pub listen: SocketAddr,
    pub tokens: Option<PathBuf>,
    pub cert_key: Option<(PathBuf, PathBuf)>,
    pub latency_cap: Duration,
    pub grace: Duration,
    /// The remote names, each with its seats or entrant.
    pub names: Vec<String>,
    /// The most seats of one name the run opens at once (its tokens say
    /// so, and `referee connect` runs no more bots at once).
    pub seats: u32,
}

impl RemoteArgs {
    /// `names`: the run's `remote:NAME`s (sorted, once each); `seats`: the
    /// most seats of one of them open at once. A remote seat needs a
    /// listener and a listener a remote seat.
    pub fn validate(&self, names: Vec<String>, seats: u32) -> anyhow::Result<Option<RemoteSpec>> {
        let Some(listen) = self.listen else {
            if let Some(name) = names.first() {
                bail!("remote:{name} is served over the network: give --listen ADDR:PORT");
            }
            if self.latency_cap_ms.is_some() || self.reconnect_grace_ms.is_some() {
                bail!("--latency-cap-ms and --reconnect-grace-ms need --listen");
            }
            return Ok(None);
        };
        if names.is_empty() {
            bail!("--listen {listen}: no seat or entrant is remote:NAME");
        }
        let grace = self.reconnect_grace_ms.unwrap_or(RECONNECT_GRACE_MS);
        Ok(Some(RemoteSpec {
            listen,
            tokens: self.tokens.clone(),
            cert_key: self.cert.clone().zip(self.key.clone()),
            latency_cap: Duration::from_millis(self.latency_cap_ms.unwrap_or(LATENCY_CAP_MS)),
            grace: Duration::from_millis(grace),
            names,
            seats,
        }))
    }
}
