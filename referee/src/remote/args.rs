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
/// How long a run waits, before its first game, for every remote name's
/// `referee connect` when `--remote-wait` is not given.
pub const REMOTE_WAIT: Duration = Duration::from_secs(600);
/// How much link-down time a remote seat's pending decisions may have off
/// their clock in one game when `--link-down-budget-ms` is not given.
pub const LINK_DOWN_BUDGET_MS: u64 = 10_000;

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

    /// How long to wait, before the first game, for each remote name's `referee
    /// connect` (the console names who is awaited and how to connect); a name
    /// that has not connected by then fails to start, as a local bot that
    /// cannot start does. A number with a unit: 90s, 10m, 1h, 500ms
    /// [default: 10m].
    #[arg(long, value_name = "DURATION", value_parser = parse_wait)]
    pub remote_wait: Option<Duration>,

    /// While the referee sees a remote seat's link down, the seat's pending
    /// decision's clock stops, for at most this much in one game (so that
    /// cutting the link buys no thinking time beyond it) [default: 10000].
    #[arg(long, value_name = "MS")]
    pub link_down_budget_ms: Option<u64>,
}

/// `--remote-wait`: a whole number with a unit (`ms`, `s`, `m`, `h`).
pub fn parse_wait(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: give a whole number and a unit, e.g. 90s or 10m"))?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        _ => {
            return Err(format!(
                "{text:?}: the unit is one of ms, s, m, h (e.g. 90s or 10m)"
            ))
        }
    };
    ms.map(Duration::from_millis)
        .ok_or_else(|| format!("{text:?}: too long"))
}

/// A duration as `--remote-wait` takes it, for messages: `10m`, `90s`, `500ms`.
pub fn show_wait(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        _ if ms.is_multiple_of(3_600_000) && ms > 0 => format!("{}h", ms / 3_600_000),
        _ if ms.is_multiple_of(60_000) && ms > 0 => format!("{}m", ms / 60_000),
        _ if ms.is_multiple_of(1000) => format!("{}s", ms / 1000),
        _ => format!("{ms}ms"),
    }
}

/// The validated remote settings of a run.
#[derive(Clone, Debug)]
pub struct RemoteSpec {
    pub listen: SocketAddr,
    pub tokens: Option<PathBuf>,
    pub cert_key: Option<(PathBuf, PathBuf)>,
    pub latency_cap: Duration,
    pub grace: Duration,
    /// How long the run waits for each name's connector before its first game.
    pub wait: Duration,
    /// A seat's link-down time taken off its pending decisions, at most, per game.
    pub down_budget: Duration,
    /// The remote names, each with its seats or entrant.
    pub names: Vec<String>,
    /// The most seats of one name the run opens at once (its tokens say
    /// so, and `referee connect` runs no more bots at once).
    pub seats: u32,
    /// A seat opened while its name's connector is not connected fails to
    /// start at once instead of waiting `--startup-ms` for one (a season's:
    /// a remote version whose connector left is away, not late).
    pub absent_fails: bool,
}

impl RemoteArgs {
    /// `names`: the run's `remote:NAME`s (sorted, once each); `seats`: the
    /// most seats of one of them open at once. A remote seat needs a
    /// listener and a listener a remote seat.
    pub fn validate(&self, names: Vec<String>, seats: u32) -> anyhow::Result<Option<RemoteSpec>> {
        if let (Some(listen), true) = (self.listen, names.is_empty()) {
            bail!("--listen {listen}: no seat or entrant is remote:NAME");
        }
        self.listener(names, seats)
    }

    /// As [`RemoteArgs::validate`], but a listener may serve no name yet (a
    /// season's remote versions may be submitted while it runs).
    pub fn listener(&self, names: Vec<String>, seats: u32) -> anyhow::Result<Option<RemoteSpec>> {
        let Some(listen) = self.listen else {
            if let Some(name) = names.first() {
                bail!("remote:{name} is served over the network: give --listen ADDR:PORT");
            }
            if self.latency_cap_ms.is_some()
                || self.reconnect_grace_ms.is_some()
                || self.remote_wait.is_some()
                || self.link_down_budget_ms.is_some()
            {
                bail!(
                    "--latency-cap-ms, --reconnect-grace-ms, --remote-wait and \
                     --link-down-budget-ms need --listen"
                );
            }
            return Ok(None);
        };
        let grace = self.reconnect_grace_ms.unwrap_or(RECONNECT_GRACE_MS);
        Ok(Some(RemoteSpec {
            listen,
            tokens: self.tokens.clone(),
            cert_key: self.cert.clone().zip(self.key.clone()),
            latency_cap: Duration::from_millis(self.latency_cap_ms.unwrap_or(LATENCY_CAP_MS)),
            grace: Duration::from_millis(grace),
            wait: self.remote_wait.unwrap_or(REMOTE_WAIT),
            down_budget: Duration::from_millis(
                self.link_down_budget_ms.unwrap_or(LINK_DOWN_BUDGET_MS),
            ),
            names,
            seats,
            absent_fails: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_takes_a_unit_and_is_shown_as_given() {
        assert_eq!(parse_wait("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_wait("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_wait("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_wait("2h"), Ok(Duration::from_secs(7200)));
        for bad in ["10", "m", "1.5m", "10 m", "-1s", ""] {
            assert!(parse_wait(bad).is_err(), "{bad}");
        }
        assert!(parse_wait("99999999999999999h").is_err());
        assert_eq!(show_wait(REMOTE_WAIT), "10m");
        assert_eq!(show_wait(Duration::from_secs(90)), "90s");
        assert_eq!(show_wait(Duration::from_millis(1500)), "1500ms");
    }
}
