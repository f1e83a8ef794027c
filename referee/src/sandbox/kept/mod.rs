//! A sandbox kept across games (`referee launcher`), starting each bot in
//! fresh namespaces inside it. One file per process role, as a container
//! runtime keeps them, and one for what they say to each other:
//!
//! - `launcher.rs`: the launcher, the process bubblewrap runs inside the
//!   kept sandbox: it proves the sandbox empty and clones an init per bot;
//! - `init.rs`: that init, the bot's pid 1, and the bot it forks;
//!   `mounts.rs`: the mounts it builds for its bot alone;
//! - `message.rs`: the requests and replies between the referee and the
//!   launcher;
//! - `state.rs`: what such a sandbox shares between its bots, read-only to
//!   each and proved unchanged before the next;
//! - `pool.rs`: the referee's side: a launcher started and asked for a bot,
//!   and the pool of idle ones.

mod init;
pub mod launcher;
pub mod message;
mod mounts;
pub mod pool;
pub mod state;
