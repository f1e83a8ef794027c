//! The rating: one Plackett–Luce model fitted to every game at once, so the
//! order in which games were played, journaled or merged cannot change it
//! (a rating updated game by game, such as Weng-Lin, depends on that order).
//!
//! **The model.** Entrant `i` has a strength `γᵢ > 0`. A game's ranking of its
//! three teams (the transcript's `ranking`, which puts forfeits last) is read as
//! choices: the first is chosen from all three with probability
//! `γ_first / (γ_first + γ_second + γ_third)`, then the second from the two left
//! with probability `γ_second / (γ_second + γ_third)`. Two teams that both
//! forfeited are not compared with each other: a game with two forfeits counts
//! only its first choice, one where all three forfeited counts nothing.
//!
//! **The prior**, which keeps every strength finite (an entrant that won every
//! game) and fixes the scale: each entrant has one virtual win and one virtual
//! loss in two-way comparisons against a virtual entrant of strength 1, i.e. the
//! factor `γᵢ / (γᵢ + 1) · 1 / (γᵢ + 1)`. The fit maximises the likelihood of
//! the games times that prior.
//!
//! **The fit** is minorisation–maximisation (Hunter 2004, "MM algorithms for
//! generalized Bradley–Terry models", §5): with `wᵢ` the times `i` was chosen
//! (its virtual win included),
//! `γᵢ ← wᵢ / Σ_{choices j that i took part in} 1 / Σ_{k in choice j} γₖ`, the
//! two virtual comparisons contributing `2 / (γᵢ + 1)`. The games' likelihood
//! does not change when every strength is multiplied by one factor, only the
//! prior does, and MM alone approaches that factor slowly (the prior is two
//! comparisons against thousands), so each MM update is followed by the factor
//! that maximises the prior exactly (`u` with `Σ tanh((u + ln γᵢ) / 2) = 0`,
//! by Newton's method): each step raises the posterior, which has one maximum.
//! It stops when no `ln γᵢ` moves by more than [`TOLERANCE`]. Identical games
//! are counted together, sorted, so the arithmetic does not depend on the order
//! the games came in.
//!
//! **Reported**: `400 · log10 γᵢ`, shifted so that the entrants' mean is 0.
//! Its 95% interval is ± 1.96 standard errors from the observed information
//! (the curvature of the log posterior in `ln γ` at the maximum, prior
//! included), inverted; the error of the shifted rating is that of the contrast
//! `ln γᵢ − mean ln γ`. The likelihood of superiority of `i` over `j` is
//! `Φ((ln γᵢ − ln γⱼ) / sd(ln γᵢ − ln γⱼ))` from the same covariance.
//!
//! Why the observed information and not a bootstrap: it counts each game as an
//! independent observation. Under duplicate sets the six games of a set share
//! the cards, so the set, not the game, is the independent unit; but the set
//! rotates every entrant through every team position on those cards, so the
//! luck of the cards, the main source of likeness between the six, cancels
//! within the set rather than adding up. A bootstrap over sets would honour the
//! unit exactly but has nothing to resample in a tournament of one or two sets
//! per matchup, the common case. What the information interval does not see is
//! a bot whose play fails on particular deals, losing all six games of a set
//! together: the interval is then too narrow.
//!
//! Fields above [`COVARIANCE_LIMIT`] entrants (a large Swiss or balanced round
//! robin) do not get the full covariance (its inversion grows with the cube of
//! the field): each error counts only the curvature of the entrant's own games
//! (the others' strengths taken as known), a lower bound on the full error,
//! and there is no likelihood of superiority.

/// A game as the rating reads it: entrant indices from first to last, and how
/// many choices it counts (2; 1 when the last two both forfeited; 0 when all
/// three did).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ranked {
    pub order: [usize; 3],
    pub choices: u8,
}

