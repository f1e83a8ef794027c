//! A sparse file in a bot's folder (issue 43): a 2 GiB `model.bin` holding
//! one block made the sandbox's view holder lock 2 GiB of memory for the
//! run. The holder must lock what the file holds (`referee/src/sandbox/view/
//! resident.rs`, `extents.rs`), and a hole one bot reads must not be cached
//! for another (`image.rs`), or the referee must say so.
//!
//! Each test plays one sandboxed game with `tests/hostile/bot.py read-model`
//! (copied into a folder of its own beside a `model.bin`) in seat 1. The bot
//! waits for a SIGUSR1 before its hello (a bot runs only once the view is
//! held), so that the test reads the
//! holder's memory (the kernel's count, `/proc/PID/smaps`) while the view is
//! held, then reads the model's data and a hole and plays the game.

use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::support::{referee, skip};

/// 2 GiB long, `weights` at its start: 4 KiB on disk.
const MODEL_LEN: u64 = 2 << 30;

/// What one game showed.
struct Seen {
    /// The holder's locked memory: the resident KiB of its locked mappings.
    locked_kib: u64,
    /// The holder's mapping of `model.bin`, if it has one: its size and
    /// resident KiB (it is locked).
    model: Option<(u64, u64)>,
    /// The referee's stderr.
    stderr: String,
    /// What the bot said of the model (its `MODEL` line).
    read: String,
}

/// A bot folder others can read (a root referee runs each bot as a user of
/// its own): the hostile bot and a `model.bin`, sparse or a dense 7 bytes.
fn bot_folder(sparse: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bot = crate::support::root().join("tests/hostile/bot.py");
    std::fs::copy(bot, dir.path().join("bot.py")).unwrap();
    let model = std::fs::File::create(dir.path().join("model.bin")).unwrap();
    if sparse {
        model.set_len(MODEL_LEN).unwrap();
    }
    model.write_all_at(b"weights", 0).unwrap();
    model.sync_all().unwrap();
    for name in ["bot.py", "model.bin"] {
        let mode = std::fs::Permissions::from_mode(0o644);
        std::fs::set_permissions(dir.path().join(name), mode).unwrap();
    }
    dir
}

/// The first process running `bot.py` with `token` that blocks SIGUSR2:
/// the bot, waiting for the test's SIGUSR1 (which it blocked first). (The
/// referee's command line holds the token too, and it blocks every signal
/// on its main thread.)
fn waiting_bot(token: &str) -> Option<i32> {
    const SIGUSR2_BIT: u64 = 1 << (nix::libc::SIGUSR2 - 1);
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let argv: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        let runs_bot = argv.get(1).is_some_and(|a| a.ends_with(b"/bot.py"));
        if !runs_bot || !argv.contains(&token.as_bytes()) {
            continue;
        }
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        let blocked = (status.lines())
            .find_map(|l| l.strip_prefix("SigBlk:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok());
        if blocked.is_some_and(|m| m & SIGUSR2_BIT != 0) {
            return Some(pid);
        }
    }
    None
}

/// The view holder of the referee `parent`: its child running `hold-view`.
fn holder_of(parent: u32) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = (stat.rsplit_once(") "))
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if ppid == Some(parent) && String::from_utf8_lossy(&cmd).contains("hold-view") {
            return Some(pid);
        }
    }
    None
}

/// A `NAME: N kB` field's N.
fn kib(line: &str, name: &str) -> Option<u64> {
    let rest = line.strip_prefix(name)?.trim();
    rest.strip_suffix("kB")?.trim().parse().ok()
}

/// One mapping of `smaps`: its path, size, resident KiB, and whether it is
/// locked.
#[derive(Default)]
struct Mapping {
    path: String,
    size: u64,
    rss: u64,
    locked: bool,
}

/// The holder's mappings, from `smaps`. Resident pages of a locked mapping
/// are what it holds locked, whoever else maps them (`smaps`' own `Locked`
/// is a proportional share: other referees holding the same view halve it).
fn holder_maps(holder: u32) -> Vec<Mapping> {
    let smaps = std::fs::read_to_string(format!("/proc/{holder}/smaps")).unwrap();
    let mut maps: Vec<Mapping> = Vec::new();
    for line in smaps.lines() {
        // A mapping's header (`start-end perms offset dev inode [path]`),
        // then its fields (`Name: value`).
        if line
            .split_whitespace()
            .next()
            .is_some_and(|w| !w.ends_with(':'))
        {
            let path = line.split_whitespace().nth(5).unwrap_or_default();
            maps.push(Mapping {
                path: path.to_owned(),
                ..Mapping::default()
            });
            continue;
        }
        let Some(map) = maps.last_mut() else {
            continue;
        };
        if let Some(size) = kib(line, "Size:") {
            map.size = size;
        } else if let Some(rss) = kib(line, "Rss:") {
            map.rss = rss;
        } else if let Some(flags) = line.strip_prefix("VmFlags:") {
            map.locked = flags.split_whitespace().any(|f| f == "lo");
        }
    }
    maps
}

