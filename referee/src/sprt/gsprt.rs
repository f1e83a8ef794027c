//! The sequential test: a generalized SPRT (GSPRT) on independent per-set
//! differences, pure arithmetic — no games, no files.
//!
//! Each observation is one duplicate set's difference (new minus base, points
//! per game; see `measure.rs`). Sets are independent: each deals its own seed.
//! The six games inside a set are not — they share their cards, which is the
//! point of a duplicate set — so a game is never an observation: a test on
//! games would count the same luck six times and stop too early. This is the
//! role a game pair (pentanomial statistics) plays in fishtest and fastchess.
//!
//! The differences are taken to be normal with unknown mean μ and variance σ².
//! H0: μ = `h0`, H1: μ = `h1`. The log-likelihood ratio is the normal one with
//! the sample variance s² (unbiased) in place of σ², as fishtest computes it
//! for pentanomial pairs:
//!
//! ```text
//! LLR = n · (h1 − h0) · (2x̄ − h0 − h1) / (2s²)
//! ```
//!
//! Wald's bounds: accept H1 at LLR ≥ ln((1 − β)/α), H0 at LLR ≤ ln(β/(1 − α)).
//!
//! No decision before [`MIN_SETS`] sets. With a handful of sets s² is often
//! far below σ² by chance, the LLR too large, and the test stops early on
//! noise: from two sets on, the simulation in `calibration.rs` accepts H1 for
//! equal bots in about 17% of runs at α = 5%. From 30 sets on the rates are
//! within sampling error of α and β (that test checks and prints them). The likelihood ratio with σ²
//! fitted under each hypothesis (v + (x̄ − h)²) needs no such minimum, but
//! it compares two hypotheses that both fit badly when the truth is far
//! beyond H1, and then hardly grows: a clearly better bot would need far more
//! sets, not fewer.

/// Sets before the test may decide (see the module doc).
pub const MIN_SETS: u32 = 30;

/// The smallest variance used, in (points per game)². Only identical sets
/// reach it (equal deterministic bots differ by exactly 0 in every set), and
/// then the LLR is large and of the right sign instead of a division by zero.
const VARIANCE_FLOOR: f64 = 1e-9;

/// What is tested, in points per game of duplicate-score difference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hypotheses {
    pub h0: f64,
    pub h1: f64,
    /// Chance of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Chance of accepting H0 when H1 holds.
    pub beta: f64,
}

impl Hypotheses {
    /// As the folder's `tournament.json` records them.
    pub fn record(&self) -> crate::tournament::manifest::TestRecord {
        crate::tournament::manifest::TestRecord {
            h0: self.h0,
            h1: self.h1,
            alpha: self.alpha,
            beta: self.beta,
        }
    }
}

impl Hypotheses {
    /// The LLR at or below which H0 is accepted.
    pub fn lower(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// The LLR at or above which H1 is accepted.
    pub fn upper(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }
}

/// What the test concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Verdict {
    /// The new bot is no better than `h0`.
    H0,
    /// The new bot is better by `h1` (or more).
    H1,
    /// `--max-sets` reached between the bounds.
    #[serde(rename = "inconclusive")]
    Inconclusive,
}

/// The test as it runs: fed one set at a time, in set order.
#[derive(Clone, Debug)]
pub struct Sequential {
    pub hypotheses: Hypotheses,
    n: u32,
    mean: f64,
    /// Sum of squared deviations from the mean (Welford's running form, which
    /// does not lose precision to cancellation as Σx² − n·x̄² does).
    m2: f64,
    /// The LLR after each set.
    pub history: Vec<f64>,
}

impl Sequential {
    pub fn new(hypotheses: Hypotheses) -> Sequential {
        Sequential {
            hypotheses,
            n: 0,
            mean: 0.0,
            m2: 0.0,
            history: Vec::new(),
        }
    }

    /// Adds one set's difference; the verdict if this set decides the test.
    pub fn push(&mut self, x: f64) -> Option<Verdict> {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / f64::from(self.n);
        self.m2 += d * (x - self.mean);
        let llr = self.llr();
        self.history.push(llr);
        if self.n < MIN_SETS {
            None
        } else if llr >= self.hypotheses.upper() {
            Some(Verdict::H1)
        } else if llr <= self.hypotheses.lower() {
            Some(Verdict::H0)
        } else {
            None
        }
    }

    pub fn sets(&self) -> u32 {
        self.n
    }

    /// The mean difference so far, points per game.
    pub fn estimate(&self) -> f64 {
        self.mean
    }

