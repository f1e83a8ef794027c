//! A tournament's page in the browser: `DIR/index.html` and a replay page per
//! finished game in `DIR/index-games/`, kept current while the run goes on
//! (`referee tournament --page`) by [`LivePage`] (the run's reporter
//! [`Page`] drives it), and written once for a
//! finished folder by `referee show DIR --html OUT.html` ([`write_finished`]).
//! Both gather the same [`Index`] from the manifest and the journal's outcomes
//! and draw it with the one renderer, `show/bracket.rs`.
//!
//! Entrants are named by their entrant names everywhere, replay pages
//! included (a bot's `hello` name is its own business). Every file goes
//! through the atomic writer, so a browser reloading the page mid-write sees
//! the old page or the new one, never half of one. A page that cannot be
//! written costs the run nothing but the page: a warning, and the games go on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

use super::config::TournamentConfig;
use super::events::{Event, Reporter};
use super::format;
use super::manifest::Manifest;
use super::outcome::GameOutcome;
use super::schedule::{GameKey, GameResult, Matchup, ARRANGEMENTS, SET};
use crate::load::Transcript;
use crate::show::bracket::{self, GameLink, Index, Round, State, TableRow, Written};
use crate::show::html::{self, Setting};
use crate::show::Replay;

use crate::layout::tournament::INDEX;

/// Seconds between a running page's reloads.
const REFRESH: u32 = 5;

/// The folder of `page`'s replay pages, beside it: `NAME-games/`.
pub fn games_folder(page: &Path) -> anyhow::Result<PathBuf> {
    let stem = (page.file_stem())
        .and_then(|s| s.to_str())
        .context("the page needs a file name, e.g. bracket.html")?;
    Ok(page.with_file_name(format!("{stem}-games")))
}

/// Keeps `DIR/index.html` current through a run: [`LivePage::on_round`] when a
/// round's tables are known, [`LivePage::on_game_journaled`] after each game is
/// journaled, [`LivePage::on_end`] when the run ends, however it ends. Off
/// (every call does nothing) without `--page`.
pub struct LivePage {
    on: bool,
    dir: PathBuf,
    manifest: Manifest,
    /// The tables of the rounds seen so far (knockout, Swiss).
    rounds: BTreeMap<u32, Vec<Matchup>>,
    /// The games this run plays, if known from the start.
    total: Option<u64>,
    warned: bool,
}

impl LivePage {
    /// Writes the page and the replay pages of the games already journaled (a
    /// resumed run's), if `on`.
    pub fn new(
        on: bool,
        dir: &Path,
        manifest: &Manifest,
        outcomes: &BTreeMap<GameKey, GameOutcome>,
    ) -> LivePage {
        let holds = |m: &Matchup| manifest.shard.is_none_or(|s| s.holds(m));
        let total = match manifest.format.by_rounds() {
            // Later rounds follow from earlier results.
            true => None,
            false => {
                let m = manifest;
                let all = format::matchups(m.entrants.len(), &m.format, m.sets, m.deal_seed());
                Some(
                    all.iter()
                        .filter(|m| holds(m))
                        .map(|m| u64::from(m.games()))
                        .sum(),
                )
            }
        };
        let mut page = LivePage {
            on,
            dir: dir.to_owned(),
            manifest: manifest.clone(),
            rounds: BTreeMap::new(),
            total,
            warned: false,
        };
        if on {
            let page_path = dir.join(INDEX);
            let result = games_folder(&page_path).and_then(|folder| {
                std::fs::create_dir_all(&folder)
                    .with_context(|| format!("failed to create {}", folder.display()))?;
                html::write_assets(&folder)?;
                outcomes
                    .values()
                    .try_for_each(|o| replay_page(dir, &folder, manifest, o))
            });
            page.check(result);
            page.write(outcomes, State::Running);
        }
        page
    }

