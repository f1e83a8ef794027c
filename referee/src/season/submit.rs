//! A version joins a season: `season submit DIR NAME [--dir D] -- CMD` (and
//! each `--entrant` of `season init`). An entrant new to the season is
//! created with a token (printed once; what a later upload will present).
//! The bot is run through `check-bot` under the season's time limits first,
//! as the season's tables would run it (in its folder, and in their sandbox
//! when the season has one);
//! a version that fails is recorded, not admitted, and the checklist says in
//! words what went wrong. A version admitted replaces its entrant's current
//! one from the next set on (`season run` reads the database between sets),
//! with a rating of its own and its predecessor as its parent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};

use super::db::{Db, NewVersion};
use super::settings::Settings;
use crate::config::{BotSpec, Isolation, TableSpec};

/// What is submitted.
pub struct Submission {
    pub name: String,
    pub command: String,
    /// Where the command is read and run (relative paths from there); the
    /// working directory if absent.
    pub dir: Option<PathBuf>,
    /// Admit it without `check-bot` (the organiser's call, recorded).
    pub unchecked: bool,
}

/// What became of a submission.
pub struct Submitted {
    /// The entrant's token, if the entrant was created by this submission.
    pub token: Option<String>,
    pub number: i64,
    pub admitted: bool,
    /// How it was checked, in words (and the checklist, when check-bot ran).
    pub checked: String,
    pub report: String,
    /// A remote seat's token file (the season's, for its owner).
    pub seat_token: Option<PathBuf>,
    /// Why the version's folder cannot go to season workers, if it cannot
    /// (`blob::shippable`): its sets are then played by a run's own tables
    /// only.
    pub unshippable: Option<String>,
}

/// Checks and records a submission in the season at `dir`.
pub fn submit(dir: &Path, s: &Submission) -> anyhow::Result<Submitted> {
    check_name(&s.name)?;
    let mut db = Db::open(&dir.join(crate::layout::season::DB))?;
    if let Some(command) = super::remote::command(&s.name, &s.command)? {
        return submit_remote(dir, &mut db, &s.name, &command);
    }
    let settings = Settings::read(&db)?;
    let bot = parse_command(&s.name, &s.command)?;
    // A command is kept with the folder it is read in, given or the one it
    // was submitted from: a run started elsewhere seats the same bot.
    let version_dir = match (&s.dir, &bot) {
        (Some(d), _) => Some(std::fs::canonicalize(d).with_context(|| {
            format!("--bot-dir {}: not a folder this user can open", d.display())
        })?),
        (None, BotSpec::Command { .. }) => Some(
            std::env::current_dir()
                .and_then(std::fs::canonicalize)
                .context("failed to read the working directory")?,
        ),
        (None, _) => None,
    };
    let verdict = examine(dir, &settings, s, version_dir.as_deref())?;
    let (entrant, token) = entrant(&mut db, &s.name)?;
    let unshippable = match (&version_dir, &bot) {
        (Some(d), BotSpec::Command { .. }) => {
            (super::blob::shippable(d).err()).map(|e| format!("its folder {}: {e:#}", d.display()))
        }
        _ => None,
    };
    let dir_text = version_dir.map(|d| d.to_string_lossy().into_owned());
    let number = record(&mut db, entrant, &s.command, dir_text.as_deref(), &verdict)?;
    Ok(Submitted {
        token,
        number,
        admitted: verdict.admitted,
        checked: verdict.checked,
        report: verdict.report,
        seat_token: None,
        unshippable,
    })
}

/// The entrant `name`'s id, created with a token (returned) if it is new.
fn entrant(db: &mut Db, name: &str) -> anyhow::Result<(i64, Option<String>)> {
    Ok(match db.entrant(name)? {
        Some(id) => (id, None),
        None => {
            let token = super::tokens::issue()?;
            (db.add_entrant(name, &token.stored)?, Some(token.clear))
        }
    })
}

/// A version that is a remote seat (`command`: `remote:NAME`): admitted
/// without check-bot (it runs on its owner's machine; said in its record),
/// with the season's seat token of its name in `DIR/tokens/NAME.token`.
fn submit_remote(dir: &Path, db: &mut Db, name: &str, command: &str) -> anyhow::Result<Submitted> {
    let seat_token = super::remote::seat_token(dir, name)?;
    let (entrant, token) = entrant(db, name)?;
    let verdict = Verdict {
        admitted: true,
        checked: super::remote::CHECKED.to_owned(),
        report: String::new(),
    };
    let number = record(db, entrant, command, None, &verdict)?;
    Ok(Submitted {
        token,
        number,
        admitted: true,
        checked: verdict.checked,
        report: verdict.report,
        seat_token: Some(seat_token),
        unshippable: None,
    })
}

