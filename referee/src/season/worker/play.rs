//! One leased set played on the worker: its versions' files fetched by
//! hash (`cache.rs`), its table built from the season's settings as the
//! server's own tables are (`run::table_job`), its games played by the
//! tournament's pool in `CACHE/work/set-N/`, each transcript handed back as
//! its game ends, and the lease kept alive meanwhile by heartbeats. A
//! refusal (the lease ran out, a transcript refused) stops the set's table
//! at once and drops the set; what the server counted stays counted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{cache, Worker};
use crate::season::db::{SetRow, Version};
use crate::season::lease::Granted;
use crate::tournament::outcome::GameOutcome;

/// Why the set was dropped, once it is.
type Lost = Mutex<Option<String>>;

/// Plays set `g` under its lease; an error is the worker's own failure
/// (the set is given back first).
pub async fn play(w: &Worker, g: Granted) -> anyhow::Result<()> {
    let versions = match versions(w, &g).await {
        Ok(v) => v,
        Err(e) => {
            release(w, &g).await;
            return Err(e.context(format!("set {}: its bots cannot be had", g.set)));
        }
    };
    w.say(&format!(
        "set {}: playing game(s) {:?} ({})",
        g.set,
        g.games,
        crate::names::printable(
            &(g.versions.iter())
                .map(|v| format!("{} v{}", v.name, v.number))
                .collect::<Vec<_>>()
                .join(", ")
        )
    ));
    // A folder per lease: a set dropped and leased again to another slot
    // of this worker is not played in the folder the first is leaving.
    let lease: String = g
        .lease
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(12)
        .collect();
    let work = (w.cache.join("work")).join(format!("set-{}-{lease}", g.set));
    let _ = std::fs::remove_dir_all(&work);
    let games_dir = crate::layout::tournament::games(&work);
    std::fs::create_dir_all(&games_dir)
        .with_context(|| format!("failed to create {}", games_dir.display()))?;
    let played = on_table(w, &g, &versions, &work).await;
    let _ = std::fs::remove_dir_all(&work);
    played
}

/// The set's versions as the table starts them: each with its files'
/// folder in the cache.
async fn versions(w: &Worker, g: &Granted) -> anyhow::Result<Vec<Version>> {
    let mut out = Vec::new();
    for s in &g.versions {
        let dir = match &s.blob {
            Some(hash) => Some(cache::bot_dir(w, hash).await?),
            None => None,
        };
        out.push(Version {
            id: s.id,
            entrant: 0,
            name: s.name.clone(),
            number: s.number,
            command: s.command.clone(),
            dir: dir.map(|d| d.to_string_lossy().into_owned()),
            parent: None,
            submitted: 0,
            admitted: true,
            checked: String::new(),
        });
    }
    Ok(out)
}

/// Plays the set's games in `work`, handing each back, with heartbeats.
async fn on_table(
    w: &Worker,
    g: &Granted,
    versions: &[Version],
    work: &Path,
) -> anyhow::Result<()> {
    let spec = g.settings.table(work, versions)?;
    crate::session::view_held(&spec).await?;
    let set = SetRow {
        id: g.set,
        versions: g.versions.each_ref().map(|v| v.id),
        seed: g.seed,
        finished: false,
    };
    let job = crate::season::run::table_job(&set, &spec, versions, g.games.clone())?;
    let stop = w.stop.child_token();
    let (tx, rx) = mpsc::channel::<GameOutcome>(8);
    let pool = tokio::spawn(crate::tournament::pool::run_throttled(
        work.to_path_buf(),
        vec![job],
        1,
        stop.clone(),
        tx,
        Arc::new(crate::season::run::SeasonConsole),
        w.starting.clone(),
    ));
    let lost: Lost = Mutex::new(None);
    let ended = CancellationToken::new();
    let handing = async {
        let n = hand_back(w, g, rx, work, &stop, &lost).await;
        ended.cancel();
        n
    };
    let ((), handed) = tokio::join!(heartbeats(w, g, &stop, &ended, &lost), handing);
    let pooled = pool
        .await
        .map_err(|e| anyhow::anyhow!("the set's table failed: {e}"))?;
    let lost = lost.lock().expect("lost").take();
    if let Some(why) = lost {
        w.say(&format!("set {} dropped: {why}", g.set));
    } else if handed == g.games.len() {
        w.say(&format!("set {}: {handed} game(s) handed back", g.set));
    } else {
        release(w, g).await;
        w.say(&format!(
            "set {}: {handed} of {} game(s) handed back; the set is given back",
            g.set,
            g.games.len()
        ));
    }
    pooled.with_context(|| format!("failed to play set {}", g.set))
}

