//! The snapshot-testing example for bots in any language
//! (`examples/snapshot-testing/plain/snapshot.sh`) runs here as a user runs it:
//! its checked-in snapshot matches, a bot that plays one card differently is
//! caught, and `--update` accepts the new games.

use std::process::{Command, Output};

use crate::support::{copy_dir, root, REFEREE};

fn script(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg(root().join("examples/snapshot-testing/plain/snapshot.sh"))
        .args(args)
        .env("REFEREE", REFEREE)
        .env_remove("BOT")
        .env_remove("SNAPSHOTS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("sh runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_checked_in_snapshot_matches() {
    let out = script(&[], &[]);
    assert!(
        out.status.success(),
        "the example's snapshot no longer matches; if the change is intended, run \
         REFEREE=target/debug/referee examples/snapshot-testing/plain/snapshot.sh --update\n{}",
        text(&out)
    );
    assert!(
        text(&out).contains("equivalent: 4 transcript(s)"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_changed_bot_is_caught_and_update_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snapshots");
    copy_dir(
        &root().join("examples/snapshot-testing/plain/snapshots"),
        &snap,
    );
    let snap_env = snap.to_str().unwrap();
    // Plays the first legal answer like my_bot.py, except its 5th play with a choice.
    let deviant = format!(
        "python3 {} play 5",
        root().join("tests/tools/deviant_bot.py").display()
    );

    let out = script(&[("SNAPSHOTS", snap_env), ("BOT", &deviant)], &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("seed-1/game-0001.jsonl: DIFFERENT"), "{t}");
    let line = t.lines().find(|l| l.contains("first divergence")).unwrap();
    assert!(
        line.contains(", trick ") && line.contains(" played "),
        "{line}"
    );

    let out = script(&[("SNAPSHOTS", snap_env), ("BOT", &deviant)], &["--update"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = script(&[("SNAPSHOTS", snap_env), ("BOT", &deviant)], &[]);
    assert!(out.status.success(), "{}", text(&out));
    // And now the original bot is the change.
    let out = script(&[("SNAPSHOTS", snap_env)], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}
