//! The `referee verify` command around `verify.rs`'s replay: what each path is
//! (a transcript file, a `play` folder, a tournament folder), what is printed,
//! and the exit status.
//!
//! - A file is one transcript.
//! - A folder is every `*.jsonl` file directly in it (a `play` folder; its
//!   `timings/` and `stderr/` are not looked at).
//! - A tournament folder (it has `tournament.json`) is every transcript in its
//!   `games/`, and then its `journal.jsonl`, each line against its transcript.
//!
//! Every line goes out through [`say`] and [`complain`]: what a header, a
//! journal or a `tournament.json` says is anyone's text (a file that verifies
//! can carry ESC in its `referee` or a seat's command), printed escaped.
//!
//! What `verify` cannot check, it says (once, under the first "played under"):
//! how the bots were run is what the referee that wrote the file declared. The
//! games are replayed from first principles; the isolation record is not
//! evidence of anything but that declaration.
//!
//! Exit status: 0 when everything checks out; 1 when a transcript or a journal
//! line does not; 2 when a path is not what `verify` reads (no such file, not a
//! transcript at all, a folder without transcripts).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};

use crate::isolation_record::IsolationRecord;
use crate::transcript::{FaultPolicy, TimeControlRecord};
use crate::verify::{verify_file, Failure};
use schmier_protocol::wire::Clock;

/// Tallies of one `verify` run.
#[derive(Default)]
struct Tally {
    checked: usize,
    invalid: usize,
    not_transcripts: usize,
    journal_lines: usize,
    journal_bad: usize,
    /// A season's record: the games and finished sets its database counts,
    /// and what does not match (its final against it included).
    season_games: usize,
    season_sets: usize,
    season_bad: usize,
    /// The conditions last printed ([`played_under`]): printed again only
    /// when a transcript's differ.
    conditions: Option<String>,
    /// A tournament folder's conditions, which each of its transcripts must
    /// record.
    expected: Option<String>,
    /// Whether [`UNCHECKED`] was said.
    cautioned: bool,
    /// In a tournament folder: its entrants, so that its teams are named as
    /// the tournament names them.
    entrants: Option<Entrants>,
}

/// A tournament's entrants' names, and each journaled game's entrants by team
/// position, keyed by the transcript's path.
struct Entrants {
    names: Vec<String>,
    by_game: BTreeMap<PathBuf, [usize; 3]>,
}

/// What `verify` cannot check, said under the first "played under" line.
pub const UNCHECKED: &str = "  (how the bots were run is what the referee that wrote the file \
     declared; verify checks the games against the rules, not that record)";

impl Tally {
    /// Prints `line`, a "played under" line, with [`UNCHECKED`] the first time.
    fn played_under(&mut self, line: &str) {
        say(line);
        if !self.cautioned {
            say(UNCHECKED);
            self.cautioned = true;
        }
    }
}

/// Prints one line of the report to stdout, every control character in it
/// escaped (`names::printable_lines`).
/// A reader that closed the pipe (`referee verify DIR | head`) stops the
/// output, not the check: the exit status still tells whether every transcript
/// is valid.
fn say(line: &str) {
    use std::io::Write;
    let written = writeln!(
        std::io::stdout().lock(),
        "{}",
        crate::names::printable_lines(line)
    );
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            complain(&format!("failed to write to stdout: {e}"));
        }
    }
}

/// Prints a problem to stderr, escaped as [`say`] does.
fn complain(problem: &str) {
    eprintln!("referee: {}", crate::names::printable_lines(problem));
}

/// Runs `referee verify PATH...`, printing one line per transcript (and per
/// journal problem) to stdout.
pub fn run(paths: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut tally = Tally::default();
    for p in paths {
        if p.is_dir() && crate::tournament::audit::is_tournament(p) {
            tournament(p, &mut tally)?;
        } else if p.is_dir() && crate::layout::season::is_season(p) {
            season(p, &mut tally)?;
        } else if p.is_dir() {
            for f in jsonl_in(p)? {
                file(&f, &mut tally);
            }
        } else {
            file(p, &mut tally);
        }
    }
    let mut problems = Vec::new();
    if tally.invalid > 0 {
        problems.push(format!(
            "{} of {} transcript(s) invalid",
            tally.invalid, tally.checked
        ));
    }
    if tally.journal_bad > 0 {
        problems.push(format!(
            "{} of {} journal line(s) do not match their transcripts",
            tally.journal_bad, tally.journal_lines
        ));
    }
    if tally.season_bad > 0 {
        problems.push(format!(
            "{} problem(s) in the season's record ({} game(s) of {} finished set(s) checked \
             against their transcripts)",
            tally.season_bad, tally.season_games, tally.season_sets
        ));
    }
    if tally.not_transcripts > 0 {
        problems.push(format!(
            "{} path(s) are not transcripts (or cannot be read)",
            tally.not_transcripts
        ));
    }
    if problems.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    complain(&problems.join("; "));
    Ok(ExitCode::from(if tally.not_transcripts > 0 {
        2
    } else {
        1
    }))
}

