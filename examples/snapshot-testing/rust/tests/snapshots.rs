//! Pins `my-bot`'s play: fixed seeds against the built-in random bots, each
//! game's transcript compared with a checked-in insta snapshot. When the bot's
//! play changes, the test fails with a line-by-line diff of the games; review
//! it, then accept with `cargo insta review` (needs `cargo install cargo-insta`)
//! or `INSTA_UPDATE=always cargo test -p snapshot-example`.
//! `referee diff` on two transcripts says the same thing in game terms.

use std::path::PathBuf;
use std::process::Command;

/// The referee binary: `$REFEREE`, else the one cargo built beside this bot
/// (`cargo test --workspace` builds both), else `referee` on PATH.
fn referee() -> PathBuf {
    if let Some(path) = std::env::var_os("REFEREE") {
        return path.into();
    }
    let beside = PathBuf::from(env!("CARGO_BIN_EXE_my-bot")).with_file_name("referee");
    if beside.is_file() {
        return beside;
    }
    "referee".into()
}

/// One game of `my-bot` (seats 0 and 3) against the built-in random bots: its
/// transcript without the header, which names this machine's path to the bot.
fn game(seed: u64) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.jsonl");
    let out = Command::new(referee())
        .args(["play", "--quiet", "--seed", &seed.to_string()])
        .args(["--team", env!("CARGO_BIN_EXE_my-bot")])
        .args(["--team", "builtin:random", "--team", "builtin:random"])
        .arg("--transcript")
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "failed to run the referee ({e}): build it first (`cargo build -p referee`) or set REFEREE"
            )
        });
    assert!(
        out.status.success(),
        "referee play failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let (header, game) = text.split_once('\n').unwrap();
    assert!(header.contains("\"type\":\"header\""), "{header}");
    game.to_owned()
}

#[test]
fn seed_1() {
    insta::assert_snapshot!(game(1));
}

#[test]
fn seed_2() {
    insta::assert_snapshot!(game(2));
}
