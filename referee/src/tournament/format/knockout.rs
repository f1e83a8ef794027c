//! The knockout format: rounds of tables of three, each table's winner advances.
//! Pure, and replayed from results: who is still in before round `r`, the
//! round's tables, who advanced from each, and the round each entrant reached
//! (what the standings rank a knockout by) all follow from the games of the
//! rounds before, so a resumed run, a merge and the standings agree.
//!
//! Every function is total: any results (even ones no knockout would produce)
//! give an answer, never a panic.

use super::Pairing;
use crate::tournament::bracket::RoundSummary;
use crate::tournament::schedule::GameResult;

pub struct Knockout;

impl Pairing for Knockout {
    fn title(&self, _name: &dyn Fn(usize) -> String) -> String {
        "knockout".into()
    }

    fn by_rounds(&self) -> bool {
        true
    }

    fn tables(&self, entrants: usize, r: u32, before: &[GameResult]) -> Vec<[usize; 3]> {
        round(entrants, before, r).map_or_else(Vec::new, |k| k.tables)
    }

    /// Who advances from each table, and who had a bye.
    fn summary(
        &self,
        entrants: usize,
        r: u32,
        _tables: &[[usize; 3]],
        before: &[GameResult],
        this: &[&GameResult],
    ) -> RoundSummary {
        // The round's tables follow from the rounds before: those given are
        // not needed (a shard's page sees only some).
        let Some(k) = round(entrants, before, r) else {
            return RoundSummary::default();
        };
        RoundSummary {
            advances: (0..k.tables.len())
                .map(|i| Some(k.advances(i, this)))
                .collect(),
            byes: k.byes,
            met_before: None,
        }
    }

    fn champion(&self, entrants: usize, r: u32, before: &[GameResult]) -> Option<usize> {
        match alive_before(entrants, before, r)[..] {
            [champion] => Some(champion),
            _ => None,
        }
    }

    /// The round reached: the champion, then the other finalists, and so on;
    /// results order entrants within a round.
    fn rank_first(&self, entrants: usize, results: &[GameResult]) -> Vec<u32> {
        reached(entrants, results)
    }

    fn ranks_first_by(&self) -> Option<&'static str> {
        Some("round reached")
    }

    /// Those still in are seated by threes, the best seeds sitting out; two
    /// left play a final with one who is out.
    #[cfg(test)]
    fn check_round(&self, p: &super::Played) {
        let (label, r) = (p.label, p.r);
        let alive = alive_before(p.entrants, p.before, r);
        let byes: Vec<&usize> = alive.iter().filter(|e| !p.seated.contains(e)).collect();
        if alive.len() >= 3 {
            assert!(
                p.seated.iter().all(|e| alive.contains(e)),
                "{label} round {r}"
            );
            assert_eq!(byes.len(), alive.len() % 3, "{label} round {r}");
        } else {
            assert_eq!(alive.len(), 2, "{label} round {r}");
            assert!(byes.is_empty() && p.seated.len() == 3, "{label} round {r}");
        }
    }

    /// One champion, and the bracket names it.
    #[cfg(test)]
    fn check_end(&self, p: &super::Played) {
        let alive = alive_before(p.entrants, p.before, p.r);
        assert_eq!(alive.len(), 1, "{}: a champion", p.label);
        let line = super::last_line(p.names, &super::Format::Knockout, p.r, p.before);
        assert!(line.is_some(), "{}", p.label);
    }
}

/// One round as the schedule seats it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnockoutRound {
    /// From 1.
    pub round: u32,
    /// The entrants still in at the start of the round, best seed first.
    pub alive: Vec<usize>,
    /// The round's tables, in matchup order.
    pub tables: Vec<[usize; 3]>,
    /// Entrants still in who do not play this round (they advance).
    pub byes: Vec<usize>,
}

impl KnockoutRound {
    /// Who advances from table `index` of this round, by `games` (results of
    /// this round; others are ignored).
    pub fn advances(&self, index: usize, games: &[&GameResult]) -> usize {
        advances(self.round, index, self.tables[index], games, &self.alive)
    }

    /// The entrants in the round after this one, best seed first.
    pub fn next_alive(&self, games: &[&GameResult]) -> Vec<usize> {
        let mut next = self.byes.clone();
        next.extend((0..self.tables.len()).map(|i| self.advances(i, games)));
        next.sort();
        next
    }
}

/// Round `r` (from 1) of a knockout of `entrants` after the results `before`
/// of rounds `1..r`; `None` when fewer than two entrants are left (the
/// tournament is over).
pub fn round(entrants: usize, before: &[GameResult], r: u32) -> Option<KnockoutRound> {
    let mut alive: Vec<usize> = (0..entrants).collect();
    for earlier in 1..=r {
        let prior: Vec<&GameResult> = before.iter().filter(|g| g.key.round < earlier).collect();
        let tables = tables(&alive, &eliminated_order(entrants, &prior, &alive));
        if tables.is_empty() {
            return None;
        }
        let seated: Vec<usize> = tables.iter().flatten().copied().collect();
        let this = KnockoutRound {
            round: earlier,
            byes: alive
                .iter()
                .copied()
                .filter(|e| !seated.contains(e))
                .collect(),
            alive,
            tables,
        };
        if earlier == r {
            return Some(this);
        }
        let games: Vec<&GameResult> = before.iter().filter(|g| g.key.round == earlier).collect();
        alive = this.next_alive(&games);
    }
    None
}