/// Rating points per natural-log unit of strength: `400 · log10 γ = ELO · ln γ`.
const ELO: f64 = 400.0 / std::f64::consts::LN_10;
/// The two-sided 95% point of the normal distribution.
const Z95: f64 = 1.959_963_984_540_054;
/// The fit stops when no `ln γ` moves more than this in an update.
pub const TOLERANCE: f64 = 1e-10;
/// A bound on updates, against a field the fit converges slowly on.
const MAX_UPDATES: u32 = 100_000;
/// The largest field that gets the full covariance and the likelihood of
/// superiority.
pub const COVARIANCE_LIMIT: usize = 256;

/// The fitted ratings of a field.
#[derive(Clone, Debug)]
pub struct Ratings {
    /// `ln γ` by entrant.
    theta: Vec<f64>,
    /// The covariance of `ln γ` (row-major), for a field up to
    /// [`COVARIANCE_LIMIT`].
    covariance: Option<Vec<f64>>,
    /// The variance of each shifted rating's `ln γᵢ − mean ln γ`.
    contrast: Vec<f64>,
    /// MM updates the fit took.
    pub updates: u32,
}

impl Ranked {
    /// The game whose team positions were taken by `teams` (entrant indices),
    /// ranked `ranking` (team positions), `forfeited` (team positions).
    pub fn new(teams: [usize; 3], ranking: [usize; 3], forfeited: &[usize]) -> Self {
        let clean = (0..3).filter(|t| !forfeited.contains(t)).count();
        Ranked {
            order: ranking.map(|t| teams[t]),
            choices: clean.min(2) as u8,
        }
    }
}

/// Fits the ratings of `entrants` entrants (indices `0..entrants`) to `games`.
pub fn fit(entrants: usize, games: impl IntoIterator<Item = Ranked>) -> Ratings {
    fit_from(entrants, games, &[])
}

/// [`fit`] warm-started: the MM updates begin at the strengths `start`
/// gives (rating points by entrant, as [`Ratings::rating`] reports them: an
/// earlier fit of fewer games), not at 1; an entrant past its end starts at
/// the mean. The posterior has one maximum, so the fit ends at the same one
/// (within [`TOLERANCE`]), in fewer updates when the start is near it.
pub fn fit_from(
    entrants: usize,
    games: impl IntoIterator<Item = Ranked>,
    start: &[f64],
) -> Ratings {
    let groups = grouped(entrants, games);
    let mut wins = vec![1.0; entrants]; // the virtual win
    for &(g, w) in &groups {
        for k in 0..usize::from(g.choices) {
            wins[g.order[k]] += w;
        }
    }
    let mut gamma: Vec<f64> = (0..entrants)
        .map(|i| match start.get(i) {
            Some(r) if r.is_finite() => (r / ELO).exp(),
            _ => 1.0,
        })
        .collect();
    if !start.is_empty() {
        rescale(&mut gamma);
    }
    let mut updates = 0;
    while updates < MAX_UPDATES {
        updates += 1;
        let mut next = mm_update(&gamma, &wins, &groups);
        rescale(&mut next);
        let moved = (gamma.iter().zip(&next))
            .map(|(a, b)| (a.ln() - b.ln()).abs())
            .fold(0.0, f64::max);
        gamma = next;
        if moved <= TOLERANCE {
            break;
        }
    }
    let theta: Vec<f64> = gamma.iter().map(|g| g.ln()).collect();
    let information = information(&gamma, &groups);
    let (covariance, contrast) = match information {
        Some(h) => {
            let cov = inverse(h, entrants);
            let contrast = contrasts(&cov, entrants);
            (Some(cov), contrast)
        }
        None => (None, own_contrasts(&gamma, &groups)),
    };
    Ratings {
        theta,
        covariance,
        contrast,
        updates,
    }
}

/// Identical games counted together, in sorted order; games naming an entrant
/// outside the field are left out.
fn grouped(entrants: usize, games: impl IntoIterator<Item = Ranked>) -> Vec<(Ranked, f64)> {
    let mut all: Vec<Ranked> = (games.into_iter())
        .filter(|g| g.choices > 0 && g.order.iter().all(|&e| e < entrants))
        .collect();
    all.sort_unstable();
    let mut groups: Vec<(Ranked, f64)> = Vec::new();
    for g in all {
        match groups.last_mut() {
            Some((last, n)) if *last == g => *n += 1.0,
            _ => groups.push((g, 1.0)),
        }
    }
    groups
}

