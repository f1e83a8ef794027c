//! Issue 45's smaller findings, each seen in a new user's first hour and each
//! pinned here by what that user ran and read: a command given the wrong
//! folder says what the folder is, a sandboxed `--scratch` leaves nothing on
//! the host, `verify` tells apart two entrants that run one bot, one core is
//! "1 core". (Elsewhere: the SPRT's forfeits in `sprt.rs`, the replay page's
//! fragment in `replay_page.rs`, `play`'s drawn seed in
//! `first_hour_messages.rs`, PROTOCOL.md's header fields in `docs.rs`.)

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{referee, refused, stderr, stdout, succeeds};

fn scratch(name: &str) -> PathBuf {
    crate::support::scratch("smaller-findings", name)
}

/// A finished round robin of three in-process entrants in `out` (six games),
/// `a` and `b` both the random bot: the command, to add flags to.
fn tournament(out: &Path) -> Command {
    let mut c = referee();
    c.args(["tournament", "-q", "--jobs", "1", "--seed", "1"])
        .args(["--seed-secret", crate::support::SECRET])
        .args([
            "--entrant",
            "a=inproc:random",
            "--entrant",
            "b=inproc:random",
        ])
        .args(["--entrant", "c=inproc:heuristic", "--out"])
        .arg(out);
    c
}

/// Every file beneath `dir`, relative to it, sorted: what a refused command
/// must leave as it was.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn resuming_a_tournament_as_an_sprt_or_an_sprt_as_a_tournament_names_what_the_folder_is() {
    let t = scratch("resume-kind-tournament");
    succeeds(&mut tournament(&t));
    let before = tree(&t);
    let with_bots = ["--new", "inproc:random", "--base", "inproc:heuristic"];
    for extra in [&[][..], &with_bots[..]] {
        let err = refused(
            referee()
                .args(["sprt", "--resume", "--out"])
                .arg(&t)
                .args(extra),
        );
        assert!(
            err.contains(&format!(
                "failed to resume: {} holds a tournament, not an SPRT; `referee tournament \
                 --resume --out {}` continues it",
                t.display(),
                t.display()
            )),
            "{err}"
        );
        // Not its settings blamed: they were never the matter.
        assert!(
            !err.contains("--alpha") && !err.contains("different"),
            "{err}"
        );
    }
    assert_eq!(tree(&t), before, "a refused resume writes nothing");

    let s = scratch("resume-kind-sprt");
    succeeds(
        referee()
            .args([
                "sprt",
                "-q",
                "--max-sets",
                "1",
                "--seed",
                "1",
                "--jobs",
                "1",
            ])
            .args(with_bots)
            .arg("--out")
            .arg(&s),
    );
    let before = tree(&s);
    let err = refused(referee().args(["tournament", "--resume", "--out"]).arg(&s));
    assert!(
        err.contains(&format!(
            "failed to resume: {} holds an SPRT (`referee sprt`), not a tournament; `referee \
             sprt --resume --out {}` continues it",
            s.display(),
            s.display()
        )),
        "{err}"
    );
    assert_eq!(tree(&s), before);
}

#[test]
fn an_out_inside_a_tournament_folder_is_refused_and_show_counts_only_its_games() {
    let t = scratch("nested");
    succeeds(&mut tournament(&t));
    for inner in [t.join("inner"), t.join("games/deeper/still")] {
        let err = refused(&mut tournament(&inner));
        assert!(
            err.contains(&format!(
                "failed to start: --out {} is inside the tournament folder {}",
                inner.display(),
                t.display()
            )),
            "{err}"
        );
        assert!(!inner.exists(), "a refused run creates nothing");
        let err = refused(
            referee()
                .args(["sprt", "--new", "inproc:random", "--base", "inproc:random"])
                .arg("--out")
                .arg(&inner),
        );
        assert!(err.contains("is inside the tournament folder"), "{err}");
        assert!(!inner.exists());
    }
    // A folder beside it is fine.
    succeeds(&mut tournament(&t.with_file_name("nested-beside")));
    // A tournament nested there before this was refused is not counted as
    // the outer one's games.
    let copy = t.with_file_name("nested-copy");
    crate::support::copy_dir(&t, &copy);
    std::fs::rename(&copy, t.join("old-copy")).unwrap();
    let err = refused(referee().arg("show").arg(&t));
    assert!(err.contains("(6 game(s) in the folder)"), "{err}");
}

#[test]
fn verify_names_a_tournament_s_teams_by_their_entrants() {
    let t = scratch("verify-names");
    succeeds(
        referee()
            .args(["tournament", "-q", "--jobs", "1", "--seed", "1"])
            .args([
                "--entrant",
                "random=inproc:random",
                "--entrant",
                "b=inproc:random",
            ])
            .args(["--entrant", "c=inproc:heuristic", "--out"])
            .arg(&t),
    );
    let out = succeeds(referee().arg("verify").arg(&t));
    let said = stdout(&out);
    let games: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("ok ") && l.contains("/games/"))
        .collect();
    assert_eq!(games.len(), 6, "{said}");
    for line in games {
        // "random" is both an entrant's name and its bot's: said once. The
        // other random bot is entrant b.
        for team in ["random ", "b (random) ", "c (heuristic) "] {
            assert!(line.contains(team), "{team:?}: {line}");
        }
        assert!(!line.contains('#'), "{line}");
    }
    // A play folder's teams are still its bots', numbered apart.
    let done = crate::support::play().seed(3).inproc_bystanders().ok();
    let said = stdout(&succeeds(referee().arg("verify").arg(&done.dir)));
    assert!(
        said.contains("random #1") && said.contains("random #2"),
        "{said}"
    );
}

