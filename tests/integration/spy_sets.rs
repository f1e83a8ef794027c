//! The spy suite on duplicate sets: a set deals the same cards in all six of its
//! games, so a bot that remembers what it was dealt at each seat knows, from
//! game 2 on, the hands of the opponents now sitting there. `tests/spy/spy.py
//! remember` keeps that in its memory, `remember-files` in files under `/tmp`,
//! `/dev/shm` and its scratch directory; both claim every opponent's hand they
//! can. Claims are checked against the transcripts: where the defence is off
//! every claim is right, where it is on there is none.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::support::referee;

/// What a duplicate set with a spy entrant left: the spies' claims and the
/// games' deals.
pub(crate) struct Set {
    pub claims: Vec<serde_json::Value>,
    /// Each `SPY` report's detail (one per spy process and game).
    pub reports: Vec<String>,
    /// Per transcript: the spies' seats and each deal's six hands.
    pub games: Vec<(Vec<usize>, Vec<serde_json::Value>)>,
}

/// One duplicate set (six games, one matchup): the spy in `mode` against the
/// heuristic and random bots (inside the referee), with the extra `args`.
pub(crate) fn duplicate_set(mode: &str, args: &[&str]) -> Set {
    duplicate_set_logged(mode, args, "", &[]).0
}

/// [`duplicate_set`] with the referee's environment changed by `env`.
pub(crate) fn duplicate_set_env(mode: &str, args: &[&str], env: &[(&str, &str)]) -> Set {
    duplicate_set_logged(mode, args, "", env).0
}

