//! Calibration: thousands of simulated SPRTs, in process, on a model of set
//! outcomes drawn from real ones — not bot processes, which would take days.
//!
//! The model: `calibration-sets.txt` holds 300 real per-set differences (how
//! they were produced is in its header). Their deviations from their mean are
//! the set-to-set noise of real duplicate sets, with its real shape (skew,
//! tails); a simulated set is one deviation drawn at random (with
//! replacement) plus the true difference of the scenario. Draws come from
//! SplitMix64 with fixed seeds, so every run of this test sees the same
//! numbers: it cannot be flaky, and a change to the test's statistics shows as
//! a change of the printed rates.
//!
//! Checked: with equal bots (true difference = h0) H1 is accepted in at most
//! α plus three standard errors of the runs; at the H1 difference H1 is
//! accepted in at least 1 − β less three standard errors (Wald's bounds aim at
//! exactly 1 − β there); at one and a half times it, in at least 1 − β.
//! `cargo test -p referee --lib sprt::calibration -- --nocapture` prints the
//! rates, the average sets used and the fixed-size test of the same errors.

use schmier_protocol::shuffle::derive_seed;

use super::gsprt::{Hypotheses, Sequential, Verdict};

const DATA: &str = include_str!("calibration-sets.txt");
const RUNS: u32 = 2000;
const MAX_SETS: u32 = 10_000;
const H: Hypotheses = Hypotheses {
    h0: 0.0,
    h1: 2.0,
    alpha: 0.05,
    beta: 0.05,
};

fn sample() -> Vec<f64> {
    DATA.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().parse().expect("a number per line"))
        .collect()
}

/// The noise model: the sample's deviations from its mean.
fn noise() -> Vec<f64> {
    let xs = sample();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    xs.iter().map(|x| x - mean).collect()
}

struct Rates {
    h1: f64,
    h0: f64,
    inconclusive: f64,
    mean_sets: f64,
}

/// The statistic a simulated run uses.
#[derive(Clone, Copy)]
enum Statistic {
    /// `gsprt.rs`'s, through [`Sequential`] itself.
    Gsprt,
    /// The same LLR allowed to decide from two sets on (no `MIN_SETS`): only
    /// to show why the minimum is there.
    FromTwoSets,
}

/// The verdict of `test`'s LLR taken at the bounds whatever its sets.
fn from_two_sets(test: &Sequential) -> Option<Verdict> {
    let llr = test.llr();
    if test.sets() < 2 {
        None
    } else if llr >= H.upper() {
        Some(Verdict::H1)
    } else if llr <= H.lower() {
        Some(Verdict::H0)
    } else {
        None
    }
}

/// `RUNS` tests at true difference `truth`; `seed` picks the draws.
fn simulate(truth: f64, seed: u64, statistic: Statistic) -> Rates {
    let noise = noise();
    let (mut h1, mut h0, mut sets) = (0u32, 0u32, 0u64);
    for run in 0..RUNS {
        let run_seed = derive_seed(seed, u64::from(run));
        let mut test = Sequential::new(H);
        for k in 0..MAX_SETS {
            // 300 values: the modulo's bias is below 2^-50.
            let i = derive_seed(run_seed, u64::from(k)) % noise.len() as u64;
            let x = truth + noise[i as usize];
            let verdict = match statistic {
                Statistic::Gsprt => test.push(x),
                Statistic::FromTwoSets => {
                    test.push(x);
                    from_two_sets(&test)
                }
            };
            sets += 1;
            match verdict {
                Some(Verdict::H1) => h1 += 1,
                Some(Verdict::H0) => h0 += 1,
                _ => continue,
            }
            break;
        }
    }
    let n = f64::from(RUNS);
    Rates {
        h1: f64::from(h1) / n,
        h0: f64::from(h0) / n,
        inconclusive: f64::from(RUNS - h1 - h0) / n,
        mean_sets: sets as f64 / n,
    }
}

fn standard_error(p: f64) -> f64 {
    (p * (1.0 - p) / f64::from(RUNS)).sqrt()
}

#[test]
fn thousands_of_simulated_tests_keep_their_error_rates() {
    let xs = sample();
    assert_eq!(xs.len(), 300, "the checked-in sample");
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt();

    let equal = simulate(H.h0, 1, Statistic::Gsprt);
    let at_h1 = simulate(H.h1, 2, Statistic::Gsprt);
    let above = simulate(1.5 * H.h1, 3, Statistic::Gsprt);
    let plain = simulate(H.h0, 1, Statistic::FromTwoSets);
    // A fixed number of sets with the same errors: a one-sided z-test needs
    // n = ((z(1−α) + z(1−β))·σ / (h1 − h0))² sets.
    let z = 1.644_854; // the 95% normal quantile, for α = β = 0.05
    let fixed = ((2.0 * z * sd) / (H.h1 - H.h0)).powi(2).ceil();
    println!(
        "calibration: {RUNS} simulated SPRTs per scenario, H0 {} H1 {} points per game, \
         alpha {} beta {}, set noise sd {sd:.2} from {} real sets",
        H.h0,
        H.h1,
        H.alpha,
        H.beta,
        xs.len()
    );
    for (name, r) in [
        ("equal bots (true difference = h0)", &equal),
        ("true difference = h1", &at_h1),
        ("true difference = 1.5 h1", &above),
        ("equal bots, deciding from two sets on (not used)", &plain),
    ] {
        println!(
            "calibration: {name}: H1 accepted {:.4}, H0 accepted {:.4}, inconclusive {:.4}; \
             mean sets {:.1} ({:.0} games)",
            r.h1,
            r.h0,
            r.inconclusive,
            r.mean_sets,
            r.mean_sets * 6.0
        );
    }
    println!(
        "calibration: a fixed-size test with the same errors needs {fixed} sets ({} games)",
        fixed * 6.0
    );

    let fp_limit = H.alpha + 3.0 * standard_error(H.alpha);
    assert!(
        equal.h1 <= fp_limit,
        "false-positive rate {} above alpha + 3 SE = {fp_limit}",
        equal.h1
    );
    let power_floor = 1.0 - H.beta - 3.0 * standard_error(H.beta);
    assert!(
        at_h1.h1 >= power_floor,
        "power at h1 {} below 1 - beta - 3 SE = {power_floor}",
        at_h1.h1
    );
    assert!(
        above.h1 >= 1.0 - H.beta,
        "power at 1.5 h1 {} below 1 - beta",
        above.h1
    );
    // The runs end: inconclusive at 10,000 sets would mean the bounds are unreachable.
    assert!(equal.inconclusive + at_h1.inconclusive + above.inconclusive < 0.01);
}
