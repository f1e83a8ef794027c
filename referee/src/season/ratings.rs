//! A season's ratings: the tournament's Plackett–Luce fit
//! (`tournament/rating.rs`) over every game of every finished set, each
//! version its own entrant. One fit of all games at once, so neither the
//! order the sets finished in nor how many tables played them changes a
//! rating (beyond the fit's tolerance); refitted whenever a set finishes,
//! warm-started from the ratings before it, and kept as each version's
//! history. A new version starts with no games and the prior's wide
//! interval: it inherits nothing of its predecessor's certainty.

use std::collections::BTreeMap;

use super::db::RatingRow;
use crate::tournament::outcome::GameOutcome;
use crate::tournament::rating::{fit_from, Ranked};

/// The ratings after `after_sets` finished sets whose games are `games`
/// (outcomes' `teams` are version ids): one row per version that played.
/// The fit starts from `start` (the ratings before; empty: from nothing),
/// which changes how fast it ends, not where (`rating::fit_from`).
pub fn refit(after_sets: i64, games: &[GameOutcome], start: &[RatingRow]) -> Vec<RatingRow> {
    // Each version's games, counted in one pass: its index is its place.
    let mut counted: BTreeMap<usize, i64> = BTreeMap::new();
    for o in games {
        for &v in &o.teams {
            *counted.entry(v).or_default() += 1;
        }
    }
    let versions: Vec<usize> = counted.keys().copied().collect();
    let index = |v: usize| {
        versions
            .binary_search(&v)
            .expect("a version of these games")
    };
    let ranked = games.iter().map(|o| {
        let teams = o.teams.map(index);
        Ranked::new(teams, o.ranking, &o.forfeited)
    });
    let before: BTreeMap<usize, f64> = (start.iter())
        .map(|r| (r.version as usize, r.rating))
        .collect();
    let warm: Vec<f64> = (versions.iter())
        .map(|v| before.get(v).copied().unwrap_or(f64::NAN))
        .collect();
    let ratings = fit_from(versions.len(), ranked, &warm);
    (versions.iter().zip(counted.values()))
        .enumerate()
        .map(|(i, (&v, &games))| {
            let [low, high] = ratings.interval(i);
            RatingRow {
                after_sets,
                version: v as i64,
                rating: ratings.rating(i),
                low,
                high,
                games,
            }
        })
        .collect()
}

/// Whether two sets of ratings agree (the stored and the recomputed): the
/// same versions, figures within rounding.
pub fn agree(a: &[RatingRow], b: &[RatingRow]) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-6 * (1.0 + x.abs());
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.version == y.version
                && x.games == y.games
                && close(x.rating, y.rating)
                && close(x.low, y.low)
                && close(x.high, y.high)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(teams: [usize; 3], ranking: [usize; 3]) -> GameOutcome {
        GameOutcome {
            round: 0,
            matchup: 1,
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

    #[test]
    fn the_order_of_games_changes_nothing_and_winners_rate_higher() {
        let mut games = vec![
            game([10, 20, 30], [0, 1, 2]),
            game([20, 30, 10], [2, 0, 1]),
            game([30, 10, 20], [1, 2, 0]),
            game([10, 30, 20], [0, 2, 1]),
        ];
        let a = refit(4, &games, &[]);
        games.reverse();
        let b = refit(4, &games, &[]);
        assert_eq!(a, b);
        // Warm-started from an earlier fit: the same ratings, within rounding.
        let earlier = refit(3, &games[..3], &[]);
        let warm = refit(4, &games, &earlier);
        assert!(agree(&warm, &b), "{warm:?} {b:?}");
        let rating = |v| a.iter().find(|r| r.version == v).unwrap().rating;
        assert!(rating(10) > rating(20) && rating(20) > rating(30), "{a:?}");
        assert!(a.iter().all(|r| r.low < r.rating && r.rating < r.high));
    }
}
