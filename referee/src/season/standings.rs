//! `referee season standings DIR`: each entrant's current version ranked by
//! its latest rating, with its record in finished sets and its lineage (the
//! earlier versions, each with its own rating), as text or JSON. The order is
//! said in the output: rating, then the interval's lower bound, then name.

use std::collections::BTreeMap;

use serde::Serialize;

use super::db::{Db, RatingRow, Version};
use crate::tournament::outcome::GameOutcome;

/// How the standings are ordered, as they say it.
pub const ORDER: &str = "ranked by rating (a Plackett-Luce fit of every game of every finished \
     set, each version rated on its own, 95% interval), then by the interval's lower bound, \
     then by name";

/// The standings of a season.
#[derive(Serialize)]
pub struct Standings {
    pub sets: i64,
    pub games: usize,
    pub order: &'static str,
    /// Each entrant with an admitted version, in rank order.
    pub entrants: Vec<Row>,
    /// How many finished sets each pair of versions played together (lower
    /// version id first): who has met whom.
    pub pairs: Vec<Pair>,
    /// Every set planned so far, in order: what matchmaking chose.
    pub set_list: Vec<SetEntry>,
}

/// A set: its number, its three versions (anchor first) and whether it is
/// finished.
#[derive(Serialize)]
pub struct SetEntry {
    pub set: i64,
    pub versions: [i64; 3],
    pub finished: bool,
}

/// Two versions and the finished sets they played together.
#[derive(Serialize)]
pub struct Pair {
    pub a: i64,
    pub b: i64,
    pub sets: u32,
}

/// One version's line.
#[derive(Clone, Serialize)]
pub struct Row {
    pub entrant: String,
    pub version: i64,
    /// `v1`, `v2`, … of its entrant.
    pub number: i64,
    pub command: String,
    pub rating: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub sets: u32,
    pub games: u32,
    pub wins: u32,
    pub forfeits: u32,
    /// The rating after each finished set since it first played.
    pub history: Vec<RatingRow>,
    /// The entrant's earlier versions (current rows only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<Row>,
}

/// The standings from the database.
pub fn compute(db: &Db) -> anyhow::Result<Standings> {
    let versions = db.versions()?;
    let all_sets = db.sets()?;
    let finished_sets: Vec<_> = all_sets.iter().filter(|s| s.finished).collect();
    let finished: Vec<i64> = finished_sets.iter().map(|s| s.id).collect();
    let mut met: BTreeMap<(i64, i64), u32> = BTreeMap::new();
    for s in &finished_sets {
        let mut v = s.versions;
        v.sort();
        for (a, b) in [(v[0], v[1]), (v[0], v[2]), (v[1], v[2])] {
            *met.entry((a, b)).or_default() += 1;
        }
    }
    let games: Vec<GameOutcome> = (db.games()?.into_iter())
        .filter(|(set, _, _)| finished.binary_search(set).is_ok())
        .map(|(_, _, o)| o)
        .collect();
    let history = db.ratings()?;
    let row = |v: &Version| version_row(v, &games, &history);
    let mut current: BTreeMap<i64, &Version> = BTreeMap::new();
    for v in versions.iter().filter(|v| v.admitted) {
        current.insert(v.entrant, v); // the newest admitted wins
    }
    let mut entrants: Vec<Row> = current
        .values()
        .map(|v| {
            let mut r = row(v);
            r.earlier = (versions.iter())
                .filter(|e| e.entrant == v.entrant && e.id != v.id && e.admitted)
                .map(row)
                .collect();
            r
        })
        .collect();
    entrants.sort_by(|a, b| {
        let key = |r: &Row| {
            (
                r.rating.unwrap_or(f64::NEG_INFINITY),
                r.low.unwrap_or(f64::NEG_INFINITY),
            )
        };
        let (ka, kb) = (key(a), key(b));
        (kb.0.total_cmp(&ka.0))
            .then(kb.1.total_cmp(&ka.1))
            .then(a.entrant.cmp(&b.entrant))
    });
    Ok(Standings {
        sets: finished.len() as i64,
        games: games.len(),
        order: ORDER,
        entrants,
        pairs: (met.into_iter())
            .map(|((a, b), sets)| Pair { a, b, sets })
            .collect(),
        set_list: (all_sets.iter())
            .map(|s| SetEntry {
                set: s.id,
                versions: s.versions,
                finished: s.finished,
            })
            .collect(),
    })
}

fn version_row(v: &Version, games: &[GameOutcome], history: &[RatingRow]) -> Row {
    let id = v.id as usize;
    let mine: Vec<&GameOutcome> = games.iter().filter(|o| o.teams.contains(&id)).collect();
    let team = |o: &GameOutcome| o.teams.iter().position(|&t| t == id);
    let own: Vec<RatingRow> = (history.iter())
        .filter(|r| r.version == v.id)
        .cloned()
        .collect();
    let latest = own.last();
    Row {
        entrant: v.name.clone(),
        version: v.id,
        number: v.number,
        command: v.command.clone(),
        rating: latest.map(|r| r.rating),
        low: latest.map(|r| r.low),
        high: latest.map(|r| r.high),
        sets: (mine.len() as u32) / crate::tournament::schedule::SET,
        games: mine.len() as u32,
        wins: mine.iter().filter(|o| o.winner == team(o)).count() as u32,
        forfeits: (mine.iter())
            .filter(|o| team(o).is_some_and(|t| o.forfeited.contains(&t)))
            .count() as u32,
        history: own,
        earlier: Vec::new(),
    }
}

impl Standings {
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("standings serialize") + "\n"
    }

    /// The console table: a line per entrant, its earlier versions below it.
    pub fn text(&self) -> String {
        let mut out = format!(
            "season standings after {} finished set(s), {} game(s); {}\n",
            self.sets, self.games, self.order
        );
        out += &format!(
            "{:>4}  {:<16} {:>4}  {:>7}  {:<17} {:>5} {:>6} {:>5} {:>8}\n",
            "rank", "entrant", "ver", "rating", "95% interval", "sets", "games", "wins", "forfeits"
        );
        for (k, r) in self.entrants.iter().enumerate() {
            out += &line(&(k + 1).to_string(), r);
            for e in &r.earlier {
                out += &line("", e);
            }
        }
        out
    }
}

fn line(rank: &str, r: &Row) -> String {
    let name = crate::names::printable(&r.entrant);
    let (rating, interval) = match (r.rating, r.low, r.high) {
        (Some(x), Some(l), Some(h)) => (format!("{x:+.0}"), format!("[{l:+.0}, {h:+.0}]")),
        _ => ("-".to_owned(), "no finished set".to_owned()),
    };
    format!(
        "{rank:>4}  {name:<16} {:>4}  {rating:>7}  {interval:<17} {:>5} {:>6} {:>5} {:>8}\n",
        format!("v{}", r.number),
        r.sets,
        r.games,
        r.wins,
        r.forfeits
    )
}
