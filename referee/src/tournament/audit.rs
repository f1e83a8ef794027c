//! `referee verify` on a tournament folder, the journal's half: every line of
//! `journal.jsonl` must be what its transcript records — the same figures the
//! tournament derives when it journals a game ([`GameOutcome::of`], through the
//! one replay loop), the transcript at the schedule's name, and the entrants the
//! line names in the seats the transcript lists. The games' own check (each
//! transcript replayed) is the verify command's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::manifest::Manifest;
use super::outcome::GameOutcome;
use super::schedule::GameKey;
use crate::layout::tournament::JOURNAL;
use crate::load::Transcript;

/// What a tournament's folder and its journal are is path knowledge: it lives
/// in `layout.rs` (so `verify` can ask without reaching into the tournament).
pub use crate::layout::tournament::{is_journal, is_tournament};

/// What the journal check found.
pub struct JournalAudit {
    pub path: PathBuf,
    /// Journal lines read.
    pub lines: usize,
    /// Lines that do not match: line number and what differs.
    pub mismatches: Vec<(usize, String)>,
    /// Transcripts in `games/` that no journal line counts (a game that finished
    /// as the run was stopped: not counted, `--resume` plays it again).
    pub unjournaled: Vec<String>,
}

/// Checks every line of `dir/journal.jsonl` against its transcript. `games` are
/// the transcripts found in the folder, relative to it.
pub fn journal(dir: &Path, games: &[String]) -> anyhow::Result<JournalAudit> {
    let path = dir.join(JOURNAL);
    let manifest = Manifest::read(dir)?;
    let bytes = std::fs::read(&path)
        .map_err(|e| anyhow::anyhow!("failed to read {}: {e}", path.display()))?;
    let mut audit = JournalAudit {
        path,
        lines: 0,
        mismatches: Vec::new(),
        unjournaled: Vec::new(),
    };
    let mut seen: BTreeSet<GameKey> = BTreeSet::new();
    let mut counted: BTreeSet<String> = BTreeSet::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        if raw.is_empty() {
            continue;
        }
        let n = i + 1;
        audit.lines += 1;
        let recorded: GameOutcome = match serde_json::from_slice(raw) {
            Ok(o) => o,
            Err(e) => {
                audit
                    .mismatches
                    .push((n, format!("not a journal line (torn or edited): {e}")));
                continue;
            }
        };
        counted.insert(recorded.transcript.clone());
        if !seen.insert(recorded.key()) {
            let k = recorded.key();
            audit.mismatches.push((
                n,
                format!(
                    "round {} matchup {} game {} is recorded a second time",
                    k.round, k.matchup, k.game
                ),
            ));
            continue;
        }
        if let Err(why) = line_matches(dir, &manifest, &recorded) {
            audit
                .mismatches
                .push((n, format!("{}: {why}", recorded.transcript)));
        }
    }
    audit.unjournaled = games
        .iter()
        .filter(|g| !counted.contains(*g))
        .cloned()
        .collect();
    Ok(audit)
}

/// The entrants of each journaled game, by team position, keyed by its
/// transcript (relative to `dir`): how `verify` names a game's teams. Lines
/// that do not read are left out here ([`journal`] reports them).
pub fn entrants_by_game(dir: &Path) -> std::collections::BTreeMap<String, [usize; 3]> {
    let bytes = std::fs::read(dir.join(JOURNAL)).unwrap_or_default();
    (bytes.split(|&b| b == b'\n'))
        .filter_map(|raw| serde_json::from_slice::<GameOutcome>(raw).ok())
        .map(|o| (o.transcript, o.teams))
        .collect()
}

/// Whether the journal line `recorded` is what its transcript records; if not,
/// what differs.
fn line_matches(dir: &Path, manifest: &Manifest, recorded: &GameOutcome) -> Result<(), String> {
    let want = super::pool::transcript_name(recorded.key());
    if recorded.transcript != want {
        return Err(format!(
            "the schedule names this game's transcript {want}, not {}",
            recorded.transcript
        ));
    }
    let t = Transcript::read(&dir.join(&recorded.transcript)).map_err(|e| e.to_string())?;
    let derived = GameOutcome::of(&t, &recorded.transcript, recorded.key(), recorded.teams)
        .map_err(|e| {
            format!(
                "its transcript does not check out (line {}: {})",
                e.line, e.message
            )
        })?;
    let differs = fields_differing(recorded, &derived);
    if !differs.is_empty() {
        return Err(differs.join("; "));
    }
    // The entrants the line names sit where the transcript says: team position
    // p is seats p and p + 3.
    let header = t.header().map_err(|e| e.to_string())?;
    for (p, &entrant) in recorded.teams.iter().enumerate() {
        let Some(e) = manifest.entrants.get(entrant) else {
            return Err(format!(
                "teams names entrant {entrant}; the tournament has {}",
                manifest.entrants.len()
            ));
        };
        for seat in [p, p + 3] {
            let command = &header.seats[seat].command;
            if *command != e.command {
                return Err(format!(
                    "teams puts {} ({}) at seat {seat}; the transcript has {command}",
                    e.name, e.command
                ));
            }
        }
    }
    Ok(())
}

/// "field: the journal says A, the transcript gives B" for each field that
/// differs, compared as the journal writes them.
pub(crate) fn fields_differing(recorded: &GameOutcome, derived: &GameOutcome) -> Vec<String> {
    let as_map = |o: &GameOutcome| match serde_json::to_value(o) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => unreachable!("an outcome serializes to an object"),
    };
    let (a, b) = (as_map(recorded), as_map(derived));
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, v)| {
            format!(
                "{k}: the journal says {v}, the transcript gives {}",
                b.get(k).cloned().unwrap_or_default()
            )
        })
        .collect()
}
