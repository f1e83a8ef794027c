//! `referee show`: a transcript made readable.
//!
//! - `replay.rs`: the transcript replayed through the rules engine, step by step.
//! - `text.rs`: the account in the terminal, whole or as one seat saw it.
//! - `html.rs` (with `replay.html`): one self-contained page that replays the game.

pub mod html;
pub mod replay;
pub mod text;

pub use replay::Replay;
pub use text::TextOptions;
