//! A season's ratings: the tournament's Plackett–Luce fit
//! (`tournament/rating.rs`) over every game of every finished set, each
//! version its own entrant. One fit of all games at once, so neither the
//! order the sets finished in nor how many tables played them changes a
//! rating; refitted whenever a set finishes, and kept as each version's
//! history. A new version starts with no games and the prior's wide
//! interval: it inherits nothing of its predecessor's certainty.

use std::collections::BTreeSet;

use super::db::RatingRow;
use crate::tournament::outcome::GameOutcome;
use crate::tournament::rating::{fit, Ranked};

/// The ratings after `after_sets` finished sets whose games are `games`
/// (outcomes' `teams` are version ids): one row per version that played.
pub fn refit(after_sets: i64, games: &[GameOutcome]) -> Vec<RatingRow> {
    let versions: Vec<usize> = games
        .iter()
        .flat_map(|o| o.teams)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let index = |v: usize| {
        versions
            .binary_search(&v)
            .expect("a version of these games")
    };
    let ranked = games.iter().map(|o| {
        let teams = o.teams.map(index);
        Ranked::new(teams, o.ranking, &o.forfeited)
    });
    let ratings = fit(versions.len(), ranked);
    versions
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let [low, high] = ratings.interval(i);
            RatingRow {
                after_sets,
                version: v as i64,
                rating: ratings.rating(i),
                low,
                high,
                games: games.iter().filter(|o| o.teams.contains(&v)).count() as i64,
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
        let a = refit(4, &games);
        games.reverse();
        let b = refit(4, &games);
        assert_eq!(a, b);
        let rating = |v| a.iter().find(|r| r.version == v).unwrap().rating;
        assert!(rating(10) > rating(20) && rating(20) > rating(30), "{a:?}");
        assert!(a.iter().all(|r| r.low < r.rating && r.rating < r.high));
    }
}
