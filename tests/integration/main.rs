//! End-to-end tests of the `referee` binary with real bot processes. One test
//! binary, a module per feature; `support.rs` has the small builder they share.
//!
//! A Linux suite: its bots are shell scripts and Unix programs, and it tests
//! the sandbox, cgroups and `/proc`. On macOS and Windows it builds to
//! nothing; the Windows build is run end to end under wine instead
//! (`scripts/test`).
#![cfg(target_os = "linux")]

mod ahead;
mod architecture;
mod bench;
mod bounded;
mod brackets;
mod browser;
mod cdp;
mod check_bot;
mod determinism;
mod diff;
mod doc_check;
mod docs;
mod entrant_folders;
mod first_hour;
mod first_hour_messages;
mod folder;
mod harness;
mod hostile;
mod human;
mod import_graph;
mod injection;
mod kubernetes;
mod layout;
mod leaks;
mod lifetime;
mod limits;
mod names;
mod netem_vm;
mod outputs;
mod own_exe;
mod page;
mod page_hostile;
mod play;
mod python_env;
mod rating;
mod remote;
mod remote_bounds;
mod remote_rejoin;
mod replay;
mod replay_page;
mod sample_bots;
mod schema;
mod season;
mod season_cluster;
mod season_e2e;
mod season_final;
mod season_postgres;
mod season_remote;
mod season_site;
mod season_site_limits;
mod season_upload;
mod season_workers;
mod settings;
mod show;
mod slurm;
mod smaller_findings;
mod snapshot_example;
mod snapshots;
mod sparse;
mod sprt;
mod spy;
mod spy_clock;
mod spy_dentries;
mod spy_leaks;
mod spy_seed;
mod spy_sets;
mod spy_shared;
mod support;
mod timing;
mod tournament;
mod verify;
