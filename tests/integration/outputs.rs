//! What the referee leaves on disk, and what reads it back: `referee verify` on a
//! tournament folder (its games and its journal), a rerun after a failed start,
//! no temporary file left behind, and a full disk that loses only the game being
//! written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{copy_dir, play, referee, root, verify, REFEREE};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished tournament of in-process bots: one duplicate set, six games.
fn small_tournament(out: &Path) {
    let status = referee()
        .args(["tournament", "--entrant", "a=inproc:random"])
        .args([
            "--entrant",
            "b=inproc:heuristic",
            "--entrant",
            "c=inproc:random",
        ])
        .args([
            "--seed",
            "41",
            "--seed-secret",
            crate::support::SECRET,
            "--jobs",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(out)
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", text(&status.stderr));
}

/// Replaces line `n` (1-based) of `path` by `edit` of its JSON.
fn edit_line(path: &Path, n: usize, edit: impl FnOnce(&mut serde_json::Value)) {
    let content = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = content.lines().map(str::to_owned).collect();
    let mut v: serde_json::Value = serde_json::from_str(&lines[n - 1]).unwrap();
    edit(&mut v);
    lines[n - 1] = v.to_string();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn journal_line(dir: &Path, n: usize) -> serde_json::Value {
    let content = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    serde_json::from_str(content.lines().nth(n - 1).unwrap()).unwrap()
}

#[test]
fn verify_checks_a_tournament_folder_its_games_and_its_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    small_tournament(&good);

    let out = verify(&[&good]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let games = stdout
        .lines()
        .filter(|l| l.starts_with("ok ") && l.contains("/games/"))
        .count();
    assert_eq!(games, 6, "{stdout}");
    assert!(
        stdout.contains("journal.jsonl (6 games, each as its transcript records it)"),
        "{stdout}"
    );

    // One game file altered: its result claims another score.
    let bad_game = tmp.path().join("bad-game");
    copy_dir(&good, &bad_game);
    let game = journal_line(&good, 2)["transcript"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = bad_game.join(&game);
    let last = std::fs::read_to_string(&path).unwrap().lines().count();
    edit_line(&path, last, |v| {
        v["scores"][1] = (v["scores"][1].as_i64().unwrap() + 1).into()
    });
    let out = verify(&[&bad_game]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "INVALID {}:{last}: result says scores",
            path.display()
        )),
        "{stdout}"
    );
    // The journal line that counts it no longer matches its transcript either.
    assert!(
        stdout.contains(&format!(
            "journal.jsonl:2: {game}: its transcript does not check out"
        )),
        "{stdout}"
    );

    // One journal line altered (the game files untouched): the hands it counts.
    let bad_journal = tmp.path().join("bad-journal");
    copy_dir(&good, &bad_journal);
    let hands = journal_line(&good, 4)["hands"].as_u64().unwrap();
    let game = journal_line(&good, 4)["transcript"]
        .as_str()
        .unwrap()
        .to_owned();
    edit_line(&bad_journal.join("journal.jsonl"), 4, |v| {
        v["hands"] = (hands + 1).into()
    });
    let out = verify(&[&bad_journal]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "journal.jsonl:4: {game}: hands: the journal says {}, the transcript gives {hands}",
            hands + 1
        )),
        "{stdout}"
    );
    assert!(text(&out.stderr).contains("1 of 6 journal line(s) do not match"));
    // Every game itself still checks out.
    assert_eq!(stdout.matches("INVALID").count(), 1, "{stdout}");

    // The journal's entrants must sit where the transcript seats them.
    let swapped = tmp.path().join("swapped");
    copy_dir(&good, &swapped);
    edit_line(&swapped.join("journal.jsonl"), 1, |v| {
        let t = v["teams"].as_array().unwrap().clone();
        v["teams"] = serde_json::json!([t[1], t[0], t[2]]);
    });
    let out = verify(&[&swapped]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("journal.jsonl:1: "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn verify_on_a_journal_and_show_on_a_cut_off_transcript_name_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    small_tournament(&dir);

    let journal = dir.join("journal.jsonl");
    let out = verify(&[&journal]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:1: not a transcript: ", journal.display())),
        "{err}"
    );
    assert!(err.contains("verify the tournament's folder"), "{err}");

    // A transcript cut off in the middle of line 40.
    let game = dir.join(journal_line(&dir, 1)["transcript"].as_str().unwrap());
    let whole = std::fs::read(&game).unwrap();
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(
            whole
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let cut = tmp.path().join("cut.jsonl");
    std::fs::write(&cut, &whole[..line_starts[39] + 10]).unwrap();
    let out = referee().arg("show").arg(&cut).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}:40: the file ends inside a line",
            cut.display()
        )),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// Every path under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                pending.push(p.clone());
            }
            found.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    found.sort();
    found
}

