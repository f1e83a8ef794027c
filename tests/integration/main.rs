//! End-to-end tests of the `referee` binary with real bot processes. One test
//! binary, a module per feature; `support.rs` has the small builder they share.

mod architecture;
mod bench;
mod brackets;
mod check_bot;
mod determinism;
mod diff;
mod docs;
mod first_hour;
mod harness;
mod hostile;
mod human;
mod kubernetes;
mod layout;
mod leaks;
mod lifetime;
mod limits;
mod names;
mod outputs;
mod play;
mod replay_page;
mod sample_bots;
mod schema;
mod settings;
mod show;
mod slurm;
mod snapshot_example;
mod snapshots;
mod sprt;
mod spy;
mod spy_sets;
mod spy_shared;
mod support;
mod timing;
mod tournament;
mod verify;
