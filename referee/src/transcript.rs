//! The transcript: one JSON object per line. First a `header`, then the engine's
//! events interleaved with `fault` lines, last a `result`. No wall-clock data: the
//! same seed and the same bot behaviour give a byte-identical file. Per-decision
//! timings go to a sidecar file in a folder of its own (`timings/`).
//!
//! Files are written under a `.partial` name and renamed when the game is complete,
//! so a file with the final name is always a whole game (`safe_create.rs`, the
//! one atomic writer, also fsyncs it and its folder).

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use schmier_protocol::rules::{EndReason, Event, RulesConfig};
use schmier_protocol::{Seat, Team};

use schmier_protocol::wire::Clock;
use schmier_protocol::FaultKind;

use crate::isolation_record::IsolationRecord;
use crate::safe_create::{AtomicFile, WriteError};

/// The format this referee writes. Version 2 added `announced` and
/// `first_request` to the header, so that `referee replay` can send a seat
/// exactly what it was sent; version 3 added `isolation`, how the bots were
/// run (`isolation_record.rs`). Versions 1 and 2 are still read.
pub const FORMAT: &str = "schmier-transcript/3";

/// Every format `verify`, `show`, `diff` and `replay` read.
pub const FORMATS_READ: [&str; 3] = ["schmier-transcript/1", "schmier-transcript/2", FORMAT];

/// A seat's player as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatInfo {
    pub seat: Seat,
    /// The name the bot gave in `hello` (or a placeholder if it never did).
    pub name: String,
    /// The command as given to the referee (built-in bots: `referee bot NAME`).
    pub command: String,
}

/// Time control in force, recorded so a result can be judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeControlRecord {
    pub clock: Clock,
    pub time_bank_ms: u64,
    pub startup_ms: Option<u64>,
    pub decision_ms: Option<u64>,
    pub grace_ms: u64,
    pub max_line_bytes: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub format: String,
    pub protocol: String,
    pub referee: String,
    /// The seed given to `referee play`; `seed` is this game's, derived from it.
    pub match_seed: u64,
    /// Game number within the match, from 1.
    pub game: u32,
    /// The game number the bots were told in `game_start`; `null` where that
    /// depends on where a resumed table started (processes kept across a
    /// tournament matchup), which the transcript must not. Absent in format 1.
    #[serde(default)]
    pub announced: Option<u32>,
    /// The id of the game's first request: ids then rise by one for each
    /// request sent to any seat, so every request id of the game follows from
    /// this and the fault lines. Absent in format 1.
    #[serde(default)]
    pub first_request: Option<u64>,
    pub seed: u64,
    pub rules: RulesConfig,
    pub time_control: TimeControlRecord,
    pub fault_policy: FaultPolicy,
    /// How the bots were run: sandbox, limits, pace. Absent before format 3.
    // Boxed: a header is one line of thousands, and `Line` stays small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Box<IsolationRecord>>,
    pub seats: Vec<SeatInfo>,
}

/// What happens to a seat, its team and its process after faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FaultPolicy {
    /// Faults a seat may commit in a game before the fallback plays for it for the
    /// rest of that game (`None`: never, except after a crash or closed pipe).
    pub max_faults: Option<u32>,
    /// A team with a faulted seat forfeits the game: it is ranked last.
    pub forfeit: bool,
    /// A bot that crashed or closed its pipes is started again for the next game.
    pub restart: bool,
}