    /// Round `r`'s tables are `ms` (this run plays those its shard holds).
    pub fn on_round(&mut self, r: u32, ms: &[Matchup], outcomes: &BTreeMap<GameKey, GameOutcome>) {
        if !self.on {
            return;
        }
        let mine = ms.iter().filter(|m| self.holds(m)).cloned().collect();
        self.rounds.insert(r, mine);
        self.write(outcomes, State::Running);
    }

    /// Game `key` is journaled (and in `outcomes`): its replay page, then the
    /// index that links it.
    pub fn on_game_journaled(&mut self, key: GameKey, outcomes: &BTreeMap<GameKey, GameOutcome>) {
        if !self.on {
            return;
        }
        if let Some(o) = outcomes.get(&key) {
            let page_path = self.dir.join(INDEX);
            let result = games_folder(&page_path)
                .and_then(|folder| replay_page(&self.dir, &folder, &self.manifest, o));
            self.check(result);
        }
        self.write(outcomes, State::Running);
    }

    /// The run ended: `complete` (every game played) or stopped. The page stops
    /// reloading itself.
    pub fn on_end(&mut self, outcomes: &BTreeMap<GameKey, GameOutcome>, complete: bool) {
        if !self.on {
            return;
        }
        let state = if complete {
            State::Finished
        } else {
            State::Stopped
        };
        self.write(outcomes, state);
    }

    fn holds(&self, m: &Matchup) -> bool {
        self.manifest.shard.is_none_or(|s| s.holds(m))
    }

    fn write(&mut self, outcomes: &BTreeMap<GameKey, GameOutcome>, state: State) {
        let current = self.rounds.iter().next_back().map(|(&r, ms)| {
            let keys = || ms.iter().flat_map(|m| m.keys());
            let done = keys().filter(|k| outcomes.contains_key(k)).count() as u64;
            (r, done, keys().count() as u64)
        });
        let path = self.dir.join(INDEX);
        let standings = super::standings::compute(&self.manifest, outcomes);
        let result = index(
            &self.manifest,
            outcomes,
            &standings,
            &self.rounds,
            &path,
            state,
        )
        .and_then(|mut index| {
            index.total = self.total;
            index.round = current.filter(|_| state == State::Running);
            let html = bracket::render(&index);
            Ok(crate::safe_create::write_atomic(&path, html.as_bytes())?)
        });
        self.check(result);
    }

    /// A page that cannot be written is worth a warning, once, not the run.
    fn check(&mut self, result: anyhow::Result<()>) {
        if let Err(e) = result {
            if !self.warned {
                eprintln!("referee: warning: the tournament's page is not kept current: {e:#}; the games go on");
                self.warned = true;
            }
        }
    }
}

/// `--page`: the live page as one of the run's reporters. The page is made
/// when the run's directory is opened (with the games already journaled), and
/// kept current on each round's tables, each journaled game and the end,
/// however the run ends.
pub struct Page {
    dir: PathBuf,
    live: Mutex<Option<LivePage>>,
}

impl Page {
    pub fn new(cfg: &TournamentConfig) -> Page {
        Page {
            dir: cfg.out.clone(),
            live: Mutex::new(None),
        }
    }
}

impl Reporter for Page {
    fn report(&self, event: &Event<'_>) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Event::Opened { manifest, so_far } = event {
            *live = Some(LivePage::new(true, &self.dir, manifest, so_far));
            return;
        }
        let Some(page) = live.as_mut() else { return };
        match event {
            Event::RoundSeated {
                round,
                matchups,
                so_far,
            } => page.on_round(*round, matchups, so_far),
            Event::GameJournaled { key, so_far, .. } => page.on_game_journaled(*key, so_far),
            Event::Ended {
                so_far,
                interrupted,
                ..
            } => page.on_end(so_far, !interrupted),
            Event::Failed { so_far } => page.on_end(so_far, false),
            _ => {}
        }
    }
}

