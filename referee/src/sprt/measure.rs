//! The measure the test runs on: a duplicate set's difference, new minus base,
//! in points per game of duplicate score — the standings' duplicate score (a
//! team's final score minus the mean of the other two teams' on the same deal)
//! of each bot over the set's six games, divided by six. So the estimate an
//! SPRT prints is the difference a tournament's `dup` column would show.
//!
//! Within a set each bot plays every team position on the same cards, so the
//! luck of the deal cancels from the difference; what is left varies from set
//! to set with the cards' difficulty, which is why the test fits the variance.

use crate::tournament::outcome::GameOutcome;
use crate::tournament::standings;

/// Entrant indices in an SPRT's one matchup.
pub const NEW: usize = 0;
pub const BASE: usize = 1;

/// The difference of one complete set from its six games' outcomes (any order).
/// A bot that forfeited a game is credited there with the worst duplicate
/// score of the set (the standings' rule), not with what its stand-in played.
pub fn set_difference<'a>(games: impl IntoIterator<Item = &'a GameOutcome> + Clone) -> f64 {
    let worst = standings::worst(games.clone());
    let mut duplicate = [0.0f64; 3];
    let mut n = 0u32;
    for o in games {
        n += 1;
        for t in 0..3 {
            duplicate[o.teams[t]] += standings::credited(o, t, worst);
        }
    }
    (duplicate[NEW] - duplicate[BASE]) / f64::from(n.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(teams: [usize; 3], scores: [i32; 3]) -> GameOutcome {
        GameOutcome {
            round: 0,
            matchup: 0,
            game: 1,
            seed: 0,
            teams,
            transcript: String::new(),
            scores,
            deals: 1,
            ranking: [0, 1, 2],
            winner: None,
            forfeited: Vec::new(),
            made: [0; 3],
            set: [0; 3],
            won: [0; 3],
            hands: 1,
            faults: Default::default(),
        }
    }

    #[test]
    fn the_difference_is_the_duplicate_scores_per_game() {
        // new scores 21, base 9, third 0 wherever they sit: per game new's
        // duplicate score is 21 − 4.5, base's 9 − 10.5; the difference 18.
        let arrangements = crate::tournament::schedule::ARRANGEMENTS;
        let by_entrant = [21, 9, 0];
        let games: Vec<GameOutcome> = arrangements
            .iter()
            .map(|a| game(*a, a.map(|e| by_entrant[e])))
            .collect();
        assert_eq!(set_difference(&games), 18.0);
    }

    #[test]
    fn a_forfeiting_bot_is_credited_with_the_worst_score_of_the_set() {
        // new forfeits every game, yet its stand-in scores 21 to base's 9:
        // new is credited with the set's worst duplicate score, base's 9 −
        // 10.5 = −1.5 or the third's 0 − 15 = −15, whichever is lower.
        let by_entrant = [21, 9, 0];
        let games: Vec<GameOutcome> = crate::tournament::schedule::ARRANGEMENTS
            .iter()
            .map(|a| {
                let mut g = game(*a, a.map(|e| by_entrant[e]));
                g.forfeited = vec![a.iter().position(|&e| e == NEW).unwrap()];
                g
            })
            .collect();
        assert_eq!(set_difference(&games), -15.0 - -1.5);
        // A forfeit in one game of six costs that game only.
        let mut once = games.clone();
        for g in &mut once[1..] {
            g.forfeited.clear();
        }
        assert_eq!(set_difference(&once), (5.0 * 16.5 - 15.0) / 6.0 - -1.5);
    }

    #[test]
    fn equal_bots_on_the_same_cards_differ_by_nothing() {
        // Whoever sits at position 0 scores 10; position decides everything.
        let games: Vec<GameOutcome> = crate::tournament::schedule::ARRANGEMENTS
            .iter()
            .map(|a| game(*a, [10, -3, 5]))
            .collect();
        assert_eq!(set_difference(&games), 0.0);
    }
}
