//! The schedule: entrants, format and seed in, the list of matchups and games out.
//! Pure — no processes, no files, no clock — so every other part of a tournament
//! (the pool, the journal, shards) agrees on what "game 7 of matchup 3" is and
//! what its seed is, whatever order tables finish in.
//!
//! A matchup is three entrants at one table. It is played in duplicate sets: a set
//! is six games on the same seed, one for each arrangement of the three entrants
//! over the three team positions, so every entrant plays every position on the
//! same cards. Seeds follow the schedule: tournament seed → round → matchup → set.

use schmier_protocol::shuffle::derive_seed;

/// How entrants are brought together.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Format {
    /// Every combination of three entrants plays one matchup.
    RoundRobin,
    /// A balanced subset of the round robin for large fields: every pair of
    /// entrants meets exactly once (a Steiner triple system, n(n−1)/6 tables
    /// instead of n(n−1)(n−2)/6). Exists for n ≡ 1 or 3 (mod 6).
    Balanced,
    /// Each challenger plays every pair of the other (pool) entrants.
    Gauntlet {
        /// Entrant indices of the challengers.
        challengers: Vec<usize>,
    },
    /// Rounds of tables of three; each table's winner advances (see [`advances`]).
    Knockout,
    /// `rounds` rounds; each round's tables group entrants of similar standing
    /// (see [`swiss_tables`]).
    Swiss { rounds: u32 },
}

impl Format {
    /// Knockout and Swiss are played round by round: a round's tables follow from
    /// the results of the rounds before it.
    pub fn by_rounds(&self) -> bool {
        matches!(self, Format::Knockout | Format::Swiss { .. })
    }
}

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

/// The matchups of a one-round format (round robin, gauntlet), in schedule order.
/// Knockout and Swiss have none up front: see [`round`].
pub fn matchups(entrants: usize, format: &Format, sets: u32, seed: u64) -> Vec<Matchup> {
    let tables: Vec<[usize; 3]> = match format {
        Format::Knockout | Format::Swiss { .. } => return Vec::new(),
        Format::Balanced => steiner_triples(entrants).unwrap_or_default(),
        Format::RoundRobin => triples(&(0..entrants).collect::<Vec<_>>()),
        Format::Gauntlet { challengers } => {
            let pool: Vec<usize> = (0..entrants).filter(|e| !challengers.contains(e)).collect();
            challengers
                .iter()
                .flat_map(|&c| pairs(&pool).into_iter().map(move |[a, b]| [c, a, b]))
                .collect()
        }
    };
    numbered(tables, 0, sets, seed)
}

