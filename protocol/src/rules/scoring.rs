//! Scoring a hand and deciding the game (RULES.md §23-27), as pure functions.

use serde::{Deserialize, Serialize};

use crate::seat::Team;

/// Who won each of the six points of a hand. `None` means nobody: always the case
/// for a tied Game, never (by RULES.md §18) for the other five.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Points {
    pub high: Option<Team>,
    pub low: Option<Team>,
    pub right: Option<Team>,
    pub left: Option<Team>,
    pub joker: Option<Team>,
    pub game: Option<Team>,
}

impl Points {
    pub fn all(&self) -> [Option<Team>; 6] {
        [
            self.high, self.low, self.right, self.left, self.joker, self.game,
        ]
    }

    /// Points won per team.
    pub fn won(&self) -> [i32; 3] {
        let mut won = [0; 3];
        for t in self.all().into_iter().flatten() {
            won[t.index()] += 1;
        }
        won
    }
}

/// The team with the strictly highest game count, or `None` on a tie for highest.
pub fn game_point(counts: [u32; 3]) -> Option<Team> {
    let max = *counts.iter().max().expect("three teams");
    let mut leaders = Team::all().filter(|t| counts[t.index()] == max);
    let first = leaders.next();
    if leaders.next().is_some() {
        None
    } else {
        first
    }
}

/// Score changes for a hand: the bidder's team adds what it won if that is at least
/// its bid, else loses the bid; the others add what they won.
pub fn score_deltas(points: &Points, bidder: Team, bid: u8) -> [i32; 3] {
    let mut delta = points.won();
    if delta[bidder.index()] < i32::from(bid) {
        delta[bidder.index()] = -i32::from(bid);
    }
    delta
}

/// Who has won after a hand, given the new scores and the bidding team
/// (RULES.md §26). `None`: nobody yet, deal another hand.
pub fn winner(scores: [i32; 3], bidder: Team, target: i32) -> Option<Team> {
    let best = *scores.iter().max().expect("three teams");
    if best < target {
        return None;
    }
    let leaders: Vec<Team> = Team::all().filter(|t| scores[t.index()] == best).collect();
    match leaders.as_slice() {
        [one] => Some(*one),
        _ if leaders.contains(&bidder) => Some(bidder),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Team = Team::new(0);
    const B: Team = Team::new(1);
    const C: Team = Team::new(2);

    #[test]
    fn case_9_tied_game_count_awards_no_game_point() {
        assert_eq!(game_point([30, 30, 15]), None);
        let points = Points {
            high: Some(A),
            low: Some(B),
            right: Some(C),
            left: Some(A),
            joker: Some(B),
            game: None,
        };
        assert_eq!(points.won().iter().sum::<i32>(), 5);
        assert_eq!(game_point([30, 31, 15]), Some(B));
        assert_eq!(game_point([27, 27, 27]), None);
    }

    #[test]
    fn case_10_bid_six_with_five_points_is_set() {
        let points = Points {
            high: Some(A),
            low: Some(A),
            right: Some(A),
            left: Some(A),
            joker: Some(A),
            game: None,
        };
        assert_eq!(score_deltas(&points, A, 6), [-6, 0, 0]);
    }

    #[test]
    fn case_11_set_bidder_loses_the_bid_others_score() {
        let points = Points {
            high: Some(A),
            low: Some(A),
            game: Some(A),
            right: Some(B),
            left: Some(B),
            joker: Some(C),
        };
        assert_eq!(score_deltas(&points, A, 4), [-4, 2, 1]);
    }

    #[test]
    fn made_bid_scores_everything_won() {
        let points = Points {
            high: Some(A),
            low: Some(A),
            game: Some(A),
            right: Some(A),
            left: Some(B),
            joker: Some(C),
        };
        assert_eq!(score_deltas(&points, A, 3), [4, 1, 1]);
    }

    #[test]
    fn case_12_failing_at_two_goes_negative() {
        let points = Points::default();
        let d = score_deltas(&points, A, 5);
        assert_eq!(2 + d[0], -3);
    }

    #[test]
    fn case_19_end_of_game_tie_breaks() {
        assert_eq!(winner([23, 20, 0], A, 21), Some(A));
        assert_eq!(winner([21, 22, 0], A, 21), Some(B));
        assert_eq!(winner([22, 0, 22], A, 21), Some(A));
        assert_eq!(winner([22, 0, 22], C, 21), Some(C));
        assert_eq!(winner([-3, 22, 22], A, 21), None);
        assert_eq!(winner([20, 20, 20], A, 21), None);
    }
}