/// Verifies one transcript file and prints its line.
fn file(f: &Path, tally: &mut Tally) {
    tally.checked += 1;
    match verify_file(f) {
        Ok(v) => {
            let players: Vec<&str> = v.header.seats.iter().map(|s| s.name.as_str()).collect();
            let teams = team_names(tally, f, &players);
            let r = &v.result;
            let forfeited: Vec<usize> = r.forfeited.iter().map(|t| t.index()).collect();
            say(&format!(
                "ok {} ({} lines): {}",
                f.display(),
                v.lines,
                crate::report::outcome_text(
                    &teams,
                    r.winner.map(|t| t.index()),
                    r.scores,
                    &forfeited
                )
            ));
            let h = &v.header;
            let conditions = played_under(
                Some(&h.referee),
                &h.time_control,
                &h.fault_policy,
                h.isolation.as_deref(),
            );
            if tally.expected.as_ref().is_some_and(|e| *e != conditions) {
                tally.invalid += 1;
                say(&format!(
                    "INVALID {}: played otherwise than its tournament.json says: {conditions}",
                    f.display()
                ));
            } else if tally.conditions.as_ref() != Some(&conditions) {
                tally.played_under(&format!("  played under: {conditions}"));
                tally.conditions = Some(conditions);
            }
        }
        Err(Failure::Invalid(e)) => {
            tally.invalid += 1;
            say(&format!(
                "INVALID {}:{}: {}",
                f.display(),
                e.line,
                e.message
            ));
        }
        Err(Failure::NotTranscript(e)) => {
            tally.checked -= 1;
            tally.not_transcripts += 1;
            complain(&e.to_string());
        }
    }
}

/// The teams of transcript `f`, from its six players' `hello` names: in a
/// tournament folder by the entrant each team is ("a", or "a (random)" when
/// its bot said another name), so two entrants that run the same bot read
/// apart; elsewhere as `play` names them ("random #1", "random #2").
fn team_names(tally: &Tally, f: &Path, players: &[&str]) -> [String; 3] {
    let by_hello = crate::names::team_names(players);
    let Some((e, teams)) = (tally.entrants.as_ref()).and_then(|e| e.by_game.get(f).map(|t| (e, t)))
    else {
        return by_hello;
    };
    std::array::from_fn(|t| {
        let Some(name) = e.names.get(teams[t]) else {
            return by_hello[t].clone();
        };
        let name = crate::names::printable(name);
        let bot = crate::names::partners(players[t], players[t + 3]);
        match bot == name {
            true => name.into_owned(),
            false => format!("{name} ({bot})"),
        }
    })
}

/// A tournament folder: its games, then its journal against them.
fn tournament(dir: &Path, tally: &mut Tally) -> anyhow::Result<()> {
    let games_dir = crate::layout::tournament::games(dir);
    let games: Vec<String> = match games_dir.is_dir() {
        true => crate::load::transcripts_in(&games_dir)?
            .into_iter()
            .map(|rel| journal_name(&rel))
            .collect(),
        false => Vec::new(),
    };
    let m = crate::tournament::manifest::Manifest::read(dir)?;
    let conditions = played_under(
        m.referee.as_deref(),
        &m.time_control,
        &m.fault_policy,
        m.isolation.as_ref(),
    );
    tally.played_under(&format!(
        "tournament {}: played under: {conditions}",
        dir.join(crate::layout::tournament::MANIFEST).display()
    ));
    // A tournament.json of before format 2 has nothing to check them against.
    tally.expected = m.isolation.is_some().then(|| conditions.clone());
    tally.conditions = Some(conditions);
    let by_game = crate::tournament::audit::entrants_by_game(dir);
    let by_path = (by_game.into_iter()).map(|(g, teams)| (dir.join(g), teams));
    let names = m.entrants.iter().map(|e| e.name.clone()).collect();
    tally.entrants = Some(Entrants {
        names,
        by_game: by_path.collect(),
    });
    for g in &games {
        file(&dir.join(g), tally);
    }
    tally.expected = None;
    tally.entrants = None;
    let audit = crate::tournament::audit::journal(dir, &games)?;
    let journal = audit.path.display();
    tally.journal_lines += audit.lines;
    tally.journal_bad += audit.mismatches.len();
    for (line, why) in &audit.mismatches {
        say(&format!("INVALID {journal}:{line}: {why}"));
    }
    for g in &audit.unjournaled {
        say(&format!(
            "note {}: a finished game the journal does not count (--resume plays it again)",
            dir.join(g).display()
        ));
    }
    if audit.mismatches.is_empty() {
        say(&format!(
            "ok {journal} ({} games, each as its transcript records it)",
            audit.lines
        ));
    }
    Ok(())
}

/// A transcript's name as a journal records it, relative to its folder:
/// `games/NAME`, with `/` on every operating system.
fn journal_name(rel: &Path) -> String {
    let mut name = crate::layout::tournament::GAMES.to_owned();
    for part in rel.components() {
        name.push('/');
        name.push_str(&part.as_os_str().to_string_lossy());
    }
    name
}