fn temporaries(dir: &Path) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".partial") || name.ends_with(".tmp")
        })
        .collect()
}

#[test]
fn a_play_that_failed_to_start_leaves_nothing_that_blocks_the_corrected_rerun() {
    // Seat 0 says why on stderr and exits; seat 3 names no program at all.
    let failed = play()
        .inproc_bystanders()
        .seed(8)
        .arg("--seat")
        .arg("0=sh -c 'echo broken on purpose >&2; exit 3'")
        .arg("--seat")
        .arg("3=/nonexistent/bot")
        .run();
    let err = text(&failed.output.stderr);
    assert_eq!(failed.output.status.code(), Some(2), "{err}");
    // Every file a message names exists; the one bot that wrote to stderr is
    // named with its log, the program that never ran with none.
    let out_dir = failed.dir.display().to_string();
    let named: Vec<&str> = err
        .split_whitespace()
        .filter(|w| w.starts_with(&out_dir))
        .collect();
    for w in &named {
        let w = w.trim_end_matches([',', ';', ')', '.']);
        assert!(
            Path::new(w).exists(),
            "{w} is named but does not exist:\n{err}"
        );
    }
    let log = failed.dir.join("stderr/player0.log");
    assert!(
        named
            .iter()
            .any(|w| w.starts_with(&log.display().to_string())),
        "{err}"
    );
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("broken on purpose"));
    assert!(!failed.dir.join("stderr/player3.log").exists());
    assert!(
        !failed.dir.join("timings").exists(),
        "{:?}",
        files_under(&failed.dir)
    );

    // The corrected rerun into the same folder plays.
    let rerun = referee()
        .args([
            "play",
            "--team",
            "inproc:heuristic",
            "--team",
            "inproc:random",
        ])
        .args([
            "--team",
            "inproc:random",
            "--seed",
            "8",
            "--games",
            "2",
            "--transcript",
        ])
        .arg(&failed.dir)
        .output()
        .unwrap();
    assert!(rerun.status.success(), "{}", text(&rerun.stderr));
    assert!(failed.dir.join("game-0002.jsonl").is_file());
    assert!(
        !log.exists(),
        "the failed start's log is replaced by the rerun's"
    );
    assert_eq!(temporaries(&failed.dir), Vec::<PathBuf>::new());
}

#[test]
fn a_finished_play_and_tournament_leave_no_temporary_file() {
    let done = play()
        .inproc_bystanders()
        .seed(9)
        .arg("--games")
        .arg("2")
        .ok();
    assert_eq!(temporaries(&done.dir), Vec::<PathBuf>::new());
    let tmp = tempfile::tempdir().unwrap();
    small_tournament(&tmp.path().join("t"));
    let left = temporaries(&tmp.path().join("t"));
    assert_eq!(left, Vec::<PathBuf>::new());
}

