//! The schedule's vocabulary: matchups, games and their keys, seeds, seating and
//! shards — what every format's tables become (the tables themselves come from
//! the format: see `format/`). Pure — no processes, no files, no clock — so every
//! other part of a tournament (the pool, the journal, shards) agrees on what
//! "game 7 of matchup 3" is and what its seed is, whatever order tables finish in.
//!
//! A matchup is three entrants at one table. It is played in duplicate sets: a set
//! is six games on the same seed, one for each arrangement of the three entrants
//! over the three team positions, so every entrant plays every position on the
//! same cards. Seeds follow the schedule: tournament seed → round → matchup → set.

use schmier_protocol::shuffle::derive_seed;

/// The six arrangements of a matchup's three entrants over team positions 0, 1, 2:
/// arrangement `a` puts matchup entrant `ARRANGEMENTS[a][t]` at team position `t`.
/// Each entrant takes each position exactly twice.
pub const ARRANGEMENTS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [1, 2, 0],
    [2, 0, 1],
    [0, 2, 1],
    [2, 1, 0],
    [1, 0, 2],
];

/// Games in a duplicate set.
pub const SET: u32 = ARRANGEMENTS.len() as u32;

/// Request ids of a matchup's game `g` (from 1) start at `(g - 1) << REQUEST_ID_BITS`,
/// so a table restarted mid-matchup (on resume) sends the same ids as one that
/// played through, and ids still increase through a session. A game has far fewer
/// than 2^20 decisions (the hand cap bounds it).
pub const REQUEST_ID_BITS: u32 = 20;

/// Three entrants at one table, for `sets` duplicate sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matchup {
    /// Position in the schedule, from 0; names the matchup's files.
    pub index: u32,
    pub round: u32,
    /// Entrant indices; `entrants[k]` is lineup team `k` (slots `k` and `k + 3`).
    pub entrants: [usize; 3],
    pub sets: u32,
    /// The matchup's seed (recorded as `match_seed` in its transcripts).
    pub seed: u64,
}

/// One game of a matchup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GameKey {
    /// 0 for the one-round formats, from 1 for knockout and Swiss.
    pub round: u32,
    /// Position within the round, from 0.
    pub matchup: u32,
    /// From 1: set `s` (from 0), arrangement `a` is game `s * 6 + a + 1`.
    pub game: u32,
}

impl Matchup {
    pub fn games(&self) -> u32 {
        self.sets * SET
    }

    pub fn keys(&self) -> impl Iterator<Item = GameKey> + '_ {
        (1..=self.games()).map(|game| GameKey {
            round: self.round,
            matchup: self.index,
            game,
        })
    }

    /// The duplicate set (from 1) that game `game` (from 1) belongs to.
    pub fn set_of(&self, game: u32) -> u32 {
        (game - 1) / SET + 1
    }

    /// The seed of game `game` (from 1): the same for the six games of a set. It
    /// is derived exactly as `referee play` derives game `set` of a match seeded
    /// with the matchup's seed, so a transcript records the matchup seed as its
    /// `match_seed` and the set as its `game`, and `referee verify` can check it.
    pub fn game_seed(&self, game: u32) -> u64 {
        derive_seed(self.seed, u64::from(self.set_of(game) - 1))
    }

    /// Which matchup entrant (0, 1, 2) sits at each team position in game `game`.
    pub fn arrangement(&self, game: u32) -> [usize; 3] {
        ARRANGEMENTS[((game - 1) % SET) as usize]
    }

    /// The entrant index at each team position in game `game`.
    pub fn teams(&self, game: u32) -> [usize; 3] {
        self.arrangement(game).map(|k| self.entrants[k])
    }

    /// The lineup slot at each seat in game `game`: lineup team `k` is slots `k`
    /// and `k + 3`; seat `s` is team position `s % 3`, and partners stay together.
    pub fn seat_slot(&self, game: u32) -> [usize; 6] {
        let arrangement = self.arrangement(game);
        std::array::from_fn(|seat| arrangement[seat % 3] + 3 * (seat / 3))
    }

    /// The first request id of game `game`.
    pub fn first_request_id(&self, game: u32) -> u64 {
        (u64::from(game - 1) << REQUEST_ID_BITS) + 1
    }
}

/// Numbers a round's tables as matchups in the order given, each with its
/// seed: tournament seed → round → matchup.
pub(super) fn numbered(tables: Vec<[usize; 3]>, round: u32, sets: u32, seed: u64) -> Vec<Matchup> {
    let round_seed = derive_seed(seed, u64::from(round));
    tables
        .into_iter()
        .enumerate()
        .map(|(i, entrants)| Matchup {
            index: i as u32,
            round,
            entrants,
            sets,
            seed: derive_seed(round_seed, i as u64),
        })
        .collect()
}