/// The transcripts in a tournament's or a season's `games/`, relative to
/// its folder.
fn games_of(dir: &Path) -> anyhow::Result<Vec<String>> {
    let games_dir = crate::layout::tournament::games(dir);
    Ok(match games_dir.is_dir() {
        true => crate::load::transcripts_in(&games_dir)?
            .into_iter()
            .map(|rel| journal_name(&rel))
            .collect(),
        false => Vec::new(),
    })
}

/// A season folder: its games, each played under the season's settings,
/// then its database against them (`season/audit.rs`).
fn season(dir: &Path, tally: &mut Tally) -> anyhow::Result<()> {
    let games = games_of(dir)?;
    let s = crate::season::audit::settings(dir)?;
    let conditions = played_under(
        Some(&s.referee),
        &s.time_control,
        &s.fault_policy,
        Some(&s.isolation),
    );
    let db = crate::layout::season::store(dir);
    tally.played_under(&format!(
        "season {}: played under: {conditions}",
        db.display()
    ));
    tally.expected = Some(conditions.clone());
    tally.conditions = Some(conditions);
    // Teams named by entrant and version ("alice v2"), as the season does.
    let (names, teams) = crate::season::audit::names(dir)?;
    tally.entrants = Some(Entrants {
        names,
        by_game: (teams.into_iter()).map(|(g, t)| (dir.join(g), t)).collect(),
    });
    for g in &games {
        file(&dir.join(g), tally);
    }
    tally.expected = None;
    tally.entrants = None;
    let audit = crate::season::audit::check(dir, &games)?;
    tally.season_games += audit.games;
    tally.season_sets += audit.sets;
    tally.season_bad += audit.mismatches.len();
    for why in &audit.mismatches {
        say(&format!("INVALID {}: {why}", db.display()));
    }
    for g in &audit.uncounted {
        say(&format!(
            "note {}: a finished game the season does not count (the next run plays it again)",
            dir.join(g).display()
        ));
    }
    if audit.mismatches.is_empty() {
        say(&format!(
            "ok {} ({} games, each as its transcript records it; the ratings of {} version(s) recomputed)",
            db.display(),
            audit.games,
            audit.rated
        ));
    }
    season_final(dir, tally)
}

/// A season's final, if played: its folder as a tournament's, then it
/// against the season (`season/audit.rs`).
fn season_final(dir: &Path, tally: &mut Tally) -> anyhow::Result<()> {
    let out = crate::layout::season::final_dir(dir);
    if crate::layout::tournament::is_tournament(&out) {
        tournament(&out, tally)?;
    }
    let wrong = crate::season::audit::final_check(dir)?;
    tally.season_bad += wrong.len();
    for why in &wrong {
        say(&format!("INVALID {}: {why}", out.display()));
    }
    if wrong.is_empty() && crate::layout::tournament::is_tournament(&out) {
        say(&format!(
            "ok {}: the season's final, among the top of its standings, under its settings, \
             dealt from its secret",
            out.display()
        ));
    }
    Ok(())
}

/// Every `*.jsonl` file directly in `dir`, in name order.
fn jsonl_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("failed to list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| f.is_file() && f.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    if found.is_empty() {
        bail!(
            "failed to find transcripts: {} holds no *.jsonl file (nor tournament.json)",
            dir.display()
        );
    }
    found.sort();
    Ok(found)
}

/// Everything a header (or a manifest) records of how its games were played,
/// in words: the referee, the isolation, the clock and the fault policy. What
/// `referee verify` prints; equal texts mean equal conditions.
pub fn played_under(
    referee: Option<&str>,
    time: &TimeControlRecord,
    policy: &FaultPolicy,
    isolation: Option<&IsolationRecord>,
) -> String {
    let isolation = match isolation {
        Some(i) => i.describe(),
        None => "isolation not recorded (written before transcript format 3)".to_owned(),
    };
    let clock = match time.decision_ms {
        Some(ms) => format!(
            "{} clock, {ms} ms a decision + {} ms grace, {} ms to start, {} ms time bank",
            match time.clock {
                Clock::Wall => "wall",
                Clock::Cpu => "CPU",
            },
            time.grace_ms,
            time.startup_ms.unwrap_or(0),
            time.time_bank_ms
        ),
        None => "no time limits".to_owned(),
    };
    let faults = format!(
        "{}; {}; {}",
        match policy.forfeit {
            true => "a faulted team forfeits",
            false => "no forfeits",
        },
        match policy.max_faults {
            Some(n) => format!("the fallback replaces a seat after {n} faults"),
            None => "a seat is replaced only when its bot is gone".to_owned(),
        },
        match policy.restart {
            true => "crashed bots are restarted",
            false => "crashed bots are not restarted",
        }
    );
    format!(
        "{}; {isolation}; {clock}, lines up to {} bytes; {faults}",
        referee.unwrap_or("referee version not recorded"),
        time.max_line_bytes
    )
}
