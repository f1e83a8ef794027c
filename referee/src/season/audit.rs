//! `referee verify DIR` on a season folder, the database's half: every game
//! `season.db` counts must be what its transcript records (the outcome
//! derived again through the one replay loop, as a tournament's journal is
//! checked), at the name its set gives it, dealt from its set's seed, with
//! the set's versions in the seats; and the latest ratings must be what the
//! fit gives on the games the transcripts record. The transcripts' own
//! replay is the verify command's (`audit.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use super::db::{Db, SetRow, Version};
use super::settings::{bot, Settings};
use crate::load::Transcript;
use crate::tournament::outcome::GameOutcome;
use crate::tournament::schedule::{GameKey, Matchup};

/// What the check found.
pub struct SeasonAudit {
    /// Games the database counts.
    pub games: usize,
    /// Sets it records finished.
    pub sets: usize,
    /// What does not match, each naming the set and game (or the ratings).
    pub mismatches: Vec<String>,
    /// Transcripts in `games/` the database does not count (a game finished
    /// as a run was killed: the next run plays it again).
    pub uncounted: Vec<String>,
    /// Versions whose latest rating was recomputed.
    pub rated: usize,
}

/// The settings the season's transcripts must record.
pub fn settings(dir: &Path) -> anyhow::Result<Settings> {
    Settings::read(&Db::open(&dir.join(crate::layout::season::DB))?)
}

/// Each counted game's versions by team position, by its transcript.
pub type Teams = BTreeMap<String, [usize; 3]>;

/// How `verify` names a season's teams: every version's name ("alice v2"),
/// by version id, and each counted game's versions by team position, by its
/// transcript (relative to `dir`).
pub fn names(dir: &Path) -> anyhow::Result<(Vec<String>, Teams)> {
    let db = Db::open(&dir.join(crate::layout::season::DB))?;
    let versions = db.versions()?;
    let last = versions.iter().map(|v| v.id).max().unwrap_or(0);
    let mut names = vec![String::new(); usize::try_from(last)? + 1];
    for v in &versions {
        names[usize::try_from(v.id)?] = format!("{} v{}", v.name, v.number);
    }
    let teams = (db.games()?.into_iter())
        .map(|(_, _, o)| (o.transcript, o.teams))
        .collect();
    Ok((names, teams))
}

/// Checks the database of the season in `dir` against its transcripts
/// `files` (relative to `dir`).
pub fn check(dir: &Path, files: &[String]) -> anyhow::Result<SeasonAudit> {
    let db = Db::open(&dir.join(crate::layout::season::DB))?;
    let sets: BTreeMap<i64, SetRow> = db.sets()?.into_iter().map(|s| (s.id, s)).collect();
    let versions = db.versions()?;
    let mut audit = SeasonAudit {
        games: 0,
        sets: sets.values().filter(|s| s.finished).count(),
        mismatches: Vec::new(),
        uncounted: Vec::new(),
        rated: 0,
    };
    seeds(dir, &db, &sets, &mut audit)?;
    let mut derived: BTreeMap<i64, Vec<GameOutcome>> = BTreeMap::new();
    let mut counted = Vec::new();
    for (set, game, recorded) in db.games()? {
        audit.games += 1;
        counted.push(recorded.transcript.clone());
        let Some(row) = sets.get(&set) else {
            audit
                .mismatches
                .push(format!("set {set} game {game}: no such set"));
            continue;
        };
        match game_matches(dir, row, game, &recorded, &versions) {
            Ok(o) => derived.entry(set).or_default().push(o),
            Err(why) => audit.mismatches.push(format!(
                "set {set} game {game} ({}): {why}",
                recorded.transcript
            )),
        }
    }
    audit.uncounted = (files.iter())
        .filter(|f| !counted.contains(f))
        .cloned()
        .collect();
    if audit.mismatches.is_empty() {
        ratings(&db, &sets, &derived, &mut audit)?;
    }
    Ok(audit)
}

