//! The rating against the model as its module doc states it: the fit is the
//! maximum of an independently written log posterior, its information is
//! that function's curvature, it ignores the order of the games, and its
//! intervals cover known strengths as often as they claim.

use super::*;

/// A small deterministic generator (SplitMix64), so that the simulations need
/// no crate and read the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A game of entrants `table` played as the model says: the first chosen with
/// probability proportional to strength, then the second of the two left.
fn simulate(rng: &mut Rng, strength: &[f64], table: [usize; 3]) -> Ranked {
    let mut left = table.to_vec();
    let mut order = Vec::new();
    while left.len() > 1 {
        let total: f64 = left.iter().map(|&e| strength[e]).sum();
        let mut x = rng.unit() * total;
        let mut pick = left.len() - 1;
        for (k, &e) in left.iter().enumerate() {
            if x < strength[e] {
                pick = k;
                break;
            }
            x -= strength[e];
        }
        order.push(left.remove(pick));
    }
    order.push(left[0]);
    Ranked {
        order: [order[0], order[1], order[2]],
        choices: 2,
    }
}

/// Three distinct entrants of `n`.
fn table(rng: &mut Rng, n: usize) -> [usize; 3] {
    loop {
        let t = [rng.below(n), rng.below(n), rng.below(n)];
        if t[0] != t[1] && t[0] != t[2] && t[1] != t[2] {
            return t;
        }
    }
}

/// The log posterior in `ln γ`, written from the module doc, not from the fit.
fn log_posterior(theta: &[f64], games: &[Ranked]) -> f64 {
    let mut lp = 0.0;
    for t in theta {
        // One virtual win and one virtual loss against strength 1 (ln 1 = 0).
        lp += t - 2.0 * (t.exp() + 1.0).ln();
    }
    for g in games {
        let gamma = g.order.map(|e| theta[e].exp());
        if g.choices >= 1 {
            lp += gamma[0].ln() - (gamma[0] + gamma[1] + gamma[2]).ln();
        }
        if g.choices >= 2 {
            lp += gamma[1].ln() - (gamma[1] + gamma[2]).ln();
        }
    }
    lp
}

fn random_games(rng: &mut Rng, strength: &[f64], games: usize) -> Vec<Ranked> {
    (0..games)
        .map(|_| {
            let t = table(rng, strength.len());
            let mut g = simulate(rng, strength, t);
            // Now and then a forfeit or two, which shorten the ranking.
            match rng.below(20) {
                0 => g.choices = 1,
                1 => g.choices = 0,
                _ => {}
            }
            g
        })
        .collect()
}

#[test]
fn the_fit_is_the_maximum_of_the_stated_posterior_and_its_curvature() {
    let mut rng = Rng(7);
    let strength = [0.5, 1.0, 2.0, 4.0, 1.5];
    let games = random_games(&mut rng, &strength, 300);
    let r = fit(5, games.iter().copied());
    let h = 1e-5;
    let bump = |i: usize, d: f64| {
        let mut t = r.theta.clone();
        t[i] += d;
        t
    };
    // The gradient is zero at the fit ...
    for i in 0..5 {
        let g =
            (log_posterior(&bump(i, h), &games) - log_posterior(&bump(i, -h), &games)) / (2.0 * h);
        assert!(g.abs() < 1e-5, "d/dθ{i} = {g}");
    }
    // ... and the covariance inverts the finite-difference curvature.
    let info = information(
        &r.theta.iter().map(|t| t.exp()).collect::<Vec<_>>(),
        &grouped(5, games.iter().copied()),
    )
    .unwrap();
    for i in 0..5 {
        for j in 0..5 {
            let second = |di: f64, dj: f64| {
                let mut t = r.theta.clone();
                t[i] += di;
                t[j] += dj;
                log_posterior(&t, &games)
            };
            let h2 = 1e-4;
            let fd = -(second(h2, h2) - second(h2, -h2) - second(-h2, h2) + second(-h2, -h2))
                / (4.0 * h2 * h2);
            assert!(
                (fd - info[i * 5 + j]).abs() < 1e-3 * (1.0 + fd.abs()),
                "H[{i}][{j}]: {fd} against {}",
                info[i * 5 + j]
            );
        }
    }
    let cov = r.covariance.as_ref().unwrap();
    for i in 0..5 {
        for j in 0..5 {
            let e: f64 = (0..5).map(|k| info[i * 5 + k] * cov[k * 5 + j]).sum();
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((e - want).abs() < 1e-9, "(H Σ)[{i}][{j}] = {e}");
        }
    }
    let mean: f64 = (0..5).map(|i| r.rating(i)).sum::<f64>() / 5.0;
    assert!(mean.abs() < 1e-9, "ratings centred: {mean}");
}

