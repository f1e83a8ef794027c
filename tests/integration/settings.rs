//! One configuration for `play` and `tournament`: the tournament takes every
//! table flag of `play`, a flag beats the tournament file's value in both
//! directions, duplicate entrant names are refused; entrants are checked before
//! the first game, and one that cannot start ranks last with --keep-going.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::stderr;

fn referee(args: &[&str]) -> Output {
    crate::support::referee()
        .args(args)
        .output()
        .expect("the referee runs")
}

/// Every long flag a `--help` text lists (`--name`, as it starts an option line).
fn flags(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-q, ").unwrap_or(l);
            let name = l.strip_prefix("--")?;
            let end = name.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'));
            Some(name[..end.unwrap_or(name.len())].to_owned())
        })
        .collect()
}

/// `play`'s flags that choose a lineup or a match rather than how a table
/// runs; a tournament has its own for those (--entrant, --sets, --out, and
/// duplicate sets that rotate the entrants).
const PLAY_ONLY: [&str; 5] = ["team", "seat", "games", "transcript", "no-rotate"];

#[test]
fn tournament_help_lists_every_table_flag_of_play() {
    let play = String::from_utf8(referee(&["play", "--help"]).stdout).unwrap();
    let tournament = String::from_utf8(referee(&["tournament", "--help"]).stdout).unwrap();
    let (play, tournament) = (flags(&play), flags(&tournament));
    for f in PLAY_ONLY {
        assert!(play.contains(&f.to_owned()), "play has --{f}: {play:?}");
    }
    let table: Vec<&String> = play
        .iter()
        .filter(|f| !PLAY_ONLY.contains(&f.as_str()))
        .collect();
    let missing: Vec<&&String> = table.iter().filter(|f| !tournament.contains(f)).collect();
    assert!(missing.is_empty(), "tournament --help lacks {missing:?}");
    // The flags the issue named, so the comparison cannot pass on a short list.
    for f in [
        "max-faults",
        "no-restart",
        "grace-ms",
        "no-timeouts",
        "max-line-bytes",
        "stderr-cap",
        "keep-going",
        "overwrite",
        "sandbox",
        "no-sandbox",
    ] {
        assert!(table.iter().any(|t| *t == f), "play lacks --{f}");
    }
    assert!(table.len() >= 30, "{} flags compared", table.len());
    // `sprt` flattens the same table flags.
    let sprt = flags(&String::from_utf8(referee(&["sprt", "--help"]).stdout).unwrap());
    let missing: Vec<&&String> = table.iter().filter(|f| !sprt.contains(f)).collect();
    assert!(missing.is_empty(), "sprt --help lacks {missing:?}");
}

