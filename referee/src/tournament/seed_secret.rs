//! The seed secret of a competition (`referee tournament`, `referee sprt`): 256
//! bits from the operating system, mixed into the organiser's `--seed`, so that
//! no deal follows from a number a person chose.
//!
//! Why: a bot sees its own hand, and from it can search the seeds a person
//! types (`--seed 7`, `--seed 123456789123456789`) in well under a second;
//! the seed found gives every hand and the stock of every game. Mixed with a
//! secret nobody knows until the run is over, the seed the bot would have to
//! find is 64 bits drawn from a keyed function: every game's deal seed is
//! still derived from the schedule (tournament → round → matchup → set, see
//! `schedule.rs`), but from the *deal seed* [`SeedSecret::mix`] gives, not
//! from `--seed` itself.
//!
//! The mixing is ChaCha20 keyed by the secret, the organiser's seed as its
//! stream number, its first 64-bit output (low word first): a keyed function
//! of the seed that nobody can compute or invert without the key. ChaCha20 is
//! what `rand_chacha` already gives the workspace, so no second cipher is
//! needed; its 20 rounds are used here (the deck shuffle's ChaCha8 is keyed by
//! a public seed and needs no margin against key search). The algorithm is
//! part of what makes a published run reproducible, so it is pinned by a
//! golden test.
//!
//! Where the secret lives: drawn when a new run starts (or given, see
//! `secret_args.rs`), it is written to the run's folder (`seed-secret`, mode
//! 0600) before any game, so `--resume`, `--round R --from DIR`, `merge` and
//! `verify` reproduce the run exactly. `tournament.json` carries it only once
//! the tournament is over (`Manifest::revealed`): then it is published with
//! the results, printed at the end of the console summary (`--quiet` or not),
//! and `--seed N --seed-secret HEX` reproduces every deal from an empty folder.
//! Shards of one tournament must deal from one secret: they are given it
//! (`--seed-secret-file`), and a sharded run without one is refused.

use std::path::Path;

use anyhow::Context;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use crate::layout::tournament::SEED_SECRET;

/// The secret's length: ChaCha20's key.
const BYTES: usize = 32;

/// 256 secret bits. Its `Debug` shows none of them, so a configuration printed
/// for a bug report does not give it away; `Display` is its hex form.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SeedSecret([u8; BYTES]);

impl std::fmt::Debug for SeedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeedSecret(..)")
    }
}

impl std::fmt::Display for SeedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for SeedSecret {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.len() != 2 * BYTES || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "a seed secret is {} hex digits (what a tournament prints at its end, or \
                 `seed_secret` in its tournament.json), got {} characters",
                2 * BYTES,
                text.len()
            ));
        }
        let mut bytes = [0u8; BYTES];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex digits");
        }
        Ok(SeedSecret(bytes))
    }
}

impl serde::Serialize for SeedSecret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for SeedSecret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl SeedSecret {
    /// Fresh bits from the operating system.
    pub fn draw() -> anyhow::Result<SeedSecret> {
        use std::io::Read;
        let mut bytes = [0u8; BYTES];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .context("failed to draw a seed secret from /dev/urandom")?;
        Ok(SeedSecret(bytes))
    }

    /// The deal seed of a run whose organiser gave `seed`: ChaCha20 keyed by
    /// the secret, on stream `seed`, its first 64-bit output.
    pub fn mix(&self, seed: u64) -> u64 {
        let mut rng = ChaCha20Rng::from_seed(self.0);
        rng.set_stream(seed);
        rng.next_u64()
    }

    /// A secret of its own for a competition dealt from this one's (a
    /// season's final, `season/final_bracket.rs`): ChaCha20 keyed by this
    /// secret on stream `seed`, the 32 bytes that open its second block.
    /// [`SeedSecret::mix`] takes the first 8 bytes of the first block, so no
    /// deal seed of this secret is any part of the derived one, and the
    /// derived secret, once revealed, gives nothing of this one.
    pub fn derive(&self, seed: u64) -> SeedSecret {
        let mut rng = ChaCha20Rng::from_seed(self.0);
        rng.set_stream(seed);
        rng.set_word_pos(16);
        let mut bytes = [0u8; BYTES];
        rng.fill_bytes(&mut bytes);
        SeedSecret(bytes)
    }