    /// The log-likelihood ratio of H1 against H0 so far (0 before two sets,
    /// which a variance needs; shown, though not acted on, before [`MIN_SETS`]).
    pub fn llr(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let Hypotheses { h0, h1, .. } = self.hypotheses;
        let s2 = (self.m2 / f64::from(self.n - 1)).max(VARIANCE_FLOOR);
        f64::from(self.n) * (h1 - h0) * (2.0 * self.mean - h0 - h1) / (2.0 * s2)
    }

    /// A 95% confidence interval of the mean difference (Student's t with the
    /// unbiased sample variance); `None` before two sets. Not adjusted for the
    /// sequential stop, which biases it a little away from the bound not taken.
    pub fn interval(&self) -> Option<[f64; 2]> {
        if self.n < 2 {
            return None;
        }
        let s2 = self.m2 / f64::from(self.n - 1);
        let half = t975(self.n - 1) * (s2 / f64::from(self.n)).sqrt();
        Some([self.mean - half, self.mean + half])
    }
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom: a table up
/// to 30, then the Cornish–Fisher expansion around the normal quantile (off by
/// less than 0.001 from 30 on).
fn t975(df: u32) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if let Some(&t) = TABLE.get(df.max(1) as usize - 1) {
        return t;
    }
    let z: f64 = 1.959_964;
    let v = f64::from(df);
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Hypotheses = Hypotheses {
        h0: 0.0,
        h1: 2.0,
        alpha: 0.05,
        beta: 0.05,
    };

    #[test]
    fn wald_bounds_for_five_percent_errors() {
        assert!((H.upper() - 19f64.ln()).abs() < 1e-12);
        assert!((H.lower() + 19f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn the_llr_is_the_normal_likelihood_ratio_with_the_sample_variance() {
        // An independent computation: the log of the product of normal
        // densities at h1 over that at h0, σ² the unbiased sample variance.
        let xs = [3.5, -1.25, 4.0, 0.5, 2.75];
        let mut t = Sequential::new(H);
        for x in xs {
            t.push(x);
        }
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let s2 = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let log_lik = |h: f64| {
            xs.iter()
                .map(|x| -(x - h).powi(2) / (2.0 * s2))
                .sum::<f64>()
        };
        assert!((t.llr() - (log_lik(2.0) - log_lik(0.0))).abs() < 1e-9);
        assert_eq!(t.sets(), 5);
        assert!((t.estimate() - 1.9).abs() < 1e-12);
    }

    #[test]
    fn nothing_is_decided_before_the_minimum_and_then_the_bounds_decide() {
        let mut better = Sequential::new(H);
        let clear = |k: u32| 80.0 + f64::from(k % 3);
        for k in 1..MIN_SETS {
            assert_eq!(better.push(clear(k)), None, "set {k} is before the minimum");
        }
        assert!(
            better.llr() > H.upper(),
            "the LLR is shown before the minimum"
        );
        assert_eq!(better.push(clear(MIN_SETS)), Some(Verdict::H1));

        let mut same = Sequential::new(H);
        for _ in 1..MIN_SETS {
            assert_eq!(same.push(0.0), None);
        }
        assert_eq!(same.push(0.0), Some(Verdict::H0), "identical sets at h0");
        assert!(same.llr().is_finite());

        let mut unsure = Sequential::new(H);
        for k in 1..=MIN_SETS {
            // Mean 1, halfway between the hypotheses: LLR 0.
            assert_eq!(unsure.push(if k % 2 == 0 { 11.0 } else { -9.0 }), None);
        }
        assert!(unsure.llr().abs() < 1e-9);
    }

    #[test]
    fn the_interval_is_the_t_interval() {
        let mut t = Sequential::new(H);
        assert_eq!(t.interval(), None);
        for x in [1.0, 3.0] {
            t.push(x);
        }
        // mean 2, s = √2, n = 2: half-width 12.706 · √2/√2.
        let [lo, hi] = t.interval().unwrap();
        assert!((lo - (2.0 - 12.706)).abs() < 1e-9 && (hi - (2.0 + 12.706)).abs() < 1e-9);
        // Past the table the expansion joins it and tends to the normal quantile.
        assert!((t975(30) - 2.042).abs() < 1e-3 && (t975(31) - 2.040).abs() < 1e-3);
        assert!((t975(120) - 1.980).abs() < 1e-3 && (t975(100_000) - 1.960).abs() < 1e-3);
    }
}
