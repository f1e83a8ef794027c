//! A sandboxed table builds each game's six sandboxes while the game before it
//! is played (`referee/src/session.rs`, `Prepared`), but runs no bot before
//! its game begins: the wrapper in each sandbox waits for the referee's word
//! before it execs the bot (`referee landlock --hold`). Nor does any bot of
//! a game run before the sandbox's view is held in memory (`Sandbox::held`),
//! though the start check's bots may.

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

/// A bot in a directory of its own beneath `dir` (all readable by the
/// sandbox's bot users) that writes the host's clock, in nanoseconds since the
/// epoch, to its stderr as its first act, then plays as `referee bot
/// random`. Returns the script.
fn clock_bot(dir: &Path) -> std::path::PathBuf {
    let bot_dir = dir.join("bot");
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
    for p in [dir, &bot_dir, &script] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    script
}

/// A sandboxed tournament into `out`, on `jobs` tables, of the clock bot
/// (`clock_bot`, made beneath `dir`) against the two in-process bots: one
/// duplicate set, so the clock bot plays six games in two seats each.
fn clock_tournament(dir: &Path, out: &Path, jobs: u32) -> std::process::Command {
    let script = clock_bot(dir);
    let mut cmd = referee();
    cmd.arg("tournament")
        .arg("--entrant")
        .arg(format!("clock=sh {}", script.display()))
        .args([
            "--entrant",
            "h=inproc:heuristic",
            "--entrant",
            "r=inproc:random",
        ])
        .args(["--sets", "1", "--seed", "5", "--quiet", "--sandbox"])
        .args(["--startup-ms", "20000", "--decision-ms", "10000"])
        .arg("--jobs")
        .arg(jobs.to_string())
        .arg("--out")
        .arg(out);
    cmd
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
    let out = dir.path().join("out");
    let output = clock_tournament(dir.path(), &out, 1).output().unwrap();
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

/// Nanoseconds since the epoch of a log line's timestamp, as the referee's
/// log writes it (`2026-12-03T13:15:02.984121Z`, UTC).
fn logged_at(line: &str) -> u128 {
    let stamp = line.split_whitespace().next().unwrap_or_default();
    let parse = |range: std::ops::Range<usize>| -> i64 {
        stamp
            .get(range)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not a timestamp: {line:?}"))
    };
    let (y, m, d) = (parse(0..4), parse(5..7), parse(8..10));
    let (hh, mm, ss) = (parse(11..13), parse(14..16), parse(17..19));
    let fraction = stamp[20..].trim_end_matches('Z');
    let nanos: u128 = format!("{fraction:0<9}")[..9].parse().unwrap();
    // Days since 1970-01-01 of a proleptic Gregorian date (the civil-days
    // algorithm: years counted from March, so that leap days come last).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3_600 + mm * 60 + ss;
    secs as u128 * 1_000_000_000 + nanos
}

#[test]
fn the_log_timestamps_are_read_as_the_clock_reads_them() {
    assert_eq!(logged_at("1970-01-01T00:00:00.000001Z DEBUG x"), 1_000);
    // `date -u -d 2026-12-03T13:15:02.984121Z +%s%N`
    assert_eq!(
        logged_at("2026-12-03T13:15:02.984121Z DEBUG x"),
        1_796_303_702_984_121_000
    );
    assert_eq!(
        logged_at("2024-02-29T23:59:59.5Z"),
        1_709_251_199_500_000_000
    );
}

/// A tournament's start check runs its bots while the sandbox's view is
/// still being held (they are sent hello and ended before any card is
/// dealt), but no bot of a game may run before the view is held: the page
/// cache would otherwise be a store between the games of a duplicate set
/// (`referee/src/sandbox/view/resident.rs`). Each game process notes the host's clock
/// as its first act; every note must come after the referee logged the view
/// held.
#[test]
fn no_sandboxed_game_bot_runs_before_the_view_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = clock_tournament(dir.path(), &out, 2)
        .env("RUST_LOG", "referee::sandbox=debug")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{log}");
    let held: Vec<&str> = log.lines().filter(|l| l.contains("view held")).collect();
    assert_eq!(held.len(), 1, "one view, held once: {log}");
    let held = logged_at(held[0]);
    let mut notes = 0;
    for game in std::fs::read_dir(out.join("stderr")).unwrap().flatten() {
        for entry in std::fs::read_dir(game.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let first = text.lines().next().unwrap_or_default().trim();
            let start: u128 = (first.parse())
                .unwrap_or_else(|e| panic!("{}: {first:?}: {e}", entry.path().display()));
            assert!(
                start > held,
                "{} ran at {start} ns, before the view was held at {held} ns",
                entry.path().display()
            );
            notes += 1;
        }
    }
    // Six games of two seats each for the entrant.
    assert_eq!(notes, 12, "{log}");
}
