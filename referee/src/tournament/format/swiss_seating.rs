//! How the Swiss seats a round: the split of the seated entrants into tables
//! of three that meets as few pairs again as possible, then keeps entrants of
//! similar standing together. Up to [`EXACT`] entrants a branch and bound over
//! every split finds the best; beyond, a greedy seating improved by swapping
//! entrants between tables while that helps. `swiss.rs` orders the field and
//! picks the byes; this file only splits. Pure.

use std::collections::{BTreeMap, HashMap};

use crate::tournament::schedule::GameResult;

/// The largest field seated exactly: 15,400 ways to split 12 entrants into
/// four tables; 15 would be 1.4 million, too slow in a test loop.
pub const EXACT: usize = 12;

/// How many times each pair of entrants has shared a table. A map of the pairs
/// that met rather than an entrants × entrants matrix: 10,000 entrants would
/// need 400 MB for the matrix, while a Swiss seats each entrant with only two
/// others a round.
pub struct Met {
    n: usize,
    times: HashMap<(usize, usize), u32>,
}

impl Met {
    pub fn new(entrants: usize, before: &[GameResult]) -> Met {
        let mut tables: BTreeMap<(u32, u32), [usize; 3]> = BTreeMap::new();
        for g in before {
            tables.insert((g.key.round, g.key.matchup), g.teams);
        }
        let mut met = Met {
            n: entrants,
            times: HashMap::new(),
        };
        for t in tables.values() {
            met.seat(*t);
        }
        met
    }

    pub fn times(&self, a: usize, b: usize) -> u32 {
        self.times.get(&(a.min(b), a.max(b))).copied().unwrap_or(0)
    }

    /// Records a table; returns how many of its pairs had met before.
    pub fn seat(&mut self, t: [usize; 3]) -> u32 {
        let mut repeats = 0;
        for (a, b) in [(t[0], t[1]), (t[0], t[2]), (t[1], t[2])] {
            if a < self.n && b < self.n && a != b {
                let times = self.times.entry((a.min(b), a.max(b))).or_default();
                repeats += u32::from(*times > 0);
                *times += 1;
            }
        }
        repeats
    }
}

/// Repeat meetings of a schedule: over its tables in order, every pair seated
/// together that had already shared a table.
pub fn repeat_meetings(entrants: usize, tables: impl IntoIterator<Item = [usize; 3]>) -> u32 {
    let mut met = Met::new(entrants, &[]);
    tables.into_iter().map(|t| met.seat(t)).sum()
}

/// What a split of the seated entrants costs: repeats first, then the spread in
/// standing. The spread of a whole split is below `weight`, so one repeat
/// fewer always wins.
pub(super) struct Cost<'a> {
    seated: &'a [usize],
    met: &'a Met,
    weight: u64,
}

impl Cost<'_> {
    /// Tables are positions in the standing order, ascending.
    fn table(&self, t: [usize; 3]) -> u64 {
        let [a, b, c] = t.map(|p| self.seated[p]);
        let again = |x, y| u64::from(self.met.times(x, y) > 0);
        let repeats = again(a, b) + again(a, c) + again(b, c);
        let (lo, hi) = (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
        repeats * self.weight + (hi - lo) as u64
    }

    /// A lower bound on the cost of any two tables made of the six entrants of
    /// `x` and `y`: no repeats, and the spreads of the six positions `p1 < … < p6`
    /// split as `{p1, p2, p3}` and `{p4, p5, p6}`. (Whichever table holds `p1`
    /// reaches at least `p3`; if the other holds `p6` it starts at most at `p4`;
    /// if one table holds both, its spread alone is `p6 - p1`, no less.)
    fn at_least(&self, x: [usize; 3], y: [usize; 3]) -> u64 {
        let mut p = [x[0], x[1], x[2], y[0], y[1], y[2]];
        p.sort_unstable();
        (p[2] - p[0] + p[5] - p[3]) as u64
    }

    fn split(&self, tables: &[[usize; 3]]) -> u64 {
        tables.iter().map(|&t| self.table(t)).sum()
    }
}

/// The best split of `seated` (best standing first) into tables, as positions
/// in `seated`, each ascending, ordered by their best position.
pub(super) fn best_split(seated: &[usize], met: &Met) -> Vec<[usize; 3]> {
    let m = seated.len();
    let cost = Cost {
        seated,
        met,
        weight: (m * m + 1) as u64,
    };
    let mut best = greedy(m, &cost);
    if m > EXACT {
        best = improve(best, &cost);
    } else {
        let mut search = Search {
            cost: &cost,
            best_cost: cost.split(&best),
            best: best.clone(),
            current: Vec::new(),
            free: vec![true; m],
        };
        search.go(0);
        best = search.best;
    }
    for t in &mut best {
        t.sort();
    }
    best.sort();
    best
}

