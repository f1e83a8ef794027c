//! A run's output folder: it proves how its games were played (the isolation
//! and limits in `tournament.json`, every transcript header and the page, and
//! `verify` prints them), only one run writes it at a time, and
//! `tournament --resume --out DIR` needs nothing but the folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::support::{referee, refused, scratch, stderr, stdout, succeeds};

/// Every file under `dir` with its bytes, in name order.
fn files_and_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            match e.file_type().unwrap().is_dir() {
                true => stack.push(e.path()),
                false => out.push((e.path(), std::fs::read(e.path()).unwrap_or_default())),
            }
        }
    }
    out.sort();
    out
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn header(transcript: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(transcript).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

fn transcripts(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir.join("games"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    found.sort();
    found
}

/// A sandboxed three-entrant tournament (two of them processes) with a page.
fn sandboxed(out: &Path) -> Command {
    let mut c = referee();
    c.args([
        "tournament",
        "--seed",
        "21",
        "--seed-secret",
        crate::support::SECRET,
        "--quiet",
        "--sandbox",
        "--page",
    ])
    .args([
        "--entrant",
        "a=builtin:random",
        "--entrant",
        "b=builtin:random",
    ])
    .args(["--entrant", "c=inproc:heuristic"])
    .args(["--limit-files", "64", "--decision-ms", "10000"])
    .arg("--out")
    .arg(out);
    c
}

#[test]
fn a_sandboxed_tournament_says_so_in_its_manifest_every_transcript_its_page_and_verify() {
    let out = scratch("folder", "sandboxed");
    succeeds(&mut sandboxed(&out));
    let manifest = json(&out.join("tournament.json"));
    let isolation = &manifest["isolation"];
    assert_eq!(isolation["sandbox"]["tool"], "bubblewrap", "{manifest:#}");
    let layers = isolation["sandbox"]["layers"].as_array().unwrap();
    assert!(layers.iter().any(|l| l == "seccomp"), "{isolation}");
    assert_eq!(isolation["limits"]["open_files"], 64, "{isolation}");
    assert!(manifest["referee"]
        .as_str()
        .unwrap()
        .starts_with("schmier-referee "));
    let games = transcripts(&out);
    assert_eq!(games.len(), 6);
    for g in &games {
        let h = header(g);
        assert_eq!(h["format"], "schmier-transcript/3", "{}", g.display());
        assert_eq!(&h["isolation"], isolation, "{}", g.display());
        assert_eq!(h["referee"], manifest["referee"]);
    }
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        page.contains("sandboxed by bubblewrap"),
        "the page names the sandbox"
    );
    assert!(page.contains("64 open files"), "and the limits");
    // verify prints the conditions once for the folder, each transcript agreeing.
    let v = crate::support::verify(&[&out]);
    let text = stdout(&v);
    assert_eq!(v.status.code(), Some(0), "{text}{}", stderr(&v));
    let said: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("played under"))
        .collect();
    assert_eq!(said.len(), 1, "{text}");
    assert!(said[0].contains("sandboxed by bubblewrap") && said[0].contains("64 open files"));
    assert_eq!(
        text.lines().filter(|l| l.starts_with("ok ")).count(),
        7,
        "{text}"
    );
    // And for one transcript on its own.
    let one = stdout(&crate::support::verify(&[&games[0]]));
    assert!(
        one.contains("played under: schmier-referee") && one.contains("sandboxed by bubblewrap"),
        "{one}"
    );

    // The same command line without --sandbox, resumed: refused by name.
    let again = sandboxed(&out);
    let args: Vec<String> = (again.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| a != "--sandbox")
        .collect();
    let mut unsandboxed = referee();
    unsandboxed.args(&args).arg("--resume");
    let before = std::fs::read(out.join("journal.jsonl")).unwrap();
    let err = refused(&mut unsandboxed);
    assert!(
        err.contains("--sandbox: not sandboxed in this run, sandboxed by bubblewrap"),
        "{err}"
    );
    assert!(!err.contains('{'), "plain words, no JSON: {err}");
    assert_eq!(std::fs::read(out.join("journal.jsonl")).unwrap(), before);
    // --resume --out DIR alone stays sandboxed: the folder says how.
    let mut alone = referee();
    alone
        .args(["tournament", "--resume", "-q", "--out"])
        .arg(&out);
    succeeds(&mut alone);
    assert_eq!(json(&out.join("tournament.json")), manifest);
}

