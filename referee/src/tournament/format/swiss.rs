//! The Swiss format: a fixed number of rounds, each seating every entrant (but
//! the byes) at tables of three chosen from the results so far. Pure.
//!
//! A round's tables are chosen for the whole round at once, not table by table:
//! first to seat as few pairs who have met before as possible (a *repeat
//! meeting*: a pair that shares a table again, counted each time), then to keep
//! entrants of similar standing together (the sum over tables of the distance in
//! the standings between a table's best and worst entrant). Up to
//! `EXACT` entrants the choice is exact (a branch and bound over every way to
//! split them into tables); beyond, a greedy seating improved by swapping
//! entrants between tables while that helps.
//!
//! The split itself is `swiss_seating.rs`.
//!
//! Standing: win rate over the games played (none played: 0), then mean
//! duplicate points, then entrant number (the pairing's own order; the final
//! standings rank by the rating, `standings.rs`), so a bye
//! (a round sat out) scores nothing and counts as no game: it neither helps nor
//! hurts. When the field does not divide by three, one or two entrants sit out:
//! those who have sat out least so far, the lowest-ranked of them first, so
//! nobody sits out twice while another has not sat out.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use anyhow::bail;

use super::swiss_seating::{best_split, repeat_meetings, Met};
use super::{Format, Pairing, Params};
use crate::tournament::bracket::RoundSummary;
use crate::tournament::schedule::GameResult;

/// Rounds of a Swiss when --rounds is not given.
pub const ROUNDS: u32 = 3;

pub struct Swiss {
    pub rounds: u32,
}

impl Pairing for Swiss {
    fn title(&self, _name: &dyn Fn(usize) -> String) -> String {
        format!("Swiss, {} rounds", self.rounds)
    }

    fn by_rounds(&self) -> bool {
        true
    }

    fn tables(&self, entrants: usize, r: u32, before: &[GameResult]) -> Vec<[usize; 3]> {
        if r > self.rounds {
            return Vec::new();
        }
        tables(entrants, before)
    }

    /// Who sat out, and how many pairs met again.
    fn summary(
        &self,
        entrants: usize,
        _r: u32,
        tables: &[[usize; 3]],
        before: &[GameResult],
        _this: &[&GameResult],
    ) -> RoundSummary {
        let met = Met::new(entrants, before);
        let again = (tables.iter())
            .map(|&[a, b, c]| {
                [(a, b), (a, c), (b, c)]
                    .iter()
                    .filter(|&&(x, y)| met.times(x, y) > 0)
                    .count() as u32
            })
            .sum();
        RoundSummary {
            advances: vec![None; tables.len()],
            byes: (0..entrants)
                .filter(|e| tables.iter().all(|t| !t.contains(e)))
                .collect(),
            met_before: Some(again),
        }
    }

    fn repeat_meetings(&self, entrants: usize, results: &[GameResult]) -> Option<u32> {
        let mut tables: BTreeMap<(u32, u32), [usize; 3]> = BTreeMap::new();
        for g in results {
            tables.insert((g.key.round, g.key.matchup), g.teams);
        }
        Some(repeat_meetings(entrants, tables.into_values()))
    }

    /// Everyone plays but `entrants % 3`, the byes rotate, and the Swiss of
    /// exactly `r` rounds is this one up to round `r`, then over.
    #[cfg(test)]
    fn check_round(&self, p: &super::Played) {
        let (label, n, r) = (p.label, p.entrants, p.r);
        assert_eq!(p.seated.len(), n - n % 3, "{label} round {r}: byes");
        let played: std::collections::BTreeSet<(u32, usize)> = (p.before.iter())
            .flat_map(|g| g.teams.map(|e| (g.key.round, e)))
            .collect();
        let byes: Vec<usize> = (0..n)
            .map(|e| {
                let earlier = (1..r).filter(|&q| !played.contains(&(q, e))).count();
                earlier + usize::from(!p.seated.contains(&e))
            })
            .collect();
        let (lo, hi) = (byes.iter().min(), byes.iter().max());
        assert!(
            hi.unwrap() - lo.unwrap() <= 1,
            "{label} round {r}: byes {byes:?}"
        );
        // Whatever the results: the shorter Swiss stops before looking at them.
        let short = Format::Swiss { rounds: r };
        let (sets, seed) = (p.sets, p.seed);
        if p.thorough {
            assert_eq!(
                super::round(n, &short, sets, seed, r, p.before).as_deref(),
                Some(p.ms)
            );
        }
        assert_eq!(super::round(n, &short, sets, seed, r + 1, p.before), None);
    }

