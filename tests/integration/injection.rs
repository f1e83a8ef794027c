//! What a transcript, a journal, a `tournament.json` or a tournament file
//! carries is data wherever the organiser reads it: none of its control
//! characters reaches a terminal through `verify`, `verify DIR` or `diff` (the
//! header's strings are anyone's to edit, and the file still verifies), and no
//! entrant's name becomes a formula in `standings.csv`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::names::controls;
use crate::support::{play, referee, scratch, succeeds};

/// An OSC that retitles the window (ended by BEL), erase screen, a C1 CSI.
const HOSTILE: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}1A";

/// The referee's output of `args`, its status, and both streams checked for
/// control characters; returns stdout and stderr together.
fn clean(args: &[&Path], what: &str) -> (Output, String) {
    let out = referee().args(args).output().expect("the referee runs");
    let mut said = String::new();
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let found = controls(&text);
        assert!(
            found.is_empty(),
            "{what}: {stream} carries {found:?}:\n{text}"
        );
        said += &text;
    }
    (out, said)
}

/// The header strings a referee declares and nobody checks, each given
/// `HOSTILE`: the referee's version, the sandbox's tool and layers (an
/// unsandboxed game now claims one), every seat's command.
fn taint(header: &mut Value) {
    let referee = header["referee"].as_str().unwrap().to_owned();
    header["referee"] = json!(format!("{referee}{HOSTILE}"));
    header["isolation"]["sandbox"] = sandbox_claimed();
    for seat in header["seats"].as_array_mut().unwrap() {
        let command = seat["command"].as_str().unwrap().to_owned();
        seat["command"] = json!(format!("{command}{HOSTILE}"));
    }
}

fn sandbox_claimed() -> Value {
    json!({
        "tool": format!("bubblewrap{HOSTILE}"),
        "layers": [format!("namespaces{HOSTILE}"), "seccomp"],
        "tmpfs_bytes": 64u64 << 20,
    })
}

