//! The Schmier rules engine (docs/RULES.md), pure: no IO, no clock, no OS randomness.
//!
//! - `config.rs`: the rule variants, recorded in transcript headers.
//! - `game.rs`: the state machine — `legal()`, `apply()`, events out.
//! - `action.rs` / `event.rs` / `error.rs`: what goes in, what comes out, why not.
//! - `trick.rs` / `scoring.rs`: following suit, trick winners, points, game end.
//! - `view.rs`: what one seat may know — the only place that decides it.
//! - `policy.rs`: the fallback for faulted seats and a seeded random policy.

mod action;
mod config;
mod error;
mod event;
mod game;
mod policy;
mod scoring;
mod trick;
mod view;

pub use action::{Action, Decision, Legal};
pub use config::RulesConfig;
pub use error::RuleError;
pub use event::{Call, EndReason, Event, HandScore, Played};
pub(crate) use game::Hidden;
pub use game::{Game, TrickRecord, HAND_SIZE, STOCK_SIZE};
pub use policy::{first_legal, random_legal};
pub use scoring::{game_point, score_deltas, winner, Points};
pub use trick::{legal_plays, trick_winner};
pub use view::{OwnExchange, SeatCall, SeatEvent, SeatExchange, SeatView, TrickView};
