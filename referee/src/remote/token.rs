//! Seat tokens: the secret a remote bot's connector proves it holds, one per
//! remote name of a run. A token is 256 random bits bound to its run (the run
//! id is in every proof), its name (only that name's seats accept it) and an
//! expiry. It never crosses the wire: a connection answers a fresh challenge
//! with an HMAC of it (`handshake.rs`), so a recorded handshake cannot be
//! replayed and a wrong token tells nothing about which part was wrong.
//!
//! The token file (`OUT/tokens/NAME.token`, mode 0600) is one line:
//! `schmier-remote-token-1 NAME RUN EXPIRES SECRET [SEATS]` — `RUN` the run
//! id (`*`: any run given this token with `--tokens`), `EXPIRES` unix
//! seconds, `SECRET` at least 32 hex digits (128 bits), `SEATS` the most
//! seats of the name the run opens at once, which is as many bots as
//! `referee connect` runs at once ([`DEFAULT_SEATS`] where a line has none).
//! The referee writes it; it is no part of any proof (it bounds the owner's
//! machine, not the referee's).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// The first word of a token line.
pub const MAGIC: &str = "schmier-remote-token-1";
/// How long a token the referee makes is good for.
pub const DEFAULT_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// The seats a token line without `SEATS` names: one table's.
pub const DEFAULT_SEATS: u32 = 6;
/// The most seats a token line may name.
pub const MAX_SEATS: u32 = 10_000;
/// The fewest hex digits a secret may have (128 bits).
const MIN_SECRET_HEX: usize = 32;

/// One remote name's token.
#[derive(Clone)]
pub struct Token {
    pub name: String,
    /// The run it is for; `*` for any run it is given to.
    pub run: String,
    /// Unix seconds after which it is refused.
    pub expires: u64,
    /// The most seats of the name open at once (`None`: not said).
    pub seats: Option<u32>,
    secret: Vec<u8>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret, not even in a debug line.
        write!(
            f,
            "Token({} run {} expires {})",
            self.name, self.run, self.expires
        )
    }
}

/// `n` random bytes from the operating system, as lowercase hex.
pub fn random_hex(n: usize) -> anyhow::Result<String> {
    let mut bytes = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| anyhow::anyhow!("failed to draw random bytes from the operating system"))?;
    Ok(hex(&bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

impl Token {
    /// A fresh token for `name` in run `run`: 256 random bits, good for `ttl`.
    pub fn fresh(name: &str, run: &str, ttl: Duration) -> anyhow::Result<Token> {
        let secret = unhex(&random_hex(32)?).expect("hex of our own");
        Ok(Token {
            name: name.to_owned(),
            run: run.to_owned(),
            expires: now_unix() + ttl.as_secs(),
            seats: None,
            secret,
        })
    }

    /// Its file's one line.
    pub fn line(&self) -> String {
        let seats = self.seats.map_or(String::new(), |n| format!(" {n}"));
        format!(
            "{MAGIC} {} {} {} {}{seats}\n",
            self.name,
            self.run,
            self.expires,
            hex(&self.secret)
        )
    }

    /// How many bots its connector runs at once.
    pub fn seats(&self) -> u32 {
        self.seats.unwrap_or(DEFAULT_SEATS)
    }

    /// Reads one token line; `what` names where it came from, for errors
    /// (which never quote the secret).
    pub fn parse(line: &str, what: &str) -> anyhow::Result<Token> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (magic, name, run, expires, secret, seats) = match words[..] {
            [m, n, r, e, s] => (m, n, r, e, s, None),
            [m, n, r, e, s, seats] => (m, n, r, e, s, Some(seats)),
            _ => bail!("{what}: expected `{MAGIC} NAME RUN EXPIRES SECRET [SEATS]` on one line"),
        };
        if magic != MAGIC {
            bail!("{what}: not a seat token (it must start with {MAGIC})");
        }
        crate::remote::check_name(name).with_context(|| what.to_owned())?;
        if run != "*" && !run.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!("{what}: the run must be hex digits or *, got {run:?}");
        }
        let expires = expires
            .parse()
            .with_context(|| format!("{what}: EXPIRES must be unix seconds, got {expires:?}"))?;
        let secret = unhex(secret).filter(|s| s.len() * 2 >= MIN_SECRET_HEX);
        let Some(secret) = secret else {
            bail!("{what}: the secret must be at least {MIN_SECRET_HEX} hex digits (128 bits)");
        };
        let seats = match seats.map(str::parse::<u32>) {
            None => None,
            Some(Ok(n @ 1..=MAX_SEATS)) => Some(n),
            Some(_) => bail!("{what}: SEATS must be a number from 1 to {MAX_SEATS}"),
        };
        Ok(Token {
            name: name.to_owned(),
            run: run.to_owned(),
            expires,
            seats,
            secret,
        })
    }

    /// Reads a token file (`connect --token-file`).
    pub fn read(path: &Path) -> anyhow::Result<Token> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read the token file {}", path.display()))?;
        Token::parse(text.trim(), &path.display().to_string())
    }

    /// Whether it has expired.
    pub fn expired(&self) -> bool {
        now_unix() > self.expires
    }

    /// The proof of holding it for one connection: HMAC-SHA256 over the run,
    /// the challenge's nonce, the name, the role and the seat.
    pub fn prove(&self, run: &str, nonce: &str, role: &str, seat: &str) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA256, &self.secret);
        hex(hmac::sign(&key, &proof_text(run, nonce, &self.name, role, seat)).as_ref())
    }

    /// Whether `mac` proves holding it, compared in constant time.
    pub fn verify(&self, run: &str, nonce: &str, role: &str, seat: &str, mac: &str) -> bool {
        let key = hmac::Key::new(hmac::HMAC_SHA256, &self.secret);
        let mac = unhex(mac).unwrap_or_default();
        let text = proof_text(run, nonce, &self.name, role, seat);
        hmac::verify(&key, &text, &mac).is_ok()
    }
}