/// One MM update of every strength at once.
fn mm_update(gamma: &[f64], wins: &[f64], groups: &[(Ranked, f64)]) -> Vec<f64> {
    let mut denominator: Vec<f64> = gamma.iter().map(|g| 2.0 / (g + 1.0)).collect();
    for &(g, w) in groups {
        let [a, b, c] = g.order;
        let (ga, gb, gc) = (gamma[a], gamma[b], gamma[c]);
        let first = w / (ga + gb + gc);
        denominator[a] += first;
        if g.choices >= 2 {
            let second = first + w / (gb + gc);
            denominator[b] += second;
            denominator[c] += second;
        } else {
            denominator[b] += first;
            denominator[c] += first;
        }
    }
    wins.iter().zip(denominator).map(|(w, d)| w / d).collect()
}

/// Multiplies every strength by the factor that maximises the prior (the
/// games do not depend on it): `e^u` with `Σ tanh((u + ln γᵢ) / 2) = 0`.
fn rescale(gamma: &mut [f64]) {
    if gamma.is_empty() {
        return;
    }
    let theta: Vec<f64> = gamma.iter().map(|g| g.ln()).collect();
    let mut u = 0.0;
    for _ in 0..200 {
        let (mut f, mut df) = (0.0, 0.0);
        for t in &theta {
            let h = ((u + t) / 2.0).tanh();
            f += h;
            df += (1.0 - h * h) / 2.0;
        }
        // The sum rises with u; a step is bounded where it is flat.
        let step = if df > 0.0 {
            (f / df).clamp(-1.0, 1.0)
        } else {
            0.0
        };
        u -= step;
        if step.abs() < 1e-15 {
            break;
        }
    }
    for g in gamma.iter_mut() {
        *g *= u.exp();
    }
}

/// The choices of a game: (who was chosen, from whom) for each choice counted.
fn choices(g: &Ranked) -> impl Iterator<Item = &[usize]> {
    [&g.order[..], &g.order[1..]]
        .into_iter()
        .take(usize::from(g.choices))
}

/// The observed information in `ln γ` (the negative Hessian of the log
/// posterior), row-major, for a field up to [`COVARIANCE_LIMIT`].
fn information(gamma: &[f64], groups: &[(Ranked, f64)]) -> Option<Vec<f64>> {
    let n = gamma.len();
    if n > COVARIANCE_LIMIT {
        return None;
    }
    let mut h = vec![0.0; n * n];
    for (i, g) in gamma.iter().enumerate() {
        let p = g / (g + 1.0);
        h[i * n + i] += 2.0 * p * (1.0 - p);
    }
    for (g, w) in groups {
        for from in choices(g) {
            let total: f64 = from.iter().map(|&e| gamma[e]).sum();
            for &k in from {
                let pk = gamma[k] / total;
                h[k * n + k] += w * pk;
                for &l in from {
                    h[k * n + l] -= w * pk * gamma[l] / total;
                }
            }
        }
    }
    Some(h)
}

/// The variance of each `ln γᵢ − mean ln γ` from the covariance.
fn contrasts(cov: &[f64], n: usize) -> Vec<f64> {
    let nf = n as f64;
    let row_mean: Vec<f64> = (0..n)
        .map(|i| cov[i * n..(i + 1) * n].iter().sum::<f64>() / nf)
        .collect();
    let mean = row_mean.iter().sum::<f64>() / nf;
    (0..n)
        .map(|i| (cov[i * n + i] - 2.0 * row_mean[i] + mean).max(0.0))
        .collect()
}