#[test]
fn shuffled_games_give_identical_ratings() {
    let mut rng = Rng(11);
    let strength = [1.0, 3.0, 0.7, 1.2, 2.2, 0.4];
    let mut games = random_games(&mut rng, &strength, 2_000);
    let a = fit(6, games.iter().copied());
    // Fisher–Yates.
    for i in (1..games.len()).rev() {
        games.swap(i, rng.below(i + 1));
    }
    let b = fit(6, games.iter().copied());
    for i in 0..6 {
        assert!((a.rating(i) - b.rating(i)).abs() < 1e-9, "entrant {i}");
        assert!((a.error(i) - b.error(i)).abs() < 1e-9, "entrant {i}");
        for j in 0..6 {
            assert_eq!(a.superiority(i, j).is_some(), i != j);
            let (x, y) = (a.superiority(i, j), b.superiority(i, j));
            assert!((x.unwrap_or(0.0) - y.unwrap_or(0.0)).abs() < 1e-9);
        }
    }
    // The order is by strength, and superiority is a probability: i over j
    // and j over i add up to 1.
    assert!(a.rating(1) > a.rating(4) && a.rating(4) > a.rating(0));
    let (p, q) = (a.superiority(1, 5).unwrap(), a.superiority(5, 1).unwrap());
    assert!((p + q - 1.0).abs() < 1e-12 && p > 0.99, "{p} {q}");
}

/// 1,000 tournaments of five entrants of known strengths, each pair of a
/// round robin's tables meeting twelve times: the 95% intervals cover the true
/// (shifted) rating in 95% ± 2% of the 5,000 cases.
#[test]
fn intervals_cover_known_strengths_as_often_as_they_claim() {
    let truth = [-200.0, -60.0, 0.0, 90.0, 170.0];
    let strength: Vec<f64> = truth.iter().map(|r: &f64| 10f64.powf(r / 400.0)).collect();
    let mean = truth.iter().sum::<f64>() / 5.0;
    let tables: Vec<[usize; 3]> = (0..5)
        .flat_map(|a| (a + 1..5).flat_map(move |b| (b + 1..5).map(move |c| [a, b, c])))
        .collect();
    let mut rng = Rng(2024);
    let (mut covered, mut cases) = (0, 0);
    for _ in 0..1_000 {
        let games: Vec<Ranked> = (tables.iter())
            .flat_map(|&t| std::iter::repeat_n(t, 12))
            .map(|t| simulate(&mut rng, &strength, t))
            .collect();
        let r = fit(5, games);
        for (i, t) in truth.iter().enumerate() {
            let [lo, hi] = r.interval(i);
            cases += 1;
            covered += u32::from(lo <= t - mean && t - mean <= hi);
        }
    }
    let rate = f64::from(covered) / f64::from(cases);
    eprintln!("coverage {rate} of {cases}");
    assert!((0.93..=0.97).contains(&rate), "coverage {rate} of {cases}");
}

#[test]
fn forfeits_shorten_the_ranking() {
    // Team positions 0, 1, 2 seat entrants 5, 6, 7; ranked 2, 0, 1.
    let full = Ranked::new([5, 6, 7], [2, 0, 1], &[]);
    assert_eq!((full.order, full.choices), ([7, 5, 6], 2));
    assert_eq!(Ranked::new([5, 6, 7], [2, 0, 1], &[1]).choices, 2);
    assert_eq!(Ranked::new([5, 6, 7], [2, 0, 1], &[0, 1]).choices, 1);
    assert_eq!(Ranked::new([5, 6, 7], [2, 0, 1], &[0, 1, 2]).choices, 0);
    // An entrant that never played sits at the prior's strength 1, the same
    // as the virtual entrant; with no games at all everyone is 0.
    let r = fit(3, []);
    for i in 0..3 {
        assert_eq!(r.rating(i), 0.0);
        assert!(r.error(i).is_finite() && r.error(i) > 0.0);
    }
}

#[test]
fn a_large_field_gets_errors_without_the_covariance() {
    let n = COVARIANCE_LIMIT + 4;
    let strength: Vec<f64> = (0..n).map(|i| 0.5 + (i % 7) as f64 / 4.0).collect();
    let mut rng = Rng(3);
    let games = random_games(&mut rng, &strength, 20 * n);
    let r = fit(n, games);
    assert_eq!(r.superiority(0, 1), None);
    assert!((0..n).all(|i| r.error(i).is_finite() && r.error(i) > 0.0));
}