fn numbered(tables: Vec<[usize; 3]>, round: u32, sets: u32, seed: u64) -> Vec<Matchup> {
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

/// Round `r` (from 1) of a knockout or Swiss tournament, from the results of
/// rounds `1..r` (all complete). `None` when the tournament is over (a knockout
/// with one entrant left, a Swiss after its last round).
pub fn round(
    entrants: usize,
    format: &Format,
    sets: u32,
    seed: u64,
    r: u32,
    before: &[GameResult],
) -> Option<Vec<Matchup>> {
    assert!(r >= 1, "rounds count from 1");
    let tables = match format {
        Format::RoundRobin | Format::Balanced | Format::Gauntlet { .. } => return None,
        Format::Knockout => {
            let alive = knockout_alive(entrants, sets, seed, r, before);
            if alive.len() < 2 {
                return None;
            }
            knockout_tables(&alive, &knockout_eliminated_order(entrants, before, &alive))
        }
        Format::Swiss { rounds } => {
            if r > *rounds {
                return None;
            }
            swiss_tables(entrants, before)
        }
    };
    Some(numbered(tables, r, sets, seed))
}

/// Per entrant over `games`: game wins, then duplicate points (own score minus
/// the mean of the other two teams', doubled to stay integral).
fn tally(entrants: usize, games: &[&GameResult]) -> Vec<(u32, i64)> {
    let mut t = vec![(0u32, 0i64); entrants];
    for g in games {
        for p in 0..3 {
            let e = g.teams[p];
            t[e].0 += u32::from(g.winner == Some(p));
            t[e].1 += 2 * i64::from(g.scores[p])
                - i64::from(g.scores[(p + 1) % 3])
                - i64::from(g.scores[(p + 2) % 3]);
        }
    }
    t
}

/// Who advances from a knockout table: the entrant with the most game wins at it,
/// ties broken by duplicate points at it, then by the lower entrant number (the
/// earlier-listed, i.e. better-seeded, entrant). In a final of two the third seat
/// is a sparring entrant who cannot advance.
pub fn advances(m: &Matchup, games: &[&GameResult], contenders: &[usize]) -> usize {
    let mine: Vec<&GameResult> = games
        .iter()
        .copied()
        .filter(|g| g.key.round == m.round && g.key.matchup == m.index)
        .collect();
    let t = tally(m.entrants.iter().max().map_or(0, |&e| e + 1), &mine);
    *m.entrants
        .iter()
        .filter(|e| contenders.contains(e))
        .max_by_key(|&&e| (t[e].0, t[e].1, std::cmp::Reverse(e)))
        .expect("a table has a contender")
}

/// The entrants still in a knockout before round `r`, best seed first.
pub fn knockout_alive(
    entrants: usize,
    sets: u32,
    seed: u64,
    r: u32,
    before: &[GameResult],
) -> Vec<usize> {
    let mut alive: Vec<usize> = (0..entrants).collect();
    for earlier in 1..r {
        let elim = knockout_eliminated_order(entrants, before, &alive);
        let tables = knockout_tables(&alive, &elim);
        let ms = numbered(tables, earlier, sets, seed);
        let games: Vec<&GameResult> = before.iter().filter(|g| g.key.round == earlier).collect();
        let byes: Vec<usize> = alive
            .iter()
            .copied()
            .filter(|e| ms.iter().all(|m| !m.entrants.contains(e)))
            .collect();
        let mut next: Vec<usize> = byes;
        next.extend(ms.iter().map(|m| advances(m, &games, &alive)));
        next.sort();
        alive = next;
    }
    alive
}

/// Entrants already out, best first (most wins overall, then duplicate points,
/// then entrant number): the sparring partner of a final of two is the first.
fn knockout_eliminated_order(
    entrants: usize,
    before: &[GameResult],
    alive: &[usize],
) -> Vec<usize> {
    let all: Vec<&GameResult> = before.iter().collect();
    let t = tally(entrants, &all);
    let mut out: Vec<usize> = (0..entrants).filter(|e| !alive.contains(e)).collect();
    out.sort_by_key(|&e| (std::cmp::Reverse(t[e].0), std::cmp::Reverse(t[e].1), e));
    out
}

/// A knockout round's tables: the alive entrants in seed order, in threes; when
/// the count does not divide by three, the best seeds get byes (one or two). Two
/// left: a final, with the best eliminated entrant as the third team.
fn knockout_tables(alive: &[usize], eliminated: &[usize]) -> Vec<[usize; 3]> {
    match alive.len() {
        0 | 1 => Vec::new(),
        2 => vec![[alive[0], alive[1], eliminated[0]]],
        n => alive[n % 3..]
            .chunks(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect(),
    }
}

/// A Swiss round's tables: entrants ordered by standing so far (game wins, then
/// duplicate points, then entrant number); the best unplaced entrant is seated
/// with the next two in that order it has not met, who have not met each other,
/// falling back to the next two in order when that is impossible. When the count
/// does not divide by three, the lowest-ranked one or two sit the round out
/// (a bye scores nothing).
pub fn swiss_tables(entrants: usize, before: &[GameResult]) -> Vec<[usize; 3]> {
    let all: Vec<&GameResult> = before.iter().collect();
    let t = tally(entrants, &all);
    let mut order: Vec<usize> = (0..entrants).collect();
    order.sort_by_key(|&e| (std::cmp::Reverse(t[e].0), std::cmp::Reverse(t[e].1), e));
    order.truncate(entrants - entrants % 3);
    let met = |a: usize, b: usize| {
        before
            .iter()
            .any(|g| g.teams.contains(&a) && g.teams.contains(&b))
    };
    let mut tables = Vec::new();
    let mut left = order;
    while !left.is_empty() {
        let a = left.remove(0);
        let mut pick: Option<(usize, usize)> = None;
        'search: for i in 0..left.len() {
            for j in i + 1..left.len() {
                let (b, c) = (left[i], left[j]);
                if !met(a, b) && !met(a, c) && !met(b, c) {
                    pick = Some((i, j));
                    break 'search;
                }
            }
        }
        let (i, j) = pick.unwrap_or((0, 1));
        let c = left.remove(j);
        let b = left.remove(i);
        tables.push([a, b, c]);
    }
    tables
}

/// Every 3-element subset of `items`, in lexicographic order.
fn triples(items: &[usize]) -> Vec<[usize; 3]> {
    let mut out = Vec::new();
    for (i, &a) in items.iter().enumerate() {
        for (j, &b) in items.iter().enumerate().skip(i + 1) {
            for &c in &items[j + 1..] {
                out.push([a, b, c]);
            }
        }
    }
    out
}

/// A Steiner triple system on `0..n`: triples in which every pair of points lies
/// in exactly one. Bose's construction for n ≡ 3 (mod 6) and Skolem's for
/// n ≡ 1 (mod 6) (as in Lindner and Rodger, *Design Theory*, ch. 1); `None` for
/// other n, where none exists. Triples sorted, each ascending.
pub fn steiner_triples(n: usize) -> Option<Vec<[usize; 3]>> {
    let mut out = Vec::new();
    match n % 6 {
        3 => {
            // Points (x, i), x in Z_m, i in Z_3, numbered x + m·i; m = n / 3 is
            // odd, and x∘y = (x + y)(m + 1)/2 mod m is an idempotent commutative
            // quasigroup on Z_m.
            let m = n / 3;
            let p = |x: usize, i: usize| x + m * (i % 3);
            let op = |x: usize, y: usize| (x + y) * (m + 1) / 2 % m;
            for x in 0..m {
                out.push([p(x, 0), p(x, 1), p(x, 2)]);
            }
            for x in 0..m {
                for y in x + 1..m {
                    for i in 0..3 {
                        out.push([p(x, i), p(y, i), p(op(x, y), i + 1)]);
                    }
                }
            }
        }
        1 if n > 1 => {
            // Points ∞ = n − 1 and (x, i), x in Z_2k, i in Z_3, numbered x + 2k·i;
            // x∘y = σ((x + y) mod 2k) with σ(2j) = j, σ(2j + 1) = k + j is a
            // half-idempotent commutative quasigroup: x∘x = (x + k)∘(x + k) = x.
            let k = (n - 1) / 6;
            let q = 2 * k;
            let inf = n - 1;
            let p = |x: usize, i: usize| x + q * (i % 3);
            let op = |x: usize, y: usize| {
                let s = (x + y) % q;
                if s.is_multiple_of(2) {
                    s / 2
                } else {
                    k + s / 2
                }
            };
            for x in 0..k {
                out.push([p(x, 0), p(x, 1), p(x, 2)]);
                for i in 0..3 {
                    out.push([inf, p(k + x, i), p(x, i + 1)]);
                }
            }
            for x in 0..q {
                for y in x + 1..q {
                    for i in 0..3 {
                        out.push([p(x, i), p(y, i), p(op(x, y), i + 1)]);
                    }
                }
            }
        }
        _ => return None,
    }
    for t in &mut out {
        t.sort();
    }
    out.sort();
    Some(out)
}

/// Every 2-element subset of `items`, in lexicographic order.
fn pairs(items: &[usize]) -> Vec<[usize; 2]> {
    let mut out = Vec::new();
    for (i, &a) in items.iter().enumerate() {
        for &b in &items[i + 1..] {
            out.push([a, b]);
        }
    }
    out
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

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("{s:?} is not K/N, e.g. 0/3"))?;
        let index: u32 = k
            .trim()
            .parse()
            .map_err(|_| format!("{s:?}: K is not a number"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("{s:?}: N is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "{s:?}: need 0 <= K < N (shards are numbered from 0)"
            ));
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binomial(n: usize, k: usize) -> usize {
        (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
    }

    #[test]
    fn round_robin_has_every_triple_once() {
        for n in 3..9 {
            let ms = matchups(n, &Format::RoundRobin, 1, 1);
            assert_eq!(ms.len(), binomial(n, 3), "{n} entrants");
            let mut seen = std::collections::BTreeSet::new();
            for m in &ms {
                let [a, b, c] = m.entrants;
                assert!(a < b && b < c && c < n);
                assert!(seen.insert(m.entrants), "{:?} twice", m.entrants);
            }
            // Every pair meets the same number of times: n - 2.
            for a in 0..n {
                for b in a + 1..n {
                    let meets = ms
                        .iter()
                        .filter(|m| m.entrants.contains(&a) && m.entrants.contains(&b))
                        .count();
                    assert_eq!(meets, n - 2);
                }
            }
        }
    }

    #[test]
    fn a_balanced_round_robin_has_every_pair_meet_exactly_once() {
        for n in 3..=45 {
            let Some(triples) = steiner_triples(n) else {
                assert!(n % 6 != 1 && n % 6 != 3, "{n}: a system exists");
                continue;
            };
            assert_eq!(triples.len(), n * (n - 1) / 6, "{n}");
            let mut met = vec![vec![0; n]; n];
            for t in &triples {
                assert!(t[0] < t[1] && t[1] < t[2] && t[2] < n, "{n}: {t:?}");
                for (a, b) in [(t[0], t[1]), (t[0], t[2]), (t[1], t[2])] {
                    met[a][b] += 1;
                }
            }
            for (a, row) in met.iter().enumerate() {
                for (b, &times) in row.iter().enumerate().skip(a + 1) {
                    assert_eq!(times, 1, "{n}: {a} and {b}");
                }
            }
        }
        assert_eq!(matchups(7, &Format::Balanced, 1, 0).len(), 7);
    }

    #[test]
    fn gauntlet_puts_each_challenger_against_every_pool_pair() {
        let ms = matchups(
            6,
            &Format::Gauntlet {
                challengers: vec![4, 1],
            },
            2,
            9,
        );
        // Pool {0, 2, 3, 5}: 6 pairs, for each of 2 challengers.
        assert_eq!(ms.len(), 12);
        for (i, m) in ms.iter().enumerate() {
            let challenger = if i < 6 { 4 } else { 1 };
            assert_eq!(m.entrants[0], challenger);
            assert!(!m.entrants[1..].contains(&4) && !m.entrants[1..].contains(&1));
            assert_eq!(m.games(), 12);
        }
    }

    #[test]
    fn a_set_is_one_seed_and_every_entrant_in_every_position_twice() {
        let m = &matchups(3, &Format::RoundRobin, 3, 42)[0];
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
        let m = &matchups(3, &Format::RoundRobin, 1, 0)[0];
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
        let a = matchups(5, &Format::RoundRobin, 1, 7);
        let b = matchups(5, &Format::RoundRobin, 1, 7);
        let c = matchups(5, &Format::RoundRobin, 1, 8);
        assert_eq!(a, b);
        assert!(a.iter().zip(&c).all(|(x, y)| x.seed != y.seed));
        let seeds: std::collections::BTreeSet<u64> = a.iter().map(|m| m.seed).collect();
        assert_eq!(seeds.len(), a.len(), "matchup seeds are distinct");
    }

    #[test]
    fn shards_partition_the_matchups() {
        let ms = matchups(7, &Format::RoundRobin, 1, 3);
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
        let m = &matchups(3, &Format::RoundRobin, 2, 0)[0];
        for g in 1..m.games() {
            assert!(m.first_request_id(g + 1) > m.first_request_id(g) + 100_000);
        }
    }

    /// Results in which, at every table, the lowest-numbered entrant wins every game.
    fn lowest_wins(ms: &[Matchup]) -> Vec<GameResult> {
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
        let r1 = round(11, &f, 1, 5, 1, &results).unwrap();
        let seated: Vec<[usize; 3]> = r1.iter().map(|m| m.entrants).collect();
        assert_eq!(seated, [[2, 3, 4], [5, 6, 7], [8, 9, 10]]);
        results.extend(lowest_wins(&r1));
        // Round 2: 0, 1 (byes) and the winners 2, 5, 8: five left, byes for 0 and 1.
        let r2 = round(11, &f, 1, 5, 2, &results).unwrap();
        assert_eq!(
            r2.iter().map(|m| m.entrants).collect::<Vec<_>>(),
            [[2, 5, 8]]
        );
        assert!(r2.iter().all(|m| m.round == 2));
        results.extend(lowest_wins(&r2));
        // Round 3: 0, 1, 2 — one table.
        let r3 = round(11, &f, 1, 5, 3, &results).unwrap();
        assert_eq!(
            r3.iter().map(|m| m.entrants).collect::<Vec<_>>(),
            [[0, 1, 2]]
        );
        results.extend(lowest_wins(&r3));
        assert_eq!(round(11, &f, 1, 5, 4, &results), None, "0 is the champion");
    }

    #[test]
    fn a_knockout_final_of_two_seats_the_best_eliminated_entrant_who_cannot_win() {
        // 5 entrants: round 1 seats 2, 3, 4 with byes for 0 and 1.
        let f = Format::Knockout;
        let r1 = round(5, &f, 1, 1, 1, &[]).unwrap();
        assert_eq!(r1[0].entrants, [2, 3, 4]);
        let results = lowest_wins(&r1);
        // Round 2: 0, 1, 2 alive: a table of three.
        let r2 = round(5, &f, 1, 1, 2, &results).unwrap();
        assert_eq!(r2[0].entrants, [0, 1, 2]);
        // Four entrants: 1 bye, a table of 1, 2, 3; then a final 0 v winner.
        let r1 = round(4, &f, 1, 1, 1, &[]).unwrap();
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
        let fin = round(4, &f, 1, 1, 2, &results).unwrap();
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
        assert_eq!(
            advances(&fin[0], &games, &[0, 3]),
            0,
            "tie: the better seed"
        );
    }

    #[test]
    fn swiss_avoids_rematches_while_it_can_and_groups_by_standing() {
        let f = Format::Swiss { rounds: 3 };
        let mut results = Vec::new();
        let r1 = round(9, &f, 1, 2, 1, &results).unwrap();
        assert_eq!(
            r1.iter().map(|m| m.entrants).collect::<Vec<_>>(),
            [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
        );
        results.extend(lowest_wins(&r1));
        let r2 = round(9, &f, 1, 2, 2, &results).unwrap();
        // Winners 0, 3, 6 (6 wins each) meet; nobody meets an opponent twice.
        assert_eq!(r2[0].entrants, [0, 3, 6]);
        for m in &r2 {
            for (a, b) in [(0, 1), (0, 2), (1, 2)] {
                let (x, y) = (m.entrants[a], m.entrants[b]);
                assert!(
                    !results
                        .iter()
                        .any(|g| g.teams.contains(&x) && g.teams.contains(&y)),
                    "{x} and {y} meet again"
                );
            }
        }
        results.extend(lowest_wins(&r2));
        assert!(round(9, &f, 1, 2, 3, &results).is_some());
        assert_eq!(round(9, &f, 1, 2, 4, &results), None, "three rounds");
        // Ten entrants: the lowest-ranked one sits out.
        let r1 = round(10, &f, 1, 2, 1, &[]).unwrap();
        assert!(r1.iter().all(|m| !m.entrants.contains(&9)));
    }

    #[test]
    fn shard_parsing_says_what_is_wrong() {
        assert_eq!("1/3".parse::<Shard>(), Ok(Shard { index: 1, count: 3 }));
        assert!("3/3".parse::<Shard>().unwrap_err().contains("0 <= K < N"));
        assert!("x/3".parse::<Shard>().unwrap_err().contains("K is not"));
        assert!("13".parse::<Shard>().unwrap_err().contains("K/N"));
    }
}
