//! The harness's own promise (support.rs): its lock excludes another process,
//! not only another thread, so tests that must not share the machine stay
//! apart under a runner that starts a process per test (nextest).

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