/// The entrants still in before round `r`, best seed first (after the last
/// round: the champion alone).
pub fn alive_before(entrants: usize, before: &[GameResult], r: u32) -> Vec<usize> {
    match r.checked_sub(1) {
        None | Some(0) => (0..entrants).collect(),
        Some(last) => match round(entrants, before, last) {
            Some(k) => {
                let games: Vec<&GameResult> =
                    before.iter().filter(|g| g.key.round == last).collect();
                k.next_alive(&games)
            }
            // Over before round `last`: the same entrants are left.
            None => alive_before(entrants, before, last),
        },
    }
}

/// The round each entrant reached: the last round it started still in, one more
/// than the last round played for whoever is still in after it (the champion,
/// once the knockout is over). Rounds without results do not count.
pub fn reached(entrants: usize, results: &[GameResult]) -> Vec<u32> {
    let played = results.iter().map(|g| g.key.round).max().unwrap_or(0);
    let mut reached = vec![0; entrants];
    for r in 1..=played + 1 {
        for e in alive_before(entrants, results, r) {
            reached[e] = r;
        }
    }
    reached
}

/// Who advances from a table: the entrant with the most game wins at it, ties
/// broken by duplicate points at it, then by the lower entrant number (the
/// earlier-listed, i.e. better-seeded, entrant). In a final of two the third
/// seat is a sparring entrant who cannot advance.
fn advances(
    round: u32,
    index: usize,
    table: [usize; 3],
    games: &[&GameResult],
    contenders: &[usize],
) -> usize {
    let mine: Vec<&GameResult> = games
        .iter()
        .copied()
        .filter(|g| g.key.round == round && g.key.matchup as usize == index)
        .filter(|g| g.teams.iter().all(|e| table.contains(e)))
        .collect();
    let t = tally(table.iter().max().map_or(0, |&e| e + 1), &mine);
    table
        .iter()
        .copied()
        .filter(|e| contenders.contains(e))
        .max_by_key(|&e| (t[e].0, t[e].1, std::cmp::Reverse(e)))
        // Every table seats a contender; were one not to, its best seed goes on.
        .unwrap_or(table[0])
}

/// Entrants already out, best first (most wins overall, then duplicate points,
/// then entrant number): the sparring partner of a final of two is the first.
fn eliminated_order(entrants: usize, before: &[&GameResult], alive: &[usize]) -> Vec<usize> {
    let t = tally(entrants, before);
    let mut out: Vec<usize> = (0..entrants).filter(|e| !alive.contains(e)).collect();
    out.sort_by_key(|&e| (std::cmp::Reverse(t[e].0), std::cmp::Reverse(t[e].1), e));
    out
}