/// Runs `script` (sh: `$1` the mount point, `$2` a folder of the host's where
/// `$1/out` is copied when it ends, `$3` `arg`) in a mount namespace of its own
/// with a tmpfs of `mib` MiB at `$1`; `None` (after saying why, loudly) where
/// the host cannot make one.
fn in_small_filesystem(mib: u32, script: &str, keep: &Path, arg: &str) -> Option<Output> {
    let mnt = tempfile::tempdir().unwrap();
    let probe = Command::new("unshare")
        .args([
            "-rm",
            "sh",
            "-c",
            "mount -t tmpfs -o size=1m tmpfs \"$1\"",
            "sh",
        ])
        .arg(mnt.path())
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        other => {
            crate::support::skip(&format!(
                "a full disk needs a small tmpfs in a mount namespace of its own \
                 (`unshare -rm`: user namespaces, or root), which this host refuses: {other:?}"
            ));
            return None;
        }
    }
    let full = format!(
        "mount -t tmpfs -o size={mib}m tmpfs \"$1\" || exit 99\n{script}\nrc=$?\n\
         cp -r \"$1/out\" \"$2/out\" 2>/dev/null\nexit $rc"
    );
    let out = Command::new("unshare")
        .args(["-rm", "sh", "-c", &full, "sh"])
        .arg(mnt.path())
        .arg(keep)
        .arg(arg)
        .env("REFEREE", REFEREE)
        .current_dir(root())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(99), "{}", text(&out.stderr));
    Some(out)
}

#[test]
fn a_full_disk_loses_only_the_game_being_written() {
    let keep = tempfile::tempdir().unwrap();
    // Seat 0's bot fills the filesystem as it starts (after the referee's own
    // free-space check), leaving ROOM bytes: room for game 1's transcript and
    // timings (about 44 KiB with seed 12), not for game 2's (about 640 KiB).
    let filler = format!(
        "sh -c 'free=$(df -B1 --output=avail \"$FILL_DIR\" | tail -1); \
         head -c $((free - ROOM)) /dev/zero > \"$FILL_DIR/fill\"; exec {REFEREE} bot random'"
    );
    let script = "\"$REFEREE\" play --team inproc:heuristic --team inproc:random \
                  --team inproc:random --seat \"0=$3\" --seed 12 --games 3 --decision-ms 10000 \
                  --bot-env FILL_DIR=\"$1\" --bot-env ROOM=73728 --transcript \"$1/out\"";
    let Some(out) = in_small_filesystem(24, script, keep.path(), &filler) else {
        return;
    };
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("game 2/3 lost: failed to write") && err.contains("No space left on device"),
        "{err}"
    );
    assert!(
        err.contains("out/game-0002.jsonl: No space left on device"),
        "{err}"
    );
    assert!(
        err.contains("lost (their transcripts could not be written"),
        "{err}"
    );
    // Game 1 is kept whole and checks out; every game is either kept and valid
    // or reported lost; nothing temporary is left.
    let dir = keep.path().join("out");
    assert!(
        dir.join("game-0001.jsonl").exists(),
        "{:?}\n{err}",
        files_under(&dir)
    );
    let mut kept = Vec::new();
    for g in 1..=3 {
        let p = dir.join(format!("game-{g:04}.jsonl"));
        assert!(
            p.exists() != err.contains(&format!("game {g}/3 lost")),
            "game {g}: kept or lost, not both or neither:\n{err}"
        );
        if p.exists() {
            kept.push(p);
        }
    }
    let refs: Vec<&Path> = kept.iter().map(|p| p.as_path()).collect();
    let v = verify(&refs);
    assert!(v.status.success(), "{}", text(&v.stdout));
    assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
}

#[test]
fn a_tournament_that_failed_before_any_game_leaves_no_tournament_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    let swiss = |extra: &[&str]| {
        referee()
            .args(["tournament", "--entrant", "a=inproc:random"])
            .args([
                "--entrant",
                "b=inproc:heuristic",
                "--entrant",
                "c=inproc:random",
            ])
            .args([
                "--entrant",
                "d=inproc:random",
                "--format",
                "swiss",
                "--rounds",
                "2",
            ])
            .args([
                "--seed",
                "4",
                "--seed-secret",
                crate::support::SECRET,
                "--jobs",
                "1",
                "--quiet",
                "--out",
            ])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    // Round 2 alone cannot be played before round 1: refused after the folder
    // was prepared.
    let failed = swiss(&["--round", "2"]);
    assert_eq!(failed.status.code(), Some(2), "{}", text(&failed.stderr));
    assert!(
        !out.exists() || files_under(&out).is_empty(),
        "{:?}",
        files_under(&out)
    );
    // The corrected run into the same folder plays.
    let rerun = swiss(&[]);
    assert!(rerun.status.success(), "{}", text(&rerun.stderr));
    assert!(out.join("standings.json").is_file());
}