fn scratch(name: &str) -> PathBuf {
    let dir = crate::support::scratch("settings", name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const ENTRANTS: &str = "[[entrant]]\nname = \"a\"\ncommand = \"inproc:random\"\n\
    [[entrant]]\nname = \"b\"\ncommand = \"inproc:heuristic\"\n\
    [[entrant]]\nname = \"c\"\ncommand = \"inproc:random\"\n";

/// Runs the tournament of `file` (TOML) with `flags`; its manifest.
fn manifest(dir: &Path, file: &str, flags: &[&str]) -> serde_json::Value {
    let toml = dir.join("t.toml");
    std::fs::write(&toml, format!("seed = 7\njobs = 1\n{file}{ENTRANTS}")).unwrap();
    let out = dir.join("out");
    let mut args = vec!["tournament", toml.to_str().unwrap(), "-q"];
    args.extend(["--out", out.to_str().unwrap()]);
    args.extend(flags);
    let run = referee(&args);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = std::fs::read_to_string(out.join("tournament.json")).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_flag_beats_the_files_value_in_both_directions() {
    let dir = scratch("override");
    let on = "stick_the_dealer = true\nno_timeouts = true\ndecision_ms = 2000\n";
    let off = "stick_the_dealer = false\nno_timeouts = false\ndecision_ms = 2000\n";
    let rules = |m: &serde_json::Value| m["rules"]["stick_the_dealer"].as_bool().unwrap();
    let decision = |m: &serde_json::Value| m["time_control"]["decision_ms"].as_u64();

    // The file alone.
    let m = manifest(&dir, on, &[]);
    assert!(rules(&m));
    assert_eq!(decision(&m), None, "no_timeouts = true: no decision limit");
    let m = manifest(&dir, off, &[]);
    assert!(!rules(&m));
    assert_eq!(decision(&m), Some(2000));

    // Flags turn the file's `true` off ...
    let m = manifest(&dir, on, &["--no-stick-the-dealer", "--timeouts"]);
    assert!(!rules(&m));
    assert_eq!(decision(&m), Some(2000));
    // ... its `false` on ...
    let m = manifest(&dir, off, &["--stick-the-dealer", "--no-timeouts"]);
    assert!(rules(&m));
    assert_eq!(decision(&m), None);
    // ... and replace a number.
    let m = manifest(&dir, off, &["--decision-ms", "3000"]);
    assert_eq!(decision(&m), Some(3000));
}

#[test]
fn duplicate_entrant_names_are_refused() {
    let dir = scratch("duplicates");
    let out = dir.join("out");
    let flags = referee(&[
        "tournament",
        "--entrant",
        "a=inproc:random",
        "--entrant",
        "b=inproc:random",
        "--entrant",
        "a=inproc:heuristic",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(flags.status.code(), Some(2), "{}", stderr(&flags));
    assert!(
        stderr(&flags).contains("two entrants are named \"a\""),
        "{}",
        stderr(&flags)
    );
    let toml = dir.join("t.toml");
    std::fs::write(&toml, ENTRANTS).unwrap();
    let both = referee(&[
        "tournament",
        toml.to_str().unwrap(),
        "--entrant",
        "b=inproc:random",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(
        stderr(&both).contains("two entrants are named \"b\""),
        "{}",
        stderr(&both)
    );
    assert!(!out.exists(), "nothing written");
}

#[test]
fn an_entrant_that_cannot_start_stops_the_tournament_before_any_game() {
    let dir = scratch("unstarted");
    let out = dir.join("out");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "tournament",
            "--entrant",
            "a=inproc:random",
            "--entrant",
            "b=inproc:random",
            "--entrant",
            "broken=no-such-bot-program",
            "--seed",
            "1",
            "--seed-secret",
            crate::support::SECRET,
            "--policy",
            "lenient",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        referee(&args)
    };
    let refused = run(&[]);
    let text = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{text}");
    assert!(
        text.contains("entrant \"broken\" (no-such-bot-program) failed to start: not found"),
        "{text}"
    );
    assert!(!out.exists(), "nothing written before the refusal");

    // --keep-going plays; the fallback in its seats wins games (lenient: no
    // forfeits), yet the entrant that never started ranks last.
    let played = run(&["--keep-going"]);
    assert!(played.status.success(), "{}", stderr(&played));
    let standings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    let rows = standings["entrants"].as_array().unwrap();
    let last = rows.last().unwrap();
    assert_eq!(last["name"], "broken", "{standings:#}");
    assert_eq!(last["never_started"], true);
    assert_eq!(last["faults"]["start"], 2 * last["games"].as_u64().unwrap());
    assert!(last["faults"].get("crash").is_none(), "{standings:#}");
    let better = |r: &serde_json::Value| {
        let key = |r: &serde_json::Value| {
            (
                r["win_rate"].as_f64().unwrap(),
                r["duplicate_score"].as_f64().unwrap(),
            )
        };
        key(last) > key(r)
    };
    assert!(
        rows.iter().any(better),
        "the fallback out-scored nobody, so the test shows nothing: {standings:#}"
    );
}

#[test]
fn an_interrupted_tournament_writes_partial_standings_and_exits_130() {
    let dir = scratch("partial");
    let out = dir.join("out");
    let done = crate::support::tournament_interrupted_after_matchup_0(&out);
    assert_eq!(done.status.code(), Some(130), "{}", stderr(&done));
    let partial: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.partial.json")).unwrap())
            .unwrap();
    assert_eq!(partial["games"], 6, "{partial:#}");
    assert!(!out.join("standings.json").exists());
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        stdout.contains("PARTIAL standings after 6 games"),
        "{stdout}"
    );
}

#[test]
fn overwrite_replaces_a_tournament_and_nothing_else() {
    let dir = scratch("overwrite");
    let out = dir.join("out");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "tournament",
            "--fill",
            "inproc:random",
            "--seed",
            "2",
            "--seed-secret",
            crate::support::SECRET,
            "-q",
        ];
        args.extend([
            "--entrant",
            "a=inproc:heuristic",
            "--out",
            out.to_str().unwrap(),
        ]);
        args.extend(extra);
        referee(&args)
    };
    assert!(run(&[]).status.success());
    let again = run(&[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("is not empty"),
        "{}",
        stderr(&again)
    );
    let replaced = run(&["--overwrite"]);
    assert!(replaced.status.success(), "{}", stderr(&replaced));
    assert!(out.join("standings.json").exists());
    // A folder that holds no tournament is never emptied.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let refused = referee(&[
        "tournament",
        "--fill",
        "inproc:random",
        "--seed",
        "2",
        "--seed-secret",
        crate::support::SECRET,
        "-q",
        "--overwrite",
        "--entrant",
        "a=inproc:heuristic",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("holds no tournament"),
        "{}",
        stderr(&refused)
    );
    assert!(other.join("notes.txt").exists());
}