/// `path`'s transcript with its header rewritten by `edit`.
fn rewrite_header(path: &Path, edit: impl Fn(&mut Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(first).unwrap();
    edit(&mut header);
    std::fs::write(path, format!("{header}\n{rest}")).unwrap();
}

#[test]
fn a_transcript_whose_header_carries_escapes_verifies_and_neither_verify_nor_diff_prints_them() {
    let done = play().seed(7).ok();
    let dir = tempfile::tempdir().unwrap();
    let tainted = dir.path().join("tainted.jsonl");
    std::fs::copy(done.transcript(1), &tainted).unwrap();
    rewrite_header(&tainted, taint);

    let (out, said) = clean(&[Path::new("verify"), &tainted], "verify");
    assert!(
        out.status.success(),
        "the edited file still verifies:\n{said}"
    );
    // Shown, escaped, and what verify cannot tell is said: this unsandboxed
    // game reads "sandboxed by bubblewrap", as its header declares.
    assert!(
        said.contains("sandboxed by bubblewrap\\u{1b}]0;owned\\u{7}"),
        "{said}"
    );
    assert!(
        said.contains("referee that wrote the file declared"),
        "{said}"
    );
    assert!(said.contains("not that record"), "{said}");

    let (out, said) = clean(&[Path::new("diff"), &done.transcript(1), &tainted], "diff");
    assert!(out.status.success(), "the same game:\n{said}");
    assert!(
        said.contains("\\u{1b}[2J\\u{9b}1A"),
        "the notes quote the commands:\n{said}"
    );
}

/// A three-entrant tournament (one duplicate set) into a fresh folder, from a
/// tournament file whose entrants' names a spreadsheet would evaluate.
fn formula_tournament(name: &str) -> PathBuf {
    let out = scratch("injection", name);
    let file = out.with_extension("toml");
    std::fs::write(
        &file,
        "seed = 11\nsets = 1\n\
         [[entrant]]\nname = '=HYPERLINK(\"http://evil.example\",\"standings\")'\ncommand = \"builtin:random\"\n\
         [[entrant]]\nname = \"@SUM(1+1)\"\ncommand = \"builtin:random\"\n\
         [[entrant]]\nname = \"-2+3\"\ncommand = \"builtin:heuristic\"\n",
    )
    .unwrap();
    succeeds(
        referee()
            .arg("tournament")
            .arg(&file)
            .args(["--jobs", "1", "-q", "--out"])
            .arg(&out),
    );
    out
}

#[test]
fn a_tournament_folder_whose_files_carry_escapes_prints_none_of_them() {
    let dir = formula_tournament("escapes");
    let games = dir.join("games");
    let untouched = dir.with_extension("games");
    crate::support::copy_dir(&games, &untouched);
    let manifest = dir.join("tournament.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let referee_version = m["referee"].as_str().unwrap().to_owned();
    m["referee"] = json!(format!("{referee_version}{HOSTILE}"));
    m["isolation"]["sandbox"] = sandbox_claimed();
    for e in m["entrants"].as_array_mut().unwrap() {
        let command = e["command"].as_str().unwrap().to_owned();
        e["command"] = json!(format!("{command}{HOSTILE}"));
    }
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let mut transcripts: Vec<PathBuf> = std::fs::read_dir(&games)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    transcripts.sort();
    assert_eq!(transcripts.len(), 6);
    for t in &transcripts {
        rewrite_header(t, taint);
    }

    let (out, said) = clean(&[Path::new("verify"), &dir], "verify DIR");
    assert!(
        out.status.success(),
        "the edited folder still verifies:\n{said}"
    );
    assert_eq!(
        said.matches("ok ").count(),
        7,
        "six games and the journal:\n{said}"
    );
    assert!(
        said.contains(&format!("{referee_version}\\u{{1b}}]0;owned")),
        "{said}"
    );
    assert!(
        said.contains("referee that wrote the file declared"),
        "{said}"
    );

    // One seat's command differs from its entrant's: the journal check quotes
    // both, escaped.
    rewrite_header(&transcripts[0], |h| {
        h["seats"][0]["command"] = json!(format!("other{HOSTILE}"));
    });
    let (out, said) = clean(&[Path::new("verify"), &dir], "verify DIR (a mismatch)");
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("the transcript has other\\u{1b}]0;owned"),
        "{said}"
    );

    let (_, said) = clean(&[Path::new("diff"), &untouched, &games], "diff DIR");
    assert!(
        said.contains("\\u{1b}[2J\\u{9b}1A"),
        "the notes quote the commands:\n{said}"
    );
}

#[test]
fn an_entrant_named_as_a_formula_is_text_in_standings_csv_and_the_figures_stay_numbers() {
    let dir = formula_tournament("csv");
    let csv_text = std::fs::read_to_string(dir.join("standings.csv")).unwrap();
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(csv_text.as_bytes());
    let head: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3, "{csv_text}");
    let mut names: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "'-2+3",
            "'=HYPERLINK(\"http://evil.example\",\"standings\")",
            "'@SUM(1+1)"
        ],
        "{csv_text}"
    );
    let mut negative = 0;
    for row in &rows {
        for (column, cell) in head.iter().zip(row.iter()) {
            if column == "name" || column == "faults" {
                continue;
            }
            let n: f64 = cell
                .parse()
                .unwrap_or_else(|_| panic!("{column} = {cell:?} is not a number:\n{csv_text}"));
            negative += usize::from(n < 0.0);
        }
    }
    assert!(
        negative > 0,
        "a negative figure (a duplicate score) is written as a number:\n{csv_text}"
    );
    // standings.json keeps the name as given.
    let json = std::fs::read_to_string(dir.join("standings.json")).unwrap();
    assert!(json.contains("\"name\": \"@SUM(1+1)\""), "{json}");
}