/// The bot a season's version may be: a command or a built-in bot.
pub(super) fn parse_command(name: &str, command: &str) -> anyhow::Result<BotSpec> {
    let what = format!("the command of {name:?}");
    let bot = crate::settings::parse_bot(command, &what)?;
    if matches!(bot, BotSpec::Human | BotSpec::Remote(_)) {
        bail!(
            "{what}: {command:?} cannot play a season from here (a person; or a remote seat, \
             which the organiser submits: `season submit DIR NAME -- remote`); give a bot's command"
        );
    }
    Ok(bot)
}

/// How a version was judged.
pub(super) struct Verdict {
    pub admitted: bool,
    /// How it was checked, in words.
    pub checked: String,
    /// check-bot's checklist, when it ran.
    pub report: String,
}

/// Whether the season's tables can seat the version with its command read
/// in `dir`, and whether it passes `check-bot` as they would run it.
pub(super) fn examine(
    season: &Path,
    settings: &Settings,
    s: &Submission,
    dir: Option<&Path>,
) -> anyhow::Result<Verdict> {
    let candidate = super::db::Version {
        id: 0,
        entrant: 0,
        name: s.name.clone(),
        number: 0,
        command: s.command.clone(),
        dir: dir.map(|d| d.to_string_lossy().into_owned()),
        parent: None,
        submitted: 0,
        admitted: true,
        checked: String::new(),
    };
    // A version that cannot be seated (its command not found; in a
    // sandboxed season, no sandbox built for it) would stop `season run`.
    let spec = match settings.table(season, std::slice::from_ref(&candidate)) {
        Ok(spec) => spec,
        Err(e) => {
            return Ok(Verdict {
                admitted: false,
                checked: format!("cannot be seated: {e:#}"),
                report: String::new(),
            })
        }
    };
    check(settings, &spec, &candidate, s.unchecked)
}

/// Records a judged version of `entrant`; its number.
pub(super) fn record(
    db: &mut Db,
    entrant: i64,
    command: &str,
    dir: Option<&str>,
    v: &Verdict,
) -> anyhow::Result<i64> {
    let id = db.add_version(&NewVersion {
        entrant,
        command,
        dir,
        admitted: v.admitted,
        checked: &v.checked,
        report: &v.report,
    })?;
    Ok((db.versions()?.into_iter())
        .find(|v| v.id == id)
        .map_or(0, |v| v.number))
}

/// An entrant's name: what files and lines will show, so plain.
pub(super) fn check_name(name: &str) -> anyhow::Result<()> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    if name.is_empty() || name.len() > 64 || !name.chars().all(plain) {
        bail!(
            "entrant name {:?}: use 1 to 64 letters, digits, '-', '_' or '.'",
            crate::names::printable(name)
        );
    }
    Ok(())
}

/// Runs `check-bot` on the version as the season's tables `spec` would run
/// it (in its folder, in their sandbox if they have one, under their
/// limits), unless the organiser waived it or the bot is played in process.
fn check(
    settings: &Settings,
    spec: &TableSpec,
    version: &super::db::Version,
    unchecked: bool,
) -> anyhow::Result<Verdict> {
    let verdict = |admitted, checked: &str, report| Verdict {
        admitted,
        checked: checked.to_owned(),
        report,
    };
    if unchecked {
        let why = "not checked: admitted by the organiser without check-bot (--unchecked)";
        return Ok(verdict(true, why, String::new()));
    }
    let bot = super::settings::bot(version)?;
    if let BotSpec::InProcess(name) = &bot {
        let why = format!("not checked: the referee's own bot {name}, played in process");
        return Ok(verdict(true, &why, String::new()));
    }
    let argv = bot
        .argv()
        .map_err(|e| anyhow::anyhow!("failed to check the bot: {e}"))?;
    let env = bot.env(&spec.isolation.env);
    let cwd = std::env::current_dir().context("failed to read the working directory")?;
    let launch = match bot.launch(&cwd, Isolation::path_in(&env)) {
        Ok(launch) => launch,
        Err(e) => {
            return Ok(verdict(
                false,
                &format!("cannot be started: {e}"),
                String::new(),
            ))
        }
    };
    let tc = &settings.time_control;
    let limits = crate::checkbot::CheckLimits {
        startup: Duration::from_millis(tc.startup_ms.unwrap_or(crate::settings::STARTUP_MS)),
        decision: Duration::from_millis(tc.decision_ms.unwrap_or(crate::settings::DECISION_MS)),
        max_line: tc.max_line_bytes,
    };
    let confinement = crate::checkbot::Confinement {
        launch: Some(launch),
        sandbox: spec.isolation.sandbox.clone(),
        limits: spec.limits,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        crate::bot::install_cleanup();
        crate::checkbot::run_confined(argv, limits, confinement).await
    });
    let text = crate::checkbot::render(&report);
    let checked = match (report.passed(), settings.sandboxed()) {
        (true, true) => "passed check-bot in the season's sandbox",
        (true, false) => "passed check-bot",
        (false, true) => "failed check-bot in the season's sandbox",
        (false, false) => "failed check-bot",
    };
    Ok(verdict(report.passed(), checked, text))
}
