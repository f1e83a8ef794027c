//! The policy's guarantees at scale, driven directly: a season of eight
//! entrants whose versions arrive over 300 sets, each set's six games
//! simulated from made-up strengths and the ratings refitted after every set
//! (`season/ratings.rs`), as `season run` does. What docs/organisers.md
//! ("How a season chooses its sets") promises is checked on it.

use std::collections::BTreeMap;

use super::{candidates, next, Policy};
use crate::tournament::outcome::GameOutcome;

const SETS: i64 = 300;
const MIN_SETS: u32 = 3;

/// Set before which a version arrives: (set, entrant, version id). Entrants
/// 1–6 open the season; 7 and 8 join; 2, 5 and 7 replace their versions.
const ARRIVALS: [(i64, i64, i64); 11] = [
    (1, 1, 1),
    (1, 2, 2),
    (1, 3, 3),
    (1, 4, 4),
    (1, 5, 5),
    (1, 6, 6),
    (40, 7, 7),
    (80, 8, 8),
    (120, 2, 9),
    (180, 5, 10),
    (240, 7, 11),
];

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Version `v`'s made-up strength: spread from 1 / `base` to `base`.
fn strength(v: i64, base: f64) -> f64 {
    base.powf(((v * 7) % 11) as f64 / 5.0 - 1.0)
}

/// One game of `teams` ranked as the Plackett–Luce model says.
fn game(rng: &mut Rng, teams: [usize; 3], base: f64) -> GameOutcome {
    let mut left = vec![0, 1, 2];
    let mut ranking = [0; 3];
    for slot in ranking.iter_mut().take(2) {
        let total: f64 = left.iter().map(|&t| strength(teams[t] as i64, base)).sum();
        let mut x = rng.unit() * total;
        let mut pick = left.len() - 1;
        for (k, &t) in left.iter().enumerate() {
            let s = strength(teams[t] as i64, base);
            if x < s {
                pick = k;
                break;
            }
            x -= s;
        }
        *slot = left.remove(pick);
    }
    ranking[2] = left[0];
    GameOutcome {
        round: 0,
        matchup: 0,
        game: 1,
        seed: 0,
        teams,
        transcript: String::new(),
        scores: [0; 3],
        deals: 1,
        ranking,
        winner: Some(ranking[0]),
        forfeited: Vec::new(),
        made: [0; 3],
        set: [0; 3],
        won: [0; 3],
        hands: 1,
        faults: Default::default(),
    }
}

/// What the simulated season did.
struct Season {
    sets: Vec<(i64, [i64; 3])>,
    /// Each version's first and last set active (retired: replaced).
    active: BTreeMap<i64, (i64, i64)>,
    /// Each set's active versions, as planned.
    field: Vec<Vec<i64>>,
    ratings: BTreeMap<i64, f64>,
}

/// Eight entrants from the first set on, none replaced.
const STEADY: [(i64, i64, i64); 8] = [
    (1, 1, 1),
    (1, 2, 2),
    (1, 3, 3),
    (1, 4, 4),
    (1, 5, 5),
    (1, 6, 6),
    (1, 7, 7),
    (1, 8, 8),
];

fn simulate(policy: Policy) -> Season {
    simulate_with(policy, &ARRIVALS, 5.0)
}

/// `arrivals` playing 300 sets, strengths from 1 / `base` to `base`.
fn simulate_with(policy: Policy, arrivals: &[(i64, i64, i64)], base: f64) -> Season {
    let mut rng = Rng(46);
    let mut current: BTreeMap<i64, i64> = BTreeMap::new(); // entrant → version
    let mut s = Season {
        sets: Vec::new(),
        active: BTreeMap::new(),
        field: Vec::new(),
        ratings: BTreeMap::new(),
    };
    let mut games = Vec::new();
    for id in 1..=SETS {
        for &(_, entrant, v) in arrivals.iter().filter(|a| a.0 == id) {
            if let Some(old) = current.insert(entrant, v) {
                s.active.get_mut(&old).unwrap().1 = id - 1;
            }
            s.active.insert(v, (id, SETS));
        }
        let field: Vec<i64> = current.values().copied().collect();
        let (c, met) = candidates(&field, &s.sets, &s.ratings);
        let table = next(&c, &met, policy).expect("a table under the cap");
        s.sets.push((id, table));
        s.field.push(field);
        for arrangement in [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ] {
            games.push(game(&mut rng, arrangement.map(|k| table[k] as usize), base));
        }
        let fitted = crate::season::ratings::refit(id, &games, &[]);
        s.ratings = fitted.iter().map(|r| (r.version, r.rating)).collect();
    }
    s
}

/// The sets of `v`, by id.
fn seated(s: &Season, v: i64) -> Vec<i64> {
    (s.sets.iter())
        .filter(|(_, t)| t.contains(&v))
        .map(|(id, _)| *id)
        .collect()
}

