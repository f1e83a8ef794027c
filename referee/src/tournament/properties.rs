//! Every format is total: for any field of 3–40 entrants, any number of Swiss
//! rounds (1–8), one or two duplicate sets and any results, the schedule gives
//! valid rounds, the bracket prints and the standings rank every entrant. No
//! processes and no files: the games' results are made up from the seed, so a
//! failure names the schedule that broke (format, entrants, rounds, sets, seed).
//!
//! Every format the factory knows ([`Format::samples`]) is played, so a new
//! format is checked as soon as the factory lists it: the common promises here,
//! its own through `Pairing::check_round` and `Pairing::check_end` in its file.
//! Exhaustive over the sizes and round counts, several seeds each (over 1,600
//! schedules, 6,000 rounds); the count of schedules checked per format is
//! asserted, so a loop cannot pass by checking nothing.

use std::collections::{BTreeMap, BTreeSet};

use schmier_protocol::shuffle::derive_seed;

use super::format::{bracket_round, matchups, round, Format, Pairing, Played};
use super::outcome::GameOutcome;
use super::schedule::{GameKey, GameResult, Matchup};
use super::standings::standings;

/// Seeds per (format, size, sets); the results, the gauntlet's challengers and
/// (through them) the Swiss pairings differ with the seed.
const SEEDS: u64 = 7;

/// The field sizes checked.
const SIZES: std::ops::RangeInclusive<usize> = 3..=40;

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

/// One schedule: a format on a field, with its results made up from the seed.
struct Schedule<'a> {
    label: String,
    format: &'a Format,
    pairing: Box<dyn Pairing + 'a>,
    names: Vec<String>,
    sets: u32,
    seed: u64,
    thorough: bool,
    outcomes: BTreeMap<GameKey, GameOutcome>,
}

impl<'a> Schedule<'a> {
    fn new(n: usize, format: &'a Format, sets: u32, seed: u64, thorough: bool) -> Self {
        Schedule {
            label: format!("{format:?} with {n} entrants, {sets} set(s), seed {seed}"),
            format,
            pairing: format.pairing(),
            names: (0..n).map(|e| format!("e{e}")).collect(),
            sets,
            seed,
            thorough,
            outcomes: BTreeMap::new(),
        }
    }

    /// Plays the schedule through: every round checked as it is seated, the
    /// standings after each, and the end; returns the rounds played.
    fn run(mut self) -> u32 {
        let n = self.names.len();
        if !self.pairing.by_rounds() {
            let ms = matchups(n, self.format, self.sets, self.seed);
            self.play(0, &ms, &[]);
            return 1;
        }
        let mut r = 0;
        loop {
            r += 1;
            assert!(r <= 64, "{}: more than 64 rounds", self.label);
            let before = self.results();
            let Some(ms) = round(n, self.format, self.sets, self.seed, r, &before) else {
                let end = self.played(r, &[], &before);
                self.pairing.check_end(&end);
                return r - 1;
            };
            assert!(
                !ms.is_empty(),
                "{} round {r}: a round without tables",
                self.label
            );
            self.play(r, &ms, &before);
        }
    }

    /// Checks round `r` (matchups `ms`), plays it, and checks the standings.
    fn play(&mut self, r: u32, ms: &[Matchup], before: &[GameResult]) {
        let played = self.played(r, ms, before);
        self.pairing.check_round(&played);
        for m in ms {
            assert_eq!(m.sets, self.sets, "{}", self.label);
            for key in m.keys() {
                self.outcomes.insert(key, outcome(m, key, self.seed));
            }
        }
        if self.thorough && self.pairing.by_rounds() {
            self.check_bracket(r, ms, before);
        }
        let label = format!("{} after round {r}", self.label);
        check_standings(&label, &self.names, self.format, &self.outcomes);
    }

    /// The bracket of round `r` prints, and what the format makes of the round
    /// fits it: an advancing entrant from its own table (by matchup index), byes
    /// among those not seated.
    fn check_bracket(&self, r: u32, ms: &[Matchup], before: &[GameResult]) {
        let label = &self.label;
        let text = bracket_round(&self.names, self.format, r, ms, &self.outcomes);
        assert!(text.starts_with(&format!("round {r}:")), "{label}: {text}");
        let this: Vec<GameResult> = (self.results().into_iter())
            .filter(|g| g.key.round == r)
            .collect();
        let this: Vec<&GameResult> = this.iter().collect();
        let tables: Vec<[usize; 3]> = ms.iter().map(|m| m.entrants).collect();
        let n = self.names.len();
        let s = (self.pairing).summary(n, r, &tables, before, &this);
        assert!(s.advances.len() <= tables.len(), "{label} round {r}: {s:?}");
        for (t, advances) in tables.iter().zip(&s.advances) {
            assert!(
                advances.is_none_or(|e| t.contains(&e)),
                "{label} round {r}: {s:?}"
            );
        }
        let seated: BTreeSet<usize> = tables.iter().flatten().copied().collect();
        assert!(
            s.byes.iter().all(|e| *e < n && !seated.contains(e)),
            "{label} round {r}: {s:?}"
        );
    }