#[test]
fn formats_1_and_2_still_verify_and_format_3_needs_its_isolation() {
    let done = crate::support::play().seed(5).inproc_bystanders().ok();
    let text = done.text(1);
    let (first, rest) = text.split_once('\n').unwrap();
    let mut h: serde_json::Value = serde_json::from_str(first).unwrap();
    assert!(h["isolation"].is_object(), "{h}");
    h.as_object_mut().unwrap().remove("isolation");
    let cut = |name: &str, h: &serde_json::Value| {
        let path = done.dir.join(name);
        std::fs::write(&path, format!("{h}\n{rest}")).unwrap();
        path
    };
    let without = cut("no-isolation.jsonl", &h);
    let v = crate::support::verify(&[&without]);
    assert_eq!(v.status.code(), Some(1), "{}", stdout(&v));
    assert!(stdout(&v).contains("no isolation"), "{}", stdout(&v));
    h["format"] = "schmier-transcript/2".into();
    let v2 = cut("format-2.jsonl", &h);
    let v = crate::support::verify(&[&v2]);
    assert_eq!(v.status.code(), Some(0), "{}", stdout(&v));
    assert!(
        stdout(&v).contains("isolation not recorded"),
        "{}",
        stdout(&v)
    );
    for tool in ["show", "diff"] {
        let mut c = referee();
        c.arg(tool).arg(&v2);
        if tool == "diff" {
            c.arg(done.transcript(1));
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
    }
}

/// The four-entrant tournament of `support::tournament_interrupted_after_matchup_0`,
/// with extra arguments (`--bot-env` for the gate).
fn four(out: &Path, extra: &[String]) -> Command {
    let mut c = referee();
    c.args([
        "tournament",
        "--jobs",
        "1",
        "--seed",
        "3",
        "--seed-secret",
        crate::support::SECRET,
        "-q",
    ])
    .args([
        "--entrant",
        "a=inproc:random",
        "--entrant",
        "b=inproc:random",
    ])
    .args(["--entrant", "c=inproc:heuristic"])
    .args([
        "--entrant",
        "g=python3 tests/tournament/gated_bot.py random",
    ])
    .args(["--startup-ms", "120000"])
    .args(extra)
    .arg("--out")
    .arg(out);
    c
}

/// The four-entrant tournament played undisturbed, once per test process.
fn undisturbed() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = scratch("folder", "undisturbed");
        succeeds(&mut four(&out, &[]));
        out
    })
}

/// The files that say what a tournament was: manifest, journal, standings and
/// every transcript, by name, with their bytes.
fn record(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = [
        "tournament.json",
        "journal.jsonl",
        "standings.json",
        "standings.csv",
    ]
    .iter()
    .map(|n| dir.join(n))
    .collect();
    files.extend(transcripts(dir));
    (files.iter())
        .map(|f| {
            let name = f.strip_prefix(dir).unwrap().display().to_string();
            (
                name,
                std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())),
            )
        })
        .collect()
}

fn assert_same_tournament(dir: &Path) {
    let (got, want) = (record(dir), record(undisturbed()));
    let names = |r: &[(String, Vec<u8>)]| r.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&want));
    assert_eq!(got.len(), 4 + 24);
    for ((name, a), (_, b)) in got.iter().zip(&want) {
        assert!(a == b, "{name} differs from the undisturbed run's");
    }
}

#[test]
fn resume_with_only_the_folder_finishes_an_interrupted_tournament() {
    let out = scratch("folder", "resume-alone");
    let done = crate::support::tournament_interrupted_after_matchup_0(&out);
    assert_eq!(done.status.code(), Some(130), "{}", stderr(&done));
    // A flag that differs from the folder is refused by name, both values in words.
    let mut differs = referee();
    differs
        .args(["tournament", "--resume", "--decision-ms", "500", "--out"])
        .arg(&out);
    let err = refused(&mut differs);
    assert!(
        err.contains("--decision-ms: 500 in this run, 1000 in the folder"),
        "{err}"
    );
    let mut entrants = four(&out, &[]);
    entrants.args(["--entrant", "h=inproc:heuristic", "--resume"]);
    let err = refused(&mut entrants);
    assert!(
        err.contains("the entrants: a (inproc:random), b (inproc:random), c (inproc:heuristic), g (python3 tests/tournament/gated_bot.py random), h (inproc:heuristic) in this run, a (inproc:random)"),
        "{err}"
    );
    assert!(
        !err.contains('{') && !err.contains('"'),
        "plain words: {err}"
    );
    // Nothing else: the folder holds every setting (no gate now: the
    // environment is not part of the tournament).
    let mut alone = referee();
    alone
        .args(["tournament", "--resume", "-q", "--out"])
        .arg(&out);
    succeeds(&mut alone);
    assert_same_tournament(&out);
}