/// What pairing needs to know of a finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    pub key: GameKey,
    /// Entrant at each team position.
    pub teams: [usize; 3],
    /// Team position credited with the win.
    pub winner: Option<usize>,
    pub scores: [i32; 3],
}

/// A deterministic slice of a schedule: shard `index` of `count` plays the
/// matchups whose index is `index` modulo `count` (so each shard gets a mix of
/// early and late matchups).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    pub fn holds(&self, m: &Matchup) -> bool {
        m.index % self.count == self.index
    }
}

/// Why a `K/N` shard does not parse.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("{0:?} is not K/N, e.g. 0/3")]
    NotKOfN(String),
    #[error("{0:?}: K is not a number")]
    BadIndex(String),
    #[error("{0:?}: N is not a number")]
    BadCount(String),
    #[error("{0:?}: need 0 <= K < N (shards are numbered from 0)")]
    OutOfRange(String),
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| ShardError::NotKOfN(s.to_owned()))?;
        let index: u32 = (k.trim().parse()).map_err(|_| ShardError::BadIndex(s.to_owned()))?;
        let count: u32 = (n.trim().parse()).map_err(|_| ShardError::BadCount(s.to_owned()))?;
        if count == 0 || index >= count {
            return Err(ShardError::OutOfRange(s.to_owned()));
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables of a round robin of `n`, numbered (the round robin's own
    /// tests are in `format/round_robin.rs`).
    fn matchups(n: usize, sets: u32, seed: u64) -> Vec<Matchup> {
        let mut tables = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                tables.extend((b + 1..n).map(|c| [a, b, c]));
            }
        }
        numbered(tables, 0, sets, seed)
    }

    #[test]
    fn a_set_is_one_seed_and_every_entrant_in_every_position_twice() {
        let m = &matchups(3, 3, 42)[0];
        for set in 0..3 {
            let games: Vec<u32> = (1..=6).map(|a| set * 6 + a).collect();
            let seed = m.game_seed(games[0]);
            assert!(games.iter().all(|&g| m.game_seed(g) == seed));
            for entrant in 0..3 {
                for position in 0..3 {
                    let times = games
                        .iter()
                        .filter(|&&g| m.teams(g)[position] == entrant)
                        .count();
                    assert_eq!(times, 2, "entrant {entrant} at position {position}");
                }
            }
        }
        // Different sets, different deals.
        assert_ne!(m.game_seed(1), m.game_seed(7));
        assert_ne!(m.game_seed(7), m.game_seed(13));
    }

    #[test]
    fn seating_keeps_partners_together_and_puts_each_entrant_at_its_position() {
        let m = &matchups(3, 1, 0)[0];
        for game in 1..=6 {
            let slots = m.seat_slot(game);
            let teams = m.teams(game);
            for seat in 0..6 {
                // Lineup slot k and k + 3 belong to matchup entrant k.
                assert_eq!(m.entrants[slots[seat] % 3], teams[seat % 3]);
            }
            assert_eq!(slots[0] % 3, slots[3] % 3, "partners");
            let mut all = slots;
            all.sort();
            assert_eq!(all, [0, 1, 2, 3, 4, 5], "each process once");
        }
    }

    #[test]
    fn seeds_follow_the_schedule_and_the_tournament_seed() {
        let a = matchups(5, 1, 7);
        let b = matchups(5, 1, 7);
        let c = matchups(5, 1, 8);
        assert_eq!(a, b);
        assert!(a.iter().zip(&c).all(|(x, y)| x.seed != y.seed));
        let seeds: std::collections::BTreeSet<u64> = a.iter().map(|m| m.seed).collect();
        assert_eq!(seeds.len(), a.len(), "matchup seeds are distinct");
    }

    #[test]
    fn shards_partition_the_matchups() {
        let ms = matchups(7, 1, 3);
        for count in 1..5 {
            let mut covered = vec![0; ms.len()];
            for index in 0..count {
                let shard = Shard { index, count };
                for m in ms.iter().filter(|m| shard.holds(m)) {
                    covered[m.index as usize] += 1;
                }
            }
            assert!(
                covered.iter().all(|&c| c == 1),
                "{count} shards: {covered:?}"
            );
        }
    }

    #[test]
    fn request_ids_of_later_games_start_above_earlier_ones() {
        let m = &matchups(3, 2, 0)[0];
        for g in 1..m.games() {
            assert!(m.first_request_id(g + 1) > m.first_request_id(g) + 100_000);
        }
    }

    #[test]
    fn shard_parsing_says_what_is_wrong() {
        assert_eq!("1/3".parse::<Shard>(), Ok(Shard { index: 1, count: 3 }));
        let err = |s: &str| s.parse::<Shard>().unwrap_err().to_string();
        assert!(err("3/3").contains("0 <= K < N"), "{}", err("3/3"));
        assert!(err("x/3").contains("K is not"), "{}", err("x/3"));
        assert!(err("13").contains("K/N"), "{}", err("13"));
    }
}
