//! `referee season worker`: plays a season's sets for its server (`season
//! run --serve ADDR --workers`) under leases (`lease.rs` says the exchange).
//! It never touches the season's database: it holds a worker token, and
//! speaks HTTP to the server alone (`http.rs`).
//!
//! At start it runs the sandbox self-check (a sandboxed `true`, as every
//! sandboxed run does first) and declares the result with its tables; then
//! each of its `--tables` slots asks for a set, plays it (`play.rs`: the
//! season's tables, built from the settings the server sends, so the same
//! seed gives the same transcript as on the server's own tables) and asks
//! again. The versions' files come by hash and are checked against it
//! before they are unpacked into the cache (`cache.rs`).

mod cache;
mod http;
mod play;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio_util::sync::CancellationToken;

use super::args::WorkerArgs;
use super::db::Db;
use super::lease::{Ask, Offer};
use crate::layout::season::DB;

/// How long a slot waits before asking again when there is nothing to play
/// or the server cannot be reached (the longest wait, growing to it).
const AGAIN: Duration = Duration::from_secs(2);

/// How long the server may stay out of reach before the worker stops (a
/// restarted server is back well within it; a run that has ended is not).
const GIVE_UP: Duration = Duration::from_secs(600);

/// What the slots share.
struct Worker {
    server: http::Server,
    ask: Ask,
    cache: PathBuf,
    quiet: bool,
    stop: CancellationToken,
    /// At most [`crate::tournament::pool::STARTING`] sets start their bots
    /// at once, as on the server.
    starting: Arc<tokio::sync::Semaphore>,
    /// One blob unpacked at a time.
    unpacking: tokio::sync::Mutex<()>,
    /// The server said its run has planned all its sets: no slot asks again.
    done: std::sync::atomic::AtomicBool,
}

impl Worker {
    fn say(&self, what: &str) {
        if !self.quiet {
            eprintln!("referee: worker: {what}");
        }
    }
}

/// `season worker`.
pub fn main(a: &WorkerArgs) -> anyhow::Result<ExitCode> {
    let token = std::fs::read_to_string(&a.token_file)
        .with_context(|| format!("--token-file {}: cannot read it", a.token_file.display()))?;
    let token = token.trim().to_owned();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        bail!(
            "--token-file {}: holds no token (the line `season worker-token` printed)",
            a.token_file.display()
        );
    }
    if a.tables == 0 {
        bail!("--tables must be at least 1");
    }
    let server = http::Server::new(&a.server, token)?;
    std::fs::create_dir_all(&a.cache)
        .with_context(|| format!("failed to create {}", a.cache.display()))?;
    let cache = std::fs::canonicalize(&a.cache)?;
    let sandbox = sandbox_check(&cache);
    if let Err(why) = &sandbox {
        if !a.quiet {
            eprintln!(
                "referee: worker: the sandbox self-check failed, so this worker plays no \
                 sandboxed season's sets: {why}"
            );
        }
    }
    let w = Arc::new(Worker {
        server,
        ask: Ask {
            referee: crate::REFEREE.to_owned(),
            tables: a.tables,
            sandbox: sandbox.is_ok(),
            instance: super::tokens::issue()?.clear,
        },
        cache,
        quiet: a.quiet,
        stop: CancellationToken::new(),
        starting: Arc::new(tokio::sync::Semaphore::new(
            crate::tournament::pool::STARTING,
        )),
        unpacking: tokio::sync::Mutex::new(()),
        done: std::sync::atomic::AtomicBool::new(false),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        crate::bot::install_cleanup();
        crate::shutdown::cancel_on_signals(w.stop.clone());
        let mut slots = tokio::task::JoinSet::new();
        for _ in 0..a.tables {
            let w = w.clone();
            slots.spawn(async move { slot(&w).await });
        }
        let mut failure = None;
        while let Some(joined) = slots.join_next().await {
            let ended = joined.map_err(|e| anyhow::anyhow!("a slot failed: {e}"));
            if let Err(e) = ended.and_then(|r| r) {
                w.stop.cancel();
                failure.get_or_insert(e);
            }
        }
        failure.map_or(Ok(()), Err)
    })?;
    Ok(match crate::shutdown::signal_exit_code() {
        Some(code) => ExitCode::from(code),
        None => ExitCode::SUCCESS,
    })
}

