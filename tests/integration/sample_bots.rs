//! The Python and JavaScript sample bots' own unit tests, run from here so that
//! `cargo test --workspace` is the one command that runs every test.

use std::process::Command;

use crate::support::root;

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("failed to run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn python_sample_bot_unit_tests() {
    run(
        "python3",
        &["-m", "unittest", "discover", "-s", "sample-bots/python"],
    );
}

#[test]
fn javascript_sample_bot_unit_tests() {
    run("node", &["--test", "sample-bots/js/"]);
}
