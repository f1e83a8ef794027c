//! `referee schema`: the checked-in `schema/` files are what the code generates.
//! When a message or transcript type changes, this fails until the files are
//! regenerated (`cargo run -p referee -- schema`) and the change is reviewed.
//! Real sessions are checked against the files with an independent validator
//! (Python `jsonschema`, `tests/tools/validate_schema.py`).

use std::path::Path;
use std::process::Command;

use crate::support::{play, referee, root};

const FILES: [&str; 5] = [
    "to-bot.json",
    "from-bot.json",
    "transcript-line.json",
    "timings-line.json",
    "standings.json",
];

#[test]
fn checked_in_schema_files_match_the_code() {
    let out = referee()
        .args(["schema", "--check"])
        .arg(root().join("schema"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "schema/ is out of date; run `cargo run -p referee -- schema` and review the diff:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Regenerated into a fresh folder, byte for byte the checked-in files.
    let dir = tempfile::tempdir().unwrap();
    let out = referee().arg("schema").arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    let mut written: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    let mut want = FILES.map(String::from).to_vec();
    want.sort();
    assert_eq!(written, want);
    for name in FILES {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(
            text,
            std::fs::read_to_string(root().join("schema").join(name)).unwrap()
        );
    }

    // A stale file is named.
    std::fs::write(dir.path().join("from-bot.json"), "{}\n").unwrap();
    let out = referee()
        .args(["schema", "--check"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("from-bot.json: missing or out of date"),
        "{text}"
    );
    assert!(!text.contains("to-bot.json"), "{text}");
}

/// Runs the independent validator (Python `jsonschema`) on `file`'s lines.
pub(crate) fn validate(schema: &str, file: &Path, prefix: Option<&str>) -> (bool, String) {
    let out = Command::new("python3")
        .arg(root().join("tests/tools/validate_schema.py"))
        .arg(root().join("schema").join(schema))
        .arg(file)
        .args(prefix)
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn count(report: &str) -> usize {
    report
        .trim()
        .strip_suffix(" valid")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{report}"))
}

/// Every message of a real session and every line of its transcript and
/// timings files fits the checked-in schema; lines that break it do not.
#[test]
fn real_messages_and_transcripts_fit_the_schema() {
    let done = play()
        .seed(51)
        .args(["--games", "2"])
        .arg("--seat")
        .arg("1=python3 tests/tools/deviant_bot.py echo")
        .ok();
    let log = done.dir.join("stderr/player1.log");
    let (ok, text) = validate("to-bot.json", &log, Some("IN "));
    assert!(ok, "{text}");
    assert!(count(&text) > 100, "{text}");
    let (ok, text) = validate("from-bot.json", &log, Some("OUT "));
    assert!(ok, "{text}");
    assert!(count(&text) > 20, "{text}");
    for game in [1, 2] {
        let (ok, text) = validate("transcript-line.json", &done.transcript(game), None);
        assert!(ok, "{text}");
        assert_eq!(count(&text), done.lines(game).len());
        let timings = done.dir.join(format!("timings/game-{game:04}.jsonl"));
        let (ok, text) = validate("timings-line.json", &timings, None);
        assert!(ok, "{text}");
    }

    // Broken lines are rejected: the schema says something.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    for (schema, line) in [
        (
            "transcript-line.json",
            r#"{"type":"play","seat":6,"card":"AS"}"#,
        ),
        (
            "transcript-line.json",
            r#"{"type":"play","seat":1,"card":"1S"}"#,
        ),
        (
            "transcript-line.json",
            r#"{"type":"bid","seat":1,"bid":"3"}"#,
        ),
        (
            "to-bot.json",
            r#"{"type":"deal","deal":1,"dealer":0,"hand":["AS","AS"]}"#,
        ),
        ("from-bot.json", r#"{"type":"reply","action":"AS"}"#),
    ] {
        std::fs::write(&bad, format!("{line}\n")).unwrap();
        let (ok, text) = validate(schema, &bad, None);
        assert!(!ok, "{schema} accepts {line}: {text}");
        assert!(text.contains("bad.jsonl:1: invalid"), "{text}");
    }
}
