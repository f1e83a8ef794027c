//! Everything the Schmier referee and a bot share.
//!
//! A tour:
//! - [`card`] and [`cardset`]: the 53 cards, their wire notation (`"AS"`, `"TH"`,
//!   `"JK"`), trump-dependent suits and ranks, and card sets as 64-bit masks.
//! - [`excerpt`]: bounded quotes of what a bot sent (fault reasons, names).
//! - [`fault`]: the kinds of bot misbehaviour, as recorded and announced.
//! - [`seat`]: seats 0-5 and the three teams.
//! - [`shuffle`]: the pinned seed -> deck-order algorithm.
//! - [`playout`]: playing a game on to the end with a policy (random built in).
//! - [`rules`]: the pure rules engine — state machine, legal actions, events, the
//!   per-seat view.
//! - [`action_space`]: a fixed numbered action space with a legal mask, multi-card
//!   decisions taken card by card (for search and learning code).
//! - [`batch`]: many games stepped together over the action space, all or
//!   nothing (learning code, search over many worlds).
//! - [`observation`]: a seat view as a fixed-size vector of floats (learning code).
//! - [`replay`]: a game rebuilt from a referee transcript.
//! - [`wire`]: the JSON messages of protocol `schmier/1` (see PROTOCOL.md).
//! - [`worlds`]: world sampling — full games consistent with one seat's view,
//!   uniform over the hidden cards, for search bots.

pub mod action_space;
pub mod batch;
pub mod card;
pub mod cardset;
pub mod excerpt;
pub mod fault;
pub mod observation;
pub mod playout;
pub mod replay;
pub mod rules;
#[cfg(feature = "schema")]
mod schema;
pub mod seat;
pub mod shuffle;
pub mod wire;
pub mod worlds;

pub use card::{Card, ParseCardError, Rank, Suit};
pub use cardset::CardSet;
pub use fault::FaultKind;
pub use seat::{Seat, Team};