#[test]
fn a_sandboxed_scratch_makes_no_folder_on_the_host() {
    let dir = scratch("sandboxed-scratch");
    let sc = dir.join("scratch");
    let out = dir.join("t");
    // Built-in bots: each its own sandboxed process, with a /scratch.
    succeeds(
        referee()
            .args([
                "tournament",
                "-q",
                "--jobs",
                "1",
                "--seed",
                "1",
                "--sandbox",
            ])
            .args([
                "--entrant",
                "a=builtin:random",
                "--entrant",
                "b=builtin:random",
            ])
            .args(["--entrant", "c=builtin:heuristic", "--scratch"])
            .arg(&sc)
            .arg("--out")
            .arg(&out),
    );
    assert_eq!(
        tree(&sc),
        Vec::<PathBuf>::new(),
        "nothing made in --scratch"
    );
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(out.join("games/r00-m0000-g001.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        header["isolation"]["scratch"], true,
        "the bots had a /scratch"
    );

    // That a sandboxed bot still writes to its /scratch: spy.rs,
    // each_bot_writes_to_its_own_scratch_and_sees_its_partners_only_unsandboxed.
}

#[test]
fn play_into_a_tournament_folder_is_refused_before_it_says_anything_else() {
    let t = scratch("play-into");
    succeeds(&mut tournament(&t));
    for (into, said) in [
        (
            t.clone(),
            format!("{} is a tournament's folder", t.display()),
        ),
        (
            t.join("games/mine"),
            format!(
                "{} is inside the tournament folder {}",
                t.join("games/mine").display(),
                t.display()
            ),
        ),
    ] {
        // No --seed: a seed is drawn, and must not be printed for a run that
        // never started.
        let err = refused(referee().args(["play", "--transcript"]).arg(&into));
        assert_eq!(
            err,
            format!(
                "referee: failed to start: {said} (it holds tournament.json); `referee play` \
                 writes a folder of its own: choose another --transcript\n"
            ),
        );
    }
    assert!(!t.join("games/mine").exists());
    // The working folder is looked at too.
    let err = refused(
        referee()
            .current_dir(&t)
            .args(["play", "--transcript", "g.jsonl"]),
    );
    assert!(err.contains(". is a tournament's folder"), "{err}");
}

#[test]
fn one_core_is_one_core_in_verify_and_on_the_page() {
    let dir = scratch("one-core");
    let done = crate::support::play()
        .seed(3)
        .inproc_bystanders()
        .args(["--limit-cpus", "1"])
        .ok();
    let said = stdout(&succeeds(referee().arg("verify").arg(&done.dir)));
    assert!(said.contains("limits: 1 core, stderr log"), "{said}");
    assert!(!said.contains("1 cores"), "{said}");
    let t = dir.join("t");
    succeeds(tournament(&t).args(["--limit-cpus", "1"]));
    let page = dir.join("page.html");
    succeeds(referee().arg("show").arg(&t).arg("--html").arg(&page));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("1 core,") && !html.contains("1 cores"),
        "{html}"
    );
}

#[test]
fn show_given_another_file_says_it_is_no_transcript_and_what_show_takes() {
    let dir = scratch("show-readme");
    std::fs::create_dir_all(&dir).unwrap();
    let readme = dir.join("README.md");
    std::fs::write(&readme, "# My bot\n\nIt plays.\n").unwrap();
    let err = refused(referee().arg("show").arg(&readme));
    assert!(
        err.contains(&format!(
            "failed to read {}:1: not a transcript: its first line is not JSON; a transcript \
             is one game's .jsonl file",
            readme.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("`referee show` takes a transcript, or a tournament's folder"),
        "{err}"
    );
    assert!(!err.contains("expected value at line 1"), "{err}");
    // JSON that is not a transcript is told apart from a cut-off one.
    let json = dir.join("bot.json");
    std::fs::write(&json, "{\"name\": \"mine\"}\n").unwrap();
    let err = refused(referee().arg("show").arg(&json));
    assert!(
        err.contains("its first line is JSON, but not a transcript's header"),
        "{err}"
    );
    // A transcript cut off inside its first line still says so.
    let cut = dir.join("cut.jsonl");
    let done = crate::support::play().seed(3).inproc_bystanders().ok();
    let text = std::fs::read_to_string(done.transcript(1)).unwrap();
    std::fs::write(&cut, &text[..40]).unwrap();
    let err = stderr(&referee().arg("show").arg(&cut).output().unwrap());
    assert!(
        err.contains("the file ends inside a line (cut off?)"),
        "{err}"
    );
}
