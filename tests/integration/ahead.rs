//! A sandboxed table builds each game's six sandboxes while the game before it
//! is played (`referee/src/session.rs`, `Prepared`), but runs no bot before
//! its game begins: the wrapper in each sandbox waits for the referee's word
//! before it execs the bot (`referee landlock --hold`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::support::referee;

/// Nanoseconds since the epoch at which `path` was last written.
fn written_at(path: &Path) -> u128 {
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let time = meta.modified().unwrap();
    time.duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

/// Each bot process notes the host's clock as its first act (a process that
/// ran early would note a time before the game it waited for); every
/// process of game N+1 must have noted a time after game N's transcript was
/// complete: that game had ended, and its bots had been told `bye`, before
/// the next game's bots ran. (A file's time is the kernel's coarse clock,
/// never ahead of the clock `date` reads, so an honest order is never seen
/// reversed.)
#[test]
fn a_sandboxed_bot_of_the_next_game_runs_only_once_its_game_begins() {
    let dir = tempfile::tempdir().unwrap();
    let bot_dir = dir.path().join("bot");
    std::fs::create_dir(&bot_dir).unwrap();
    let script = bot_dir.join("clock.sh");
    std::fs::write(
        &script,
        format!(
            "date +%s%N >&2\nexec {} bot random\n",
            env!("CARGO_BIN_EXE_referee")
        ),
    )
    .unwrap();
    for p in [dir.path(), &bot_dir, &script] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = dir.path().join("out");
    let output = referee()
        .arg("tournament")
        .arg("--entrant")
        .arg(format!("clock=sh {}", script.display()))
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
            "5",
            "--quiet",
            "--sandbox",
            "--jobs",
            "1",
        ])
        .args(["--startup-ms", "20000", "--decision-ms", "10000"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for game in 2..=6 {
        let before = out.join(format!("games/r00-m0000-g{:03}.jsonl", game - 1));
        let ended = written_at(&before);
        let logs = out.join(format!("stderr/r00-m0000-g{game:03}"));
        let mut starts = Vec::new();
        for entry in std::fs::read_dir(&logs).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let first = text.lines().next().unwrap_or_default();
            starts.push(
                first
                    .trim()
                    .parse::<u128>()
                    .unwrap_or_else(|e| panic!("{}: {first:?}: {e}", entry.path().display())),
            );
        }
        // The entrant sits in two seats: two processes a game.
        assert_eq!(starts.len(), 2, "{}: {starts:?}", logs.display());
        for start in starts {
            assert!(
                start > ended,
                "a bot of game {game} ran at {start} ns, before game {} ended at {ended} ns",
                game - 1
            );
        }
    }
}