/// Plays one sandboxed game with the bot of `folder` in seat 1, `env` set
/// for the referee; reads the holder's memory while its bot waits.
fn play_beside(folder: &Path, env: &[(&str, &str)]) -> Seen {
    static GAMES: AtomicU32 = AtomicU32::new(0);
    let n = GAMES.fetch_add(1, Ordering::Relaxed);
    let token = format!("sparse-{}-{n}", std::process::id());
    let outputs = tempfile::tempdir().unwrap();
    let out = outputs.path().join("out");
    let log = tempfile::NamedTempFile::new().unwrap();
    let script = folder.join("bot.py");
    let mut child = referee()
        .args(["play", "--sandbox", "--seed", "17"])
        .args(["--team", "inproc:heuristic", "--team", "inproc:random"])
        .args(["--team", "inproc:random", "--seat"])
        .arg(format!(
            "1=python3 {} read-model --tag {token}",
            script.display()
        ))
        .args(["--startup-ms", "120000", "--decision-ms", "10000"])
        .arg("--transcript")
        .arg(&out)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let began = Instant::now();
    let stderr = || std::fs::read_to_string(log.path()).unwrap_or_default();
    // The bot runs only once the view is held (`Sandbox::held`).
    let bot = loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the referee ended ({status}) before its bot ran: {}",
                stderr()
            );
        }
        if let Some(pid) = waiting_bot(&token) {
            break pid;
        }
        assert!(
            began.elapsed() < Duration::from_secs(300),
            "the bot never ran: {}",
            stderr()
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let holder = holder_of(child.id()).expect("the referee's view holder");
    let maps = holder_maps(holder);
    let locked_kib = maps.iter().filter(|m| m.locked).map(|m| m.rss).sum();
    let model = (maps.iter())
        .find(|m| m.path.ends_with("/model.bin"))
        .map(|m| {
            assert!(m.locked, "the model's mapping is locked");
            (m.size, m.rss)
        });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(bot),
        nix::sys::signal::Signal::SIGUSR1,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let stderr = stderr();
    assert!(status.success(), "the referee failed ({status}): {stderr}");
    let game = std::fs::read_to_string(out.join("game-0001.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(game.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "result", "the game was played: {game}");
    assert!(!game.contains("\"fault\""), "no bot faulted: {game}");
    let read = (std::fs::read_dir(out.join("stderr")).unwrap().flatten())
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|text| {
            (text.lines())
                .filter(|l| l.starts_with("MODEL "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .next()
        .unwrap_or_else(|| panic!("the bot said nothing of its model: {stderr}"));
    Seen {
        locked_kib,
        model,
        stderr,
        read,
    }
}

/// A root referee with images (its default): the sparse model is in the
/// bot folder's image, holes as holes, so the holder locks no more with it
/// than with a 7-byte model (it locked 2 GiB more: the file was bound from
/// the host and held whole); the bot reads the data and zeros from a hole
/// (its own mount's page cache), and nothing is said.
#[test]
fn a_sparse_model_costs_the_holder_what_it_holds_shown_from_an_image() {
    if let Err(why) = crate::spy_dentries::images_made() {
        skip(&format!("no images of the view here ({why})"));
        return;
    }
    // Making the image reads all 2 GiB of the model (mkfs.erofs).
    let _alone = crate::support::exclusive();
    let dense = bot_folder(false);
    let base = play_beside(dense.path(), &[]);
    assert_eq!(base.read, "MODEL weights hole-zeros=False");
    let sparse = bot_folder(true);
    let seen = play_beside(sparse.path(), &[]);
    assert_eq!(seen.read, "MODEL weights hole-zeros=True");
    assert_eq!(seen.model, None, "the holder maps the model itself");
    let more = seen.locked_kib.saturating_sub(base.locked_kib);
    eprintln!(
        "holder locked {} KiB with a 7-byte model, {} KiB with the 2 GiB sparse one",
        base.locked_kib, seen.locked_kib
    );
    // The image's chunk index: 4 bytes per 4 KiB of the model, 2 MiB.
    assert!(
        more < 16 << 10,
        "the sparse model cost the holder {more} KiB of locked memory"
    );
    assert!(!seen.stderr.contains("sparse file"), "{}", seen.stderr);
}

/// Without images (`SCHMIER_VIEW_CACHE=none`: bots see their folder bound
/// from the host) the holder maps the 2 GiB model and locks its one page
/// of data, not its holes; the referee warns, naming it, that a hole a bot
/// reads is cached for the next; the game plays.
#[test]
fn a_sparse_model_shown_from_the_host_is_held_for_its_data_with_a_warning() {
    if !nix::unistd::geteuid().is_root() {
        skip("not root: the holder cannot lock memory");
        return;
    }
    let sparse = bot_folder(true);
    let seen = play_beside(sparse.path(), &[("SCHMIER_VIEW_CACHE", "none")]);
    assert_eq!(seen.read, "MODEL weights hole-zeros=True");
    let (size, resident) = seen.model.expect("the holder maps the model");
    assert_eq!(size, MODEL_LEN >> 10);
    assert!(resident <= 64, "{resident} KiB of the model locked");
    let model = sparse.path().join("model.bin");
    let warning = (seen.stderr.lines())
        .find(|l| l.contains("sparse file"))
        .unwrap_or_else(|| panic!("no warning: {}", seen.stderr));
    assert!(
        warning.contains(&model.display().to_string()) && warning.contains("without their holes"),
        "{warning}"
    );
}
