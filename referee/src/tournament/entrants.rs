//! A tournament's entrants: gathered from a resumed folder, the tournament
//! file and the flags (`--entrant`, `--entrant-dir`, `--entrant-env`), each
//! with a working directory and variables of its own, names checked, and the
//! field filled up to three with `--fill`.

use std::path::PathBuf;

use anyhow::{bail, Context};

use super::config::Entrant;
use super::config_file::FileEntrant;
use crate::config::BotSpec;
use crate::settings::parse_bot;

/// The entrant flags of `referee tournament`, as given.
pub(super) struct EntrantFlags<'a> {
    /// `--entrant NAME=CMD`.
    pub entrants: &'a [String],
    /// `--entrant-dir NAME=DIR`.
    pub dirs: &'a [String],
    /// `--entrant-env NAME=KEY=VALUE`.
    pub envs: &'a [String],
}

/// The folder's entrants (`recorded`, when resumed from it), the file's,
/// then the flags', with their own places; filled up to three with `fill`.
pub(super) fn gather(
    listed: &[FileEntrant],
    flags: &EntrantFlags,
    recorded: Vec<Entrant>,
    fill: Option<String>,
) -> anyhow::Result<Vec<Entrant>> {
    for e in &recorded {
        printable_name(&e.name, "an entrant of the tournament.json resumed")?;
    }
    let mut entrants: Vec<Entrant> = recorded;
    for e in listed {
        let what = format!("entrant {:?}", e.name);
        let env = e.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let bot = own_place(parse_bot(&e.command, &what)?, e.dir.clone(), env, &what)?;
        add(
            &mut entrants,
            &e.name,
            bot,
            &format!("entrant {:?} in the tournament file", e.name),
        )?;
    }
    for text in flags.entrants {
        let (name, cmd) = text.split_once('=').with_context(|| {
            format!("--entrant {text:?}: expected NAME=CMD, e.g. --entrant mine=\"python3 bot.py\"")
        })?;
        let name = name.trim();
        let bot = parse_bot(cmd, &format!("--entrant {name}"))?;
        add(&mut entrants, name, bot, &format!("--entrant {text:?}"))?;
    }
    for text in flags.dirs {
        let (name, dir) = entrant_value(&entrants, text, "--entrant-dir", "NAME=DIR")?;
        let e = &mut entrants[name];
        e.bot = own_place(
            e.bot.clone(),
            Some(PathBuf::from(dir)),
            Vec::new(),
            &format!("--entrant-dir {text:?}"),
        )?;
    }
    for text in flags.envs {
        let what = format!("--entrant-env {text:?}");
        let (name, pair) = entrant_value(&entrants, text, "--entrant-env", "NAME=KEY=VALUE")?;
        let pair = match pair.split_once('=') {
            Some((k, v)) => (k.to_owned(), v.to_owned()),
            None => bail!("{what}: expected NAME=KEY=VALUE, e.g. --entrant-env mine=DEPTH=3"),
        };
        let e = &mut entrants[name];
        e.bot = own_place(e.bot.clone(), None, vec![pair], &what)?;
    }
    if entrants.len() < 3 {
        let Some(cmd) = &fill else {
            bail!(
                "a tournament needs at least three entrants (a table seats three teams), got {}; \
                 add --entrant NAME=CMD, or name who fills the empty team positions with --fill builtin:random",
                entrants.len()
            )
        };
        let bot = parse_bot(cmd, "--fill")?;
        let mut k = 1;
        while entrants.len() < 3 {
            let name = format!("fill-{k}");
            k += 1;
            if entrants.iter().all(|e| e.name != name) {
                entrants.push(Entrant {
                    name,
                    bot: bot.clone(),
                });
            }
        }
    }
    Ok(entrants)
}

fn add(entrants: &mut Vec<Entrant>, name: &str, bot: BotSpec, what: &str) -> anyhow::Result<()> {
    // `NAME=remote`: the entrant plays from another machine, as remote:NAME.
    let bot = match bot {
        BotSpec::Command { argv, .. } if argv == ["remote"] => {
            crate::remote::check_name(name).with_context(|| what.to_owned())?;
            BotSpec::Remote(name.to_owned())
        }
        other => other,
    };
    if name.is_empty() {
        bail!("{what}: the name is empty");
    }
    printable_name(name, what)?;
    if entrants.iter().any(|e| e.name == name) {
        bail!("{what}: two entrants are named {name:?}");
    }
    entrants.push(Entrant {
        name: name.to_owned(),
        bot,
    });
    Ok(())
}

/// Refuses a name holding a control character (`names::printable`): an
/// entrant's name is printed on consoles and pages as it is.
fn printable_name(name: &str, what: &str) -> anyhow::Result<()> {
    if crate::names::printable(name) != name {
        bail!("{what}: the name {name:?} holds a control character; names are printed on consoles and pages");
    }
    Ok(())
}

/// `bot` given a working directory and variables of its own (a tournament
/// entrant's `dir` and `env`); only a command has them.
fn own_place(
    bot: BotSpec,
    dir: Option<PathBuf>,
    vars: Vec<(String, String)>,
    what: &str,
) -> anyhow::Result<BotSpec> {
    if dir.is_none() && vars.is_empty() {
        return Ok(bot);
    }
    for (k, v) in &vars {
        if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
            bail!(
                "{what}: {k:?} is not an environment variable name (or its value holds a NUL byte)"
            );
        }
    }
    match bot {
        BotSpec::Command {
            argv,
            text,
            dir: old_dir,
            mut env,
        } => {
            if let Some(d) = &dir {
                if !d.is_dir() {
                    bail!("{what}: the directory {} does not exist", d.display());
                }
            }
            env.extend(vars);
            Ok(BotSpec::Command {
                argv,
                text,
                dir: dir.or(old_dir),
                env,
            })
        }
        other => bail!(
            "{what}: only a command has a directory and environment of its own, not {}",
            other.display()
        ),
    }
}

/// `NAME=REST` of an entrant flag: the entrant's index and REST.
fn entrant_value<'t>(
    entrants: &[Entrant],
    text: &'t str,
    flag: &str,
    shape: &str,
) -> anyhow::Result<(usize, &'t str)> {
    let (name, rest) = text
        .split_once('=')
        .with_context(|| format!("{flag} {text:?}: expected {shape}"))?;
    let i = entrants
        .iter()
        .position(|e| e.name == name.trim())
        .with_context(|| format!("{flag} {text:?}: no entrant is named {:?}", name.trim()))?;
    Ok((i, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_folders_entrant_named_with_a_control_character_is_refused() {
        let flags = EntrantFlags {
            entrants: &[],
            dirs: &[],
            envs: &[],
        };
        let recorded = |name: &str| {
            vec![Entrant {
                name: name.to_owned(),
                bot: BotSpec::Builtin("random".into()),
            }]
        };
        let fill = Some("builtin:random".to_owned());
        let err = gather(&[], &flags, recorded("a\u{1b}[2J"), fill.clone()).unwrap_err();
        let said = err.to_string();
        assert!(
            said.contains("tournament.json") && said.contains("control character"),
            "{said}"
        );
        assert_eq!(gather(&[], &flags, recorded("a"), fill).unwrap().len(), 3);
    }
}
