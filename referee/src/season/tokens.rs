//! Entrants' tokens: the one check every token-protected request goes through
//! (the site's logs today). An entrant's token is made at its first
//! submission and shown once (`submit.rs`).

use super::db::Db;

/// Whether `token` is the token of the entrant named `entrant`: false for an
/// unknown entrant or any other token. The comparison takes the same time
/// wherever the two first differ, so timing tells nothing of the token.
pub fn authenticate(db: &Db, entrant: &str, token: &str) -> anyhow::Result<bool> {
    let Some(stored) = db.token_of(entrant)? else {
        return Ok(false);
    };
    Ok(same(stored.as_bytes(), token.as_bytes()))
}

/// Constant-time equality of two byte strings (their lengths are no secret:
/// every token has the same length).
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() || a.is_empty() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn only_the_same_bytes_are_the_same_token() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b""));
    }
}
