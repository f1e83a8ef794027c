//! `referee check-bot`: the sample bots pass every check; each hostile test bot
//! fails, and the checklist names its fault and the offending line.

use crate::support::{exclusive, referee, REFEREE};

/// A decision limit no busy host reaches, for bots whose fault is not slowness.
const NEVER_REACHED_MS: &str = "20000";

fn check_bot(decision_ms: &str, bot: &[&str]) -> (bool, String) {
    let out = referee()
        .args(["check-bot", "--decision-ms", decision_ms, "--"])
        .args(bot)
        .output()
        .expect("the referee runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "check-bot itself failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The sample bot passes every item, and the checklist has every item.
fn passes(bot: &[&str]) {
    let (ok, text) = check_bot(NEVER_REACHED_MS, bot);
    assert!(ok, "{text}");
    let passed = text.lines().filter(|l| l.starts_with("  [ok]")).count();
    assert_eq!(passed, 19, "{text}");
    for item in [
        "handshake",
        "unknown message types and unknown fields are ignored",
        "dealer's discard with more than six trumps (protected trumps)",
        "play: void in the led suit",
        "play: the joker led",
        "play: the left bower led",
        "play: trump anytime",
        "a whole game in seat 5",
        "a game_start for another seat in the next game",
    ] {
        assert!(text.contains(&format!("[ok]   {item}")), "{item}: {text}");
    }
    assert!(text.contains("decision time over "), "{text}");
    assert!(text.ends_with("all 19 checks passed\n"), "{text}");
}

/// The hostile bot in `mode` fails, first at `item` with `problem`; the line it
/// sent is quoted when `quoted` is given.
fn fails(mode: &str, decision_ms: &str, item: &str, problem: &str, quoted: Option<&str>) {
    let (ok, text) = check_bot(decision_ms, &["python3", "tests/hostile/bot.py", mode]);
    assert!(!ok, "{mode}: {text}");
    let listed = text.lines().filter(|l| l.starts_with("  [")).count();
    assert_eq!(
        listed, 19,
        "{mode}: every check is listed, run or not: {text}"
    );
    let (at, first) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("  [FAIL]"))
        .unwrap_or_else(|| panic!("{mode}: no failure listed: {text}"));
    assert!(
        first.starts_with(&format!("  [FAIL] {item} — {problem}")),
        "{mode}: {first}\n{text}"
    );
    let detail: Vec<&str> = text.lines().skip(at + 1).take(2).collect();
    if let Some(q) = quoted {
        assert!(
            detail[0].starts_with("           the bot sent: ") && detail[0].contains(q),
            "{mode}: {detail:?}"
        );
    }
    assert!(
        detail
            .iter()
            .any(|l| l.starts_with("           expected:     ")),
        "{mode}: {detail:?}"
    );
}

#[test]
fn the_sample_bots_pass_every_check() {
    // Hundreds of bot processes: never beside the timing-sensitive tests.
    let _alone = exclusive();
    passes(&["python3", "sample-bots/python/bot.py", "simple"]);
    passes(&["node", "sample-bots/js/bot.js"]);
    passes(&[REFEREE, "bot", "heuristic"]);
    // A built-in bot by the name every other command takes.
    passes(&["builtin:random"]);
    let (ok, text) = check_bot(NEVER_REACHED_MS, &["builtin:nosuch"]);
    assert!(!ok, "{text}");
    assert!(text.contains("unknown built-in bot \"nosuch\""), "{text}");
}

#[test]
fn the_starter_kits_pass_every_check() {
    // Hundreds of bot processes: never beside the timing-sensitive tests.
    let _alone = exclusive();
    passes(&["python3", "sample-bots/python/my_bot.py"]);
    passes(&["node", "sample-bots/js/my-bot.js"]);
}

/// The first check after the handshake: the first request a bot gets.
const FIRST_GAME: &str = "bid, first to speak";

#[test]
fn bots_that_fail_the_handshake() {
    // Hundreds of bot processes: never beside the timing-sensitive tests.
    let _alone = exclusive();
    fails(
        "exit-at-start",
        NEVER_REACHED_MS,
        "handshake",
        "the bot's stdout ended: the process exited (exit status: 3)",
        None,
    );
    fails(
        "wrong-protocol",
        NEVER_REACHED_MS,
        "handshake",
        "protocol mismatch: the bot speaks \"schmier/0\"",
        Some("schmier/0"),
    );
}

#[test]
fn bots_that_send_bad_lines() {
    // Hundreds of bot processes: never beside the timing-sensitive tests.
    let _alone = exclusive();
    fails(
        "garbage",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "not a protocol message",
        Some("this is not json"),
    );
    fails(
        "bad-utf8",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "not UTF-8",
        Some("reply"),
    );
    fails(
        "huge-line",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "a line longer than 65536 bytes",
        None,
    );
    fails(
        "illegal",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "illegal action: card",
        Some("\\\"action\\\""),
    );
}

#[test]
fn bots_that_answer_the_wrong_request_or_too_often() {
    // Hundreds of bot processes: never beside the timing-sensitive tests.
    let _alone = exclusive();
    // Whether an extra line is read before or after the next request is sent
    // does not change the words: the checker names it by its id.
    fails(
        "wrong-id",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "a reply to request 1001, which was never sent (request 1 is pending)",
        Some("1001"),
    );
    fails(
        "double",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "a second reply to request 1, which was already answered",
        Some("reply"),
    );
    fails(
        "preempt",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "a reply to request 0, which was never sent",
        Some("\\\"id\\\":0"),
    );
}

#[test]
fn bots_that_die_or_go_quiet() {
    // Hundreds of bot processes: never beside the timing-sensitive tests.
    let _alone = exclusive();
    fails(
        "crash-mid-hand",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "the bot's stdout ended: the process exited (exit status: 7)",
        None,
    );
    fails(
        "close-stdout",
        NEVER_REACHED_MS,
        FIRST_GAME,
        "the bot's stdout ended",
        None,
    );
    // These never answer (in time): a short limit keeps the test quick, and no
    // host is slow enough to make them answer.
    fails("silent", "300", FIRST_GAME, "no answer in time", None);
    fails("late", "300", FIRST_GAME, "no answer in time", None);
}

/// A bot that dies on import (issue 45: `[FAIL] handshake — the bot's stdout
/// ended` said nothing more): the failure shows the end of its stderr, the
/// traceback, and names the log that holds all of it, which is kept (in
/// the referee's temporary folder, a private one here).
#[test]
fn a_bot_that_dies_on_import_shows_its_traceback_and_where_its_log_is() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let bot = dir.path().join("bot.py");
    std::fs::write(&bot, "import sys\nimport schmier_no_such_module\n").unwrap();
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (ok, text) = check_bot_in(tmp.path(), &["python3", bot.to_str().unwrap()]);
    assert!(!ok, "{text}");
    assert!(text.contains("[FAIL] handshake"), "{text}");
    assert!(
        text.contains("| ModuleNotFoundError: No module named 'schmier_no_such_module'"),
        "{text}"
    );
    assert!(
        text.contains("|     import schmier_no_such_module"),
        "{text}"
    );
    let log = text
        .split("(all of it: ")
        .nth(1)
        .and_then(|rest| rest.split("):").next())
        .unwrap_or_else(|| panic!("no log named: {text}"));
    assert!(std::path::Path::new(log).starts_with(tmp.path()), "{log}");
    let whole = std::fs::read_to_string(log).unwrap();
    assert!(
        whole.starts_with("Traceback (most recent call last):"),
        "{whole}"
    );
}

/// A bot that passes every check leaves no log behind, though it writes to
/// stderr.
#[test]
fn a_bot_that_passes_leaves_no_log_behind() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let talker = tmp.path().join("talker.py");
    let sample = crate::support::root().join("sample-bots/python/bot.py");
    let script = format!(
        "import os, sys\nprint('talking to stderr', file=sys.stderr, flush=True)\nos.execv(sys.executable, [sys.executable, {sample:?}])\n"
    );
    std::fs::write(&talker, script).unwrap();
    let logs = tmp.path().join("tmp");
    std::fs::create_dir(&logs).unwrap();
    let (ok, text) = check_bot_in(&logs, &["python3", talker.to_str().unwrap()]);
    assert!(ok, "{text}");
    let left: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// [`check_bot`] with the referee's temporary folder at `tmp`.
fn check_bot_in(tmp: &std::path::Path, bot: &[&str]) -> (bool, String) {
    let out = referee()
        .env("TMPDIR", tmp)
        .args(["check-bot", "--decision-ms", NEVER_REACHED_MS, "--"])
        .args(bot)
        .output()
        .expect("the referee runs");
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
