//! A bot command as the user writes it (`builtin:NAME`, `inproc:NAME`, `human`,
//! or a command line), and the run's seed.

use anyhow::{bail, Context};

use super::PolicyName;
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

/// Warns, on stderr and whatever `-q` says, that a competition was given its
/// seed (`what`: `--seed`, or `seed` for one from a file). Any seed given may be
/// one a person chose, and such seeds are few: a bot that searches them from its
/// own first hand finds a 12-digit one in a tenth of a second, and then every
/// hand and the stock. No threshold tells a chosen seed from a drawn one (an
/// earlier one, 2^48, let `123456789123456789` pass), so every given seed is
/// warned about; a lenient run (a bot author's own tests) is not.
pub fn warn_given_seed(what: &str, seed: u64, policy: PolicyName) {
    if policy == PolicyName::Competition {
        eprintln!(
            "referee: warning: {what} {seed} was given; a seed a person chose can be found \
             from a bot's own hand; for a competition give no seed (the referee then \
             draws 64 secret bits and prints them at the end)"
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