/// Hands back each game as the table ends it; how many were counted.
async fn hand_back(
    w: &Worker,
    g: &Granted,
    mut rx: mpsc::Receiver<GameOutcome>,
    work: &Path,
    stop: &CancellationToken,
    lost: &Lost,
) -> usize {
    let mut counted = 0;
    let mut logs_sent = HashMap::new();
    while let Some(o) = rx.recv().await {
        if stop.is_cancelled() {
            continue; // dropped: the rest is not handed back
        }
        // The bots' logs first: once the set's last game counts, its lease
        // (which the logs are sent under) is over.
        send_logs(w, g, work, &mut logs_sent).await;
        match hand_one(w, g, &o, work.join(&o.transcript)).await {
            Ok(()) => counted += 1,
            Err(why) => {
                lost.lock().expect("lost").get_or_insert(why);
                stop.cancel();
            }
        }
    }
    counted
}

/// Sends the end of each of the set's bot logs (`work/stderr/FOLDER/FILE`)
/// that grew since it was last sent, for the entrants' logs pages on the
/// server. Best effort: a log the server does not take is not retried,
/// and a game is never held back for one.
async fn send_logs(w: &Worker, g: &Granted, work: &Path, sent: &mut HashMap<PathBuf, u64>) {
    use crate::season::lease::STDERR_TAIL;
    let root = work.join(crate::layout::tournament::STDERR);
    let prefix = format!("r00-m{:04}-", g.set);
    let Ok(folders) = std::fs::read_dir(&root) else {
        return;
    };
    let mut files = Vec::new();
    for folder in folders.flatten() {
        let name = folder.file_name().to_string_lossy().into_owned();
        if !name.starts_with(&prefix) || !folder.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        for file in std::fs::read_dir(folder.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let file_name = file.file_name().to_string_lossy().into_owned();
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            if crate::layout::is_stderr_log(&file_name)
                && len > 0
                && sent.get(&file.path()) != Some(&len)
            {
                files.push((name.clone(), file_name, file.path(), len));
            }
        }
    }
    files.sort();
    for (folder, file, path, len) in files {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let tail = &bytes[bytes.len().saturating_sub(STDERR_TAIL)..];
        let route = format!(
            "/api/worker/sets/{}/stderr/{folder}/{file}?lease={}",
            g.set, g.lease
        );
        match w.server.send("POST", &route, tail, false).await {
            Ok(r) if r.status == 200 => {
                sent.insert(path, len);
            }
            Ok(_) => {}
            // Out of reach: the game's hand-back says so, and waits.
            Err(_) => return,
        }
    }
}

/// Sends one game's transcript; why it was not counted, if it was not.
/// A server out of reach is tried again until it answers (up to
/// [`super::GIVE_UP`]), however long ago the lease would have run out: the
/// server, not this worker's clock, says whether the lease still holds, so
/// a worker cut off past its lease hands its result back and is told.
async fn hand_one(w: &Worker, g: &Granted, o: &GameOutcome, file: PathBuf) -> Result<(), String> {
    let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let path = format!(
        "/api/worker/sets/{}/games/{}?lease={}",
        g.set, o.game, g.lease
    );
    let mut out_of_reach: Option<Instant> = None;
    loop {
        match w.server.send("POST", &path, &bytes, false).await {
            Ok(r) if r.status == 200 => return Ok(()),
            Ok(r) => {
                return Err(format!(
                    "game {} refused ({}): {}",
                    o.game,
                    r.status,
                    r.why()
                ))
            }
            Err(e) => {
                let since = *out_of_reach.get_or_insert_with(|| {
                    w.say(&format!(
                        "set {} game {}: the server cannot be reached to hand it back \
                         ({e:#}); trying again until it answers",
                        g.set, o.game
                    ));
                    Instant::now()
                });
                if since.elapsed() >= super::GIVE_UP {
                    return Err(format!("game {} could not be handed back: {e:#}", o.game));
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
}

/// Extends the lease every third of it until `ended`; a refusal stops the
/// set's table (`stop`) and says why in `lost`.
async fn heartbeats(
    w: &Worker,
    g: &Granted,
    stop: &CancellationToken,
    ended: &CancellationToken,
    lost: &Lost,
) {
    let every = Duration::from_millis((g.lease_ms / 3).max(100));
    let path = format!("/api/worker/sets/{}/heartbeat?lease={}", g.set, g.lease);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = ended.cancelled() => return,
        }
        match w.server.send("POST", &path, &[], false).await {
            Ok(r) if r.status == 200 => {}
            Ok(r) => {
                let why = format!("the lease was refused ({}): {}", r.status, r.why());
                lost.lock().expect("lost").get_or_insert(why);
                stop.cancel();
            }
            Err(_) => {} // out of reach: the next beat tries again
        }
    }
}

/// Gives the set back (best effort: a lease not given back runs out).
async fn release(w: &Worker, g: &Granted) {
    let path = format!("/api/worker/sets/{}/release?lease={}", g.set, g.lease);
    let _ = w.server.send("POST", &path, &[], false).await;
}
