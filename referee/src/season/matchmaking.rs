//! Which three versions play the next set. Pure: the season's record in, a
//! table out, the same for the same record (ties go to the lower version id).
//!
//! **The policy** (docs/organisers.md, "Run a season"), applied to the active
//! versions (each entrant's newest admitted one) whenever a table is free:
//!
//! 1. *The anchor* — the version the set is for. First a version with fewer
//!    than `min_sets` sets (played or under way), the one with fewest, then
//!    the one submitted first: a new version gets its minimum soon after it is
//!    submitted, ahead of everyone else. Otherwise the version whose latest set
//!    is oldest (never seated counts as oldest): every set seats the
//!    longest-waiting version, so with `n` active entrants none waits more
//!    than `n - 1` sets beyond the sets owed to newcomers' minimums.
//! 2. *Its two opponents* — the pair that minimises the cost of the three
//!    pairs the table makes, a pair's cost being the sets it has already
//!    played together (a pair that never met costs nothing: every pair of
//!    active entrants meets) plus its rating difference over
//!    [`RATING_PER_MEETING`] (close ratings meet more often).
//! 3. *The cap* — no pair plays more than `pair_cap` sets together: a table
//!    with a capped pair is never chosen. An anchor with no table left
//!    passes its turn to the next one; when no anchor has one, nothing is
//!    played until a new version is submitted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A rating difference that costs as much as one more meeting of a pair.
pub const RATING_PER_MEETING: f64 = 200.0;

/// The organiser's settings of the policy, fixed at `season init`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Sets every new version plays before the anchor rotates to others.
    pub min_sets: u32,
    /// The most sets two versions play together.
    pub pair_cap: u32,
}

/// An active version as matchmaking sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub version: i64,
    /// Sets it sits in, finished or under way.
    pub sets: u32,
    /// The id of the latest set it sits in.
    pub last_set: Option<i64>,
    /// Its rating now (0 before its first finished set).
    pub rating: f64,
}

/// Sets played (or under way) by each pair of versions, lower id first.
pub type Met = BTreeMap<(i64, i64), u32>;

fn pair(a: i64, b: i64) -> (i64, i64) {
    (a.min(b), a.max(b))
}

/// The next set's three versions, anchor first; `None` when fewer than three
/// versions are active or every table would exceed the cap.
pub fn next(candidates: &[Candidate], met: &Met, policy: Policy) -> Option<[i64; 3]> {
    let mut anchors: Vec<&Candidate> = candidates.iter().collect();
    anchors.sort_by_key(|c| {
        let owed = c.sets < policy.min_sets;
        // Owed first (fewest sets, first submitted), then the longest wait.
        match owed {
            true => (0, i64::from(c.sets), c.version),
            false => (1, c.last_set.unwrap_or(0), c.version),
        }
    });
    anchors
        .into_iter()
        .find_map(|a| opponents(a, candidates, met, policy).map(|[b, c]| [a.version, b, c]))
}

/// The cheapest pair of opponents for `anchor` within the cap.
fn opponents(anchor: &Candidate, all: &[Candidate], met: &Met, policy: Policy) -> Option<[i64; 2]> {
    let others: Vec<&Candidate> = all.iter().filter(|c| c.version != anchor.version).collect();
    let cost = |x: &Candidate, y: &Candidate| -> Option<f64> {
        let times = met.get(&pair(x.version, y.version)).copied().unwrap_or(0);
        (times < policy.pair_cap)
            .then(|| f64::from(times) + (x.rating - y.rating).abs() / RATING_PER_MEETING)
    };
    // The anchor's side of each table, once per opponent.
    let to_anchor: Vec<Option<f64>> = others.iter().map(|x| cost(anchor, x)).collect();
    let mut best: Option<(f64, [i64; 2])> = None;
    for (i, b) in others.iter().enumerate() {
        let Some(ab) = to_anchor[i] else { continue };
        for (j, c) in others.iter().enumerate().skip(i + 1) {
            let Some(ac) = to_anchor[j] else { continue };
            // A pair's cost is never negative: a table whose anchor's side
            // alone costs more than the best is not looked up.
            if best.is_some_and(|(t, _)| ab + ac > t) {
                continue;
            }
            let Some(total) = cost(b, c).map(|bc| ab + ac + bc) else {
                continue;
            };
            // Strictly cheaper only: among equals the first found (lower ids) stays.
            if best.is_none_or(|(t, _)| total < t) {
                best = Some((total, [b.version, c.version]));
            }
        }
    }
    best.map(|(_, pair)| pair)
}

