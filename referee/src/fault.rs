//! A bot's misbehaviour, as data: recorded in the transcript, announced to the
//! table, and answered by the fallback policy. Never an `Err` of the referee.

pub use schmier_protocol::FaultKind;

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
