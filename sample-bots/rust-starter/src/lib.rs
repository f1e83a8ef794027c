//! A Schmier bot to make your own. Edit `bot.rs` (`choose`); `stdio.rs` is the
//! protocol loop and needs no change. The types — [`Request`], its `legal`
//! answers and the seat's `view`, and the [`Action`] you return — come from the
//! `schmier-protocol` crate, with the rules engine if you want to simulate.
//!
//! [`Request`]: schmier_protocol::wire::Request
//! [`Action`]: schmier_protocol::rules::Action

mod bot;
mod stdio;

pub use bot::choose;
pub use stdio::run;