    #[cfg(test)]
    fn check_end(&self, p: &super::Played) {
        assert_eq!(p.r - 1, self.rounds, "{}: every round", p.label);
    }
}

/// `--format swiss`: --rounds, at least one.
pub(super) fn build(p: &Params) -> anyhow::Result<Format> {
    let rounds = p.rounds.unwrap_or(ROUNDS);
    if rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    Ok(Format::Swiss { rounds })
}

/// The Swiss the property tests play: eight rounds, whose first `r` rounds are
/// the whole of a Swiss of `r` rounds (see `check_round`).
#[cfg(test)]
pub(super) fn sample() -> Format {
    Format::Swiss { rounds: 8 }
}

/// The tables of the next round after `before` (the results of every earlier
/// round), best standing first, each table best first.
pub fn tables(entrants: usize, before: &[GameResult]) -> Vec<[usize; 3]> {
    let order = standing(entrants, before);
    let byes = byes(entrants, before, &order);
    let seated: Vec<usize> = order.into_iter().filter(|e| !byes.contains(e)).collect();
    let met = Met::new(entrants, before);
    let split = best_split(&seated, &met);
    split
        .into_iter()
        .map(|t| t.map(|position| seated[position]))
        .collect()
}

/// Entrants best first: win rate, then mean duplicate points (compared as exact
/// fractions), then entrant number.
pub fn standing(entrants: usize, before: &[GameResult]) -> Vec<usize> {
    // (games, wins, duplicate points doubled).
    let mut t = vec![(0i64, 0i64, 0i64); entrants];
    for g in before {
        for p in 0..3 {
            let Some(e) = t.get_mut(g.teams[p]) else {
                continue;
            };
            e.0 += 1;
            e.1 += i64::from(g.winner == Some(p));
            e.2 += 2 * i64::from(g.scores[p])
                - i64::from(g.scores[(p + 1) % 3])
                - i64::from(g.scores[(p + 2) % 3]);
        }
    }
    // x / gx against y / gy, with 0 / 0 as 0.
    let rate = |x: i64, gx: i64, y: i64, gy: i64| (x * gy.max(1)).cmp(&(y * gx.max(1)));
    let mut order: Vec<usize> = (0..entrants).collect();
    order.sort_by(|&a, &b| {
        let (ga, wa, da) = t[a];
        let (gb, wb, db) = t[b];
        rate(wb, gb, wa, ga)
            .then(rate(db, gb, da, ga))
            .then(a.cmp(&b))
    });
    order
}