/// `referee show DIR --html OUT`: the finished tournament in `dir` drawn at
/// `out`, its replay pages in `OUT-games/`.
pub fn write_finished(dir: &Path, out: &Path) -> anyhow::Result<Written> {
    let manifest = Manifest::read(dir)?;
    let outcomes = super::journal::read(dir)?.outcomes;
    let folder = games_folder(out)?;
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("failed to create {}", folder.display()))?;
    html::write_assets(&folder)?;
    for o in outcomes.values() {
        replay_page(dir, &folder, &manifest, o)?;
    }
    let standings = super::standings::compute(&manifest, &outcomes);
    let index = index(
        &manifest,
        &outcomes,
        &standings,
        &BTreeMap::new(),
        out,
        State::Finished,
    )?;
    crate::safe_create::write_atomic(out, bracket::render(&index).as_bytes())?;
    Ok(Written {
        page: out.to_owned(),
        replays: outcomes.len(),
    })
}

/// The page at `page` for `outcomes` and their `standings`; `rounds`: tables
/// known beyond those with games played (a running round's). What is known of
/// the run's progress only while it runs is left to the caller.
fn index<'a>(
    manifest: &Manifest,
    outcomes: &BTreeMap<GameKey, GameOutcome>,
    standings: &'a super::Standings,
    rounds: &BTreeMap<u32, Vec<Matchup>>,
    page: &Path,
    state: State,
) -> anyhow::Result<Index<'a>> {
    let names: Vec<String> = manifest.entrants.iter().map(|e| e.name.clone()).collect();
    let n = names.len();
    let mut ahead = vec![vec![0; n]; n];
    let mut met = vec![vec![0; n]; n];
    for o in outcomes.values() {
        let place = |t: usize| o.ranking.iter().position(|&r| r == t).unwrap_or(3);
        for i in 0..3 {
            for j in (0..3).filter(|&j| j != i) {
                let (a, b) = (o.teams[i], o.teams[j]);
                if a < n && b < n {
                    met[a][b] += 1;
                    ahead[a][b] += u32::from(place(i) < place(j));
                }
            }
        }
    }
    let folder = games_folder(page)?;
    let folder_name = folder
        .file_name()
        .map_or_else(|| "games".into(), |f| f.to_string_lossy().into_owned());
    let games = (outcomes.values())
        .map(|o| GameLink {
            href: format!("{folder_name}/{}", replay_name(o)),
            label: label(o),
            summary: summary(&names, o),
        })
        .collect();
    let (rounds, champion) = bracket_rounds(manifest, outcomes, rounds);
    Ok(Index {
        title: format!(
            "Schmier tournament: {}, seed {}",
            format_name(manifest),
            manifest.seed
        ),
        settings: settings(manifest),
        state,
        done: outcomes.len() as u64,
        total: None,
        round: None,
        standings,
        names,
        ahead,
        met,
        rounds,
        champion,
        games,
        refresh: REFRESH,
    })
}

fn name(manifest: &Manifest, e: usize) -> String {
    manifest
        .entrants
        .get(e)
        .map_or_else(|| format!("entrant {e}"), |e| e.name.clone())
}

fn format_name(m: &Manifest) -> String {
    m.format.pairing().title(&|e| name(m, e))
}

/// The lines at the top of the page: what the manifest says the tournament is.
fn settings(m: &Manifest) -> Vec<(String, String)> {
    // The records as `key value` pairs, in the manifest's own words.
    let fields = |v: serde_json::Value| match v {
        serde_json::Value::Object(o) => {
            let parts: Vec<String> = o.iter().map(|(k, v)| format!("{k} {v}")).collect();
            parts.join(", ")
        }
        other => other.to_string(),
    };
    let entrants: Vec<String> = (m.entrants.iter())
        .map(|e| format!("{} ({})", e.name, e.command))
        .collect();
    let mut out = vec![
        ("format".to_owned(), format_name(m)),
        ("seed".to_owned(), m.seed.to_string()),
        ("duplicate sets per matchup".to_owned(), m.sets.to_string()),
        ("entrants".to_owned(), entrants.join(", ")),
        ("rules".to_owned(), fields(serde_json::json!(m.rules))),
        (
            "time control".to_owned(),
            fields(serde_json::json!(m.time_control)),
        ),
        (
            "fault policy".to_owned(),
            fields(serde_json::json!(m.fault_policy)),
        ),
    ];
    // How the bots were run, in the words `referee verify` prints.
    let isolation = match &m.isolation {
        Some(i) => i.describe(),
        None => "not recorded (an older referee's folder)".to_owned(),
    };
    out.push(("isolation".to_owned(), isolation));
    if let Some(r) = &m.referee {
        out.push(("referee".to_owned(), r.clone()));
    }
    if let Some(s) = m.shard {
        out.push(("shard".into(), format!("{} of {}", s.index, s.count)));
    }
    out
}

