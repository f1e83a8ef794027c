//! An entrant's page as data (`/api/entrants/NAME` serves it as JSON,
//! `pages.rs` draws it), and a game's replay page.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use serde::Serialize;

use super::Failure;
use crate::load::Transcript;
use crate::season::db::{Db, RatingRow, Version};
use crate::show::html::{render_in, Setting};
use crate::show::Replay;
use crate::tournament::outcome::GameOutcome;

/// Recent games an entrant's page lists.
pub const RECENT: usize = 30;

#[derive(Serialize)]
pub struct Entrant {
    pub name: String,
    /// Oldest first; each names the version it replaced (its lineage).
    pub versions: Vec<VersionInfo>,
    /// Against each other entrant: the games played together and how often
    /// this one finished ahead of or behind the other.
    pub cross: Vec<Cross>,
    /// Newest first.
    pub recent: Vec<GameLine>,
    /// Every fault its bots made, by kind, in words.
    pub faults: Vec<String>,
}

#[derive(Serialize)]
pub struct VersionInfo {
    pub id: i64,
    pub number: i64,
    /// The number of the version it replaced.
    pub replaced: Option<i64>,
    pub command: String,
    /// A remote seat (`remote:NAME`), played through its owner's `referee
    /// connect`.
    pub remote: bool,
    pub submitted: i64,
    pub admitted: bool,
    pub checked: String,
    /// The rating after each finished set since it first played.
    pub history: Vec<RatingRow>,
}

#[derive(Serialize)]
pub struct Cross {
    pub opponent: String,
    pub games: u32,
    pub ahead: u32,
    pub behind: u32,
}

#[derive(Serialize)]
pub struct GameLine {
    pub set: i64,
    pub game: u32,
    /// The entrant's version number in it.
    pub version: i64,
    /// 1, 2 or 3.
    pub place: usize,
    pub score: i32,
    /// The two others, as `NAME vN`.
    pub opponents: Vec<String>,
    pub forfeited: bool,
    pub faults: u32,
    /// Its replay page.
    pub href: String,
}

/// The entrant `name`'s page; 404 if there is none.
pub fn of(db: &Db, name: &str) -> Result<Entrant, Failure> {
    let versions = db.versions()?;
    let mine: Vec<&Version> = versions.iter().filter(|v| v.name == name).collect();
    if mine.is_empty() {
        return Err(Failure::not_found(format!(
            "the season has no entrant named {:?}",
            crate::names::printable(name)
        )));
    }
    let ratings = db.ratings()?;
    let by_id: BTreeMap<i64, &Version> = versions.iter().map(|v| (v.id, v)).collect();
    let infos = mine
        .iter()
        .map(|v| version_info(v, &by_id, &ratings))
        .collect();
    let games = db.games()?;
    let played: Vec<(&GameOutcome, usize)> = (games.iter())
        .filter_map(|(_, _, o)| {
            let t = (o.teams.iter())
                .position(|&t| by_id.get(&(t as i64)).is_some_and(|v| v.name == name))?;
            Some((o, t))
        })
        .collect();
    Ok(Entrant {
        name: name.to_owned(),
        versions: infos,
        cross: cross(&played, &by_id),
        recent: (played.iter().rev().take(RECENT))
            .map(|&(o, t)| game_line(o, t, &by_id))
            .collect(),
        faults: fault_words(&played),
    })
}

fn version_info(
    v: &Version,
    by_id: &BTreeMap<i64, &Version>,
    ratings: &[RatingRow],
) -> VersionInfo {
    VersionInfo {
        id: v.id,
        number: v.number,
        replaced: v.parent.and_then(|p| by_id.get(&p)).map(|p| p.number),
        command: v.command.clone(),
        remote: v.command.starts_with(crate::remote::PREFIX),
        submitted: v.submitted,
        admitted: v.admitted,
        checked: v.checked.clone(),
        history: (ratings.iter())
            .filter(|r| r.version == v.id)
            .cloned()
            .collect(),
    }
}

/// `NAME vN` of version `id`.
fn label(by_id: &BTreeMap<i64, &Version>, id: usize) -> String {
    by_id.get(&(id as i64)).map_or_else(
        || format!("version {id}"),
        |v| format!("{} v{}", v.name, v.number),
    )
}