/// Who sits out: `entrants % 3` of those who have sat out least, lowest-ranked
/// first. A round sat out is one in which the entrant has no game.
fn byes(entrants: usize, before: &[GameResult], order: &[usize]) -> Vec<usize> {
    let mut rounds: BTreeMap<u32, Vec<bool>> = BTreeMap::new();
    for g in before {
        let played = rounds
            .entry(g.key.round)
            .or_insert_with(|| vec![false; entrants]);
        for &e in g.teams.iter().filter(|&&e| e < entrants) {
            played[e] = true;
        }
    }
    let sat_out = |e: usize| rounds.values().filter(|p| !p[e]).count();
    let mut candidates: Vec<(usize, usize)> = order.iter().copied().enumerate().collect();
    candidates.sort_by_key(|&(rank, e)| (sat_out(e), Reverse(rank)));
    candidates
        .into_iter()
        .take(entrants % 3)
        .map(|(_, e)| e)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::swiss_seating::*;
    use super::super::{round, Format};
    use super::*;
    use crate::tournament::schedule::Matchup;
    use std::cmp::Ordering;

    /// Results made up from `seed`: the winner at each game is one of the three
    /// by the seed's bits, with scores to match.
    fn play(ms: &[Matchup], seed: u64) -> Vec<GameResult> {
        ms.iter()
            .flat_map(|m| {
                m.keys().map(move |key| {
                    let x = schmier_protocol::shuffle::derive_seed(
                        seed,
                        u64::from(key.round) << 32
                            | u64::from(key.matchup) << 8
                            | u64::from(key.game),
                    );
                    let p = (x % 3) as usize;
                    let mut scores = [
                        (x >> 8) as i32 % 7,
                        (x >> 16) as i32 % 7,
                        (x >> 24) as i32 % 7,
                    ];
                    scores[p] = 21;
                    GameResult {
                        key,
                        teams: m.teams(key.game),
                        winner: Some(p),
                        scores,
                    }
                })
            })
            .collect()
    }

    /// Every split of `items` into tables of three (first item opens a table).
    fn splits(items: &[usize]) -> Vec<Vec<[usize; 3]>> {
        let Some((&a, rest)) = items.split_first() else {
            return vec![Vec::new()];
        };
        let mut out = Vec::new();
        for i in 0..rest.len() {
            for j in i + 1..rest.len() {
                let left: Vec<usize> = rest
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != i && k != j)
                    .map(|(_, &e)| e)
                    .collect();
                for mut s in splits(&left) {
                    s.push([a, rest[i], rest[j]]);
                    out.push(s);
                }
            }
        }
        out
    }

    /// Pairs of a split that had met before, counted independently of the code
    /// under test: from the results' tables.
    fn repeats_of(before: &[GameResult], tables: &[[usize; 3]]) -> u32 {
        let met: std::collections::BTreeSet<[usize; 2]> = before
            .iter()
            .flat_map(|g| {
                let t = g.teams;
                [[t[0], t[1]], [t[0], t[2]], [t[1], t[2]]].map(|[a, b]| [a.min(b), a.max(b)])
            })
            .collect();
        tables
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[0], t[2]], [t[1], t[2]]])
            .filter(|&[a, b]| met.contains(&[a.min(b), a.max(b)]))
            .count() as u32
    }

    #[test]
    fn each_round_is_the_best_split_for_fields_up_to_nine() {
        let mut checked = 0;
        for n in 3..=9 {
            for seed in 0..4 {
                let f = Format::Swiss { rounds: 6 };
                let mut results = Vec::new();
                for r in 1..=6 {
                    let ms = round(n, &f, 1, seed, r, &results).unwrap();
                    let chosen: Vec<[usize; 3]> = ms.iter().map(|m| m.entrants).collect();
                    let seated: Vec<usize> = chosen.iter().flatten().copied().collect();
                    let mut sorted = seated.clone();
                    sorted.sort();
                    let all = splits(&sorted);
                    // Fewest repeats over every split of the same entrants.
                    let least = all.iter().map(|s| repeats_of(&results, s)).min().unwrap();
                    assert_eq!(
                        repeats_of(&results, &chosen),
                        least,
                        "{n} entrants, seed {seed}, round {r}: {chosen:?}"
                    );
                    // And nothing better on the whole objective either.
                    let order: Vec<usize> = standing(n, &results)
                        .into_iter()
                        .filter(|e| seated.contains(e))
                        .collect();
                    let at = |e: usize| order.iter().position(|&x| x == e).unwrap();
                    let as_positions = |s: &[[usize; 3]]| -> Vec<[usize; 3]> {
                        s.iter()
                            .map(|t| {
                                let mut p = t.map(at);
                                p.sort();
                                p
                            })
                            .collect()
                    };
                    let met = Met::new(n, &results);
                    let mine = as_positions(&chosen);
                    for s in &all {
                        assert_ne!(
                            compare(&order, &met, &as_positions(s), &mine),
                            Ordering::Less,
                            "{n} entrants, seed {seed}, round {r}: {s:?} beats {chosen:?}"
                        );
                    }
                    checked += all.len();
                    results.extend(play(&ms, seed));
                }
            }
        }
        assert!(checked > 5_000, "only {checked} splits compared");
    }

    #[test]
    fn six_entrants_over_five_rounds_meet_again_no_more_than_they_must() {
        // Brute force over every sequence of five splits of six entrants (10^5):
        // the fewest repeat meetings any Swiss of five rounds can have.
        let all = splits(&[0, 1, 2, 3, 4, 5]);
        assert_eq!(all.len(), 10);
        let mut least = u32::MAX;
        for code in 0..10u32.pow(5) {
            let seq = (0..5).flat_map(|k| all[(code / 10u32.pow(k) % 10) as usize].clone());
            least = least.min(repeat_meetings(6, seq));
        }
        assert_eq!(least, 15, "30 pairings, 15 distinct pairs");
        for seed in 0..20 {
            let f = Format::Swiss { rounds: 5 };
            let mut results = Vec::new();
            let mut tables = Vec::new();
            for r in 1..=5 {
                let ms = round(6, &f, 1, seed, r, &results).unwrap();
                tables.extend(ms.iter().map(|m| m.entrants));
                results.extend(play(&ms, seed));
            }
            assert_eq!(round(6, &f, 1, seed, 6, &results), None);
            assert_eq!(
                repeat_meetings(6, tables.clone()),
                least,
                "seed {seed}: {tables:?}"
            );
        }
    }

    #[test]
    fn five_entrants_sit_out_in_turn() {
        for seed in 0..20 {
            let f = Format::Swiss { rounds: 8 };
            let mut results = Vec::new();
            let mut sat = [0u32; 5];
            for r in 1..=8 {
                let ms = round(5, &f, 1, seed, r, &results).unwrap();
                assert_eq!(ms.len(), 1);
                for e in (0..5).filter(|e| !ms[0].entrants.contains(e)) {
                    sat[e] += 1;
                }
                // Two sit out each round: nobody has a second bye before all had
                // one, a third before all had two, ...
                let (least, most) = (sat.iter().min().unwrap(), sat.iter().max().unwrap());
                assert!(most - least <= 1, "seed {seed} round {r}: byes {sat:?}");
                results.extend(play(&ms, seed));
            }
            // Eight rounds, two byes each: sixteen byes, three or four each.
            assert_eq!(sat.iter().sum::<u32>(), 16);
            assert!(sat.iter().all(|&s| s == 3 || s == 4), "{sat:?}");
        }
    }

    #[test]
    fn the_first_round_seats_in_entrant_order_and_the_last_ones_sit_out() {
        let r1 = tables(10, &[]);
        assert_eq!(r1, [[0, 1, 2], [3, 4, 5], [6, 7, 8]]);
        let r1 = tables(11, &[]);
        assert_eq!(r1, [[0, 1, 2], [3, 4, 5], [6, 7, 8]]);
    }

    #[test]
    fn winners_meet_winners_when_nobody_need_meet_again() {
        let f = Format::Swiss { rounds: 3 };
        let r1 = round(9, &f, 1, 2, 1, &[]).unwrap();
        // The lowest-numbered wins every game at its table.
        let results = super::super::knockout::tests::lowest_wins(&r1);
        let r2 = round(9, &f, 1, 2, 2, &results).unwrap();
        assert_eq!(r2[0].entrants, [0, 3, 6]);
        assert_eq!(
            repeats_of(&results, &r2.iter().map(|m| m.entrants).collect::<Vec<_>>()),
            0
        );
    }

    #[test]
    fn large_fields_are_seated_without_repeats_while_that_is_easy() {
        // 30 entrants, round 2: plenty of strangers left; the heuristic finds them.
        let f = Format::Swiss { rounds: 2 };
        let r1 = round(30, &f, 1, 0, 1, &[]).unwrap();
        let results = play(&r1, 0);
        let r2 = round(30, &f, 1, 0, 2, &results).unwrap();
        let tables: Vec<[usize; 3]> = r2.iter().map(|m| m.entrants).collect();
        assert_eq!(repeats_of(&results, &tables), 0, "{tables:?}");
        assert_eq!(tables.len(), 10);
    }
}