/// `r01-m0002-g003.html`, after the transcript's name.
fn replay_name(o: &GameOutcome) -> String {
    let file = Path::new(&o.transcript).with_extension("html");
    file.file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().into_owned())
}

fn label(o: &GameOutcome) -> String {
    match o.round {
        0 => format!("table {} game {}", o.matchup, o.game),
        r => format!("round {r} table {} game {}", o.matchup, o.game),
    }
}

/// A replay page's title: "Round 2, table 0, game 5: a vs b vs c".
fn title(names: &[String], o: &GameOutcome) -> String {
    let at = match o.round {
        0 => format!("Table {}, game {}", o.matchup, o.game),
        r => format!("Round {r}, table {}, game {}", o.matchup, o.game),
    };
    format!("{at}: {}", matchup(names, o))
}

/// "a vs b vs c", by team position.
fn matchup(names: &[String], o: &GameOutcome) -> String {
    let who: Vec<&str> = (o.teams.iter())
        .map(|&e| names.get(e).map_or("?", String::as_str))
        .collect();
    who.join(" vs ")
}

/// "a vs b vs c: a first; scores 22 / 9 / -3".
fn summary(names: &[String], o: &GameOutcome) -> String {
    let scores: Vec<String> = o.scores.iter().map(|s| s.to_string()).collect();
    let first = match o.winner {
        Some(t) => format!("{} won", names.get(o.teams[t]).map_or("?", String::as_str)),
        None => "no winner".into(),
    };
    let forfeits: Vec<&str> = (o.forfeited.iter())
        .map(|&t| names.get(o.teams[t]).map_or("?", String::as_str))
        .collect();
    let forfeits = match forfeits.is_empty() {
        true => String::new(),
        false => format!("; forfeited: {}", forfeits.join(", ")),
    };
    format!(
        "{}: {first}; scores {}{forfeits}",
        matchup(names, o),
        scores.join(" / ")
    )
}

/// Writes game `o`'s replay page into `folder`.
fn replay_page(dir: &Path, folder: &Path, m: &Manifest, o: &GameOutcome) -> anyhow::Result<()> {
    let names: Vec<String> = m.entrants.iter().map(|e| e.name.clone()).collect();
    let transcript = Transcript::read(&dir.join(&o.transcript))?;
    let page_name = folder
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let index_name = page_name.strip_suffix("-games").unwrap_or("index");
    let setting = Setting {
        title: Some(title(&names, o)),
        // Seat s plays for team position s % 3.
        players: Some(std::array::from_fn(|s| {
            names.get(o.teams[s % 3]).cloned().unwrap_or_default()
        })),
        back: Some((
            format!("../{index_name}.html"),
            "← the tournament".to_owned(),
        )),
        shared_assets: true,
    };
    let page = html::render_in(&Replay::new(&transcript)?, &setting)?;
    crate::safe_create::write_atomic(&folder.join(replay_name(o)), page.as_bytes())?;
    Ok(())
}

/// The entrants of `o`'s matchup in lineup order (the order its games rotate).
fn table_of(o: &GameOutcome) -> [usize; 3] {
    let arrangement = ARRANGEMENTS[((o.game.max(1) - 1) % SET) as usize];
    let mut entrants = [0; 3];
    for (t, &k) in arrangement.iter().enumerate() {
        entrants[k] = o.teams[t];
    }
    entrants
}