/// Every set's seed is the season's deal seed (its seed and secret) mixed
/// with the set's number: no set was dealt from a seed chosen otherwise.
/// Checked where the secret is at hand (the folder's, or revealed at close).
fn seeds(
    dir: &Path,
    db: &Db,
    sets: &BTreeMap<i64, SetRow>,
    audit: &mut SeasonAudit,
) -> anyhow::Result<()> {
    let secret = match db.get("seed_secret")? {
        Some(text) => Some(
            text.parse()
                .map_err(|e| anyhow::anyhow!("season.db's seed_secret: {e}"))?,
        ),
        None => crate::tournament::seed_secret::stored(dir)?,
    };
    let Some(secret) = secret else {
        return Ok(());
    };
    let deal = secret.mix(Settings::read(db)?.seed);
    for s in sets.values() {
        let want = schmier_protocol::shuffle::derive_seed(deal, s.id as u64);
        if s.seed != want {
            audit.mismatches.push(format!(
                "set {} is dealt from seed {}, not the season's {want}",
                s.id, s.seed
            ));
        }
    }
    Ok(())
}

/// Whether the recorded game is what its transcript records; the outcome
/// the transcript gives, or what differs.
fn game_matches(
    dir: &Path,
    set: &SetRow,
    game: u32,
    recorded: &GameOutcome,
    versions: &[Version],
) -> Result<GameOutcome, String> {
    let want = transcript_name(set, game)?;
    if recorded.transcript != want {
        return Err(format!("the set names this game's transcript {want}"));
    }
    let t = Transcript::read(&dir.join(&want)).map_err(|e| e.to_string())?;
    let derived = derive(&t, set, game, versions)?;
    let differs = crate::tournament::audit::fields_differing(recorded, &derived);
    if !differs.is_empty() {
        return Err(differs
            .join("; ")
            .replace("the journal says", "season.db says"));
    }
    Ok(derived)
}

/// Where game `game` of set `set` is kept, relative to the season's folder.
pub fn transcript_name(set: &SetRow, game: u32) -> Result<String, String> {
    let key = GameKey {
        round: 0,
        matchup: u32::try_from(set.id).map_err(|e| e.to_string())?,
        game,
    };
    Ok(crate::tournament::pool::transcript_name(key))
}

/// The outcome of game `game` of set `set` that the transcript `t` gives,
/// if it checks out (the rules, the bookkeeping) and is that game: dealt
/// from the set's seed, with the set's versions in the seats the game puts
/// them in (every game of a set is the same deal: the seats tell them
/// apart). What is wrong, in words, otherwise (also what a worker's
/// transcript is judged by: `season/run/workers.rs`).
pub fn derive(
    t: &Transcript,
    set: &SetRow,
    game: u32,
    versions: &[Version],
) -> Result<GameOutcome, String> {
    let m = Matchup {
        index: u32::try_from(set.id).map_err(|e| e.to_string())?,
        round: 0,
        entrants: set.versions.map(|v| v as usize),
        sets: 1,
        seed: set.seed,
    };
    let key = GameKey {
        round: 0,
        matchup: m.index,
        game,
    };
    let name = transcript_name(set, game)?;
    let derived = GameOutcome::of(t, &name, key, m.teams(game)).map_err(|e| {
        format!(
            "its transcript does not check out (line {}: {})",
            e.line, e.message
        )
    })?;
    let header = t.header().map_err(|e| e.to_string())?;
    if header.match_seed != set.seed {
        return Err(format!(
            "dealt from seed {}, not its set's {}",
            header.match_seed, set.seed
        ));
    }
    for (p, &v) in derived.teams.iter().enumerate() {
        let version = (versions.iter().find(|x| x.id == v as i64))
            .ok_or_else(|| format!("version {v} is not in the season"))?;
        let command = bot(version).map_err(|e| e.to_string())?.display();
        for seat in [p, p + 3] {
            let has = header.seats.get(seat).map(|s| s.command.as_str());
            if has != Some(command.as_str()) {
                return Err(format!(
                    "seat {seat} should be {} v{} ({command}); the transcript has {}",
                    version.name,
                    version.number,
                    has.unwrap_or("no such seat")
                ));
            }
        }
    }
    Ok(derived)
}