/// What [`next`] needs, from the sets planned so far (each its versions and
/// id, in order), the active versions and their ratings.
pub fn candidates(
    active: &[i64],
    sets: &[(i64, [i64; 3])],
    ratings: &BTreeMap<i64, f64>,
) -> (Vec<Candidate>, Met) {
    let mut met = Met::new();
    let mut seen: BTreeMap<i64, (u32, i64)> = BTreeMap::new();
    for (id, vs) in sets {
        for (k, &v) in vs.iter().enumerate() {
            let e = seen.entry(v).or_insert((0, *id));
            e.0 += 1;
            e.1 = *id;
            for &w in &vs[k + 1..] {
                *met.entry(pair(v, w)).or_default() += 1;
            }
        }
    }
    let candidates = active
        .iter()
        .map(|&v| Candidate {
            version: v,
            sets: seen.get(&v).map_or(0, |s| s.0),
            last_set: seen.get(&v).map(|s| s.1),
            rating: ratings.get(&v).copied().unwrap_or(0.0),
        })
        .collect();
    (candidates, met)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: Policy = Policy {
        min_sets: 2,
        pair_cap: 4,
    };

    /// Plans `n` sets in a row with the policy, as the coordinator does when
    /// each set is planned before the next (ratings held fixed).
    fn plan(
        active: &[i64],
        ratings: &BTreeMap<i64, f64>,
        n: usize,
        policy: Policy,
    ) -> Vec<(i64, [i64; 3])> {
        let mut sets = Vec::new();
        for id in 1..=n as i64 {
            let (c, met) = candidates(active, &sets, ratings);
            let Some(t) = next(&c, &met, policy) else {
                break;
            };
            sets.push((id, t));
        }
        sets
    }

    #[test]
    fn every_pair_meets_and_no_one_waits_longer_than_the_field() {
        let active = [1, 2, 3, 4, 5, 6];
        let uncapped = Policy {
            pair_cap: 1000,
            ..POLICY
        };
        let sets = plan(&active, &BTreeMap::new(), 60, uncapped);
        let (_, met) = candidates(&active, &sets, &BTreeMap::new());
        for (i, &a) in active.iter().enumerate() {
            for &b in &active[i + 1..] {
                assert!(met.get(&(a, b)).copied().unwrap_or(0) > 0, "{a} and {b}");
            }
        }
        for &v in &active {
            let seated: Vec<i64> = (sets.iter())
                .filter(|(_, t)| t.contains(&v))
                .map(|(id, _)| *id)
                .collect();
            let gaps = seated.windows(2).map(|w| w[1] - w[0] - 1);
            assert!(
                gaps.into_iter().all(|g| g < active.len() as i64),
                "{v}: {seated:?}"
            );
        }
    }

    #[test]
    fn a_new_version_gets_its_minimum_first() {
        let ratings = BTreeMap::new();
        let policy = Policy {
            pair_cap: 1000,
            ..POLICY
        };
        let mut sets = plan(&[1, 2, 3, 4], &ratings, 8, policy);
        // Version 5 replaces version 4.
        let active = [1, 2, 3, 5];
        for id in 9..=10 {
            let (c, met) = candidates(&active, &sets, &ratings);
            let t = next(&c, &met, policy).unwrap();
            assert_eq!(t[0], 5, "set {id} is for the newcomer");
            sets.push((id, t));
        }
        let (c, met) = candidates(&active, &sets, &ratings);
        assert_ne!(next(&c, &met, policy).unwrap()[0], 5, "its minimum is met");
    }

    #[test]
    fn close_ratings_meet_more_often_and_the_cap_holds() {
        let active = [1, 2, 3, 4, 5];
        let ratings: BTreeMap<i64, f64> =
            [(1, 400.0), (2, 390.0), (3, 0.0), (4, -390.0), (5, -400.0)].into();
        let uncapped = Policy {
            pair_cap: 1000,
            ..POLICY
        };
        let sets = plan(&active, &ratings, 40, uncapped);
        let (_, met) = candidates(&active, &sets, &ratings);
        let m = |a, b| met.get(&(a, b)).copied().unwrap_or(0);
        assert!(m(1, 2) > m(1, 5) && m(4, 5) > m(1, 5), "{met:?}");
        assert!(m(1, 5) > 0, "every pair still meets: {met:?}");
        let sets = plan(&active, &ratings, 200, POLICY);
        let (c, met) = candidates(&active, &sets, &ratings);
        assert!(met.values().all(|&n| n <= POLICY.pair_cap), "{met:?}");
        // No table left without a capped pair: nothing more is planned.
        assert_eq!(next(&c, &met, POLICY), None);
        assert!(sets.len() < 200);
    }

    #[test]
    fn fewer_than_three_is_nothing_to_play() {
        let (c, met) = candidates(&[1, 2], &[], &BTreeMap::new());
        assert_eq!(next(&c, &met, POLICY), None);
    }
}

#[cfg(test)]
mod scale;