/// Where team position `t` finished in `o` (1 to 3).
fn place(o: &GameOutcome, t: usize) -> usize {
    o.ranking.iter().position(|&r| r == t).map_or(3, |p| p + 1)
}

fn cross(played: &[(&GameOutcome, usize)], by_id: &BTreeMap<i64, &Version>) -> Vec<Cross> {
    let mut table: BTreeMap<String, Cross> = BTreeMap::new();
    for &(o, t) in played {
        for other in (0..3).filter(|&k| k != t) {
            let Some(v) = by_id.get(&(o.teams[other] as i64)) else {
                continue;
            };
            let c = table.entry(v.name.clone()).or_insert_with(|| Cross {
                opponent: v.name.clone(),
                games: 0,
                ahead: 0,
                behind: 0,
            });
            c.games += 1;
            match place(o, t) < place(o, other) {
                true => c.ahead += 1,
                false => c.behind += 1,
            }
        }
    }
    table.into_values().collect()
}

fn game_line(o: &GameOutcome, t: usize, by_id: &BTreeMap<i64, &Version>) -> GameLine {
    let set = i64::from(o.matchup);
    GameLine {
        set,
        game: o.game,
        version: by_id.get(&(o.teams[t] as i64)).map_or(0, |v| v.number),
        place: place(o, t),
        score: o.scores[t],
        opponents: (0..3)
            .filter(|&k| k != t)
            .map(|k| label(by_id, o.teams[k]))
            .collect(),
        forfeited: o.forfeited.contains(&t),
        faults: o.faults[t].values().sum(),
        href: format!("/games/{set}/{}", o.game),
    }
}

/// What a fault kind means, for its owner.
fn meaning(kind: &str) -> &'static str {
    match kind {
        "timeout" => "gave no reply by the deadline",
        "crash" => "exited while it was still needed",
        "malformed" => "sent a line that was not a valid message",
        "illegal" => "made a move the rules forbid",
        "oversized" => "sent a line over the length cap",
        "stale" => "replied to a request that was not pending",
        "closed" => "closed its output or stopped reading its input",
        "start" => "did not start or did not complete the hello handshake",
        _ => "a fault this site does not describe",
    }
}

fn fault_words(played: &[(&GameOutcome, usize)]) -> Vec<String> {
    let mut kinds: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for &(o, t) in played {
        for (kind, &n) in &o.faults[t] {
            let k = kinds.entry(kind.as_str()).or_default();
            k.0 += n;
            k.1 += 1;
        }
    }
    let forfeits = played
        .iter()
        .filter(|(o, t)| o.forfeited.contains(t))
        .count();
    let mut words: Vec<String> = (kinds.into_iter())
        .map(|(kind, (n, games))| {
            format!(
                "{kind}: {n} time(s) in {games} game(s): the bot {}",
                meaning(kind)
            )
        })
        .collect();
    if forfeits > 0 {
        words.push(format!("forfeited {forfeits} of {} game(s)", played.len()));
    }
    words
}

/// The replay page of game `game` of set `set`, from the transcript the
/// database names for it (a path inside the season's folder, checked).
pub fn replay(db: &Db, dir: &Path, set: i64, game: u32) -> Result<String, Failure> {
    let Some(o) = db.game(set, game)? else {
        return Err(Failure::not_found(format!(
            "set {set} has no recorded game {game}"
        )));
    };
    let rel = Path::new(&o.transcript);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(anyhow::anyhow!(
            "set {set} game {game}'s transcript {rel:?} is outside the season"
        )
        .into());
    }
    let versions = db.versions()?;
    let by_id: BTreeMap<i64, &Version> = versions.iter().map(|v| (v.id, v)).collect();
    let names: [String; 3] = std::array::from_fn(|t| label(&by_id, o.teams[t]));
    let setting = Setting {
        title: Some(format!("set {set}, game {game}: {}", names.join(" / "))),
        players: Some(std::array::from_fn(|s| names[s % 3].clone())),
        back: Some(("/".to_owned(), "← the season's standings".to_owned())),
        shared_assets: false,
    };
    let t = Transcript::read(&dir.join(rel)).map_err(anyhow::Error::from)?;
    Ok(render_in(&Replay::new(&t)?, &setting)?)
}
