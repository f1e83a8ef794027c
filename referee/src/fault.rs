//! A bot's misbehaviour, as data: recorded in the transcript, announced to the
//! table, and answered by the fallback policy. Never an `Err` of the referee.

use std::borrow::Cow;

use schmier_protocol::excerpt::cut;
pub use schmier_protocol::excerpt::quote;
pub use schmier_protocol::FaultKind;

/// One fault with its reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub detail: String,
}

impl Fault {
    /// A fault with its reason, cut to [`DETAIL_MAX`] bytes: the reason may quote
    /// the bot, and no path may carry more of it into the record than that.
    pub fn new(kind: FaultKind, detail: impl Into<String>) -> Fault {
        let detail: String = detail.into();
        let detail = match cut(&detail, DETAIL_MAX) {
            Cow::Borrowed(_) => detail,
            Cow::Owned(cut) => cut,
        };
        Fault { kind, detail }
    }
}

/// The longest fault reason kept (a quote of the bot's line is at most
/// [`schmier_protocol::excerpt::QUOTE_MAX`] bytes of it; the rest is the
/// referee's words).
pub const DETAIL_MAX: usize = 1024;
