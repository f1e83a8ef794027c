//! `referee show`: a transcript made readable.
//!
//! - `replay.rs`: the transcript replayed through the rules engine, step by step.
//! - `text.rs`: the account in the terminal, whole or as one seat saw it.
//! - `html.rs` (with `replay.html`, `replay.js`, `replay.css`): the page that
//!   replays a game; `frame.rs`: one step of it, the table after a line;
//!   `compact.rs`: the frames as changes from one to the next.
//! - `bracket.rs`: a tournament's page — progress, standings with interval bars,
//!   head-to-head matrix, the rounds, a link to every game's replay page — from a
//!   [`bracket::Index`], the same whether the run is live or over.

pub mod bracket;
mod compact;
pub(crate) mod escape;
mod frame;
pub mod html;
pub mod replay;
pub mod text;

pub use replay::Replay;
pub use text::TextOptions;
