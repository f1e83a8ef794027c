//! A run starts the executable it was started from, for everything it
//! starts of itself (the Landlock wrapper and kept sandboxes, the built-in
//! bots, the view's holder), whatever its path names later: an organiser's
//! referee upgraded in the middle of a tournament, or a relink of
//! `target/debug/referee` under a running test, must not stop the run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::hostile::processes_with;
use crate::support::{root, REFEREE, SECRET};

/// What happens to the referee's path while the run waits for its held bot.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Disturbance {
    None,
    /// Another file (a shell script) renamed over it, as an upgrade does.
    Replaced,
    /// Deleted.
    Deleted,
}

/// How the run isolates its bots.
#[derive(Clone, Copy, Debug)]
enum Isolation {
    /// Sandboxed, each bot shown its view from images (a root referee's
    /// default, built by `referee stage-view` while the run starts).
    Images,
    /// Sandboxed, the host's paths bound (`SCHMIER_VIEW_CACHE=none`).
    HostPaths,
    /// Not sandboxed: the built-in bots are `referee bot NAME` processes.
    Unsandboxed,
}

/// A tournament of a built-in bot, another and a spy that waits at its
/// first request of every game (a fresh process each: `competition`),
/// whose referee is replaced or deleted while the first spy waits, plays
/// every game without a fault, and its transcripts are those of an
/// undisturbed run of the same copy: sandboxed, with and without the
/// view's images, and unsandboxed.
#[test]
fn a_tournament_plays_on_when_its_referee_is_replaced_or_deleted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::copy(root().join("tests/spy/spy.py"), dir.path().join("spy.py")).unwrap();
    for isolation in [
        Isolation::Images,
        Isolation::HostPaths,
        Isolation::Unsandboxed,
    ] {
        let undisturbed = tournament(dir.path(), Disturbance::None, isolation);
        let games = transcripts(&undisturbed);
        assert!(games.len() >= 2, "{games:?}");
        for (name, text) in &games {
            assert!(!text.contains("\"type\":\"fault\""), "{name}: {text}");
        }
        for disturbance in [Disturbance::Replaced, Disturbance::Deleted] {
            let got = transcripts(&tournament(dir.path(), disturbance, isolation));
            assert_eq!(got.len(), games.len(), "{disturbance:?}, {isolation:?}");
            let differ: Vec<&str> = (got.iter().zip(&games))
                .filter(|(a, b)| a != b)
                .map(|(_, (name, _))| name.as_str())
                .collect();
            assert!(
                differ.is_empty(),
                "{disturbance:?}, {isolation:?}: {differ:?} differ"
            );
        }
    }
}

/// Runs the tournament from a copy of the referee at the same path each
/// time (the path is the built-in bot's command), disturbing that path as
/// told once the spy of the first game waits; returns its output folder.
fn tournament(dir: &Path, disturbance: Disturbance, isolation: Isolation) -> PathBuf {
    let bin = dir.join("bin");
    let _ = std::fs::remove_dir_all(&bin);
    std::fs::create_dir(&bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let referee = bin.join("referee");
    std::fs::copy(REFEREE, &referee).unwrap();
    // The same each run: the spy's command line is in the transcripts.
    let token = format!("own-exe-{}", std::process::id());
    let spy = format!("python3 {}/spy.py hold --tag {token}", dir.display());
    let out = dir.join(format!("out-{disturbance:?}-{isolation:?}"));
    let mut cmd = Command::new(&referee);
    cmd.args(["tournament", "--jobs", "1", "--seed", "5", "-q"])
        .args(["--seed-secret", SECRET, "--policy", "competition"])
        .args(["--no-timeouts", "--entrant", "h=builtin:heuristic"])
        .args(["--entrant", "r=builtin:random", "--entrant"])
        .arg(format!("s={spy}"))
        .arg("--out")
        .arg(&out);
    match isolation {
        Isolation::Images => _ = cmd.arg("--sandbox"),
        Isolation::HostPaths => _ = cmd.arg("--sandbox").env("SCHMIER_VIEW_CACHE", "none"),
        Isolation::Unsandboxed => {}
    }
    let mut child = cmd
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Each game's spy waits at its first request until it is sent SIGWINCH
    // (ignored until it waits: sent again until the run is over). The path
    // is disturbed before the first spy is released: every later game's
    // processes start after it.
    let mut disturbed = false;
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        let spies = spies(&token);
        if !disturbed && !spies.is_empty() {
            disturb(&referee, disturbance);
            disturbed = true;
        }
        for pid in spies {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGWINCH);
        }
        assert!(start.elapsed().as_secs() < 600, "the run took 10 minutes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success() && disturbed,
        "{disturbance:?}: {} (disturbed: {disturbed})\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// The spy processes of this run (the python processes, not bubblewrap
/// around them).
fn spies(token: &str) -> Vec<nix::unistd::Pid> {
    (processes_with(token).into_iter())
        .filter_map(|p| {
            let (pid, cmd) = p.split_once(": ")?;
            let python = cmd.split(' ').next()?.contains("python3");
            python.then(|| Some(nix::unistd::Pid::from_raw(pid.parse().ok()?)))?
        })
        .collect()
}

fn disturb(referee: &Path, disturbance: Disturbance) {
    match disturbance {
        Disturbance::None => {}
        Disturbance::Replaced => {
            let other = referee.with_extension("new");
            std::fs::write(&other, "#!/bin/sh\nexit 3\n").unwrap();
            std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::rename(&other, referee).unwrap();
        }
        Disturbance::Deleted => std::fs::remove_file(referee).unwrap(),
    }
}

/// Every game's transcript in `out`, by name.
fn transcripts(out: &Path) -> Vec<(String, String)> {
    let mut games: Vec<(String, String)> = std::fs::read_dir(out.join("games"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    games.sort();
    games
}
