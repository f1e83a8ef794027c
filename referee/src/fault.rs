//! A bot's misbehaviour, as data: recorded in the transcript, announced to the
//! table, and answered by the fallback policy. Never an `Err` of the referee.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// No reply by the deadline.
    Timeout,
    /// The process exited or was killed.
    Crash,
    /// Not UTF-8, not JSON, not a known message, or an action of the wrong shape.
    Malformed,
    /// A well-formed action the rules forbid.
    Illegal,
    /// A line over the length cap.
    Oversized,
    /// A reply to a request other than the pending one.
    Stale,
    /// stdout closed while the process runs, or it stopped reading its stdin.
    Closed,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Timeout => "timeout",
            FaultKind::Crash => "crash",
            FaultKind::Malformed => "malformed",
            FaultKind::Illegal => "illegal",
            FaultKind::Oversized => "oversized",
            FaultKind::Stale => "stale",
            FaultKind::Closed => "closed",
        }
    }

    /// Faults after which the bot cannot be talked to any more.
    pub fn is_fatal(self) -> bool {
        matches!(self, FaultKind::Crash | FaultKind::Closed)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One fault with its reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub detail: String,
}

impl Fault {
    pub fn new(kind: FaultKind, detail: impl Into<String>) -> Fault {
        Fault {
            kind,
            detail: detail.into(),
        }
    }
}

/// Quotes a bot's bad output for a fault detail: lossy UTF-8, truncated.
pub fn quote(bytes: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX)]);
    if bytes.len() > MAX {
        format!("{text:?}... ({} bytes)", bytes.len())
    } else {
        format!("{text:?}")
    }
}