/// A large field's variance of each contrast, from each entrant's own
/// curvature alone (the others' strengths taken as known).
fn own_contrasts(gamma: &[f64], groups: &[(Ranked, f64)]) -> Vec<f64> {
    let n = gamma.len();
    let mut own: Vec<f64> = (gamma.iter())
        .map(|g| 2.0 * g / (g + 1.0) / (g + 1.0))
        .collect();
    for (g, w) in groups {
        for from in choices(g) {
            let total: f64 = from.iter().map(|&e| gamma[e]).sum();
            for &k in from {
                let pk = gamma[k] / total;
                own[k] += w * pk * (1.0 - pk);
            }
        }
    }
    let var: Vec<f64> = own.iter().map(|h| 1.0 / h).collect();
    let nf = n as f64;
    let mean = var.iter().sum::<f64>() / (nf * nf);
    var.iter().map(|v| v * (1.0 - 2.0 / nf) + mean).collect()
}

/// The inverse of the symmetric positive definite `h` (row-major, `n × n`),
/// by its Cholesky factor `L` (`h = L Lᵀ`, so `h⁻¹ = L⁻ᵀ L⁻¹`). Hand-written:
/// these few lines are all of a linear-algebra crate the rating needs. The
/// prior makes `h` positive definite; a pivot that rounding leaves at zero or
/// below is taken as tiny.
fn inverse(mut h: Vec<f64>, n: usize) -> Vec<f64> {
    // In place: h's lower triangle becomes L.
    for j in 0..n {
        let mut d = h[j * n + j];
        for k in 0..j {
            d -= h[j * n + k] * h[j * n + k];
        }
        let d = d.max(f64::MIN_POSITIVE).sqrt();
        h[j * n + j] = d;
        for i in j + 1..n {
            let mut s = h[i * n + j];
            for k in 0..j {
                s -= h[i * n + k] * h[j * n + k];
            }
            h[i * n + j] = s / d;
        }
    }
    // M = L⁻¹, lower triangular, by forward substitution column by column.
    let mut m = vec![0.0; n * n];
    for j in 0..n {
        m[j * n + j] = 1.0 / h[j * n + j];
        for i in j + 1..n {
            let s: f64 = (j..i).map(|k| h[i * n + k] * m[k * n + j]).sum();
            m[i * n + j] = -s / h[i * n + i];
        }
    }
    // h⁻¹ = Mᵀ M: entry (i, j) sums over rows k ≥ max(i, j).
    let mut inv = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (i..n).map(|k| m[k * n + i] * m[k * n + j]).sum();
            inv[i * n + j] = s;
            inv[j * n + i] = s;
        }
    }
    inv
}

/// The normal distribution function.
fn phi(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

impl Ratings {
    pub fn len(&self) -> usize {
        self.theta.len()
    }

    pub fn is_empty(&self) -> bool {
        self.theta.is_empty()
    }

    /// Entrant `i`'s rating: `400 · log10 γᵢ`, the field's mean 0.
    pub fn rating(&self, i: usize) -> f64 {
        let mean = self.theta.iter().sum::<f64>() / self.theta.len() as f64;
        ELO * (self.theta[i] - mean)
    }

    /// The standard error of entrant `i`'s rating.
    pub fn error(&self, i: usize) -> f64 {
        ELO * self.contrast[i].sqrt()
    }

    /// Entrant `i`'s 95% interval.
    pub fn interval(&self, i: usize) -> [f64; 2] {
        let (r, half) = (self.rating(i), Z95 * self.error(i));
        [r - half, r + half]
    }

    /// The standard error of the difference of the ratings of `i` and `j`
    /// (`None` above [`COVARIANCE_LIMIT`]).
    pub fn difference_error(&self, i: usize, j: usize) -> Option<f64> {
        let cov = self.covariance.as_ref()?;
        let n = self.theta.len();
        let var = cov[i * n + i] + cov[j * n + j] - 2.0 * cov[i * n + j];
        Some(ELO * var.max(0.0).sqrt())
    }

    /// The likelihood that `i` is stronger than `j` (`None` for `i == j`, or
    /// above [`COVARIANCE_LIMIT`]).
    pub fn superiority(&self, i: usize, j: usize) -> Option<f64> {
        if i == j {
            return None;
        }
        let sd = self.difference_error(i, j)? / ELO;
        let d = self.theta[i] - self.theta[j];
        Some(if sd > 0.0 { phi(d / sd) } else { 0.5 })
    }
}

#[cfg(test)]
mod tests;