    /// The secret in `path` (its hex, surrounding blanks ignored).
    pub fn read_file(path: &Path) -> anyhow::Result<SeedSecret> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read the seed secret {}", path.display()))?;
        text.parse()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

/// The deal seed: `seed` mixed with `secret`, or `seed` itself for a run
/// made before there were secrets (tournament.json format 2 and older).
pub fn deal_seed(seed: u64, secret: Option<&SeedSecret>) -> u64 {
    secret.map_or(seed, |s| s.mix(seed))
}

impl super::TournamentConfig {
    /// The seed every game's seed derives from (`schedule.rs`).
    pub fn deal_seed(&self) -> u64 {
        self.secret.mix(self.seed)
    }
}

/// The secret kept in the folder `dir`, if there is one.
pub fn stored(dir: &Path) -> anyhow::Result<Option<SeedSecret>> {
    let path = dir.join(SEED_SECRET);
    match path.is_file() {
        true => SeedSecret::read_file(&path).map(Some),
        false => Ok(None),
    }
}

/// Keeps `secret` in the folder `dir`, readable by its owner alone.
pub fn store(dir: &Path, secret: &SeedSecret) -> anyhow::Result<()> {
    let text = format!("{secret}\n");
    Ok(crate::safe_create::write_atomic_private(
        &dir.join(SEED_SECRET),
        text.as_bytes(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pins the mixing: a published run is reproduced by a later referee only
    /// if this stays the same. If this test fails, every published secret
    /// deals other cards than it did.
    #[test]
    fn the_mixing_is_pinned() {
        let secret: SeedSecret = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
            .parse()
            .unwrap();
        assert_eq!(
            secret.to_string(),
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        );
        let mixed: Vec<u64> = [0, 7, u64::MAX].map(|s| secret.mix(s)).to_vec();
        assert_eq!(mixed, GOLDEN.to_vec());
        assert_eq!(deal_seed(7, None), 7);
        assert_eq!(deal_seed(7, Some(&secret)), GOLDEN[1]);
    }

    /// Pins the derivation of a final's secret from its season's, computed
    /// apart from this code by the ChaCha20 of `tests/spy/seed_search.py`
    /// (its second block, counter 1).
    #[test]
    fn the_derivation_is_pinned() {
        let secret: SeedSecret = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
            .parse()
            .unwrap();
        assert_eq!(
            secret.derive(0).to_string(),
            "18b84231ade6a6d113615c61af434e27f8b1f3f5e1ad5b5cecf8fc122a35755c"
        );
        assert_eq!(
            secret.derive(7).to_string(),
            "f10f844822e87a8962364e33fc88109a329da241f1ed0905aa9a33e7e7e9d71c"
        );
    }

    /// Computed apart from this code, by the ChaCha20 of the seed-search test
    /// bot (`tests/spy/seed_search.py`), which a test holds to real deals.
    const GOLDEN: [u64; 3] = [
        0x6a19_c5d9_7d2b_fd39,
        0x32b8_dbe9_3f44_0f48,
        0x5dce_289d_e5ee_85d5,
    ];

    #[test]
    fn different_secrets_and_seeds_give_different_deals() {
        let a = SeedSecret::draw().unwrap();
        let b = SeedSecret::draw().unwrap();
        assert_ne!(a, b, "256 fresh bits twice");
        assert_ne!(a.mix(7), b.mix(7));
        assert_ne!(a.mix(7), a.mix(8));
        assert_eq!(a.mix(7), a.mix(7));
    }

    #[test]
    fn a_secret_reads_back_from_its_hex_and_nothing_else() {
        let a = SeedSecret::draw().unwrap();
        assert_eq!(a.to_string().parse::<SeedSecret>(), Ok(a));
        assert_eq!(format!(" {a}\n").parse::<SeedSecret>(), Ok(a));
        assert_eq!(format!("{a:?}"), "SeedSecret(..)");
        for bad in [
            "",
            "7",
            &a.to_string()[1..],
            &format!("{a}0"),
            &"g".repeat(64),
        ] {
            let e = bad.parse::<SeedSecret>().unwrap_err();
            assert!(e.contains("64 hex digits"), "{bad:?}: {e}");
        }
    }

    #[cfg(unix)] // permission bits
    #[test]
    fn a_stored_secret_is_its_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(stored(dir.path()).unwrap(), None);
        let a = SeedSecret::draw().unwrap();
        store(dir.path(), &a).unwrap();
        assert_eq!(stored(dir.path()).unwrap(), Some(a));
        let mode = std::fs::metadata(dir.path().join(SEED_SECRET))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
