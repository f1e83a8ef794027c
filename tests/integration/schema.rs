//! `referee schema`: the checked-in `schema/` files are what the code generates.
//! When a message or transcript type changes, this fails until the files are
//! regenerated (`cargo run -p referee -- schema`) and the change is reviewed.

use std::process::Command;

use crate::support::{root, REFEREE};

const FILES: [&str; 4] = [
    "to-bot.json",
    "from-bot.json",
    "transcript-line.json",
    "timings-line.json",
];

#[test]
fn checked_in_schema_files_match_the_code() {
    let out = Command::new(REFEREE)
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
    let out = Command::new(REFEREE)
        .arg("schema")
        .arg(dir.path())
        .output()
        .unwrap();
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
    let out = Command::new(REFEREE)
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
