//! The kinds of bot misbehaviour, shared by the referee (which records them), the
//! wire (which announces them to every seat) and tools that read transcripts.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// No reply by the deadline.
    Timeout,
    /// The process exited (or was killed) while it was still needed.
    Crash,
    /// Not UTF-8, not JSON, not a known message, or an action of the wrong shape.
    Malformed,
    /// A well-formed action the rules forbid.
    Illegal,
    /// A line over the length cap.
    Oversized,
    /// A reply naming a request that is not pending and never timed out.
    Stale,
    /// stdout closed while the process runs, or it stopped reading its stdin.
    Closed,
    /// The bot did not start: its program could not be run, or it did not
    /// complete the hello handshake (exited or closed before hello, another
    /// protocol, no hello in time). Distinct from `Crash`, so that standings can
    /// tell an entrant that never played from one that failed while playing.
    Start,
}

impl FaultKind {
    pub const ALL: [FaultKind; 8] = [
        FaultKind::Timeout,
        FaultKind::Crash,
        FaultKind::Malformed,
        FaultKind::Illegal,
        FaultKind::Oversized,
        FaultKind::Stale,
        FaultKind::Closed,
        FaultKind::Start,
    ];

    /// The name used on the wire and in transcripts.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Timeout => "timeout",
            FaultKind::Crash => "crash",
            FaultKind::Malformed => "malformed",
            FaultKind::Illegal => "illegal",
            FaultKind::Oversized => "oversized",
            FaultKind::Stale => "stale",
            FaultKind::Closed => "closed",
            FaultKind::Start => "start",
        }
    }

    /// Faults after which the bot cannot be talked to any more.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            FaultKind::Crash | FaultKind::Closed | FaultKind::Start
        )
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names() {
        for kind in FaultKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<FaultKind>(&json).unwrap(), kind);
        }
    }
}
