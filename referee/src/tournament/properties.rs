//! Every format is total: for any field of 3–40 entrants, any number of Swiss
//! rounds (1–8), one or two duplicate sets and any results, the schedule gives
//! valid rounds, the bracket prints and the standings rank every entrant. No
//! processes and no files: the games' results are made up from the seed, so a
//! failure names the schedule that broke (format, entrants, rounds, sets, seed).
//!
//! Exhaustive over the sizes and round counts, several seeds each (over 5,000
//! schedules in the three tests); the count of schedules checked is asserted, so
//! a loop cannot pass by checking nothing.

use std::collections::{BTreeMap, BTreeSet};

use schmier_protocol::shuffle::derive_seed;

use super::bracket::{self, bracket_round};
use super::knockout;
use super::outcome::GameOutcome;
use super::schedule::{matchups, round, Format, GameKey, GameResult, Matchup};
use super::standings::standings;

/// Seeds per (format, size, rounds, sets); the results, the gauntlet's
/// challengers and (through them) the Swiss pairings differ with the seed.
const SEEDS: u64 = 7;

/// A made-up game: scores from the seed and the game's key, with a lean towards
/// lower-numbered entrants so that standings are not a coin toss, and now and
/// then a tie for first (no winner) or a forfeit.
fn outcome(m: &Matchup, key: GameKey, seed: u64) -> GameOutcome {
    let teams = m.teams(key.game);
    let x = derive_seed(
        seed,
        (u64::from(key.round) << 40) | (u64::from(key.matchup) << 12) | u64::from(key.game),
    );
    let scores: [i32; 3] = std::array::from_fn(|t| {
        ((x >> (12 * t)) % 31) as i32 - 8 - (teams[t] % 7) as i32 + (t as i32 & 1)
    });
    let mut ranking = [0, 1, 2];
    ranking.sort_by_key(|&t| (std::cmp::Reverse(scores[t]), t));
    let forfeited = if x >> 58 == 0 {
        vec![ranking[0]]
    } else {
        Vec::new()
    };
    if let [f] = forfeited[..] {
        ranking.rotate_left(1);
        debug_assert_eq!(ranking[2], f);
    }
    let decided = scores[ranking[0]] != scores[ranking[1]] || !forfeited.is_empty();
    GameOutcome {
        round: key.round,
        matchup: key.matchup,
        game: key.game,
        seed: m.game_seed(key.game),
        teams,
        transcript: String::new(),
        scores,
        deals: 4,
        ranking,
        winner: decided.then_some(ranking[0]),
        forfeited,
        made: [1, 0, 0],
        set: [0, 1, 0],
        won: scores,
        hands: 4,
        faults: Default::default(),
    }
}

/// A round's tables are valid: three distinct entrants of the field each, nobody
/// at two tables.
fn check_round(label: &str, n: usize, r: u32, ms: &[Matchup]) -> BTreeSet<usize> {
    let mut seated = BTreeSet::new();
    for (i, m) in ms.iter().enumerate() {
        assert_eq!(
            m.index as usize, i,
            "{label} round {r}: matchups numbered in order"
        );
        assert_eq!(m.round, r, "{label}");
        let [a, b, c] = m.entrants;
        assert!(
            a != b && a != c && b != c,
            "{label} round {r}: {:?}",
            m.entrants
        );
        assert!(
            a < n && b < n && c < n,
            "{label} round {r}: {:?}",
            m.entrants
        );
        for e in m.entrants {
            assert!(
                seated.insert(e) || r == 0,
                "{label} round {r}: entrant {e} at two tables"
            );
        }
    }
    seated
}

/// The longest Swiss checked. Its first `r` rounds are the whole of a Swiss of
/// `r` rounds (the round count only says when to stop, which is checked), so one
/// Swiss of eight rounds, with standings after each round, covers all eight.
const MOST_ROUNDS: u32 = 8;

