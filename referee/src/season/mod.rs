//! A season: entrants submit and replace bots while sets are played
//! continuously and the standings follow. A tour:
//!
//! - `args.rs`: `referee season init | run | submit | standings | close`.
//! - `settings.rs`: the settings fixed at `init` and recorded; every table is
//!   rebuilt from them.
//! - `db.rs`: `DIR/season.db` (SQLite), or the PostgreSQL database that
//!   `DIR/season.postgres` names (`db/pg.rs`), through one layer
//!   (`db/sql.rs`): entrants, versions, sets, games, ratings. Transcripts are
//!   files in `DIR/games/`, named as a tournament's.
//! - `submit.rs`: a version checked with `check-bot` (in the season's
//!   sandbox, if it has one) and recorded.
//! - `upload.rs`: a version uploaded by its owner, with its token: an
//!   archive unpacked safely (`unpack.rs`) into `DIR/uploads/NAME/vN`.
//! - `tokens.rs`: entrants' tokens, kept hashed.
//! - `remote.rs`: a version that is a remote seat — its season seat token,
//!   and the listener of `run --listen` serving it.
//! - `matchmaking.rs`: pure — which three versions play the next set.
//! - `run.rs`: the coordinator — sets on the tournament's pool, each game
//!   recorded as it lands, resumed after any kill.
//! - `ratings.rs`: the tournament's Plackett–Luce fit over versions;
//!   `standings.rs`: them ranked, as text or JSON.
//! - `audit.rs`: `referee verify DIR` — the database against the transcripts.
//! - `site/`: `season serve` (and `run --serve`) — the live site, reading
//!   the database only; `tokens.rs`: the one check of an entrant's token.
//! - `final_bracket.rs`: `season final` — submissions frozen, the top of
//!   the standings in a tournament in `DIR/final/`, the season closed.
//! - `audit.rs`: `referee verify DIR` — the database against the transcripts,
//!   and the final against the season.
//! - `lease.rs`: sets played by workers under leases — what a worker and
//!   the server say, and how a worker's transcript is judged; the
//!   coordinator's answers are `run/workers.rs`, the routes
//!   `site/worker.rs`, the tables `db/lease.rs`.
//! - `blob.rs`: a version's files packed once and named by their SHA-256,
//!   for workers.
//! - `worker/`: `season worker` — leases, plays and hands back sets, over
//!   HTTP to the server alone.

pub mod args;
pub mod audit;
mod blob;
mod db;
mod final_bracket;
mod lease;
pub mod matchmaking;
pub mod ratings;
mod remote;
pub mod run;
mod settings;
mod site;
mod standings;
mod submit;
pub mod tokens;
mod unpack;
pub mod upload;
mod worker;

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};

pub use args::SeasonArgs;
use args::{InitArgs, RunArgs, SeasonCommand, ServeArgs, StandingsArgs, SubmitArgs};
/// The open `season.db` (what [`tokens::authenticate`] reads).
pub use db::Db;

pub use crate::layout::season::{is_season, DB};

/// Runs a `referee season` subcommand.
pub fn main(args: SeasonArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        SeasonCommand::Init(a) => init(&a),
        SeasonCommand::Run(a) => run_command(&a),
        SeasonCommand::Submit(a) => submit_command(&a),
        SeasonCommand::Standings(a) => standings_command(&a),
        SeasonCommand::Serve(a) => serve_command(&a),
        SeasonCommand::Final(a) => final_bracket::main(&a),
        SeasonCommand::Close { dir } => close(&dir),
        SeasonCommand::Token { dir, name } => token_command(&dir, &name),
        SeasonCommand::WorkerToken { dir, name } => worker::token_command(&dir, &name),
        SeasonCommand::Worker(a) => worker::main(&a),
    }
}