/// Table by table: the best-placed entrant not yet seated with the two others
/// that cost least beside it.
pub(super) fn greedy(m: usize, cost: &Cost) -> Vec<[usize; 3]> {
    let mut free: Vec<usize> = (0..m).collect();
    let mut out = Vec::new();
    while free.len() >= 3 {
        let a = free[0];
        let mut pick = (1, 2);
        let mut pick_cost = u64::MAX;
        // `free` ascends and `a` is its first, so a table's spread is
        // `free[j] - a` for its later entrant `j`: every pair with that `j` or a
        // later one costs at least that, and once it reaches the best cost so
        // far nothing further can beat it. Scanning by `j` then `i` finds the
        // pair a full scan by `i` then `j` would (equal costs mean equal
        // repeats and spread, hence the same `j`; the lowest `i` wins either
        // way), without looking at the whole field for every table.
        'scan: for j in 2..free.len() {
            if (free[j] - a) as u64 >= pick_cost {
                break 'scan;
            }
            for i in 1..j {
                let c = cost.table([a, free[i], free[j]]);
                if c < pick_cost {
                    (pick, pick_cost) = ((i, j), c);
                }
            }
        }
        let t = [a, free[pick.0], free[pick.1]];
        free.remove(pick.1);
        free.remove(pick.0);
        free.remove(0);
        out.push(t);
    }
    out
}

/// Swaps one entrant of a table with one of another while that lowers the cost.
pub(super) fn improve(mut tables: Vec<[usize; 3]>, cost: &Cost) -> Vec<[usize; 3]> {
    let sorted = |mut t: [usize; 3]| {
        t.sort();
        t
    };
    let mut costs: Vec<u64> = tables.iter().map(|&t| cost.table(t)).collect();
    // Each accepted swap lowers a bounded cost; the cap only guards the time.
    for _ in 0..100 {
        let mut better = false;
        for i in 0..tables.len() {
            for j in i + 1..tables.len() {
                if cost.at_least(tables[i], tables[j]) == costs[i] + costs[j] {
                    // No swap can lower a pair of tables already at the bound.
                    continue;
                }
                'swap: for x in 0..3 {
                    for y in 0..3 {
                        let (mut a, mut b) = (tables[i], tables[j]);
                        std::mem::swap(&mut a[x], &mut b[y]);
                        let (a, b) = (sorted(a), sorted(b));
                        let (ca, cb) = (cost.table(a), cost.table(b));
                        if ca + cb < costs[i] + costs[j] {
                            (tables[i], tables[j]) = (a, b);
                            (costs[i], costs[j]) = (ca, cb);
                            better = true;
                            break 'swap;
                        }
                    }
                }
            }
        }
        if !better {
            break;
        }
    }
    tables
}

/// A branch and bound over every split: the first free position always opens the
/// next table, so each split is visited once.
pub(super) struct Search<'a> {
    cost: &'a Cost<'a>,
    best: Vec<[usize; 3]>,
    best_cost: u64,
    current: Vec<[usize; 3]>,
    free: Vec<bool>,
}

impl Search<'_> {
    fn go(&mut self, so_far: u64) {
        let Some(a) = self.free.iter().position(|&f| f) else {
            if so_far < self.best_cost {
                (self.best, self.best_cost) = (self.current.clone(), so_far);
            }
            return;
        };
        // Each table still to seat spreads over at least two places.
        let left = self.free.iter().filter(|&&f| f).count() / 3;
        if so_far + 2 * left as u64 >= self.best_cost {
            return;
        }
        self.free[a] = false;
        let m = self.free.len();
        for b in a + 1..m {
            if !self.free[b] {
                continue;
            }
            self.free[b] = false;
            for c in b + 1..m {
                if !self.free[c] {
                    continue;
                }
                let t = [a, b, c];
                let with = so_far + self.cost.table(t);
                if with + 2 * (left as u64 - 1) >= self.best_cost {
                    continue;
                }
                self.free[c] = false;
                self.current.push(t);
                self.go(with);
                self.current.pop();
                self.free[c] = true;
            }
            self.free[b] = true;
        }
        self.free[a] = true;
    }
}

/// Lower is better: compares two splits of the same seated entrants by cost.
#[cfg(test)]
pub(super) fn compare(
    seated: &[usize],
    met: &Met,
    x: &[[usize; 3]],
    y: &[[usize; 3]],
) -> std::cmp::Ordering {
    let m = seated.len();
    let cost = Cost {
        seated,
        met,
        weight: (m * m + 1) as u64,
    };
    cost.split(x).cmp(&cost.split(y))
}