/// A round's tables: the alive entrants in seed order, in threes; when the count
/// does not divide by three, the best seeds get byes (one or two). Two left: a
/// final, with the best eliminated entrant as the third team (none out: no
/// final can be seated, and the knockout is over).
fn tables(alive: &[usize], eliminated: &[usize]) -> Vec<[usize; 3]> {
    match (alive.len(), eliminated.first()) {
        (0 | 1, _) | (2, None) => Vec::new(),
        (2, Some(&spar)) => vec![[alive[0], alive[1], spar]],
        (n, _) => alive[n % 3..]
            .chunks(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect(),
    }
}

/// Per entrant over `games`: game wins, then duplicate points (own score minus
/// the mean of the other two teams', doubled to stay integral). Entrants
/// outside `0..entrants` are not counted.
fn tally(entrants: usize, games: &[&GameResult]) -> Vec<(u32, i64)> {
    let mut t = vec![(0u32, 0i64); entrants];
    for g in games {
        for p in 0..3 {
            let Some(e) = t.get_mut(g.teams[p]) else {
                continue;
            };
            e.0 += u32::from(g.winner == Some(p));
            e.1 += 2 * i64::from(g.scores[p])
                - i64::from(g.scores[(p + 1) % 3])
                - i64::from(g.scores[(p + 2) % 3]);
        }
    }
    t
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::{round as schedule_round, Format};
    use super::*;
    use crate::tournament::schedule::Matchup;

    /// Results in which, at every table, the lowest-numbered entrant wins every game.
    pub(in crate::tournament) fn lowest_wins(ms: &[Matchup]) -> Vec<GameResult> {
        ms.iter()
            .flat_map(|m| {
                m.keys().map(move |key| {
                    let teams = m.teams(key.game);
                    let best = (0..3).min_by_key(|&p| teams[p]).unwrap();
                    let mut scores = [0; 3];
                    scores[best] = 21;
                    GameResult {
                        key,
                        teams,
                        winner: Some(best),
                        scores,
                    }
                })
            })
            .collect()
    }

    #[test]
    fn a_knockout_advances_table_winners_with_byes_for_the_best_seeds() {
        // 11 entrants: round 1 has 3 tables and 2 byes (entrants 0 and 1).
        let f = Format::Knockout;
        let mut results = Vec::new();
        let r1 = schedule_round(11, &f, 1, 5, 1, &results).unwrap();
        let seated: Vec<[usize; 3]> = r1.iter().map(|m| m.entrants).collect();
        assert_eq!(seated, [[2, 3, 4], [5, 6, 7], [8, 9, 10]]);
        assert_eq!(round(11, &results, 1).unwrap().byes, [0, 1]);
        results.extend(lowest_wins(&r1));
        // Round 2: 0, 1 (byes) and the winners 2, 5, 8: five left, byes for 0 and 1.
        let r2 = schedule_round(11, &f, 1, 5, 2, &results).unwrap();
        assert_eq!(
            r2.iter().map(|m| m.entrants).collect::<Vec<_>>(),
            [[2, 5, 8]]
        );
        assert!(r2.iter().all(|m| m.round == 2));
        results.extend(lowest_wins(&r2));
        // Round 3: 0, 1, 2 — one table.
        let r3 = schedule_round(11, &f, 1, 5, 3, &results).unwrap();
        assert_eq!(
            r3.iter().map(|m| m.entrants).collect::<Vec<_>>(),
            [[0, 1, 2]]
        );
        results.extend(lowest_wins(&r3));
        assert_eq!(
            schedule_round(11, &f, 1, 5, 4, &results),
            None,
            "0 is the champion"
        );
        assert_eq!(alive_before(11, &results, 4), [0]);
        // Reached: 0 won it all (past round 3); 1 and 2 lost in round 3; 5 and
        // 8 in round 2; the rest in round 1.
        assert_eq!(reached(11, &results), [4, 3, 3, 1, 1, 2, 1, 1, 2, 1, 1]);
    }

    #[test]
    fn a_knockout_final_of_two_seats_the_best_eliminated_entrant_who_cannot_win() {
        // 5 entrants: round 1 seats 2, 3, 4 with byes for 0 and 1.
        let f = Format::Knockout;
        let r1 = schedule_round(5, &f, 1, 1, 1, &[]).unwrap();
        assert_eq!(r1[0].entrants, [2, 3, 4]);
        let results = lowest_wins(&r1);
        // Round 2: 0, 1, 2 alive: a table of three.
        let r2 = schedule_round(5, &f, 1, 1, 2, &results).unwrap();
        assert_eq!(r2[0].entrants, [0, 1, 2]);
        // Four entrants: 1 bye, a table of 1, 2, 3; then a final 0 v winner.
        let r1 = schedule_round(4, &f, 1, 1, 1, &[]).unwrap();
        assert_eq!(r1[0].entrants, [1, 2, 3]);
        // Let 3 win everything at that table.
        let results: Vec<GameResult> = lowest_wins(&r1)
            .into_iter()
            .map(|mut g| {
                let p = g.teams.iter().position(|&e| e == 3).unwrap();
                g.winner = Some(p);
                g.scores = [0; 3];
                g.scores[p] = 21;
                g
            })
            .collect();
        let fin = schedule_round(4, &f, 1, 1, 2, &results).unwrap();
        // Best eliminated by wins: 1 and 2 have none; duplicate points tie; 1 first.
        assert_eq!(fin[0].entrants, [0, 3, 1]);
        // Even if the sparring entrant 1 wins every game, 0 or 3 advances.
        let spar: Vec<GameResult> = fin[0]
            .keys()
            .map(|key| {
                let teams = fin[0].teams(key.game);
                let p = teams.iter().position(|&e| e == 1).unwrap();
                let mut scores = [0; 3];
                scores[p] = 21;
                GameResult {
                    key,
                    teams,
                    winner: Some(p),
                    scores,
                }
            })
            .collect();
        let games: Vec<&GameResult> = spar.iter().collect();
        let k = round(4, &results, 2).unwrap();
        assert_eq!(k.advances(0, &games), 0, "tie: the better seed");
        // The sparring entrant played the final but reached only round 1.
        let all: Vec<GameResult> = results.iter().chain(&spar).cloned().collect();
        assert_eq!(reached(4, &all), [3, 1, 1, 2]);
    }

    #[test]
    fn results_no_knockout_would_produce_still_give_an_answer() {
        // A Swiss's results read as a knockout's (the old printer's crash): any
        // entrant, any table number.
        let g = |round, matchup, teams, winner| GameResult {
            key: crate::tournament::schedule::GameKey {
                round,
                matchup,
                game: 1,
            },
            teams,
            winner,
            scores: [3, 2, 1],
        };
        let odd = [
            g(1, 0, [0, 1, 2], Some(2)),
            g(1, 1, [3, 4, 0], Some(0)),
            g(2, 0, [4, 2, 1], None),
            g(3, 7, [1, 3, 4], Some(1)),
        ];
        for n in 3..8 {
            for r in 1..6 {
                let _ = round(n, &odd, r);
                let _ = alive_before(n, &odd, r);
            }
            assert_eq!(reached(n, &odd).len(), n);
        }
    }
}
