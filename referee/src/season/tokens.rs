//! Entrants' tokens: what an owner presents to submit a version (an upload,
//! `upload.rs`) or read its own logs (the site).
//!
//! A token is 128 random bits from the kernel, shown as 32 hex digits once,
//! when it is issued; `season.db` keeps only its SHA-256 (`sha256:HEX`), so a
//! copy of the database (a backup, a published season) submits nothing. A
//! plain hash is enough: the token is random, so there is no dictionary to
//! try, and 2^128 guesses are out of reach. A presented token is hashed and
//! compared with the stored hash in constant time; an unknown entrant is
//! compared against a decoy, so the time taken does not tell which names
//! exist.
//!
//! Seasons opened before tokens were hashed hold them in clear: every
//! `Db::open` replaces each by its hash ([`stored_form`]), in one
//! transaction, so the tokens already handed out keep working.

use super::db::Db;
pub use super::db::{stored_token as stored_form, TOKEN_HASH as PREFIX};

/// A token, as the entrant is given it, and as the database keeps it.
pub struct Issued {
    /// 32 hex digits: shown once, kept nowhere.
    pub clear: String,
    /// `sha256:` and 64 hex digits.
    pub stored: String,
}

/// Draws a new token.
pub fn issue() -> anyhow::Result<Issued> {
    let mut bytes = [0u8; 16];
    getrandom(&mut bytes)?;
    let clear = hex(&bytes);
    let stored = stored_form(&clear);
    Ok(Issued { clear, stored })
}

/// Whether `token` is the token of the entrant named `entrant` (false for an
/// entrant the season does not have). Takes as long whichever is wrong.
pub fn authenticate(db: &Db, entrant: &str, token: &str) -> anyhow::Result<bool> {
    let stored = db.entrant_token(entrant)?;
    let presented = stored_form(token.trim());
    Ok(match stored {
        Some(stored) => same(presented.as_bytes(), stored.as_bytes()),
        None => {
            // A decoy comparison: an unknown name costs what a known one does.
            let decoy = stored_form("");
            std::hint::black_box(same(presented.as_bytes(), decoy.as_bytes()));
            false
        }
    })
}

/// Gives the entrant named `entrant` a new token; the old one stops working
/// at once. The new token, in clear (shown once).
pub fn rotate(db: &Db, entrant: &str) -> anyhow::Result<String> {
    let issued = issue()?;
    if !db.set_entrant_token(entrant, &issued.stored)? {
        anyhow::bail!(
            "the season has no entrant named {:?}",
            crate::names::printable(entrant)
        );
    }
    Ok(issued.clear)
}

/// Equal bytes, compared in time that depends on the lengths alone (both
/// are `sha256:` and 64 hex digits here).
fn same(a: &[u8], b: &[u8]) -> bool {
    let differ = (a.iter().zip(b)).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(differ) == 0 && a.len() == b.len()
}

fn hex(bytes: &[u8]) -> String {
    super::db::hex(bytes)
}

/// Fills `bytes` from the kernel's random source.
fn getrandom(bytes: &mut [u8]) -> anyhow::Result<()> {
    use ring::rand::SecureRandom;
    ring::rand::SystemRandom::new()
        .fill(bytes)
        .map_err(|_| anyhow::anyhow!("failed to draw a token from the system's random source"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_kept_as_its_hash_and_only_itself_matches() {
        let a = issue().unwrap();
        let b = issue().unwrap();
        assert_eq!(a.clear.len(), 32);
        assert_ne!(a.clear, b.clear);
        assert!(a.stored.starts_with(PREFIX) && a.stored.len() == PREFIX.len() + 64);
        assert!(!a.stored.contains(&a.clear));
        assert_eq!(stored_form(&a.clear), a.stored);
        assert!(same(stored_form(&a.clear).as_bytes(), a.stored.as_bytes()));
        assert!(!same(stored_form(&b.clear).as_bytes(), a.stored.as_bytes()));
        assert!(!same(b"sha256:", a.stored.as_bytes()));
        // The SHA-256 of "abc", as FIPS 180-2 gives it.
        assert_eq!(
            stored_form("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
