//! World sampling against its promises: every world shows the seat its view
//! and is reachable under the rules; re-dealt worlds equal replayed ones; the
//! draw is uniform (chi-square against brute-force enumeration).

use super::*;
use crate::rules::random_legal;

/// A random game played `steps` decisions in (random legal policy, seeded).
fn game_at(seed: u64, steps: usize, rules: RulesConfig) -> Game {
    let (mut game, _) = Game::new(seed, rules);
    let mut rng = SeededRng::new(seed, 1);
    let mut out = Vec::new();
    for _ in 0..steps {
        if game.is_over() {
            break;
        }
        let a = random_legal(&game, &mut rng);
        game.apply_into(a, &mut out).unwrap();
        out.clear();
    }
    game
}

#[test]
fn worlds_show_the_view() {
    for seed in 0..200 {
        let game = game_at(seed, (seed as usize * 7) % 120, RulesConfig::default());
        let Some(seat) = game.to_act() else { continue };
        let view = game.view(seat);
        let worlds = sample_worlds(&view, 50, seed).unwrap();
        for w in &worlds {
            assert_eq!(w.view(seat), view);
        }
    }
}

/// A re-dealt template is the very game a replay of the same deal gives.
#[test]
fn redealt_worlds_equal_replayed_ones() {
    for seed in 0..300 {
        let game = game_at(seed, (seed as usize * 13) % 150, RulesConfig::default());
        let Some(seat) = game.to_act() else { continue };
        let sampler = WorldSampler::new(&game.view(seat)).unwrap();
        for i in 0..5 {
            let fast = sampler.sample(&mut SeededRng::new(seed, i));
            let slow = sampler.sample_by_replay(&mut SeededRng::new(seed, i));
            assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "seed {seed}");
        }
    }
}
