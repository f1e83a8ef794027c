//! Standings: a pure function of the journal's outcomes in schedule order (never
//! of the order games finished in), written as `standings.json`, `standings.csv`
//! and printed as an aligned table (`standings_render.rs`).
//!
//! Per entrant: games, wins with a 95% Wilson interval on the win rate, the
//! duplicate score (its final score minus the mean of the other two teams' on the
//! same deal, averaged: duplicate sets make the luck of the cards cancel), points
//! per hand, bids made/set, faults by kind, forfeits, and the rating
//! (`rating.rs`: one Plackett–Luce model fitted to all games at once) with its
//! 95% interval and, for a field of up to [`SUPERIORITY_LIMIT`], the likelihood
//! of superiority of each entrant over each other. For a gauntlet, each
//! challenger's score difference to each opponent with a 95% interval.
//!
//! **The order** ([`Standings::ranked_by`]): what the format ranks by first (a
//! knockout: the round reached), then the rating, then the duplicate score,
//! then the name; an entrant that never started last whatever the rest.
//!
//! **Forfeits count against the forfeiter** in every figure that ranks: it is
//! never credited with a win, the rating puts it last in that game, and its
//! duplicate score for that game is the worst any team had on that deal (the
//! lowest duplicate score over the games of the same duplicate set, its own
//! included), whatever the fallback scored in its seats. Points for and
//! against and points per hand stay as played.

use std::collections::BTreeMap;

use serde::Serialize;

use super::format::Format;
use super::manifest::Manifest;
use super::outcome::GameOutcome;
use super::rating::{self, Ranked, Ratings};
use super::schedule::{GameKey, GameResult, SET};
use crate::fault::FaultKind;

pub const FORMAT: &str = "schmier-standings/2";

/// The largest field whose standings carry the likelihood-of-superiority
/// matrix (a square of the field; the console prints a smaller one,
/// `standings_render.rs`).
pub const SUPERIORITY_LIMIT: usize = 32;

/// An entrant plays as a team: two processes, in opposite seats.
const SEATS_PER_TEAM: u32 = 2;

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Standings {
    pub format: &'static str,
    pub games: u32,
    /// What the order of `entrants` is, in words: e.g. `rating then duplicate
    /// score then name; an entrant that never started last`.
    pub ranked_by: String,
    /// Best first, by `ranked_by`: what the format ranks by first (a knockout:
    /// the round reached, the champion on top), then rating, duplicate score
    /// and name; an entrant that never started last.
    pub entrants: Vec<Row>,
    /// Row `i`, column `j`: the likelihood that entrant `i` of `entrants` is
    /// stronger than entrant `j` (the rating's model; `null` on the diagonal).
    /// Only for a field of up to [`SUPERIORITY_LIMIT`] entrants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub likelihood_of_superiority: Option<Vec<Vec<Option<f64>>>>,
    /// Gauntlet only: each challenger against each opponent it met.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub head_to_head: Vec<HeadToHead>,
    /// Swiss only: how many times a pair of entrants shared a table again
    /// after their first (each pair counted at every table after its first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_meetings: Option<u32>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub rank: u32,
    pub name: String,
    pub games: u32,
    pub wins: u32,
    pub win_rate: f64,
    /// 95% Wilson score interval of the win rate.
    pub win_rate_ci: [f64; 2],
    /// Mean of (own final score − mean of the other two teams' final scores);
    /// in a game it forfeited, the worst such figure on that deal instead.
    pub duplicate_score: f64,
    /// `400 · log10 γ` of the Plackett–Luce fit, the field's mean 0.
    pub rating: f64,
    /// Its 95% interval, and its standard error.
    pub rating_ci: [f64; 2],
    pub rating_error: f64,
    /// Points won per hand played.
    pub points_per_hand: f64,
    /// Mean final score, and mean final score of the opposing teams.
    pub points_for: f64,
    pub points_against: f64,
    pub bids_made: u32,
    pub bids_set: u32,
    pub faults: BTreeMap<String, u32>,
    pub forfeits: u32,
    /// Its bot never started (every seat of every game it played has a `start`
    /// fault): ranked below every entrant that did, whatever the fallback
    /// scored in its seats.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub never_started: bool,
    /// It played from another machine (`remote:NAME`, docs/remote.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub remote: bool,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeadToHead {
    pub challenger: String,
    pub opponent: String,
    pub games: u32,
    /// Mean of (challenger's final score − opponent's) over the games they met.
    pub score_difference: f64,
    /// 95% interval of that mean (normal approximation).
    pub ci: [f64; 2],
}