/// Whether this host can sandbox a bot: the sandbox's own probe.
fn sandbox_check(cache: &Path) -> Result<(), String> {
    use crate::os::{Feature, HOST};
    HOST.require(Feature::Sandbox).map_err(|e| e.to_string())?;
    // Held to the end, as a run's is, so its holder is not cut off.
    let sandbox = crate::sandbox::Sandbox::prepare(vec![cache.to_path_buf()], &[])
        .map_err(|e| e.to_string())?;
    sandbox.held().map_err(|e| e.to_string())
}

/// One table's worth of work: sets asked for and played until the run is
/// done or the worker stops.
async fn slot(w: &Worker) -> anyhow::Result<()> {
    use std::sync::atomic::Ordering;
    let mut wait = Duration::from_millis(250);
    let mut unreachable_since: Option<tokio::time::Instant> = None;
    while !w.stop.is_cancelled() {
        if w.done.load(Ordering::Relaxed) {
            return Ok(());
        }
        let body = serde_json::to_vec(&w.ask)?;
        let reply = match w
            .server
            .send("POST", "/api/worker/lease", &body, true)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                let since = *unreachable_since.get_or_insert_with(|| {
                    w.say(&format!(
                        "the server cannot be reached ({e:#}); trying again for up to {} min",
                        GIVE_UP.as_secs() / 60
                    ));
                    tokio::time::Instant::now()
                });
                if since.elapsed() >= GIVE_UP {
                    bail!(
                        "the server at {} has been out of reach for {} min; stopping ({e:#})",
                        w.server.url(),
                        GIVE_UP.as_secs() / 60
                    );
                }
                pause(w, &mut wait).await;
                continue;
            }
        };
        unreachable_since = None;
        match reply.status {
            200 => {}
            429 | 503 => {
                pause(w, &mut wait).await;
                continue;
            }
            s => bail!("the server refused this worker ({s}): {}", reply.why()),
        }
        let offer: Offer = serde_json::from_slice(&reply.body)
            .context("the server's offer is not the JSON expected")?;
        if offer.done {
            // The other slots stop too, after the sets they hold.
            w.done.store(true, Ordering::Relaxed);
        }
        match offer.granted {
            Some(g) => {
                wait = Duration::from_millis(250);
                play::play(w, g).await?;
            }
            None if offer.done => {
                w.say("the run has finished its sets; stopping");
                return Ok(());
            }
            None => pause(w, &mut wait).await,
        }
    }
    Ok(())
}

/// Waits `wait` (or until the worker stops), and doubles it up to [`AGAIN`].
async fn pause(w: &Worker, wait: &mut Duration) {
    tokio::select! {
        _ = tokio::time::sleep(*wait) => {}
        _ = w.stop.cancelled() => {}
    }
    *wait = (*wait * 2).min(AGAIN);
}

/// `season worker-token`: the worker `name` created with a token, or given
/// a new one.
pub fn token_command(dir: &Path, name: &str) -> anyhow::Result<ExitCode> {
    super::submit::check_name(name)
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("entrant name", "worker name")))?;
    let db = Db::open(&dir.join(DB))?;
    db.ensure_worker_tables()?;
    let token = super::tokens::issue()?;
    let new = db.put_worker(name, &token.stored)?;
    let shown = crate::names::printable(name);
    // The token alone on stdout, so `> FILE` makes the worker's --token-file;
    // what it is, on stderr.
    match new {
        true => eprintln!(
            "referee: worker {shown} created; its token follows on stdout (shown once: keep \
             it in a file only you can read, and give the worker --token-file FILE)"
        ),
        false => eprintln!(
            "referee: worker {shown}: its new token follows on stdout (shown once; the old \
             one no longer works)"
        ),
    }
    println!("{}", token.clear);
    Ok(ExitCode::SUCCESS)
}
