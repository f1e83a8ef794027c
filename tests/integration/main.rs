//! End-to-end tests of the `referee` binary with real bot processes. One test
//! binary, a module per feature; `support.rs` has the small builder they share.

mod determinism;
mod docs;
mod hostile;
mod leaks;
mod lifetime;
mod limits;
mod play;
mod sample_bots;
mod snapshots;
mod spy;
mod support;
mod verify;