#[derive(Default)]
struct Tally {
    games: u32,
    wins: u32,
    duplicate: f64,
    points_for: f64,
    points_against: f64,
    won: i64,
    hands: u64,
    made: u32,
    set: u32,
    faults: BTreeMap<String, u32>,
    forfeits: u32,
}

/// Rounded so that the files stay readable; the arithmetic order is fixed, so the
/// digits are the same on every run anyway.
fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The 95% Wilson score interval for `wins` of `n`.
pub fn wilson(wins: u32, n: u32) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let z = 1.959_963_984_540_054_f64;
    let n = f64::from(n);
    let p = f64::from(wins) / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

pub fn compute(manifest: &Manifest, outcomes: &BTreeMap<GameKey, GameOutcome>) -> Standings {
    let names: Vec<String> = manifest.entrants.iter().map(|e| e.name.clone()).collect();
    let mut standings = standings(&names, &manifest.format, outcomes);
    for row in &mut standings.entrants {
        row.remote = (manifest.entrants.iter())
            .any(|e| e.name == row.name && e.command.starts_with(crate::remote::PREFIX));
    }
    standings
}

/// The standings of entrants `names` (by entrant index) after `outcomes`: the
/// common figures per entrant, ranked, with what the format adds.
pub fn standings(
    names: &[String],
    format: &Format,
    outcomes: &BTreeMap<GameKey, GameOutcome>,
) -> Standings {
    let n = names.len();
    let pairing = format.pairing();
    let results: Vec<GameResult> = outcomes.values().map(GameOutcome::result).collect();
    let ratings = rating::fit(
        n,
        (outcomes.values()).map(|o| Ranked::new(o.teams, o.ranking, &o.forfeited)),
    );
    let rows = (tally(n, outcomes).into_iter().zip(names).enumerate())
        .map(|(i, (t, name))| t.row(name, &ratings, i))
        .collect();
    let (entrants, order) = ranked(rows, pairing.rank_first(n, &results));
    Standings {
        format: FORMAT,
        games: outcomes.len() as u32,
        ranked_by: ranked_by(pairing.ranks_first_by()),
        entrants,
        likelihood_of_superiority: superiority(&ratings, &order),
        head_to_head: (pairing.head_to_head(n).into_iter())
            .filter_map(|(c, o)| head_to_head(names, outcomes, c, o))
            .collect(),
        repeat_meetings: pairing.repeat_meetings(n, &results),
    }
}

/// The order in words, `first` being what the format ranks by first.
fn ranked_by(first: Option<&str>) -> String {
    let order = "rating then duplicate score then name; an entrant that never started last";
    match first {
        Some(first) => format!("{first} then {order}"),
        None => order.to_owned(),
    }
}

/// The likelihood-of-superiority matrix in the order `order` (entrant indices,
/// best first), for a field up to [`SUPERIORITY_LIMIT`].
fn superiority(ratings: &Ratings, order: &[usize]) -> Option<Vec<Vec<Option<f64>>>> {
    if order.len() > SUPERIORITY_LIMIT {
        return None;
    }
    (order.iter())
        .map(|&i| {
            (order.iter())
                .map(|&j| match ratings.superiority(i, j) {
                    Some(p) => Some(Some(round(p))),
                    None if i == j => Some(None),
                    None => None,
                })
                .collect()
        })
        .collect()
}

/// A duplicate set: the games dealt the same cards.
type Deal = (u32, u32, u32);

fn deal(o: &GameOutcome) -> Deal {
    (o.round, o.matchup, (o.game.max(1) - 1) / SET)
}

/// Team position `t`'s duplicate score in game `o`, as played.
fn duplicate(o: &GameOutcome, t: usize) -> f64 {
    let others = f64::from(o.scores[(t + 1) % 3] + o.scores[(t + 2) % 3]) / 2.0;
    f64::from(o.scores[t]) - others
}

/// The worst duplicate score any team had in game `o`.
fn lowest(o: &GameOutcome) -> f64 {
    (0..3)
        .map(|t| duplicate(o, t))
        .fold(f64::INFINITY, f64::min)
}

/// The worst duplicate score any team had in `games` (the games of one deal):
/// what a forfeiter scores for the game it forfeited.
pub(crate) fn worst<'a>(games: impl IntoIterator<Item = &'a GameOutcome>) -> f64 {
    games.into_iter().map(lowest).fold(f64::INFINITY, f64::min)
}

