//! One step of a replay page: the table as it stands after one transcript
//! line (hands, the trick, the auction, trump, scores, and what happened, as
//! everyone and as each seat saw it). `html.rs` builds the frames from a
//! replay; `compact.rs` encodes them as changes for the page. Its own file so
//! that the encoding does not depend on the page that uses it.

use schmier_protocol::rules::{Played, SeatCall};
use schmier_protocol::{CardSet, Seat, Suit};

/// The table after one transcript line.
#[derive(Clone)]
pub(super) struct Frame {
    pub deal: u32,
    pub dealer: Option<Seat>,
    /// What happened, for someone who sees everything.
    pub text: String,
    /// What happened as each seat was told, when that differs from `text`.
    pub seat_text: Option<Vec<String>>,
    /// The seat that acted, if any.
    pub actor: Option<Seat>,
    /// Everyone's cards after this step.
    pub hands: [CardSet; 6],
    /// The cards on the table, in play order.
    pub trick: Vec<Played>,
    /// The trick's winner once it is complete.
    pub winner: Option<Seat>,
    pub trick_number: u8,
    pub bids: Vec<SeatCall>,
    pub bidder: Option<Seat>,
    pub bid: Option<u8>,
    pub trump: Option<Suit>,
    pub scores: [i32; 3],
    pub fault: bool,
}

impl Frame {
    /// The table before anything is dealt.
    pub(super) fn before_the_first_deal() -> Frame {
        Frame {
            deal: 0,
            dealer: None,
            text: String::new(),
            seat_text: None,
            actor: None,
            hands: [CardSet::EMPTY; 6],
            trick: Vec::new(),
            winner: None,
            trick_number: 1,
            bids: Vec::new(),
            bidder: None,
            bid: None,
            trump: None,
            scores: [0; 3],
            fault: false,
        }
    }
}