/// The rounds of a knockout or Swiss so far, and a knockout's champion.
fn bracket_rounds(
    m: &Manifest,
    outcomes: &BTreeMap<GameKey, GameOutcome>,
    known: &BTreeMap<u32, Vec<Matchup>>,
) -> (Vec<Round>, Option<String>) {
    if !m.format.by_rounds() {
        return (Vec::new(), None);
    }
    let results: Vec<GameResult> = outcomes.values().map(|o| o.result()).collect();
    let mut rounds = Vec::new();
    let mut last_complete = None;
    for (r, tables) in tables_by_round(outcomes, known) {
        let (round, complete) = round(m, r, &tables, &results);
        if complete {
            last_complete = Some(r);
        }
        rounds.push(round);
    }
    let champion = last_complete
        .and_then(|r| (m.format.pairing()).champion(m.entrants.len(), r + 1, &results))
        .map(|e| name(m, e));
    (rounds, champion)
}

/// Each round's tables (matchup index → entrants): those `known` (the round
/// being played) and those with games played.
fn tables_by_round(
    outcomes: &BTreeMap<GameKey, GameOutcome>,
    known: &BTreeMap<u32, Vec<Matchup>>,
) -> BTreeMap<u32, BTreeMap<u32, [usize; 3]>> {
    let mut tables: BTreeMap<u32, BTreeMap<u32, [usize; 3]>> = BTreeMap::new();
    for (&r, ms) in known {
        for t in ms {
            tables.entry(r).or_default().insert(t.index, t.entrants);
        }
    }
    for o in outcomes.values() {
        let round = tables.entry(o.round).or_default();
        round.entry(o.matchup).or_insert_with(|| table_of(o));
    }
    tables
}

/// Round `r` at `tables`, after `results`; and whether all its games are in.
fn round(
    m: &Manifest,
    r: u32,
    tables: &BTreeMap<u32, [usize; 3]>,
    results: &[GameResult],
) -> (Round, bool) {
    let n = m.entrants.len();
    let games_per_table = m.sets * SET;
    let before: Vec<GameResult> = (results.iter())
        .filter(|g| g.key.round < r)
        .cloned()
        .collect();
    let this: Vec<&GameResult> = results.iter().filter(|g| g.key.round == r).collect();
    // What the format makes of the round needs all of its tables; a shard sees
    // only its own, so there they come from the schedule (the rounds before
    // are complete in a shard's folder).
    let all = match m.shard {
        Some(_) => format::round(n, &m.format, m.sets, m.deal_seed(), r, &before)
            .map(|ms| ms.iter().map(|m| m.entrants).collect()),
        None => None,
    };
    let all: Vec<[usize; 3]> = all.unwrap_or_else(|| tables.values().copied().collect());
    let summary = (m.format.pairing()).summary(n, r, &all, &before, &this);
    let mut rows = Vec::new();
    let mut complete = true;
    for (&index, entrants) in tables {
        let of_table: Vec<&&GameResult> = this.iter().filter(|g| g.key.matchup == index).collect();
        let done = of_table.len() as u32;
        complete &= done == games_per_table;
        let wins = |e: usize| {
            (of_table.iter())
                .filter(|g| g.winner.is_some_and(|w| g.teams[w] == e))
                .count() as u32
        };
        let advances = (summary.advances.get(index as usize).copied().flatten())
            .filter(|_| done == games_per_table)
            .map(|e| name(m, e));
        rows.push(TableRow {
            index,
            entrants: entrants.iter().map(|&e| (name(m, e), wins(e))).collect(),
            done,
            games: games_per_table,
            advances,
        });
    }
    let byes: Vec<String> = summary.byes.iter().map(|&e| name(m, e)).collect();
    let round = Round {
        number: r,
        advancing: summary.advances.iter().any(Option::is_some),
        tables: rows,
        byes,
    };
    (round, complete)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tournament::PAGES;

    #[test]
    fn the_live_page_keeps_its_replays_where_the_renderer_links_them() {
        let dir = Path::new("out");
        assert_eq!(games_folder(&dir.join(INDEX)).unwrap(), dir.join(PAGES));
    }
}