/// The duplicate score team position `t` is credited with in game `o`: as
/// played, or `worst` (the worst on the game's deal) if it forfeited. Every
/// figure that ranks (the standings' `dup`, an SPRT's difference) counts this.
pub(crate) fn credited(o: &GameOutcome, t: usize, worst: f64) -> f64 {
    if o.forfeited.contains(&t) {
        worst
    } else {
        duplicate(o, t)
    }
}

/// The worst duplicate score on each deal ([`worst`]).
fn worst_on_deal(outcomes: &BTreeMap<GameKey, GameOutcome>) -> BTreeMap<Deal, f64> {
    let mut worst: BTreeMap<Deal, f64> = BTreeMap::new();
    for o in outcomes.values() {
        let w = worst.entry(deal(o)).or_insert(f64::INFINITY);
        *w = w.min(lowest(o));
    }
    worst
}

/// Each entrant's figures over `outcomes`.
fn tally(entrants: usize, outcomes: &BTreeMap<GameKey, GameOutcome>) -> Vec<Tally> {
    let worst = worst_on_deal(outcomes);
    let mut tally: Vec<Tally> = (0..entrants).map(|_| Tally::default()).collect();
    for o in outcomes.values() {
        let worst = worst[&deal(o)];
        for t in 0..3 {
            if let Some(e) = tally.get_mut(o.teams[t]) {
                e.add(o, t, worst);
            }
        }
    }
    tally
}

impl Tally {
    /// Counts game `o` for the entrant at team position `t`; `worst` is the
    /// worst duplicate score on the game's deal.
    fn add(&mut self, o: &GameOutcome, t: usize, worst: f64) {
        let others = f64::from(o.scores[(t + 1) % 3] + o.scores[(t + 2) % 3]) / 2.0;
        let forfeited = o.forfeited.contains(&t);
        self.games += 1;
        self.wins += u32::from(o.winner == Some(t));
        self.duplicate += credited(o, t, worst);
        self.points_for += f64::from(o.scores[t]);
        self.points_against += others;
        self.won += i64::from(o.won[t]);
        self.hands += u64::from(o.hands);
        self.made += o.made[t];
        self.set += o.set[t];
        for (kind, n) in &o.faults[t] {
            *self.faults.entry(kind.clone()).or_default() += n;
        }
        self.forfeits += u32::from(forfeited);
    }

    /// The row of entrant `i`, unranked.
    fn row(self, name: &str, ratings: &Ratings, i: usize) -> Row {
        let per_game = |x: f64| {
            if self.games == 0 {
                0.0
            } else {
                x / f64::from(self.games)
            }
        };
        Row {
            rank: 0,
            name: name.to_owned(),
            games: self.games,
            wins: self.wins,
            win_rate: round(per_game(f64::from(self.wins))),
            win_rate_ci: wilson(self.wins, self.games).map(round),
            duplicate_score: round(per_game(self.duplicate)),
            rating: round(ratings.rating(i)),
            rating_ci: ratings.interval(i).map(round),
            rating_error: round(ratings.error(i)),
            points_per_hand: round(if self.hands == 0 {
                0.0
            } else {
                self.won as f64 / self.hands as f64
            }),
            points_for: round(per_game(self.points_for)),
            points_against: round(per_game(self.points_against)),
            bids_made: self.made,
            bids_set: self.set,
            never_started: self.games > 0
                && self
                    .faults
                    .get(FaultKind::Start.name())
                    .copied()
                    .unwrap_or(0)
                    >= SEATS_PER_TEAM * self.games,
            faults: self.faults,
            forfeits: self.forfeits,
            remote: false,
        }
    }
}

/// The rows (by entrant index) best first, ranked, and the entrant index of
/// each: by what the format ranks by first (`first`, higher first, per
/// entrant), then rating, duplicate score and name; an entrant that never
/// started last whatever the order above, since the fallback's play in its
/// seats is not the entrant's. The figures compared are the rounded ones the
/// files show, so two entrants the files show as equal are ordered by name.
fn ranked(rows: Vec<Row>, first: Vec<u32>) -> (Vec<Row>, Vec<usize>) {
    let mut rows: Vec<(u32, usize, Row)> = (first.into_iter().zip(rows).enumerate())
        .map(|(i, (f, r))| (f, i, r))
        .collect();
    rows.sort_by(|(fa, _, a), (fb, _, b)| {
        (a.never_started.cmp(&b.never_started))
            .then(fb.cmp(fa))
            .then(b.rating.total_cmp(&a.rating))
            .then(b.duplicate_score.total_cmp(&a.duplicate_score))
            .then(a.name.cmp(&b.name))
    });
    let order = rows.iter().map(|(_, i, _)| *i).collect();
    let rows = (rows.into_iter().enumerate())
        .map(|(k, (_, _, mut r))| {
            r.rank = k as u32 + 1;
            r
        })
        .collect();
    (rows, order)
}