    fn played<'b>(&'b self, r: u32, ms: &'b [Matchup], before: &'b [GameResult]) -> Played<'b> {
        Played {
            label: &self.label,
            entrants: self.names.len(),
            names: &self.names,
            sets: self.sets,
            seed: self.seed,
            thorough: self.thorough,
            r,
            ms,
            seated: check_round(&self.label, self.names.len(), r, ms),
            before,
        }
    }

    fn results(&self) -> Vec<GameResult> {
        self.outcomes.values().map(GameOutcome::result).collect()
    }
}

/// Every entrant ranked once, ranks 1..=n, every game counted, and a repeat
/// count exactly for a format that reports one.
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
    let results: Vec<GameResult> = outcomes.values().map(GameOutcome::result).collect();
    assert_eq!(
        s.repeat_meetings,
        format.pairing().repeat_meetings(names.len(), &results),
        "{label}"
    );
}

/// The seeds of the made-up results (and of the gauntlet's challengers).
fn seeds() -> impl Iterator<Item = (u64, u64)> {
    (0..SEEDS).map(|k| (k, derive_seed(0x5c4e_d01e, k)))
}

/// Whether to play a format of one round on this size, set count and seed: its
/// tables do not depend on the seed or the sets, so more seeds vary only the
/// made-up results and more sets only repeat the tables. Every size with one
/// seed; two sets up to 20 entrants, every seed up to 12 (a round robin of 40
/// is 9,880 tables, of 21–40 95,000 in all: more would dominate the run).
fn worth_it(n: usize, sets: u32, k: u64) -> bool {
    n <= 12 || k == 0 && (sets == 1 || n <= 20)
}

/// A format's kind: its variant's name, without the parameters.
fn kind(format: &Format) -> String {
    let text = format!("{format:?}");
    text.split([' ', '{']).next().unwrap_or_default().to_owned()
}

/// Every format the factory knows, on every size, one or two sets and several
/// seeds (formats of one round on a budget: see `worth_it`); per format kind
/// the schedules played and the rounds they had. A thread per kind.
fn every_format() -> BTreeMap<String, (u32, u32)> {
    let kinds: BTreeSet<String> = (SIZES.flat_map(|n| seeds().map(move |(k, _)| (n, k))))
        .flat_map(|(n, k)| Format::samples(n, k))
        .map(|f| kind(&f))
        .collect();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (kinds.into_iter())
            .map(|kind| scope.spawn(move || (kind.clone(), play_kind(&kind))))
            .collect();
        (threads.into_iter())
            .map(|t| t.join().expect("a format's checks passed"))
            .collect()
    })
}

/// Plays every schedule of one format kind: (schedules, rounds).
fn play_kind(wanted: &str) -> (u32, u32) {
    let (mut schedules, mut rounds) = (0, 0);
    for n in SIZES {
        for sets in 1..=2 {
            for (k, seed) in seeds() {
                for format in Format::samples(n, k).iter().filter(|f| kind(f) == wanted) {
                    if !format.by_rounds() && !worth_it(n, sets, k) {
                        continue;
                    }
                    schedules += 1;
                    rounds += Schedule::new(n, format, sets, seed, k < 2).run();
                }
            }
        }
    }
    (schedules, rounds)
}

#[test]
fn every_format_is_total_for_any_field_and_results() {
    let played = every_format();
    for (kind, (schedules, rounds)) in &played {
        eprintln!("{kind}: {schedules} schedules, {rounds} rounds checked");
    }
    let sizes = SIZES.count() as u32;
    let full = sizes * 2 * SEEDS as u32;
    // Played by rounds: every size, set count and seed; a Swiss of eight
    // rounds is the eight Swiss schedules of 1–8 rounds.
    assert_eq!(played["Knockout"].0, full, "{played:?}");
    assert_eq!(played["Swiss"], (full, full * 8), "{played:?}");
    // One round, on the budget: 10 sizes × 2 set counts × 7 seeds up to 12
    // entrants, 8 × 2 × 1 up to 20, 20 × 1 × 1 up to 40.
    let budget = 10 * 2 * SEEDS as u32 + 8 * 2 + 20;
    assert_eq!(played["RoundRobin"], (budget, budget), "{played:?}");
    assert_eq!(played["Balanced"], (budget, budget), "{played:?}");
    // Less three entrants with two challengers (no pool pair), seeds 1, 3, 5.
    assert_eq!(played["Gauntlet"].0, budget - 2 * 3, "{played:?}");
    // Every format `--format` offers was played.
    let names = <super::format::FormatName as clap::ValueEnum>::value_variants().len();
    assert_eq!(played.len(), names, "{played:?}");
}