impl FaultPolicy {
    /// Competition defaults: forfeit on any fault, replaced after 3 faults.
    pub const COMPETITION: FaultPolicy = FaultPolicy {
        max_faults: Some(3),
        forfeit: true,
        restart: true,
    };
    /// For developing a bot: no forfeits, never replaced for ordinary faults.
    pub const LENIENT: FaultPolicy = FaultPolicy {
        max_faults: None,
        forfeit: false,
        restart: true,
    };
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultRecord {
    pub seat: Seat,
    /// The request being answered, if any.
    pub request: Option<u64>,
    pub fault: FaultKind,
    pub detail: String,
    /// The seat's decisions are made by the fallback for the rest of the game.
    pub replaced: bool,
}

impl FaultRecord {
    /// The notice every seat is sent of this fault (the detail stays in the
    /// transcript: it may quote the faulty bot's output).
    pub fn notice(&self) -> schmier_protocol::wire::FaultNotice {
        schmier_protocol::wire::FaultNotice {
            seat: self.seat,
            request: self.request,
            fault: self.fault,
            replaced: self.replaced,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultRecord {
    /// The team credited with the game after forfeits: the first of `ranking`
    /// unless it forfeited; `null` when nobody won (a capped game without
    /// forfeits, or every team forfeited). The rules' winner on the scores alone
    /// is the `game_end` line's `winner`.
    pub winner: Option<Team>,
    pub scores: [i32; 3],
    pub deals: u32,
    pub reason: EndReason,
    /// Faults per seat.
    pub faults: [u32; 6],
    /// Teams that forfeited (a faulted seat under a forfeit policy).
    pub forfeited: Vec<Team>,
    /// Teams from first to last: non-forfeited first (the rules' winner, then by
    /// score, then team number), forfeited after them in the same order.
    pub ranking: [Team; 3],
}

/// The ranking rule of [`ResultRecord::ranking`].
pub fn ranking(winner: Option<Team>, scores: [i32; 3], forfeited: &[Team]) -> [Team; 3] {
    let mut teams = [Team::new(0), Team::new(1), Team::new(2)];
    teams.sort_by_key(|t| {
        (
            forfeited.contains(t),
            Some(*t) != winner,
            std::cmp::Reverse(scores[t.index()]),
            t.index(),
        )
    });
    teams
}

/// The team credited with a game ([`ResultRecord::winner`]): the first-ranked
/// team, if it did not forfeit, and if the rules or a forfeit decided the game.
pub fn credited_winner(
    rules_winner: Option<Team>,
    forfeited: &[Team],
    ranking: [Team; 3],
) -> Option<Team> {
    let first = ranking[0];
    let decided = rules_winner.is_some() || !forfeited.is_empty();
    (decided && !forfeited.contains(&first)).then_some(first)
}

/// One transcript line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Line {
    Header(Header),
    Fault(FaultRecord),
    Result(ResultRecord),
    #[serde(untagged)]
    Event(Event),
}

/// Writes JSON lines to `PATH.partial` through the one atomic writer
/// ([`AtomicFile`]), renamed to `PATH` by [`JsonlWriter::finish`].
///
/// A write that fails (a full disk) does not stop the game: the writer keeps the
/// first error, drops the rest of the lines, and [`JsonlWriter::finish`] returns
/// it as [`Lost`]. The table plays the game out, so the bots stay in step for the
/// next one, and only this game is lost.
pub struct JsonlWriter {
    file: Result<AtomicFile, WriteError>,
    line: Vec<u8>,
}

/// A game whose transcript (or timings) could not be written: the file and the
/// OS's reason. The game is not counted; a tournament's `--resume` plays it again.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Lost(#[from] pub WriteError);

impl JsonlWriter {
    /// Creates `PATH.partial`. Failing to create it is an error before the game
    /// starts (the game is [`Lost`] before any bot heard of it).
    pub fn create(path: &Path) -> Result<JsonlWriter, Lost> {
        Ok(JsonlWriter {
            file: Ok(AtomicFile::create(path)?),
            line: Vec::with_capacity(256),
        })
    }

    pub fn write<T: Serialize>(&mut self, line: &T) -> anyhow::Result<()> {
        let Ok(file) = self.file.as_mut() else {
            return Ok(()); // already lost: finish() reports it
        };
        self.line.clear();
        serde_json::to_writer(&mut self.line, line)
            .context("failed to encode a transcript line")?;
        self.line.push(b'\n');
        if let Err(e) = file.write_all(&self.line) {
            self.file = Err(e);
        }
        Ok(())
    }

    /// Makes the file durable under its final name ([`AtomicFile::commit`]), or
    /// reports the first write that failed.
    pub fn finish(self) -> Result<PathBuf, Lost> {
        Ok(self.file?.commit()?)
    }

    /// Removes the `.partial`: the game it belongs to was lost.
    pub fn discard(self) {
        if let Ok(file) = self.file {
            file.discard();
        }
    }
}

/// One decision's timing, for the sidecar file.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Timing {
    pub request: u64,
    pub seat: Seat,
    pub decision: schmier_protocol::rules::Decision,
    /// From the request's last byte written to the reply's newline read.
    pub micros: u64,
    /// On the CPU clock (where `micros` is CPU time), the wall time as well.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_micros: Option<u64>,
    pub fault: Option<FaultKind>,
    /// A reply to a request that had already timed out: discarded, not a fault.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
    /// With `--pace-ms`: from the request's last byte written to the moment the
    /// decision's consequences (its events, any fault notice) were released to
    /// the seats — never less than the pace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_micros: Option<u64>,
    /// A remote seat: the link's measured round trip (capped) that was taken
    /// off `micros` and added to the deadline (`remote/heartbeat.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_micros: Option<u64>,
    /// A remote seat whose link the referee saw down while this decision
    /// was pending: how long its clock was stopped (taken off `micros`,
    /// added to the deadline), within the seat's per-game budget
    /// (`--link-down-budget-ms`, `remote/downtime.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_down_micros: Option<u64>,
}