/// Plays one schedule through (for a Swiss: the eight schedules of 1–8 rounds);
/// returns how many schedules that covered.
fn run(n: usize, format: &Format, sets: u32, seed: u64, thorough: bool) -> u32 {
    let label = format!("{format:?} with {n} entrants, {sets} set(s), seed {seed}");
    let names: Vec<String> = (0..n).map(|e| format!("e{e}")).collect();
    let mut outcomes: BTreeMap<GameKey, GameOutcome> = BTreeMap::new();
    let mut covered = 1;
    if format.by_rounds() {
        let mut byes = vec![0u32; n];
        let mut r = 0;
        loop {
            r += 1;
            assert!(r <= 64, "{label}: more than 64 rounds");
            let before: Vec<GameResult> = outcomes.values().map(GameOutcome::result).collect();
            let Some(ms) = round(n, format, sets, seed, r, &before) else {
                break;
            };
            assert!(!ms.is_empty(), "{label} round {r}: a round without tables");
            let seated = check_round(&label, n, r, &ms);
            for m in &ms {
                assert_eq!(m.sets, sets, "{label}");
                for key in m.keys() {
                    outcomes.insert(key, outcome(m, key, seed));
                }
            }
            match format {
                Format::Swiss { .. } => {
                    // Everyone plays but n mod 3, and the byes rotate.
                    assert_eq!(seated.len(), n - n % 3, "{label} round {r}: byes");
                    for e in (0..n).filter(|e| !seated.contains(e)) {
                        byes[e] += 1;
                    }
                    let (lo, hi) = (byes.iter().min(), byes.iter().max());
                    assert!(
                        hi.unwrap() - lo.unwrap() <= 1,
                        "{label} round {r}: byes {byes:?}"
                    );
                    // The Swiss of exactly r rounds: the same round, then over
                    // (whatever the results: it stops before looking at them).
                    let short = Format::Swiss { rounds: r };
                    if thorough {
                        assert_eq!(round(n, &short, sets, seed, r, &before).as_ref(), Some(&ms));
                    }
                    assert_eq!(round(n, &short, sets, seed, r + 1, &before), None);
                    check_standings(&format!("{label}, {r} rounds"), &names, &short, &outcomes);
                    covered = r;
                }
                _ => {
                    // A knockout seats those still in, by threes; the best seeds
                    // sit out; two left play a final with one who is out.
                    let alive = knockout::alive_before(n, &before, r);
                    let byes: Vec<&usize> = alive.iter().filter(|e| !seated.contains(e)).collect();
                    if alive.len() >= 3 {
                        assert!(
                            seated.iter().all(|e| alive.contains(e)),
                            "{label} round {r}"
                        );
                        assert_eq!(byes.len(), alive.len() % 3, "{label} round {r}");
                    } else {
                        assert_eq!(alive.len(), 2, "{label} round {r}");
                        assert!(byes.is_empty() && seated.len() == 3, "{label} round {r}");
                    }
                }
            }
            if thorough {
                let text = bracket_round(&names, format, r, &ms, &outcomes);
                assert!(text.starts_with(&format!("round {r}:")), "{label}: {text}");
            }
        }
        match format {
            Format::Swiss { rounds } => assert_eq!(r - 1, *rounds, "{label}: every round"),
            _ => {
                let before: Vec<GameResult> = outcomes.values().map(GameOutcome::result).collect();
                assert_eq!(
                    knockout::alive_before(n, &before, r).len(),
                    1,
                    "{label}: a champion"
                );
                assert!(
                    bracket::last_line(&names, format, r, &before).is_some(),
                    "{label}"
                );
            }
        }
    } else {
        let ms = matchups(n, format, sets, seed);
        check_round(&label, n, 0, &ms);
        for m in &ms {
            for key in m.keys() {
                outcomes.insert(key, outcome(m, key, seed));
            }
        }
    }
    check_standings(&label, &names, format, &outcomes);
    covered
}

/// Every entrant ranked once, ranks 1..=n, every game counted.
fn check_standings(
    label: &str,
    names: &[String],
    format: &Format,
    outcomes: &BTreeMap<GameKey, GameOutcome>,
) {
    let s = standings(names, format, outcomes);
    assert_eq!(s.games as usize, outcomes.len(), "{label}");
    let mut ranked: Vec<&str> = s.entrants.iter().map(|r| r.name.as_str()).collect();
    ranked.sort();
    let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
    all.sort();
    assert_eq!(
        ranked, all,
        "{label}: every entrant is in the standings once"
    );
    let ranks: Vec<u32> = s.entrants.iter().map(|r| r.rank).collect();
    assert_eq!(
        ranks,
        (1..=names.len() as u32).collect::<Vec<_>>(),
        "{label}"
    );
    assert_eq!(
        s.repeat_meetings.is_some(),
        matches!(format, Format::Swiss { .. }),
        "{label}"
    );
}

/// The seeds of the made-up results (and of the gauntlet's challengers).
fn seeds() -> impl Iterator<Item = (u64, u64)> {
    (0..SEEDS).map(|k| (k, derive_seed(0x5c4e_d01e, k)))
}

#[test]
fn swiss_of_one_to_eight_rounds_is_total_for_any_field_and_results() {
    let mut schedules = 0;
    for n in 3..=40 {
        for sets in 1..=2 {
            for (k, seed) in seeds() {
                let f = Format::Swiss {
                    rounds: MOST_ROUNDS,
                };
                schedules += run(n, &f, sets, seed, k < 2);
            }
        }
    }
    // 38 sizes, 2 set counts, 7 seeds, 8 round counts.
    assert_eq!(
        schedules,
        38 * 2 * SEEDS as u32 * MOST_ROUNDS,
        "{schedules}"
    );
    eprintln!("{schedules} Swiss schedules checked");
}

#[test]
fn knockout_is_total_for_any_field_and_results() {
    let mut schedules = 0;
    for n in 3..=40 {
        for sets in 1..=2 {
            for (k, seed) in seeds() {
                schedules += run(n, &Format::Knockout, sets, seed, k < 2);
            }
        }
    }
    assert_eq!(schedules, 38 * 2 * SEEDS as u32, "{schedules}");
    eprintln!("{schedules} knockout schedules checked");
}

#[test]
fn one_round_formats_are_total_for_any_field_and_results() {
    let mut schedules = 0;
    for n in 3..=40 {
        for sets in 1..=2 {
            for (k, seed) in seeds() {
                // Their tables do not depend on the seed or the sets: more seeds
                // vary only the made-up results, more sets only repeat the
                // tables. Every size with one seed; two sets up to 20 entrants,
                // every seed up to 12 (a round robin of 40 is 9,880 tables, of
                // 21–40 95,000 in all: more would dominate the run).
                if !(n <= 12 || k == 0 && (sets == 1 || n <= 20)) {
                    continue;
                }
                let challengers = if k % 2 == 0 { vec![0] } else { vec![n - 1, 1] };
                let mut formats = vec![Format::RoundRobin, Format::Balanced];
                if n - challengers.len() >= 2 {
                    formats.push(Format::Gauntlet { challengers });
                }
                for format in &formats {
                    schedules += run(n, format, sets, seed, true);
                }
            }
        }
    }
    assert!(schedules >= 500, "only {schedules} schedules checked");
    eprintln!("{schedules} one-round schedules checked");
}