/// The latest ratings in the database against the fit of the finished sets'
/// games as their transcripts give them.
fn ratings(
    db: &Db,
    sets: &BTreeMap<i64, SetRow>,
    derived: &BTreeMap<i64, Vec<GameOutcome>>,
    audit: &mut SeasonAudit,
) -> anyhow::Result<()> {
    let finished: Vec<i64> = sets.values().filter(|s| s.finished).map(|s| s.id).collect();
    let mut games = Vec::new();
    for id in &finished {
        let of_set = derived.get(id).map_or(0, Vec::len);
        if of_set != crate::tournament::schedule::SET as usize {
            audit.mismatches.push(format!(
                "set {id} is recorded finished with {of_set} game(s)"
            ));
            return Ok(());
        }
        games.extend(derived[id].iter().cloned());
    }
    let after = finished.len() as i64;
    let stored: Vec<_> = (db.ratings()?.into_iter())
        .filter(|r| r.after_sets == after)
        .collect();
    let recomputed = super::ratings::refit(after, &games, &[]);
    if finished.is_empty() {
        return Ok(());
    }
    if !super::ratings::agree(&stored, &recomputed) {
        audit.mismatches.push(format!(
            "the ratings after {after} finished set(s) are not the fit of their transcripts' games"
        ));
    }
    audit.rated = recomputed.len();
    Ok(())
}

/// The final (`DIR/final`, `season final`) against the season: called, by
/// the season's standings, with the finalists' versions as its entrants in
/// standings order, under the season's settings, on the season's seed and
/// the secret derived from the season's. What differs, in words; nothing
/// when no final was called and none played. Its games are checked as any
/// tournament's (`audit.rs`).
pub fn final_check(dir: &Path) -> anyhow::Result<Vec<String>> {
    let db = Db::open(&dir.join(crate::layout::season::DB))?;
    let out = crate::layout::season::final_dir(dir);
    let played = crate::layout::tournament::is_tournament(&out);
    let called = match (super::final_bracket::called(&db)?, played) {
        (None, false) | (Some(_), false) => return Ok(Vec::new()),
        (None, true) => {
            return Ok(vec![format!(
                "{} holds a tournament, but the season's final was never called",
                out.display()
            )])
        }
        (Some(c), true) => c,
    };
    let m = crate::tournament::manifest::Manifest::read(&out)?;
    let settings = Settings::read(&db)?;
    let versions = db.versions()?;
    let mut wrong = Vec::new();
    let mut want = Vec::new();
    for id in &called.finalists {
        let v = (versions.iter().find(|v| v.id == *id))
            .ok_or_else(|| anyhow::anyhow!("the final names version {id}, not in the season"))?;
        want.push((v.name.clone(), bot(v)?.display()));
    }
    let have: Vec<(String, String)> = (m.entrants.iter())
        .map(|e| (e.name.clone(), e.command.clone()))
        .collect();
    if have != want {
        wrong.push(format!(
            "the final's entrants are {have:?}, not the finalists {want:?}"
        ));
    }
    let standings = super::standings::compute(&db)?;
    let top: Vec<i64> = (standings.entrants.iter())
        .filter(|r| r.rating.is_some())
        .take(called.top)
        .map(|r| r.version)
        .collect();
    if top != called.finalists {
        wrong.push(format!(
            "the finalists (versions {:?}) are not the top {} of the standings (versions {top:?})",
            called.finalists, called.top
        ));
    }
    if m.format != called.format || m.sets != called.sets || m.seed != settings.seed {
        wrong.push("the final's format, sets or seed are not those the season called".into());
    }
    let season = (
        settings.time_control.clone(),
        settings.fault_policy,
        settings.rules,
    );
    if (m.time_control.clone(), m.fault_policy, m.rules) != season
        || m.isolation.as_ref() != Some(&settings.isolation)
    {
        wrong.push("the final was played under other settings than the season's".into());
    }
    wrong.extend(final_secret(dir, &db, &out, &m, settings.seed)?);
    Ok(wrong)
}

/// The final's secret is the one derived from the season's, where both are
/// at hand.
fn final_secret(
    dir: &Path,
    db: &Db,
    out: &Path,
    m: &crate::tournament::manifest::Manifest,
    seed: u64,
) -> anyhow::Result<Option<String>> {
    let season = match db.get("seed_secret")? {
        Some(text) => Some(
            text.parse()
                .map_err(|e| anyhow::anyhow!("season.db's seed_secret: {e}"))?,
        ),
        None => crate::tournament::seed_secret::stored(dir)?,
    };
    let used = match m.seed_secret {
        Some(s) => Some(s),
        None => crate::tournament::seed_secret::stored(out)?,
    };
    Ok(match (season, used) {
        (Some(season), Some(used)) if super::final_bracket::secret(&season, seed) != used => {
            Some("the final is not dealt from the secret derived from the season's".into())
        }
        _ => None,
    })
}
