//! A bot command as the user writes it (`builtin:NAME`, `inproc:NAME`, `human`,
//! or a command line), and the run's seed.

use anyhow::{bail, Context};

use crate::config::BotSpec;

/// 64 random bits from the operating system, for a run that was not given a seed:
/// a competition's deals must not be guessable.
pub fn fresh_seed() -> anyhow::Result<u64> {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("failed to draw a random seed from /dev/urandom")?;
    Ok(u64::from_le_bytes(bytes))
}

/// `referee play --sandbox --seed N`: warns once, on stderr and whatever `-q`
/// says, that the match's deals follow from N alone. `--sandbox` is how a run
/// says its bots are not trusted, and a seed a person chose is one a bot can
/// search from its own first hand (a 12-digit one in a tenth of a second),
/// then knowing every hand and the stock. No threshold tells a chosen seed
/// from a drawn one (2^48 let `123456789123456789` pass), so every given seed
/// is warned about there. Without `--sandbox` (a bot author's own runs and
/// snapshot tests) nothing is said: unsandboxed bots can read far more than
/// the seed. `tournament` and `sprt` never warn: they mix a secret into any
/// seed (`tournament/seed_secret.rs`).
pub fn warn_given_seed(seed: u64, sandboxed: bool) {
    if sandboxed {
        eprintln!(
            "referee: warning: --seed {seed}: every deal of this match follows from {seed} \
             alone, and a bot that finds a seed a person chose from its own hand knows \
             every hand; to play bots you do not trust, give no seed (64 bits are drawn \
             and printed at the end) or play them with `referee tournament`, which mixes \
             a secret into any seed"
        );
    }
}

/// A bot as given on the command line or in the tournament file; `what` names
/// where, for errors (`--team 2`, `entrant "mine"`).
/// "unknown built-in bot …", the nearest name suggested, and the names.
pub fn unknown_builtin(name: &str) -> String {
    let names = schmier_sample_bots::NAMES;
    format!(
        "unknown built-in bot {name:?}{}; the built-in bots are {}",
        super::suggest::did_you_mean(name, names.iter().copied()),
        names.join(", ")
    )
}

pub fn parse_bot(text: &str, what: &str) -> anyhow::Result<BotSpec> {
    if text.trim() == "human" {
        return Ok(BotSpec::Human);
    }
    let builtin = |name: &str| -> anyhow::Result<String> {
        if !schmier_sample_bots::NAMES.contains(&name) {
            bail!("{what}: {}", unknown_builtin(name));
        }
        Ok(name.to_owned())
    };
    if let Some(name) = text.strip_prefix("inproc:") {
        return Ok(BotSpec::InProcess(builtin(name)?));
    }
    if let Some(name) = text.trim().strip_prefix(crate::remote::PREFIX) {
        crate::remote::check_name(name).with_context(|| what.to_owned())?;
        return Ok(BotSpec::Remote(name.to_owned()));
    }
    if let Some(name) = text.strip_prefix("builtin:") {
        return Ok(BotSpec::Builtin(builtin(name)?));
    }
    let argv = shlex::split(text).with_context(|| {
        format!("{what}: cannot split {text:?} into words (unbalanced quotes?)")
    })?;
    if argv.is_empty() {
        bail!("{what}: the command is empty");
    }
    Ok(BotSpec::Command {
        argv,
        text: text.to_owned(),
        dir: None,
        env: Vec::new(),
    })
}
