//! The harness's own promises (support.rs): its lock excludes another process,
//! not only another thread, so tests that must not share the machine stay
//! apart under a runner that starts a process per test (nextest); a skip is
//! seen even where the test's output is captured, is recorded for the count,
//! and fails where no skip is allowed.

use std::process::Command;

use crate::support::lock;

/// Whether another process could take lock `name` right now: util-linux's
/// `flock -n` on the same file, which fails at once when it is held.
fn free_for_another_process(name: &str) -> bool {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.lock"));
    let out = Command::new("flock")
        .args(["-n", "-E", "75"])
        .arg(&path)
        .arg("true")
        .output()
        .expect("util-linux's flock runs");
    match out.status.code() {
        Some(0) => true,
        Some(75) => false,
        other => panic!(
            "flock ended with {other:?}: {}",
            crate::support::stderr(&out)
        ),
    }
}

#[test]
fn the_lock_excludes_another_process_until_dropped() {
    let name = format!("harness-{}", std::process::id());
    let held = lock(&name);
    assert!(!free_for_another_process(&name), "a held lock was free");
    drop(held);
    assert!(
        free_for_another_process(&name),
        "a dropped lock stayed held"
    );
}

#[test]
#[ignore = "run by harness::a_skip_is_seen_recorded_and_refused_under_no_skip, as a child"]
fn skipping_child() {
    crate::support::skip("the reason given");
}

#[test]
fn a_skip_is_seen_recorded_and_refused_under_no_skip() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("skipped.txt");
    // This very test binary, running only the child above, its output
    // captured as libtest captures a passing test's.
    let child = |no_skip: bool| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["harness::skipping_child", "--exact", "--ignored"])
            .env("SCHMIER_SKIP_RECORD", &record)
            .env_remove("SCHMIER_NO_SKIP");
        if no_skip {
            cmd.env("SCHMIER_NO_SKIP", "1");
        }
        cmd.output().unwrap()
    };
    let line = "SKIPPED harness::skipping_child: the reason given\n";
    let out = child(false);
    let err = crate::support::stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(line), "not on the standard error: {err}");
    assert_eq!(std::fs::read_to_string(&record).unwrap(), line);

    let out = child(true);
    assert!(!out.status.success(), "a skip passed under SCHMIER_NO_SKIP");
    let text = crate::support::stdout(&out) + &crate::support::stderr(&out);
    assert!(text.contains("may not skip here"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&record).unwrap(),
        line,
        "a refused skip is not recorded"
    );
}
