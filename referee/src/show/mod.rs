//! `referee show`: a transcript made readable.
//!
//! - `replay.rs`: the transcript replayed through the rules engine, step by step.
//! - `text.rs`: the account in the terminal, whole or as one seat saw it.
//! - `html.rs` (with `replay.html`): one self-contained page that replays the game.
//! - `bracket.rs`: a tournament folder's page — standings with interval bars and a
//!   link to every game's replay page.

pub mod bracket;
pub mod html;
pub mod replay;
pub mod text;

pub use replay::Replay;
pub use text::TextOptions;
