//! A version joins a season: `season submit DIR NAME [--dir D] -- CMD` (and
//! each `--entrant` of `season init`). An entrant new to the season is
//! created with a token (printed once; what a later upload will present).
//! The bot is run through `check-bot` under the season's time limits first;
//! a version that fails is recorded, not admitted, and the checklist says in
//! words what went wrong. A version admitted replaces its entrant's current
//! one from the next set on (`season run` reads the database between sets),
//! with a rating of its own and its predecessor as its parent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};

use super::db::{Db, NewVersion};
use super::settings::Settings;
use crate::config::BotSpec;

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
}

/// Checks and records a submission in the season at `dir`.
pub fn submit(dir: &Path, s: &Submission) -> anyhow::Result<Submitted> {
    check_name(&s.name)?;
    let mut db = Db::open(&dir.join(crate::layout::season::DB))?;
    let settings = Settings::read(&db)?;
    let what = format!("the command of {:?}", s.name);
    let bot = crate::settings::parse_bot(&s.command, &what)?;
    if matches!(bot, BotSpec::Human | BotSpec::Remote(_)) {
        bail!(
            "{what}: {:?} cannot play a season yet (a person or a remote seat); give a bot's command",
            s.command
        );
    }
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
    let dir_text = version_dir
        .as_ref()
        .map(|d| d.to_string_lossy().into_owned());
    let (admitted, checked, report) = match seatable(dir, &settings, s, dir_text.as_deref()) {
        Err(why) => (false, why, String::new()),
        Ok(()) => check(&settings, &bot, version_dir.as_deref(), s.unchecked)?,
    };
    let (entrant, token) = match db.entrant(&s.name)? {
        Some(id) => (id, None),
        None => {
            let token = token()?;
            (db.add_entrant(&s.name, &token)?, Some(token))
        }
    };
    let id = db.add_version(&NewVersion {
        entrant,
        command: &s.command,
        dir: dir_text.as_deref(),
        admitted,
        checked: &checked,
        report: &report,
    })?;
    let number = (db.versions()?.into_iter())
        .find(|v| v.id == id)
        .map_or(0, |v| v.number);
    Ok(Submitted {
        token,
        number,
        admitted,
        checked,
        report,
    })
}

/// Whether the season's tables can seat the version: its command found
/// and, in a sandboxed season, the sandbox built for it (a version that
/// cannot be seated would stop `season run` when it is picked up). If not,
/// why, in words.
fn seatable(
    season: &Path,
    settings: &Settings,
    s: &Submission,
    dir: Option<&str>,
) -> Result<(), String> {
    let candidate = super::db::Version {
        id: 0,
        entrant: 0,
        name: s.name.clone(),
        number: 0,
        command: s.command.clone(),
        dir: dir.map(str::to_owned),
        parent: None,
        submitted: 0,
        admitted: true,
        checked: String::new(),
    };
    match settings.table(season, &[candidate]) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot be seated: {e:#}")),
    }
}

/// An entrant's name: what files and lines will show, so plain.
fn check_name(name: &str) -> anyhow::Result<()> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    if name.is_empty() || name.len() > 64 || !name.chars().all(plain) {
        bail!(
            "entrant name {:?}: use 1 to 64 letters, digits, '-', '_' or '.'",
            crate::names::printable(name)
        );
    }
    Ok(())
}

/// Runs `check-bot` on the version unless the season's sandbox forbids it
/// or the organiser waived it: (admitted, how it was checked, checklist).
fn check(
    settings: &Settings,
    bot: &BotSpec,
    dir: Option<&Path>,
    unchecked: bool,
) -> anyhow::Result<(bool, String, String)> {
    if unchecked {
        let why = "not checked: admitted by the organiser without check-bot (--unchecked)";
        return Ok((true, why.into(), String::new()));
    }
    if settings.sandboxed() {
        // check-bot runs a bot outside any sandbox; a season that sandboxes
        // its bots does not run an untrusted one so.
        let why = "not checked: check-bot cannot run a bot in the season's sandbox yet; \
                   its first game is its check";
        return Ok((true, why.into(), String::new()));
    }
    if let BotSpec::InProcess(name) = bot {
        return Ok((
            true,
            format!("not checked: the referee's own bot {name}, played in process"),
            String::new(),
        ));
    }
    let argv = bot
        .argv()
        .map_err(|e| anyhow::anyhow!("failed to check the bot: {e}"))?;
    let tc = &settings.time_control;
    let limits = crate::checkbot::CheckLimits {
        startup: Duration::from_millis(tc.startup_ms.unwrap_or(crate::settings::STARTUP_MS)),
        decision: Duration::from_millis(tc.decision_ms.unwrap_or(crate::settings::DECISION_MS)),
        max_line: tc.max_line_bytes,
    };
    // check-bot reads the command from the working directory, as `play`
    // would from the version's folder.
    let back = std::env::current_dir().context("failed to read the working directory")?;
    if let Some(d) = dir {
        std::env::set_current_dir(d).with_context(|| format!("failed to enter {}", d.display()))?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        crate::bot::install_cleanup();
        crate::checkbot::run(argv, limits).await
    });
    std::env::set_current_dir(&back)
        .with_context(|| format!("failed to return to {}", back.display()))?;
    let text = crate::checkbot::render(&report);
    let checked = match report.passed() {
        true => "passed check-bot".to_owned(),
        false => "failed check-bot".to_owned(),
    };
    Ok((report.passed(), checked, text))
}

/// 128 fresh bits, as hex: an entrant's token.
fn token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("failed to draw a token from /dev/urandom")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