fn head_to_head(
    names: &[String],
    outcomes: &BTreeMap<GameKey, GameOutcome>,
    c: usize,
    o: usize,
) -> Option<HeadToHead> {
    let diffs: Vec<f64> = outcomes
        .values()
        .filter_map(|g| {
            let pc = g.teams.iter().position(|&e| e == c)?;
            let po = g.teams.iter().position(|&e| e == o)?;
            Some(f64::from(g.scores[pc] - g.scores[po]))
        })
        .collect();
    if diffs.is_empty() {
        return None;
    }
    let n = diffs.len() as f64;
    let mean = diffs.iter().sum::<f64>() / n;
    let half = if diffs.len() < 2 {
        f64::INFINITY
    } else {
        let var = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
        1.959_963_984_540_054 * (var / n).sqrt()
    };
    Some(HeadToHead {
        challenger: names[c].clone(),
        opponent: names[o].clone(),
        games: diffs.len() as u32,
        score_difference: round(mean),
        ci: [round(mean - half), round(mean + half)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(
        game: u32,
        teams: [usize; 3],
        scores: [i32; 3],
        winner: Option<usize>,
        ranking: [usize; 3],
        won: [i32; 3],
        hands: u32,
    ) -> GameOutcome {
        GameOutcome {
            round: 0,
            matchup: 0,
            game,
            seed: 1,
            teams,
            transcript: String::new(),
            scores,
            deals: hands,
            ranking,
            winner,
            forfeited: vec![],
            made: [0; 3],
            set: [0; 3],
            won,
            hands,
            faults: Default::default(),
        }
    }

    /// Two games worked by hand.
    #[test]
    fn figures_follow_from_the_games() {
        let mut g1 = game(
            1,
            [0, 1, 2],
            [21, 10, -5],
            Some(0),
            [0, 1, 2],
            [25, 12, 3],
            5,
        );
        g1.made = [2, 1, 0];
        g1.set = [0, 1, 1];
        g1.faults[2].insert("timeout".into(), 1);
        // Entrant 1 at position 0 wins; entrant 2 (position 1) forfeited.
        let mut g2 = game(2, [1, 2, 0], [22, 0, 4], Some(0), [0, 2, 1], [20, 5, 9], 4);
        g2.made = [1, 0, 1];
        g2.set = [0, 1, 0];
        g2.forfeited = vec![1];
        let outcomes: BTreeMap<GameKey, GameOutcome> =
            [g1, g2].into_iter().map(|g| (g.key(), g)).collect();
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let s = standings(&names, &Format::RoundRobin, &outcomes);
        let row = |n: &str| s.entrants.iter().find(|r| r.name == n).unwrap();
        let (a, b, c) = (row("a"), row("b"), row("c"));
        // Duplicate score: own score minus the others' mean, averaged.
        // a: (21 - 2.5) and (4 - 11); b: (10 - 8) and (22 - 2); c: (-5 - 15.5) and (0 - 13).
        assert_eq!(a.duplicate_score, 5.75);
        assert_eq!(b.duplicate_score, 11.0);
        // c forfeited game 2, of the same duplicate set (the same deal) as game
        // 1: it scores the worst duplicate score on that deal, its own -20.5 of
        // game 1, not the fallback's -13 (as played it would be -16.75).
        assert_eq!(c.duplicate_score, -20.5);
        // Points per hand: a won 25 + 9 points in 5 + 4 hands.
        assert_eq!(a.points_per_hand, 3.7778);
        assert_eq!((a.points_for, a.points_against), (12.5, 6.75));
        assert_eq!((a.bids_made, a.bids_set), (3, 0));
        assert_eq!((c.bids_made, c.bids_set), (0, 2));
        assert_eq!((a.wins, b.wins, c.wins), (1, 1, 0));
        assert_eq!(c.faults.get("timeout"), Some(&1));
        assert_eq!((a.forfeits, b.forfeits, c.forfeits), (0, 0, 1));
        // a and b each finished first once and second once against the same
        // field: the same rating; b's duplicate score puts it first.
        assert_eq!(a.rating, b.rating);
        let order: Vec<(&str, u32)> = s
            .entrants
            .iter()
            .map(|r| (r.name.as_str(), r.rank))
            .collect();
        assert_eq!(order, [("b", 1), ("a", 2), ("c", 3)]);
        // c came last twice: the lowest rating; the mean is 0, and each
        // interval is the rating ± 1.96 standard errors.
        assert!(c.rating < a.rating && c.rating < b.rating);
        assert!((a.rating + b.rating + c.rating).abs() < 1e-3);
        for r in &s.entrants {
            let half = 1.959_963_984_540_054 * r.rating_error;
            assert!((r.rating_ci[0] - (r.rating - half)).abs() < 1e-3, "{r:?}");
            assert!((r.rating_ci[1] - (r.rating + half)).abs() < 1e-3, "{r:?}");
        }
        assert_eq!(
            s.ranked_by,
            "rating then duplicate score then name; an entrant that never started last"
        );
        // Superiority: rows and columns in rank order, a probability pair.
        let m = s.likelihood_of_superiority.as_ref().unwrap();
        assert_eq!(m[0][0], None);
        let (bc, cb) = (m[0][2].unwrap(), m[2][0].unwrap());
        assert!(bc > 0.5 && (bc + cb - 1.0).abs() < 1e-3, "{m:?}");
    }

    /// A knockout of four, the best seed (0) with a bye: 3 wins the round-1
    /// table over 1 and 2 and then the final against 0, with 1 (the best entrant
    /// out) as the sparring third team. 1 wins more of its games than the
    /// finalist 0, and is still listed below it.
    #[test]
    fn a_knockout_ranks_by_the_round_reached_then_by_results() {
        // Team position `p` of `teams` wins game `g` of round `r` (one table).
        let win = |r: u32, g: u32, teams: [usize; 3], p: usize| {
            let mut o = game(
                g,
                teams,
                [0; 3],
                Some(p),
                [p, (p + 1) % 3, (p + 2) % 3],
                [0; 3],
                1,
            );
            o.round = r;
            o.scores[p] = 21;
            o
        };
        let mut games = Vec::new();
        // Round 1: 3 and 1 win three games each; 3 advances on duplicate
        // points (it wins by 30, 1 by 21).
        for g in 1..=6 {
            let p = if g <= 3 { 2 } else { 0 };
            let mut o = win(1, g, [1, 2, 3], p);
            if p == 2 {
                o.scores[2] = 30;
            }
            games.push(o);
        }
        // The final: 3 wins three, the sparring 1 two, 0 one.
        for (g, p) in (1..=6).zip([1, 1, 1, 2, 2, 0]) {
            games.push(win(2, g, [0, 3, 1], p));
        }
        let outcomes: BTreeMap<GameKey, GameOutcome> =
            games.into_iter().map(|g| (g.key(), g)).collect();
        let names: Vec<String> = ["zero", "one", "two", "three"].map(String::from).to_vec();
        let s = standings(&names, &Format::Knockout, &outcomes);
        let order: Vec<(&str, u32)> = s
            .entrants
            .iter()
            .map(|r| (r.name.as_str(), r.wins))
            .collect();
        assert_eq!(order, [("three", 6), ("zero", 1), ("one", 5), ("two", 0)]);
        // By win rate alone 1 (5 of 12) would be above 0 (1 of 6).
        let one = &s.entrants[2];
        assert!(one.win_rate > s.entrants[1].win_rate, "{one:?}");
        assert_eq!(
            s.repeat_meetings, None,
            "a knockout's rematches are by design"
        );
        // The same games read as a round robin: by rating, which puts one
        // above three: one finished above two in all six of their games,
        // three in three of six, and one above three in five of twelve.
        let rr = standings(&names, &Format::RoundRobin, &outcomes);
        let names_rr: Vec<&str> = rr.entrants.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names_rr, ["one", "three", "zero", "two"]);
        assert!(s.ranked_by.starts_with("round reached then rating"));
    }

    #[test]
    fn wilson_interval_matches_published_values() {
        // 8 of 10: 0.4902–0.9433 (Wilson 1927; e.g. Newcombe 1998, method 3).
        let [lo, hi] = wilson(8, 10);
        assert!(
            (lo - 0.4902).abs() < 1e-4 && (hi - 0.9433).abs() < 1e-4,
            "{lo} {hi}"
        );
        // 0 of 10: 0–0.2775.
        let [lo, hi] = wilson(0, 10);
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 1e-4, "{lo} {hi}");
    }
}
