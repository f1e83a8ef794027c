//! What a finished run leaves on disk is exactly what `layout.rs` names: every
//! file of a real play folder and a real tournament folder is one the layout
//! knows, each kind the run must write is there as often as it must be, and
//! nothing half-written (`*.partial`) or unnamed is left beside them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use referee::layout::{self, Kind, Output};

use crate::support::{play, referee};

/// Every file under `dir`, recursively, in name order.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            match e.file_type().unwrap().is_dir() {
                true => todo.push(e.path()),
                false => found.push(e.path()),
            }
        }
    }
    found.sort();
    found
}

/// How many files of each kind; panics naming any file the layout does not
/// name (a `.partial` among them: the layout names finished files only).
fn census(files: &[PathBuf], kind: impl Fn(&Path) -> Option<Kind>) -> BTreeMap<String, usize> {
    let mut count = BTreeMap::new();
    for f in files {
        assert!(
            !f.to_string_lossy().ends_with(layout::PARTIAL),
            "a finished run left a half-written file: {}",
            f.display()
        );
        let Some(k) = kind(f) else {
            panic!("{} is not a file the layout names", f.display());
        };
        *count.entry(format!("{k:?}")).or_insert(0) += 1;
    }
    count
}

#[test]
fn a_play_folder_holds_only_what_the_layout_names() {
    // Bot processes (not in-process bots), so there are stderr logs too.
    let done = play()
        .seed(11)
        .args(["--games", "2"])
        .team("builtin:random")
        .team("builtin:heuristic")
        .team("builtin:random")
        .ok();
    let out = Output::Dir(done.dir.clone());
    let files = files_under(&done.dir);
    let count = census(&files, |f| out.kind(f));
    assert_eq!(count.get("Transcript"), Some(&2), "{files:#?}");
    assert_eq!(count.get("Timings"), Some(&2), "{files:#?}");
    // Six processes, one log each (an empty one is kept once games were played).
    assert_eq!(count.get("StderrLog"), Some(&6), "{files:#?}");
    assert_eq!(count.len(), 3, "{count:?}");
}

#[test]
fn a_tournament_folder_holds_only_what_the_layout_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let run = referee()
        .args([
            "tournament",
            "--seed",
            "12",
            "--jobs",
            "1",
            "--quiet",
            "--page",
        ])
        .args([
            "--entrant",
            "a=builtin:random",
            "--entrant",
            "b=inproc:heuristic",
        ])
        .args(["--entrant", "c=inproc:random", "--decision-ms", "10000"])
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let files = files_under(&dir);
    let count = census(&files, |f| {
        layout::tournament::kind(f.strip_prefix(&dir).unwrap())
    });
    // One duplicate set: six games, each with its timings; with --page the
    // page, a replay page per game, and their script and style.
    let want = [
        ("Journal", 1),
        ("Manifest", 1),
        ("SeedSecret", 1),
        ("Standings", 2),
        ("Timings", 6),
        ("Transcript", 6),
        ("Page", 9),
    ];
    for (kind, n) in want {
        assert_eq!(count.get(kind), Some(&n), "{kind}: {files:#?}");
    }
    // Entrant a's two seats run as processes: their logs, in the table's folder.
    assert!(
        count.get("StderrLog").is_some_and(|&n| n >= 2),
        "{files:#?}"
    );
    assert_eq!(
        count.get("PartialStandings"),
        None,
        "a complete run keeps none"
    );
    assert_eq!(count.len(), want.len() + 1, "{count:?}");
}

#[test]
fn an_interrupted_tournament_folder_holds_only_what_the_layout_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let done = crate::support::tournament_interrupted_after_matchup_0(&dir);
    assert_eq!(
        done.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let files = files_under(&dir);
    let count = census(&files, |f| {
        layout::tournament::kind(f.strip_prefix(&dir).unwrap())
    });
    for (kind, n) in [("Journal", 1), ("Manifest", 1), ("PartialStandings", 1)] {
        assert_eq!(count.get(kind), Some(&n), "{kind}: {files:#?}");
    }
    assert_eq!(count.get("Transcript"), Some(&6), "matchup 0: {files:#?}");
    assert_eq!(
        count.get("Standings"),
        None,
        "an interrupted run is not complete"
    );
}
