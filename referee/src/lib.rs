//! The Schmier referee. A tour:
//!
//! - `cli.rs` → `config.rs`: flags, then the validated run configuration;
//!   `settings/`: the groups of settings `play` and `tournament` share (flags
//!   and tournament file alike).
//! - `slot.rs`: a lineup position — its bot spec, name and the player in it.
//! - `player.rs`: what sits in a seat — a bot process, or a strategy the
//!   referee runs itself — behind one interface the table talks to.
//! - `session.rs`: starts the six players, one game at a time, shutdown;
//!   `handshake.rs`: the `hello` each way; `play.rs`: `referee play`, a
//!   session's match.
//! - `events.rs`: what a run does, as events for a reporter (the core never
//!   prints); `summary.rs`: a match's games and tally.
//! - `table.rs`: one game — the dispatcher that asks, waits, judges and records;
//!   `clock.rs` times one decision (and keeps the time bank), `reply.rs` reads
//!   the asked bot's line.
//! - `bot/`: a bot process as the table sees it, on every operating system —
//!   spawn, pipes, the line channel (queued writes, the capped line reader)
//!   over any byte stream, stderr, shutdown. Below it, one way down:
//!   `sandbox/` (`--sandbox`, Linux: bubblewrap, namespaces, seccomp,
//!   Landlock, the view and its images, the kept sandboxes and their pool),
//!   `cgroup/` (per-bot cgroups: limits, CPU time, the freezer; Linux) and
//!   `os/` (process control, one implementation per operating system chosen
//!   in `os/mod.rs`, the one place the referee names an OS).
//! - `fault.rs`: bot misbehaviour as data.
//! - `layout.rs`: every path of a play folder and a tournament folder, named
//!   once; `outdir.rs`: the output folder — never mixes two runs' games;
//!   `lock.rs`: one run per output folder at a time.
//! - `transcript.rs`: the JSONL transcript format and its writer;
//!   `isolation_record.rs`: how the bots were run, as headers and manifests
//!   record it.
//! - `verify.rs`: replaying a transcript through the rules engine — the one replay
//!   loop, also under `show` and the tournament's outcome reader; `audit.rs`:
//!   `referee verify` on files, `play` folders and tournament folders.
//! - `shutdown.rs`: Ctrl-C / SIGTERM cancel one token that tables and the pool
//!   watch, so a run always stops between records.
//! - `report.rs`: `play`'s console, the reporter that prints; `names.rs`:
//!   teams named by their entrants, in every console line.
//! - `checkbot/`: `referee check-bot`, a bot's conformance checklist.
//! - `human.rs`: `--seat N=human`, a person playing a seat from the terminal.
//! - `tournament/`: `referee tournament` and `referee merge` — a layer above the
//!   table: schedule, pool of tables, journal, standings, shards.
//! - `sprt/`: `referee sprt` — a sequential test of a new bot against a base on
//!   duplicate sets, played on the tournament's pool and journal.
//! - `bench.rs` (`referee bench`) and `stats.rs` (the table's timers): where a
//!   decision's time goes, measured against a raw pipe round trip.
//! - `builtin.rs`: `referee bot NAME`, the built-in sample bots.
//! - `load.rs`: reading transcripts back for the tools below.
//! - `diff.rs`: `referee diff`, two transcripts compared in game terms.
//! - `show/`: `referee show`, a transcript as a terminal account or a replay page,
//!   and a tournament's page (kept live by `tournament/page.rs`).
//! - `rerun/`: `referee replay`, one seat of a recorded game replayed to a live
//!   bot, its answers compared with the recorded ones.
//! - `schema.rs`: `referee schema`, the JSON Schema of every message and line.
//! - `safe_create.rs`: the one atomic writer of output files (temp name, fsync,
//!   rename, fsync of the folder), never following a planted symlink.
//!
//! The rules themselves live in the `schmier-protocol` crate (`rules`), pure.

pub mod audit;
pub mod bench;
pub mod bot;
pub mod builtin;
pub mod checkbot;
pub mod cli;
pub mod clock;
pub mod config;
pub mod diff;
pub mod events;
pub mod fault;
pub mod handshake;
pub mod human;
pub mod isolation_record;
pub mod layout;
pub mod load;
pub mod lock;
pub mod names;
pub mod os;
pub mod outdir;
pub mod play;
pub mod player;
pub mod remote;
pub mod reply;
pub mod report;
pub mod rerun;
pub mod safe_create;
pub mod schema;
pub mod season;
pub mod session;
pub mod settings;
pub mod show;
pub mod shutdown;
pub mod slot;
pub mod sprt;
pub mod stats;
pub mod summary;
pub mod table;
pub mod tournament;
pub mod transcript;
pub mod verify;

// Linux's confinement: the sandbox and cgroups, declared here, the one place
// outside `os/mod.rs` that names an operating system. Elsewhere each room is
// a stand-in of the same names (`sandbox/absent.rs`, `cgroup/absent.rs`)
// that no run reaches: settings refuse what would need it first.
#[cfg(target_os = "linux")]
pub mod cgroup;
#[cfg(not(target_os = "linux"))]
#[path = "cgroup/absent.rs"]
pub mod cgroup;
#[cfg(target_os = "linux")]
pub mod sandbox;
#[cfg(not(target_os = "linux"))]
#[path = "sandbox/absent.rs"]
pub mod sandbox;

/// The referee's name and version, sent in `hello` and recorded in transcripts.
pub const REFEREE: &str = concat!("schmier-referee ", env!("CARGO_PKG_VERSION"));
