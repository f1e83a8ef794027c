//! A sandbox kept across games (`referee launcher`), starting each bot in
//! fresh namespaces inside it.
//!
//! - `launcher.rs`: the launcher, the process inside the kept sandbox, and
//!   the messages the referee sends it.
//! - `state.rs`: what such a sandbox shares between its bots, read-only to
//!   each and proved unchanged before the next.
//! - `pool.rs`: the referee's side: a launcher started and asked for a bot,
//!   and the pool of idle ones.

pub mod launcher;
pub mod pool;
pub mod state;