/// `season init`: the folder, its settings and secret, its first entrants.
fn init(a: &InitArgs) -> anyhow::Result<ExitCode> {
    let dir = &a.dir;
    if crate::layout::holds_anything(dir) {
        bail!(
            "{} is not empty; a season starts in a new or empty folder",
            dir.display()
        );
    }
    if a.min_sets == 0 || a.pair_cap == 0 {
        bail!("--min-sets and --pair-cap must be at least 1");
    }
    let mut first = Vec::new();
    for e in &a.entrants {
        let (name, command) = e
            .split_once('=')
            .with_context(|| format!("--entrant {e:?}: expected NAME=CMD"))?;
        first.push((name.to_owned(), command.to_owned()));
    }
    let seed = match a.seed {
        Some(seed) => seed,
        None => crate::settings::fresh_seed()?,
    };
    let policy = matchmaking::Policy {
        min_sets: a.min_sets,
        pair_cap: a.pair_cap,
    };
    let mut settings = settings::Settings::new(&a.table, dir, seed, policy)?;
    settings.allow_unsandboxed_uploads = a.allow_unsandboxed_uploads;
    let store = (a.db.as_deref())
        .map(|url| db::pg::Store::new(url, a.db_password_file.as_deref()))
        .transpose()?;
    let existed = dir.exists();
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let db = match db::Db::create(&dir.join(DB), store.as_ref()) {
        Ok(db) => db,
        Err(e) => {
            // A PostgreSQL that could not be reached leaves no folder behind.
            if !existed {
                let _ = std::fs::remove_dir(dir);
            }
            return Err(e);
        }
    };
    let secret = crate::tournament::seed_secret::SeedSecret::draw()?;
    crate::tournament::seed_secret::store(dir, &secret)?;
    settings.write(&db)?;
    drop(db);
    println!(
        "season opened in {}: seed {seed}; {}",
        dir.display(),
        crate::audit::played_under(
            Some(&settings.referee),
            &settings.time_control,
            &settings.fault_policy,
            Some(&settings.isolation)
        )
    );
    println!("{}", settings.uploads_line());
    let mut refused = 0;
    for (name, command) in first {
        let s = submit::Submission {
            name,
            command,
            dir: None,
            unchecked: a.unchecked,
        };
        refused += usize::from(!submitted(dir, &s)?);
    }
    Ok(if refused > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Submits `s` and says what became of it; whether it was admitted.
fn submitted(dir: &Path, s: &submit::Submission) -> anyhow::Result<bool> {
    let done = submit::submit(dir, s)?;
    let name = crate::names::printable(&s.name);
    if let Some(token) = &done.token {
        println!("entrant {name} created; its token (keep it, it is shown once): {token}");
    }
    if done.admitted {
        println!("{name} v{}: admitted ({})", done.number, done.checked);
        if let Some(why) = &done.unshippable {
            println!(
                "{name} v{}: note: {} — so no season worker can play it, and `season run \
                 --workers` plays it on its own tables only. For workers, submit it again with \
                 --bot-dir naming a folder that holds only its files",
                done.number,
                crate::names::printable(why)
            );
        }
        if let Some(file) = &done.seat_token {
            println!(
                "{name} v{}: its seat token is {}: hand it to its owner privately; they run \
                 `referee connect ADDR --token-file {name}.token -- BOT-COMMAND` while `referee \
                 season run {} --listen ADDR` runs, and the version plays while they are connected",
                done.number,
                file.display(),
                dir.display()
            );
        }
    } else {
        print!("{}", crate::names::printable_lines(&done.report));
        let see = match done.report.is_empty() {
            true => "",
            false => " (the checklist above says what went wrong)",
        };
        println!(
            "{name} v{}: not admitted: it {}{see}; the entrant's current version, if any, plays on",
            done.number,
            crate::names::printable_lines(&done.checked)
        );
    }
    Ok(done.admitted)
}

fn submit_command(a: &SubmitArgs) -> anyhow::Result<ExitCode> {
    // Before check-bot runs (the database refuses it too, whoever submits).
    refuse_frozen(&a.dir, &format!("submit a version of {:?}", a.entrant()))?;
    let command = match (a.command.as_slice(), &a.command_flag) {
        (_, Some(one)) => one.clone(),
        ([one], None) => one.clone(),
        (many, None) => shlex::try_join(many.iter().map(String::as_str))
            .context("the command cannot be quoted")?,
    };
    if let (Some(archive), Some(token)) = (&a.archive, &a.token) {
        return uploaded(a, archive, token, &command);
    }
    let s = submit::Submission {
        name: a.entrant().to_owned(),
        command,
        dir: a.bot_dir.clone(),
        unchecked: a.unchecked,
    };
    Ok(match submitted(&a.dir, &s)? {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}

fn run_command(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let dir = &a.dir;
    // One run per season at a time (`lock.rs`); submissions need no lock.
    let _lock = crate::lock::hold(
        &dir.display().to_string(),
        dir,
        &dir.join(crate::layout::LOCK),
    )?;
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 && !a.workers {
        bail!("--jobs must be at least 1 (0 only with --workers: every set leased)");
    }
    let lease_ms = match a.lease {
        Some(s) if !(0.5..=86_400.0).contains(&s) => {
            bail!("--lease {s}: a lease lasts from 0.5 to 86400 seconds")
        }
        Some(s) => Some((s * 1000.0) as u64),
        None => Some(lease::LEASE_MS),
    };
    if a.remote.listen.is_some() && jobs == 0 {
        bail!(
            "--listen with --jobs 0: a remote version's seats are served by this process and \
             its sets are played on its own tables, never by a worker; give --jobs 1 or more"
        );
    }
    let hub = listen(a, jobs)?;
    let opts = run::RunOptions {
        jobs,
        sets: a.sets,
        quiet: a.quiet,
        lease_ms: lease_ms.filter(|_| a.workers),
        hub: hub.clone(),
        remote_wait: (a.remote.remote_wait).unwrap_or(crate::remote::args::REMOTE_WAIT),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let ended = runtime.block_on(async {
        crate::bot::install_cleanup();
        crate::shutdown::cancel_on_signals(cancel.clone());
        // The site lives as long as the run: dropped with the runtime.
        let mut inbox = None;
        if let Some(addr) = a.serve {
            let more = a.workers.then(|| {
                let (tx, rx) = tokio::sync::mpsc::channel(64);
                inbox = Some(rx);
                site::worker::router(tx)
            });
            site::start_with(dir, addr, site_limits(&a.site)?, cancel.child_token(), more).await?;
        }
        run::run_with(dir, &opts, &cancel, inbox).await
    });
    if let Some(hub) = &hub {
        hub.close();
    }
    let ended = ended?;
    if !a.quiet {
        eprintln!(
            "referee: season: {} set(s) finished in this run, {} in all{}; \
             `referee season standings {}` ranks them",
            ended.finished,
            ended.total,
            if ended.interrupted { " (stopped)" } else { "" },
            dir.display()
        );
    }
    Ok(match ended.interrupted {
        true => ExitCode::from(crate::shutdown::signal_exit_code().unwrap_or(130)),
        false => ExitCode::SUCCESS,
    })
}

/// `season run --listen`: the listener of the season's remote versions,
/// serving those submitted so far (and, as the run reads them, those
/// submitted later).
fn listen(a: &RunArgs, jobs: usize) -> anyhow::Result<Option<std::sync::Arc<crate::remote::Hub>>> {
    let db = db::Db::open(&a.dir.join(DB))?;
    let mut names: Vec<String> = (db.versions()?.iter())
        .filter(|v| v.admitted)
        .filter_map(|v| remote::name(v).map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    // A version sits in two seats of its set's table.
    let seats = u32::try_from(jobs.saturating_mul(2)).unwrap_or(u32::MAX);
    match a.remote.listener(names, seats)? {
        Some(mut spec) => {
            // Away is away: a seat of a version whose connector left fails
            // to start at once, so its set holds up its table no longer.
            spec.absent_fails = true;
            Ok(Some(remote::serve(&spec)?))
        }
        None => Ok(None),
    }
}

fn standings_command(a: &StandingsArgs) -> anyhow::Result<ExitCode> {
    let db = db::Db::open(&a.dir.join(DB))?;
    let s = standings::compute(&db)?;
    match a.json {
        true => print!("{}", s.json()),
        false => print!("{}", s.text()),
    }
    Ok(ExitCode::SUCCESS)
}

/// `season serve`: the live site until Ctrl-C or SIGTERM.
fn serve_command(a: &ServeArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let cancel = tokio_util::sync::CancellationToken::new();
        crate::shutdown::cancel_on_signals(cancel.clone());
        let (_, task) = site::start(&a.dir, a.addr, site_limits(&a.site)?, cancel).await?;
        task.await?
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The site's limits from its flags; a cap or timeout of 0 is refused.
fn site_limits(a: &args::SiteArgs) -> anyhow::Result<site::serve::Limits> {
    let given = [
        ("--site-connections", a.site_connections as u64),
        ("--site-event-streams", a.site_event_streams as u64),
        ("--site-header-timeout", a.site_header_timeout),
        ("--site-request-timeout", a.site_request_timeout),
        ("--site-upload-timeout", a.site_upload_timeout),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, v)| *v == 0) {
        bail!("{flag} must be at least 1");
    }
    let most = tokio::sync::Semaphore::MAX_PERMITS;
    if a.site_connections.max(a.site_event_streams) > most {
        bail!("--site-connections and --site-event-streams must be at most {most}");
    }
    let secs = std::time::Duration::from_secs;
    Ok(site::serve::Limits {
        connections: a.site_connections,
        event_streams: a.site_event_streams,
        header: secs(a.site_header_timeout),
        request: secs(a.site_request_timeout),
        upload: secs(a.site_upload_timeout),
    })
}

/// `season submit --archive`: an upload, said as `submitted` says it.
fn uploaded(
    a: &SubmitArgs,
    archive: &Path,
    token: &str,
    command: &str,
) -> anyhow::Result<ExitCode> {
    let bytes = read_archive(archive)?;
    let name = crate::names::printable(a.entrant());
    let done = match upload::submit_archive(&a.dir, a.entrant(), token, command, &bytes) {
        Ok(done) => done,
        Err(upload::UploadError::Internal(e)) => return Err(e),
        Err(e) => {
            eprintln!("referee: season submit: {name}: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if done.admitted {
        let dir = done.dir.as_deref().unwrap_or(Path::new("?"));
        println!(
            "{name} v{}: admitted ({}); {} file(s), {} bytes, in {}",
            done.number,
            done.checked,
            done.files,
            done.bytes,
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", crate::names::printable_lines(&done.report));
    println!(
        "{name} v{}: not admitted: it {}; its files were removed, and the entrant's \
         current version, if any, plays on",
        done.number,
        crate::names::printable_lines(&done.checked)
    );
    Ok(ExitCode::FAILURE)
}

/// The archive's bytes, no more than an upload may hold (and one more, to
/// say it is too large).
fn read_archive(path: &Path) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .with_context(|| format!("--archive {}: cannot open it", path.display()))?;
    let mut bytes = Vec::new();
    file.take(unpack::CAPS.archive + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("--archive {}: cannot read it", path.display()))?;
    Ok(bytes)
}

/// `season token`: an entrant created with a token, or given a new one.
fn token_command(dir: &Path, name: &str) -> anyhow::Result<ExitCode> {
    let db = db::Db::open(&dir.join(DB))?;
    let shown = crate::names::printable(name);
    if db.entrant(name)?.is_none() {
        submit::check_name(name)?;
        let token = tokens::issue()?;
        db.add_entrant(name, &token.stored)?;
        println!(
            "entrant {shown} created, with no version yet; its token (keep it, it is shown \
             once): {}",
            token.clear
        );
        return Ok(ExitCode::SUCCESS);
    }
    let token = tokens::rotate(&db, name)?;
    println!(
        "entrant {shown}: its new token (keep it, it is shown once; the old one no longer \
         works): {token}"
    );
    Ok(ExitCode::SUCCESS)
}

/// `season close`: marks the season closed and reveals its secret.
fn close(dir: &Path) -> anyhow::Result<ExitCode> {
    let _lock = crate::lock::hold(
        &dir.display().to_string(),
        dir,
        &dir.join(crate::layout::LOCK),
    )?;
    let db = db::Db::open(&dir.join(DB))?;
    if db.get(db::FINAL)?.is_some() {
        // Revealing the secret now would reveal the final's deals too.
        bail!(
            "the season's final was called; `referee season final {}` plays it to its end, \
             which closes the season",
            dir.display()
        );
    }
    let secret = crate::tournament::seed_secret::stored(dir)?
        .with_context(|| format!("{} has no seed-secret", dir.display()))?;
    db.close(&secret)?;
    println!(
        "season in {} closed; its seed secret: {secret}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Refuses what a season whose final was called no longer does; `doing`
/// completes "failed to …".
fn refuse_frozen(dir: &Path, doing: &str) -> anyhow::Result<()> {
    let db = db::Db::open(&dir.join(DB))?;
    db.refuse_frozen(doing)
}