/// Runs `cmd` with the gate closed until `hold` returns, then opens it and
/// waits for the run's end.
fn held_while(out: &Path, hold: impl FnOnce()) -> Output {
    let gate = PathBuf::from(format!("{}.gate", out.display()));
    std::fs::write(&gate, b"closed").unwrap();
    let waiting = PathBuf::from(format!("{}.waiting", gate.display()));
    let env = vec![
        "--bot-env".to_owned(),
        format!("SCHMIER_TEST_GATE={}", gate.display()),
    ];
    let mut child = four(out, &env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::support::wait_while_running(&mut child, "its gated bot waited", || waiting.exists());
    hold();
    std::fs::remove_file(&gate).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_second_run_into_a_folder_in_use_exits_2_at_once_and_changes_nothing() {
    let out = scratch("folder", "in-use");
    let first = held_while(&out, || {
        let snapshot = files_and_bytes(&out);
        let in_use = |c: &mut Command| {
            let err = refused(c);
            let want = format!("{} is in use by another referee run (pid ", out.display());
            assert!(err.contains(&want) && err.contains(", since "), "{err}");
        };
        let mut resume = referee();
        resume
            .args(["tournament", "--resume", "-q", "--out"])
            .arg(&out);
        in_use(&mut resume);
        in_use(&mut four(&out, &["--resume".to_owned()]));
        // `play` is refused the folder as it validates its flags: a
        // tournament's folder is never one it writes, in use or not.
        let mut play = referee();
        play.args(["play", "--seed", "1", "-q", "--transcript"])
            .arg(&out);
        let err = refused(&mut play);
        assert!(err.contains("is a tournament's folder"), "{err}");
        let mut sprt = referee();
        sprt.args([
            "sprt",
            "--new",
            "inproc:random",
            "--base",
            "inproc:random",
            "-q",
            "--out",
        ])
        .arg(&out);
        in_use(&mut sprt);
        let mut merge = referee();
        merge.args(["merge", "--out"]).arg(&out).arg(&out);
        in_use(&mut merge);
        assert!(
            files_and_bytes(&out) == snapshot,
            "a refused run changed the folder"
        );
    });
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        !out.join("referee.lock").exists(),
        "the lock goes with its run"
    );
    assert_same_tournament(&out);
}

#[test]
fn play_refuses_a_tournament_folder_and_a_tournament_a_play_folder() {
    let dir = scratch("folder", "kinds");
    let t = dir.join("t");
    let mut tournament = referee();
    tournament
        .args([
            "tournament",
            "--seed",
            "2",
            "--seed-secret",
            crate::support::SECRET,
            "-q",
            "--fill",
            "inproc:random",
        ])
        .args(["--entrant", "a=inproc:heuristic", "--out"])
        .arg(&t);
    succeeds(&mut tournament);
    for target in [t.clone(), t.join("games"), t.join("extra.jsonl")] {
        let before = files_and_bytes(&t);
        let mut play = referee();
        play.args(["play", "--seed", "1", "-q", "--transcript"])
            .arg(&target);
        let err = refused(&mut play);
        assert!(
            err.contains("is a tournament's folder")
                || err.contains("is inside the tournament folder"),
            "{}: {err}",
            target.display()
        );
        assert!(files_and_bytes(&t) == before, "{}", target.display());
    }
    let p = dir.join("p");
    let mut play = referee();
    play.args(["play", "--seed", "1", "-q", "--transcript"])
        .arg(&p);
    succeeds(play.args([
        "--team",
        "inproc:random",
        "--team",
        "inproc:random",
        "--team",
        "inproc:random",
    ]));
    let mut into_play = referee();
    into_play
        .args([
            "tournament",
            "--seed",
            "2",
            "--seed-secret",
            crate::support::SECRET,
            "-q",
            "--fill",
            "inproc:random",
        ])
        .args(["--entrant", "a=inproc:heuristic", "--out"])
        .arg(&p);
    let err = refused(&mut into_play);
    assert!(
        err.contains("holds a `referee play` match (game-0001.jsonl)"),
        "{err}"
    );
    let err = refused(into_play.arg("--overwrite"));
    assert!(err.contains("holds a `referee play` match"), "{err}");
    let mut resume = referee();
    resume.args(["tournament", "--resume", "--out"]).arg(&p);
    let err = refused(&mut resume);
    assert!(
        err.contains("failed to resume") && err.contains("`referee play` match"),
        "{err}"
    );
}