fn met(s: &Season, a: i64, b: i64) -> usize {
    (s.sets.iter())
        .filter(|(_, t)| t.contains(&a) && t.contains(&b))
        .count()
}

const POLICY: Policy = Policy {
    min_sets: MIN_SETS,
    pair_cap: 1000,
};

#[test]
fn a_new_version_anchors_the_next_min_sets_sets_after_it_arrives() {
    let s = simulate(POLICY);
    for &(at, _, v) in ARRIVALS.iter().filter(|a| a.0 > 1) {
        let next: Vec<i64> = (s.sets.iter())
            .filter(|(id, _)| (at..at + i64::from(MIN_SETS)).contains(id))
            .map(|(_, t)| t[0])
            .collect();
        assert_eq!(next, [v; MIN_SETS as usize], "version {v} from set {at}");
    }
}

#[test]
fn no_active_version_waits_longer_than_the_field_and_newcomers_minimums() {
    let s = simulate(POLICY);
    // The sets anchored by a version still owed its minimum.
    let mut so_far: BTreeMap<i64, u32> = BTreeMap::new();
    let mut owed = Vec::new();
    for (_, t) in &s.sets {
        owed.push(so_far.get(&t[0]).copied().unwrap_or(0) < MIN_SETS);
        for v in t {
            *so_far.entry(*v).or_default() += 1;
        }
    }
    for (&v, &(from, to)) in &s.active {
        let mut last = from - 1;
        for id in seated(&s, v).into_iter().chain([to + 1]) {
            let gap = last + 1..id;
            let field = s.field[(id.min(to) - 1) as usize].len() as i64;
            let for_newcomers = gap.clone().filter(|g| owed[(*g - 1) as usize]).count() as i64;
            let waited = gap.end - gap.start;
            assert!(
                waited <= field - 1 + for_newcomers,
                "version {v} waited {waited} sets before set {id} ({for_newcomers} for newcomers)"
            );
            last = id;
        }
    }
}

#[test]
fn every_pair_active_together_for_60_sets_meets() {
    let s = simulate(POLICY);
    for (&a, &(fa, ta)) in &s.active {
        for (&b, &(fb, tb)) in s.active.range(a + 1..) {
            let overlap = ta.min(tb) - fa.max(fb) + 1;
            assert!(
                overlap < 60 || met(&s, a, b) > 0,
                "versions {a} and {b}, both active for {overlap} sets, never met"
            );
        }
    }
}

#[test]
fn close_ratings_meet_more() {
    // A steady field, so that every pair had the same time to meet, and
    // strengths from 1/20 to 20 (ratings some 1,000 points apart at most,
    // which the policy weighs as five meetings).
    let s = simulate_with(POLICY, &STEADY, 20.0);
    let mut pairs = Vec::new();
    for a in 1..=8 {
        for b in a + 1..=8 {
            let apart = (s.ratings[&a] - s.ratings[&b]).abs();
            pairs.push((apart, met(&s, a, b)));
        }
    }
    // By how far apart their ratings ended: the closest third of the pairs
    // met at least two sets more often than the farthest third (without
    // the ratings' weight, they differ by less than one).
    pairs.sort_by(|x, y| x.0.total_cmp(&y.0));
    let third = pairs.len() / 3;
    let mean = |p: &[(f64, usize)]| p.iter().map(|x| x.1 as f64).sum::<f64>() / p.len() as f64;
    let (close, far) = (mean(&pairs[..third]), mean(&pairs[pairs.len() - third..]));
    assert!(
        close >= far + 2.0,
        "closest third {close:.1} sets, farthest {far:.1}: {pairs:?}"
    );
}

#[test]
fn the_cap_holds_and_ends_play_only_when_every_table_has_a_capped_pair() {
    let capped = Policy {
        min_sets: MIN_SETS,
        pair_cap: 6,
    };
    let field: Vec<i64> = (1..=6).collect();
    let mut sets = Vec::new();
    let ratings: BTreeMap<i64, f64> = field.iter().map(|&v| (v, 100.0 * v as f64)).collect();
    let (c, met) = loop {
        let (c, met) = candidates(&field, &sets, &ratings);
        match next(&c, &met, capped) {
            Some(t) => sets.push((sets.len() as i64 + 1, t)),
            None => break (c, met),
        }
    };
    assert!(met.values().all(|&n| n <= capped.pair_cap), "{met:?}");
    let full = |a: i64, b: i64| met.get(&(a.min(b), a.max(b))).copied().unwrap_or(0) >= 6;
    for (i, &a) in field.iter().enumerate() {
        for (j, &b) in field.iter().enumerate().skip(i + 1) {
            for &d in &field[j + 1..] {
                assert!(
                    full(a, b) || full(a, d) || full(b, d),
                    "{a} {b} {d} still playable"
                );
            }
        }
    }
    assert_eq!(c.len(), 6);
}