fn proof_text(run: &str, nonce: &str, name: &str, role: &str, seat: &str) -> Vec<u8> {
    format!("schmier-remote-1\n{run}\n{nonce}\n{name}\n{role}\n{seat}\n").into_bytes()
}

/// The tokens of a run, by name.
#[derive(Debug, Default)]
pub struct Tokens {
    by_name: BTreeMap<String, Token>,
    /// Checked against when a name has no token, so a wrong name costs the
    /// same work as a wrong secret.
    decoy: Option<Token>,
    /// Tokens added while the run runs ([`Tokens::add`]: a season's remote
    /// version submitted meanwhile); they take the place of `by_name`'s.
    added: Mutex<BTreeMap<String, Token>>,
}

impl Tokens {
    /// Fresh tokens for `names` in run `run`, or the organiser's from
    /// `given` (`--tokens FILE`: token lines, one per name) where it has one;
    /// each names `seats`, the most seats of a name the run opens at once.
    pub fn make(
        names: &[String],
        run: &str,
        given: Option<&Path>,
        seats: u32,
    ) -> anyhow::Result<Tokens> {
        let mut given_tokens = BTreeMap::new();
        if let Some(path) = given {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--tokens: failed to read {}", path.display()))?;
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() || line.trim_start().starts_with('#') {
                    continue;
                }
                let what = format!("--tokens {} line {}", path.display(), n + 1);
                let token = Token::parse(line, &what)?;
                if token.run != "*" && token.run != run {
                    bail!("{what}: the token is for run {}, not this one", token.run);
                }
                if !names.contains(&token.name) {
                    bail!("{what}: no seat or entrant is remote:{}", token.name);
                }
                given_tokens.insert(token.name.clone(), token);
            }
        }
        let mut by_name = BTreeMap::new();
        for name in names {
            let mut token = match given_tokens.remove(name) {
                Some(t) => t,
                None => Token::fresh(name, run, DEFAULT_TTL)?,
            };
            token.seats = Some(seats.clamp(1, MAX_SEATS));
            by_name.insert(name.clone(), token);
        }
        let decoy = Some(Token::fresh("decoy", run, DEFAULT_TTL)?);
        Ok(Tokens {
            by_name,
            decoy,
            added: Mutex::default(),
        })
    }

    /// The token made (or given) for `name` at the start.
    pub fn get(&self, name: &str) -> Option<&Token> {
        self.by_name.get(name)
    }

    /// Serves `token`'s name with it from now on, in place of any token the
    /// name had: a season's remote name that the run did not know at its
    /// start, or whose owner holds the season's token rather than a fresh
    /// one. Its `SEATS` become `seats`.
    pub fn add(&self, mut token: Token, seats: u32) {
        token.seats = Some(seats.clamp(1, MAX_SEATS));
        let mut added = self.added.lock().expect("not poisoned");
        added.insert(token.name.clone(), token);
    }

    pub fn iter(&self) -> impl Iterator<Item = &Token> {
        self.by_name.values()
    }

    /// Whether `mac` proves holding `name`'s token, unexpired. The same work
    /// whichever part is wrong: an unknown name is checked against a decoy.
    pub fn admits(
        &self,
        run: &str,
        nonce: &str,
        name: &str,
        role: &str,
        seat: &str,
        mac: &str,
    ) -> bool {
        let added = self.added.lock().expect("not poisoned").get(name).cloned();
        let (token, known) = match added.as_ref().or(self.by_name.get(name)) {
            Some(t) => (t, true),
            None => (self.decoy.as_ref().expect("a decoy"), false),
        };
        let proved = token.verify(run, nonce, role, seat, mac);
        proved & known & !token.expired()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_line_reads_back_and_proves_only_its_own_run_nonce_and_seat() {
        let mut t = Token::fresh("alice", "ab12", DEFAULT_TTL).unwrap();
        let back = Token::parse(t.line().trim(), "test").unwrap();
        assert_eq!(back.line(), t.line());
        assert_eq!(back.seats(), DEFAULT_SEATS, "a line without SEATS");
        t.seats = Some(4);
        let four = Token::parse(t.line().trim(), "test").unwrap();
        assert_eq!((four.seats(), four.line()), (4, t.line()));
        let mac = t.prove("ab12", "n1", "seat", "s1");
        assert!(back.verify("ab12", "n1", "seat", "s1", &mac));
        for (run, nonce, seat) in [
            ("ab13", "n1", "s1"),
            ("ab12", "n2", "s1"),
            ("ab12", "n1", "s2"),
        ] {
            assert!(
                !back.verify(run, nonce, "seat", seat, &mac),
                "{run} {nonce} {seat}"
            );
        }
        let other = Token::fresh("alice", "ab12", DEFAULT_TTL).unwrap();
        assert!(
            !other.verify("ab12", "n1", "seat", "s1", &mac),
            "another secret"
        );
    }

    #[test]
    fn short_secrets_and_malformed_lines_are_refused_without_quoting_the_secret() {
        let short = format!("{MAGIC} alice * 99 {}", "ab".repeat(15));
        let e = Token::parse(&short, "f").unwrap_err().to_string();
        assert!(e.contains("128 bits") && !e.contains("abab"), "{e}");
        assert!(Token::parse("hello", "f").is_err());
        assert!(Token::parse(&format!("{MAGIC} al/ce * 99 {}", "ab".repeat(16)), "f").is_err());
        for seats in ["0", "-1", "many", "10001"] {
            let line = format!("{MAGIC} alice * 99 {} {seats}", "ab".repeat(16));
            let e = Token::parse(&line, "f").unwrap_err().to_string();
            assert!(e.contains("SEATS") && !e.contains("abab"), "{e}");
        }
    }

    #[test]
    fn an_expired_token_and_an_unknown_name_are_not_admitted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t");
        let secret = "cd".repeat(16);
        std::fs::write(&file, format!("{MAGIC} old * 1 {secret}\n")).unwrap();
        let names = vec!["old".to_owned(), "new".to_owned()];
        let tokens = Tokens::make(&names, "ff", Some(&file), 2).unwrap();
        let old = tokens.get("old").unwrap();
        let mac = old.prove("ff", "n", "control", "");
        assert!(
            old.verify("ff", "n", "control", "", &mac),
            "the proof itself is right"
        );
        assert!(
            !tokens.admits("ff", "n", "old", "control", "", &mac),
            "but it expired"
        );
        let new = tokens.get("new").unwrap();
        let mac = new.prove("ff", "n", "control", "");
        assert!(tokens.admits("ff", "n", "new", "control", "", &mac));
        assert!(!tokens.admits("ff", "n", "nobody", "control", "", &mac));
        // A token added later serves its name, new or known, from then on.
        let late = Token::fresh("late", "*", DEFAULT_TTL).unwrap();
        let mac = late.prove("ff", "n", "control", "");
        assert!(!tokens.admits("ff", "n", "late", "control", "", &mac));
        tokens.add(late.clone(), 4);
        assert!(tokens.admits("ff", "n", "late", "control", "", &mac));
        let instead = Token::fresh("new", "*", DEFAULT_TTL).unwrap();
        tokens.add(instead.clone(), 4);
        let (old_mac, new_mac) = (
            new.prove("ff", "n", "control", ""),
            instead.prove("ff", "n", "control", ""),
        );
        assert!(!tokens.admits("ff", "n", "new", "control", "", &old_mac));
        assert!(tokens.admits("ff", "n", "new", "control", "", &new_mac));
    }
}