/// [`duplicate_set`] with `RUST_LOG` set to `log` and the referee's
/// environment changed by `env`; also the referee's stderr.
fn duplicate_set_logged(
    mode: &str,
    args: &[&str],
    log: &str,
    env: &[(&str, &str)],
) -> (Set, String) {
    static RUN: AtomicU32 = AtomicU32::new(0);
    let tag = format!(
        "spyset-{}-{}-{mode}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = referee()
        .arg("tournament")
        .arg("--entrant")
        .arg(format!("spy=python3 tests/spy/spy.py {mode} --tag {tag}"))
        .args([
            "--entrant",
            "h=inproc:heuristic",
            "--entrant",
            "r=inproc:random",
        ])
        .args([
            "--sets",
            "1",
            "--seed",
            "123456789",
            "--seed-secret",
            crate::support::SECRET,
            "--quiet",
        ])
        .args(["--startup-ms", "20000", "--decision-ms", "10000"])
        .args(args)
        .arg("--out")
        .arg(&out)
        .env("RUST_LOG", log)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    // What an unsandboxed `remember-files` spy left on the host.
    for d in ["/tmp", "/dev/shm"] {
        let _ = std::fs::remove_file(Path::new(d).join(format!("{tag}-memory")));
    }
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut set = Set {
        claims: Vec::new(),
        reports: Vec::new(),
        games: Vec::new(),
    };
    for log in files(&out.join("stderr")) {
        for line in std::fs::read_to_string(log).unwrap().lines() {
            if let Some(claim) = line.strip_prefix("CLAIM ") {
                set.claims.push(serde_json::from_str(claim).unwrap());
            } else if let Some(report) = line.strip_prefix(&format!("SPY {mode} ")) {
                set.reports.push(report.to_owned());
            }
        }
    }
    // The transcripts, not their timings (in a folder beside them).
    for game in std::fs::read_dir(out.join("games")).unwrap().flatten() {
        let game = game.path();
        if game.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(game).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let spies = (lines[0]["seats"].as_array().unwrap().iter())
            .filter(|s| s["name"] == format!("spy-{mode}"))
            .map(|s| s["seat"].as_u64().unwrap() as usize)
            .collect();
        let deals = lines.into_iter().filter(|l| l["type"] == "deal").collect();
        set.games.push((spies, deals));
    }
    assert_eq!(set.games.len(), 6, "a duplicate set is six games");
    // Each of the spy's two processes reports at the end of every game: the
    // spies played all six.
    assert_eq!(set.reports.len(), 12, "{:?}", set.reports);
    (set, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// A sandbox kept across games (issue 27, `launcher.rs`) holds nothing of
/// the bot it served before: in each game of a duplicate set the spy looks
/// for what the one before left (a file in `/tmp` and in `/dev/shm`, a SysV
/// shared memory segment, an abstract socket, a process that left its
/// session) and leaves all of them again. Unsandboxed (fresh processes per
/// game, one host) it finds them; sandboxed, where the referee's log shows
/// sandboxes serving a second and later bot, it finds none of them, and a
/// named keyring, which would outlive its process in the kept user
/// namespace, is refused.
#[test]
fn a_kept_sandbox_holds_nothing_of_the_bot_it_served_before() {
    let found = |r: &str| !r.starts_with("blocked");
    let (open, _) = duplicate_set_logged("litter", &[], "", &[]);
    assert!(
        open.reports.iter().skip(1).any(|r| found(r)),
        "{:?}",
        open.reports
    );
    // The metadata store works where nothing stops it: a later bot reads
    // the attribute, the times and the mode an earlier one left.
    for kind in ["xattr:", "times:", "mode:"] {
        assert!(
            open.reports.iter().skip(1).any(|r| r.contains(kind)),
            "no later bot found {kind}: {:?}",
            open.reports
        );
    }
    // Cleared up after the unsandboxed run's spies.
    for d in ["/tmp", "/dev/shm"] {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if (name.ends_with("-litter") || name.ends_with("-litter-meta"))
                && name.starts_with("spyset-")
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let (boxed, log) = duplicate_set_logged(
        "litter",
        &["--sandbox"],
        "referee::sandbox::kept::pool=debug",
        &[],
    );
    let reused = (log.lines())
        .filter_map(|l| {
            l.rsplit_once("(its ")?
                .1
                .strip_suffix(')')?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    assert!(reused >= 2, "no sandbox served a second bot:\n{log}");
    for r in &boxed.reports {
        assert!(!found(r), "a bot found an earlier one's: {r}");
        for made in ["/tmp/", "/dev/shm/", "\"shm\"", "\"socket\"", "\"process\""] {
            assert!(r.contains(made), "the spy could not leave {made}: {r}");
        }
        assert!(r.contains("keyring:EPERM"), "{r}");
        // Every metadata call on what the sandbox's bots share fails: the
        // root and /dev read-only, the host's /dev/null too, times refused.
        nothing_shared_changes(r);
    }
}

/// Asserts that every metadata call the `litter` spy made (its report `r`)
/// on what the sandbox's bots share failed: the root and `/dev` read-only,
/// the host's `/dev/null` too, times refused.
pub(crate) fn nothing_shared_changes(r: &str) {
    for shared in ["meta:/:", "meta:/dev:", "meta:/dev/null:"] {
        let tries = (r.split(' '))
            .find_map(|w| w.split('"').find(|p| p.starts_with(shared)))
            .unwrap_or_else(|| panic!("the spy did not try {shared}: {r}"));
        assert!(!tries.contains("=ok"), "{tries}");
    }
}

/// The files under `dir`, recursively, sorted.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found.sort();
    found
}

impl Set {
    /// Asserts that there are claims and that each names an opponent's hand
    /// exactly as dealt: in every game where a spy sat at the claimer's seat
    /// with the claimer's hand at that deal (the set's games deal alike, so
    /// there is one such game or more), the claimed seat held the claimed hand.
    pub fn all_claims_right(&self) {
        assert!(!self.claims.is_empty(), "no claims: {:?}", self.reports);
        for c in &self.claims {
            let (me, seat) = (c["me"].as_u64().unwrap(), c["seat"].as_u64().unwrap());
            assert_ne!(me % 3, seat % 3, "an opponent's hand: {c}");
            let mut checked = 0;
            for (spies, deals) in &self.games {
                let Some(deal) = deals.iter().find(|d| d["deal"] == c["deal"]) else {
                    continue;
                };
                if spies.contains(&(me as usize)) && deal["hands"][me as usize] == c["my_hand"] {
                    assert_eq!(
                        deal["hands"][seat as usize], c["hand"],
                        "a wrong claim: {c}"
                    );
                    checked += 1;
                }
            }
            assert!(checked > 0, "no game in which the claim was made: {c}");
        }
    }

    /// Each claim's hand and the hand the claimed seat was dealt (from the
    /// first game in which a spy sat at the claimer's seat with its hand).
    pub fn claimed_and_dealt(&self) -> Vec<(serde_json::Value, serde_json::Value)> {
        let mut pairs = Vec::new();
        for c in &self.claims {
            let (me, seat) = (c["me"].as_u64().unwrap(), c["seat"].as_u64().unwrap());
            let dealt = self.games.iter().find_map(|(spies, deals)| {
                let deal = deals.iter().find(|d| d["deal"] == c["deal"])?;
                (spies.contains(&(me as usize)) && deal["hands"][me as usize] == c["my_hand"])
                    .then(|| deal["hands"][seat as usize].clone())
            });
            pairs.push((
                c["hand"].clone(),
                dealt.expect("a game in which the claim was made"),
            ));
        }
        pairs
    }

    pub fn no_claims(&self) {
        assert!(self.claims.is_empty(), "{:?}", &self.claims[..1]);
        assert!(self
            .reports
            .iter()
            .all(|r| r.starts_with("blocked claims=0")));
    }

    /// Every process was told it plays game 1 of its session: nothing in
    /// `game_start` says which game of the set it is.
    pub fn every_game_announced_as_the_first(&self) {
        for r in &self.reports {
            assert!(r.ends_with("game_start.game=1"), "{r}");
        }
    }
}

#[test]
fn remembering_a_duplicate_sets_hands_works_only_with_processes_kept_across_games() {
    // The lenient policy without the sandbox keeps each process for the set.
    let kept = duplicate_set("remember", &["--policy", "lenient"]);
    kept.all_claims_right();
    // The competition policy (a tournament's default) starts each game afresh.
    let fresh = duplicate_set("remember", &[]);
    fresh.no_claims();
    fresh.every_game_announced_as_the_first();
    // So does the sandbox, under any policy.
    let boxed = duplicate_set("remember", &["--policy", "lenient", "--sandbox"]);
    boxed.no_claims();
    boxed.every_game_announced_as_the_first();
}

#[test]
fn files_left_for_the_next_game_of_a_set_survive_only_unsandboxed() {
    // Fresh processes alone do not help: unsandboxed, /tmp is the host's.
    let open = duplicate_set("remember-files", &[]);
    open.all_claims_right();
    // Sandboxed, each process has a /tmp and /dev/shm of its own, and each game
    // a scratch directory of its own.
    let scratch = tempfile::tempdir().unwrap();
    let scratch = scratch.path().to_str().unwrap();
    let boxed = duplicate_set("remember-files", &["--sandbox", "--scratch", scratch]);
    boxed.no_claims();
}

/// What a bot sees of where it runs counts nothing: unsandboxed the scratch
/// path names the game (round, matchup, game, slot), so a bot knows which game
/// of the set it plays; sandboxed every process of the set sees the same
/// `/scratch`, and neither `mountinfo` nor `uid_map` (which named the host uid,
/// once counted up per start) can be read.
#[test]
fn nothing_a_sandboxed_bot_sees_tells_which_game_of_a_set_it_plays() {
    let seen = |args: &[&str]| -> Vec<serde_json::Value> {
        let scratch = tempfile::tempdir().unwrap();
        let mut args = args.to_vec();
        args.extend(["--scratch", scratch.path().to_str().unwrap()]);
        let set = duplicate_set("where", &args);
        (set.reports.iter())
            .map(|r| serde_json::from_str(r.strip_prefix("ok ").unwrap()).unwrap())
            .collect()
    };
    let open = seen(&[]);
    let paths: std::collections::BTreeSet<_> =
        open.iter().map(|s| s["scratch"].to_string()).collect();
    assert_eq!(
        paths.len(),
        12,
        "each process its own named path: {paths:?}"
    );
    assert!(open
        .iter()
        .all(|s| s["mountinfo"].as_str().unwrap().contains(" / ")));
    let boxed = seen(&["--sandbox"]);
    for s in &boxed {
        assert_eq!(s["scratch"], "/scratch", "{s}");
        assert_eq!(s["mountinfo"], "EACCES", "{s}");
        assert_eq!(s["uid_map"], "EACCES", "{s}");
    }
}

/// Numbers the kernel hands out from a host-wide counter tell a bot how much
/// started before it, and so which game of a set it plays. Unsandboxed the
/// twelve processes of a set read twelve pids and twelve socket cookies
/// (`SO_COOKIE`, handed out in order). Sandboxed, what a bot reads of its own
/// is the same in every game (pid 2, its parent 1, inode 2 for the first file
/// in `/tmp` and `/dev/shm`: fresh namespaces and mounts), and the counters
/// are refused (`EPERM`): the socket's and the network namespace's cookies,
/// the mount's 64-bit id (`statx` `STATX_MNT_ID_UNIQUE`). (What remains, the
/// pipe inode counter, namespace and plain mount ids, the start time:
/// SECURITY.md, "Nothing counts the games".)
#[test]
fn no_counter_a_sandboxed_bot_reads_tells_which_game_of_a_set_it_plays() {
    let seen = |args: &[&str]| -> Vec<serde_json::Value> {
        let set = duplicate_set("counters", args);
        (set.reports.iter())
            .map(|r| serde_json::from_str(r.strip_prefix("ok ").unwrap()).unwrap())
            .collect()
    };
    let distinct = |rows: &[serde_json::Value], key: &str| {
        let values: std::collections::BTreeSet<String> =
            rows.iter().map(|r| r[key].to_string()).collect();
        values.len()
    };
    let open = seen(&[]);
    assert_eq!(distinct(&open, "pid"), 12, "{open:?}");
    assert_eq!(distinct(&open, "socket_cookie"), 12, "{open:?}");
    let boxed = seen(&["--sandbox"]);
    for r in &boxed {
        for (key, want) in [
            ("pid", serde_json::json!(2)),
            ("ppid", serde_json::json!(1)),
            ("ino:/tmp", serde_json::json!(2)),
            ("ino:/dev/shm", serde_json::json!(2)),
            ("socket_cookie", serde_json::json!("EPERM")),
            ("netns_cookie", serde_json::json!("EPERM")),
            ("mnt_id_unique", serde_json::json!("EPERM")),
        ] {
            assert_eq!(r[key], want, "{key}: {r}");
        }
    }
}
