//! Bots that misbehave, one way each: the exact fault is recorded, the game still
//! completes and verifies, and no process outlives the referee.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::support::{exclusive, play, verify, Done, Run};

/// A token unique to this test run, put on the hostile bot's command line.
fn tag(mode: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "hostile-{}-{}-{mode}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Processes whose command line contains `token`.
pub fn processes_with(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(token) {
            found.push(format!("{}: {cmd}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// A decision limit no busy host reaches: for bots whose every reply is prompt.
pub const NEVER_REACHED_MS: &str = "10000";

/// Runs a game with the hostile bot in seat 1 and in-process bots elsewhere, at a
/// limit only a bot that means to be late can miss.
fn hostile(mode: &str, extra: &[&str]) -> (Done, Vec<serde_json::Value>) {
    hostile_run(
        mode,
        play().seed(17).args(extra.iter().copied()),
        NEVER_REACHED_MS,
    )
}

/// One game with the hostile bot in seat 1 (in-process bots elsewhere), checked
/// like every hostile test: completed, verified, nothing left running.
pub fn hostile_game(mode: &str, decision_ms: &str, extra: &[&str]) -> Done {
    hostile_run(
        mode,
        play().seed(17).args(extra.iter().copied()),
        decision_ms,
    )
    .0
}

/// The same, at a short limit: for bots that never answer at all, so the short
/// limit only decides how long the test takes.
fn hostile_silent(mode: &str, extra: &[&str]) -> (Done, Vec<serde_json::Value>) {
    hostile_run(mode, play().seed(17).args(extra.iter().copied()), "300")
}

fn hostile_run(mode: &str, run: Run, decision_ms: &str) -> (Done, Vec<serde_json::Value>) {
    let token = tag(mode);
    let done = run
        .inproc_bystanders()
        .args(["--decision-ms", decision_ms, "--startup-ms", "10000"])
        .arg("--seat")
        .arg(format!(
            "1=python3 tests/hostile/bot.py {mode} --tag {token}"
        ))
        .ok();
    let leftovers = processes_with(&token);
    assert!(
        leftovers.is_empty(),
        "{mode}: processes outlived the referee: {leftovers:?}"
    );
    let lines = done.lines(1);
    assert_eq!(
        lines.last().unwrap()["type"],
        "result",
        "{mode}: the game completed"
    );
    let v = verify(&[&done.transcript(1)]);
    assert!(
        v.status.success(),
        "{mode}: {}",
        String::from_utf8_lossy(&v.stdout)
    );
    let faults = lines
        .iter()
        .filter(|l| l["type"] == "fault")
        .cloned()
        .collect();
    (done, faults)
}

fn kinds(faults: &[serde_json::Value]) -> Vec<&str> {
    faults
        .iter()
        .map(|f| f["fault"].as_str().unwrap())
        .collect()
}

/// Every fault is the hostile seat's, and the first one is `kind`.
fn first_fault_is(mode: &str, faults: &[serde_json::Value], kind: &str) {
    assert!(!faults.is_empty(), "{mode}: a fault is recorded");
    assert!(
        faults.iter().all(|f| f["seat"] == 1),
        "{mode}: only seat 1 faults: {faults:?}"
    );
    assert_eq!(faults[0]["fault"], kind, "{mode}: {faults:?}");
}

#[test]
fn never_answers() {
    let (done, faults) = hostile_silent("silent", &[]);
    first_fault_is("silent", &faults, "timeout");
    // Competition policy: replaced after 3 faults, and the team forfeits.
    assert_eq!(kinds(&faults), ["timeout", "timeout", "timeout"]);
    assert_eq!(faults[2]["replaced"], true);
    let result = done.lines(1).pop().unwrap();
    assert_eq!(result["forfeited"], serde_json::json!([1]));
    assert_eq!(
        result["ranking"][2], 1,
        "the forfeiting team is ranked last"
    );
}

/// The timings sidecar of the game notes exactly one late reply, to the
/// request of the first fault (a timeout).
fn one_late_reply_to_the_first_fault(done: &Done, faults: &[serde_json::Value]) {
    let late: Vec<serde_json::Value> =
        std::fs::read_to_string(done.dir.join("timings/game-0001.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|t| t["late"] == true)
            .collect();
    assert_eq!(late.len(), 1, "{late:?}");
    assert_eq!(late[0]["request"], faults[0]["request"], "{late:?}");
}

#[test]
fn answers_after_the_deadline_then_correctly() {
    // Its first answer takes twice the limit, the rest are prompt: 2 s is a limit
    // the prompt ones never reach on a busy host.
    let (done, faults) = hostile_run("late", play().seed(17), "2000");
    first_fault_is("late", &faults, "timeout");
    // One slow decision is one fault: the late answer is discarded by id when it
    // turns up (the timings sidecar notes it), never applied, never a second fault.
    assert_eq!(kinds(&faults), ["timeout"], "{faults:?}");
    assert_eq!(faults[0]["replaced"], false);
    one_late_reply_to_the_first_fault(&done, &faults);
}

/// A long reply to a request that timed out, whose opening comes while the
/// next request is pending and has had its stale fault (so the referee reads
/// such a line no further than its opening, issue 27), and whose end comes
/// only once that request has timed out too: it is still the first
/// request's late reply, noted in the sidecar, and no fault of the third.
#[test]
fn a_long_late_reply_split_around_a_timeout_is_still_late() {
    // Prompt apart from the two requests it never answers: 2 s is a limit the
    // prompt ones never reach on a busy host.
    let run = play().seed(17).args(["--policy", "lenient"]);
    let (done, faults) = hostile_run("late-split", run, "2000");
    assert_eq!(
        kinds(&faults),
        ["timeout", "stale", "timeout"],
        "{faults:?}"
    );
    let asked: Vec<u64> = faults
        .iter()
        .map(|f| f["request"].as_u64().unwrap())
        .collect();
    assert!(asked[0] < asked[1] && asked[1] == asked[2], "{faults:?}");
    one_late_reply_to_the_first_fault(&done, &faults);
}

#[test]
fn a_late_reply_is_never_charged_in_the_next_game() {
    // Replaced after its first fault, the late bot's answer to that request is
    // still in its pipe when game 2 starts; it must be discarded there too.
    let run = play()
        .seed(17)
        .args(["--games", "2", "--no-rotate", "--max-faults", "1"]);
    let (done, faults) = hostile_run("late", run, "3000");
    assert_eq!(kinds(&faults), ["timeout"], "game 1: {faults:?}");
    assert_eq!(faults[0]["replaced"], true);
    let game2: Vec<_> = done
        .lines(2)
        .into_iter()
        .filter(|l| l["type"] == "fault")
        .collect();
    assert!(game2.is_empty(), "game 2 pays nothing: {game2:?}");
    let result = done.lines(2).pop().unwrap();
    assert_eq!(result["forfeited"], serde_json::json!([]), "{result}");
}

#[test]
fn exits_at_startup() {
    let (_, faults) = hostile("exit-at-start", &["--keep-going"]);
    first_fault_is("exit-at-start", &faults, "start");
    assert!(
        faults[0]["detail"]
            .as_str()
            .unwrap()
            .contains("exit status: 3"),
        "{faults:?}"
    );
    assert_eq!(faults[0]["request"], serde_json::Value::Null);
    assert_eq!(faults[0]["replaced"], true);
}

#[test]
fn speaks_another_protocol_version() {
    let (_, faults) = hostile("wrong-protocol", &["--keep-going"]);
    first_fault_is("wrong-protocol", &faults, "start");
    let detail = faults[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("schmier/0") && detail.contains("schmier/1"),
        "{detail}"
    );
}

#[test]
fn crashes_mid_hand() {
    let (_, faults) = hostile("crash-mid-hand", &[]);
    first_fault_is("crash-mid-hand", &faults, "crash");
    assert!(
        faults[0]["detail"]
            .as_str()
            .unwrap()
            .contains("exit status: 7"),
        "{faults:?}"
    );
    assert_eq!(
        faults.len(),
        1,
        "a crashed bot is replaced at once: {faults:?}"
    );
}

#[test]
fn killed_by_a_signal() {
    let (_, faults) = hostile("signal", &[]);
    first_fault_is("signal", &faults, "crash");
    assert!(
        faults[0]["detail"].as_str().unwrap().contains("SIGKILL"),
        "{faults:?}"
    );
}

#[test]
fn prints_non_json() {
    let (_, faults) = hostile("garbage", &[]);
    first_fault_is("garbage", &faults, "malformed");
    assert!(
        faults[0]["detail"]
            .as_str()
            .unwrap()
            .contains("this is not json"),
        "{faults:?}"
    );
    assert_eq!(faults.len(), 1);
}

#[test]
fn prints_invalid_utf8() {
    let (_, faults) = hostile("bad-utf8", &[]);
    first_fault_is("bad-utf8", &faults, "malformed");
    assert!(
        faults[0]["detail"].as_str().unwrap().contains("not UTF-8"),
        "{faults:?}"
    );
}

#[test]
fn prints_a_10_mb_line() {
    let _alone = exclusive();
    let (_, faults) = hostile("huge-line", &[]);
    first_fault_is("huge-line", &faults, "oversized");
    assert_eq!(
        faults.len(),
        1,
        "after the newline the bot plays on: {faults:?}"
    );
}

#[test]
fn floods_stderr_past_the_cap() {
    let _alone = exclusive();
    let (done, faults) = hostile("stderr-flood", &[]);
    assert!(faults.is_empty(), "{faults:?}");
    let log = std::fs::metadata(done.dir.join("stderr/player1.log"))
        .unwrap()
        .len();
    assert!(log < (1 << 20) + 200, "the log is capped at 1 MiB: {log}");
    let text = std::fs::read_to_string(done.dir.join("stderr/player1.log")).unwrap();
    assert!(
        text.contains("stderr cap of 1048576 bytes reached"),
        "the log says it was cut"
    );
}

/// A verbose but honest bot is not slowed by the referee: 100 MB of stderr
/// before `hello` is taken as fast as the bot writes it, so it says hello
/// within the startup limit (before, the referee drained 6.4 MB/s at most and
/// this was a `start` fault after 10 s), and every byte is accounted for.
#[test]
fn writes_100_mb_to_stderr_before_hello_and_starts_in_time() {
    let _alone = exclusive();
    let (done, faults) = hostile("stderr-before-hello", &[]);
    assert!(faults.is_empty(), "{faults:?}");
    let text = std::fs::read_to_string(done.dir.join("stderr/player1.log")).unwrap();
    let dropped = (100u64 << 20) - (1 << 20);
    assert!(
        text.contains(&format!(
            "stderr cap of 1048576 bytes reached; {dropped} further bytes dropped"
        )),
        "the log says how much was cut: {}",
        &text[text.len().saturating_sub(200)..]
    );
}

/// CPU seconds (user + system) of process `pid`, which has exited but is not
/// reaped yet: its own (every thread), and its reaped children's (the bots).
fn cpu_of_exited(pid: u32) -> (f64, f64) {
    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    waitid(
        Id::Pid(nix::unistd::Pid::from_raw(pid as i32)),
        WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
    )
    .expect("waitid on the referee");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command's closing parenthesis, from field 3 (state) on.
    let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks = |i: usize| rest[i - 3].parse::<f64>().unwrap();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .unwrap()
        .unwrap() as f64;
    ((ticks(14) + ticks(15)) / hz, (ticks(16) + ticks(17)) / hz)
}

/// One game with `tests/hostile/bot.py stderr-trickle WRITES=writes` in seat 1:
/// the referee's own CPU seconds and its bot's.
fn trickle(writes: u32) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let token = tag("stderr-trickle");
    let mut child = crate::support::referee()
        .args(["play", "--seed", "17", "--stderr-cap", "1000"])
        .args(["--team", "inproc:heuristic", "--team", "inproc:random"])
        .args(["--team", "inproc:random", "--decision-ms", NEVER_REACHED_MS])
        .args(["--startup-ms", "120000", "--seat"])
        .arg(format!(
            "1=python3 tests/hostile/bot.py stderr-trickle WRITES={writes} --tag {token}"
        ))
        .arg("--transcript")
        .arg(dir.path().join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cpu = cpu_of_exited(child.id());
    assert!(child.wait().unwrap().success());
    cpu
}

#[test]
fn a_stderr_trickle_past_the_cap_costs_the_referee_a_fraction_of_the_bot_s_cpu() {
    let _alone = exclusive();
    // The same game twice, with and without 3 million one-byte writes: CPU
    // times, not wall time, so a busy host changes little; the game's own cost
    // is taken out by the difference.
    let (referee_quiet, bot_quiet) = trickle(0);
    let (referee_flood, bot_flood) = trickle(3_000_000);
    let (referee, bot) = (referee_flood - referee_quiet, bot_flood - bot_quiet);
    eprintln!("the flood cost the bot {bot:.2} s of CPU and the referee {referee:.2} s");
    assert!(
        bot > 0.2,
        "the bot spent only {bot:.2} s of CPU on its writes: too little to compare"
    );
    assert!(
        referee < 0.25 * bot,
        "the referee spent {referee:.2} s of CPU on a flood that cost the bot {bot:.2} s"
    );
}

#[test]
fn stops_reading_its_stdin() {
    // Lenient, so the deaf bot is asked again and again: its stdin pipe fills up,
    // and the referee's write times out instead of blocking the table.
    let run = play().seed(17).args(["--policy", "lenient"]);
    let (_, faults) = hostile_run("deaf", run, "50");
    first_fault_is("deaf", &faults, "timeout");
    let last = faults.last().unwrap();
    assert_eq!(last["fault"], "closed", "{faults:?}");
    assert!(
        last["detail"]
            .as_str()
            .unwrap()
            .contains("stopped reading its stdin"),
        "{last}"
    );
    assert_eq!(last["replaced"], true);
    assert!(faults[..faults.len() - 1]
        .iter()
        .all(|f| f["fault"] == "timeout"));
}

#[test]
fn answers_with_an_illegal_card() {
    let (_, faults) = hostile("illegal", &[]);
    first_fault_is("illegal", &faults, "illegal");
    let detail = faults[0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("not in seat 1's hand") || detail.contains("does not follow suit"),
        "{detail}"
    );
}

#[test]
fn answers_another_requests_id() {
    let (_, faults) = hostile("wrong-id", &[]);
    first_fault_is("wrong-id", &faults, "stale");
    assert_eq!(
        faults.len(),
        1,
        "the right reply that follows is accepted: {faults:?}"
    );
}

#[test]
fn replies_twice_to_one_request() {
    let (_, faults) = hostile("double", &["--policy", "lenient"]);
    first_fault_is("double", &faults, "stale");
    assert!(
        faults
            .iter()
            .all(|f| f["fault"] == "stale" && f["replaced"] == false),
        "{faults:?}"
    );
}

#[test]
fn spams_stale_replies_and_draws_one_fault_per_request_at_most() {
    // Lenient: no fault count replaces the seat, so only the per-request cap
    // keeps the transcript from growing with the spam.
    let lenient = ["--policy", "lenient"];
    let (done, faults) = hostile("stale-spam", &lenient);
    first_fault_is("stale-spam", &faults, "stale");
    let mut per_request = std::collections::BTreeMap::new();
    for f in &faults {
        assert_eq!(f["fault"], "stale", "{f}");
        assert_eq!(f["replaced"], false, "{f}");
        *per_request
            .entry(f["request"].as_u64().unwrap())
            .or_insert(0) += 1;
    }
    assert!(
        per_request.values().all(|&n| n == 1),
        "one stale fault per request at most: {per_request:?}"
    );
    // The same game with the same (first legal) play and no spam: the spam adds
    // at most one fault line per request of seat 1.
    let (honest, none) = hostile("instant", &lenient);
    assert!(none.is_empty(), "{none:?}");
    let asked = std::fs::read_to_string(done.dir.join("timings/game-0001.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""seat":1"#))
        .count() as u64;
    let (spammed, plain) = (done.text(1).len() as u64, honest.text(1).len() as u64);
    assert!(
        spammed <= plain + asked * 200,
        "{spammed} bytes against {plain} for {asked} requests"
    );
}

/// Twenty stale lines of 60 KB before every reply (issue 27): each request
/// draws its one `stale` fault and nothing else; the right reply after the spam
/// is still taken every time (no timeout, no other fault), and the game is the
/// one the same bot plays without the spam.
#[test]
fn spams_60_kb_stale_lines_and_every_right_reply_is_still_taken() {
    let lenient = ["--policy", "lenient"];
    let (done, faults) = hostile("stale-spam PAD=60000 LINES=20", &lenient);
    let (honest, _) = hostile("instant", &lenient);
    let asked: Vec<u64> = std::fs::read_to_string(done.dir.join("timings/game-0001.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|t| t["seat"] == 1)
        .map(|t| t["request"].as_u64().unwrap())
        .collect();
    let stale: Vec<u64> = faults
        .iter()
        .map(|f| {
            assert_eq!(
                (&f["fault"], &f["replaced"]),
                (&"stale".into(), &false.into()),
                "{f}"
            );
            f["request"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(
        stale, asked,
        "one stale fault for each request of seat 1, no other"
    );
    let plays = |d: &Done| -> Vec<serde_json::Value> {
        (d.lines(1).into_iter())
            // The result differs in its fault count only.
            .filter(|l| !["fault", "header", "result"].contains(&l["type"].as_str().unwrap()))
            .collect()
    };
    assert_eq!(
        plays(&done),
        plays(&honest),
        "every decision is the bot's own reply"
    );
}

#[test]
fn replies_before_being_asked() {
    let (_, faults) = hostile("preempt", &[]);
    first_fault_is("preempt", &faults, "stale");
    assert!(
        faults[0]["detail"].as_str().unwrap().contains("request 0"),
        "{faults:?}"
    );
}

#[test]
fn forks_a_grandchild_that_ignores_sigterm() {
    // The leftover-process check in `hostile_run` is the point of this test.
    let (_, faults) = hostile("fork-grandchild", &[]);
    assert!(faults.is_empty(), "{faults:?}");
}

#[test]
fn closes_stdout_but_keeps_running() {
    let (_, faults) = hostile_silent("close-stdout", &[]);
    first_fault_is("close-stdout", &faults, "closed");
    assert_eq!(faults.len(), 1);
}

/// The same under `--sandbox`: bubblewrap and its pid 1 hold no copy of the
/// bot's stdout, so closing it is seen as closing it (it was three `timeout`s,
/// the pipe kept open by the sandbox's pid 1).
#[test]
fn closes_stdout_but_keeps_running_in_the_sandbox() {
    let (_, faults) = hostile_silent("close-stdout", &["--sandbox"]);
    first_fault_is("close-stdout", &faults, "closed");
    assert_eq!(faults.len(), 1, "{faults:?}");
}

#[test]
fn splits_each_reply_into_many_small_writes() {
    let (_, faults) = hostile("split", &[]);
    assert!(faults.is_empty(), "{faults:?}");
}

#[test]
fn replies_instantly() {
    let (_, faults) = hostile("instant", &[]);
    assert!(faults.is_empty(), "{faults:?}");
}

#[test]
fn a_crashed_bot_is_restarted_for_the_next_game() {
    let token = tag("restart");
    let done = play()
        .seed(4)
        .inproc_bystanders()
        .args([
            "--games",
            "2",
            "--no-rotate",
            "--decision-ms",
            NEVER_REACHED_MS,
        ])
        .arg("--seat")
        .arg(format!(
            "1=python3 tests/hostile/bot.py crash-mid-hand --tag {token}"
        ))
        .ok();
    assert!(processes_with(&token).is_empty());
    for g in 1..=2 {
        let faults: Vec<_> = done
            .lines(g)
            .into_iter()
            .filter(|l| l["type"] == "fault")
            .collect();
        assert_eq!(
            kinds(&faults),
            ["crash"],
            "game {g}: the restarted bot crashes again at its 10th request"
        );
    }
    assert!(done.dir.join("stderr/player1.restart1.log").exists());
}

/// A filesystem of 64 MiB of the test's own (a tmpfs the test mounts, as
/// root), unmounted when dropped: a small disk a bot can fill.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    /// `None` (the caller skips) where the test is not root.
    fn mount() -> Option<SmallDisk> {
        if !nix::unistd::geteuid().is_root() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64m,mode=0755", "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(
            mounted.success(),
            "mount a tmpfs at {}",
            dir.path().display()
        );
        Some(SmallDisk(dir))
    }

    fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// Three games of a match on `disk`, transcripts and `--scratch` both on it,
/// with `tests/hostile/bot.py fill-scratch` in seat 1 (it fills its scratch
/// at every game's start): the referee's output, and what is left of the
/// bot's scratch folder on the disk, in bytes.
fn fill_scratch_on(disk: &SmallDisk, extra: &[&str]) -> (std::process::Output, u64) {
    let token = tag("fill-scratch");
    let scratch = disk.path().join("scratch");
    let output = crate::support::referee()
        .args(["play", "--seed", "17", "--games", "3"])
        .args(["--team", "inproc:heuristic", "--team", "inproc:random"])
        .args(["--team", "inproc:random", "--decision-ms", NEVER_REACHED_MS])
        .args(["--startup-ms", "20000", "--seat"])
        .arg(format!(
            "1=python3 tests/hostile/bot.py fill-scratch --tag {token}"
        ))
        .arg("--scratch")
        .arg(&scratch)
        .arg("--transcript")
        .arg(disk.path().join("out"))
        .args(extra)
        .output()
        .unwrap();
    assert!(
        processes_with(&token).is_empty(),
        "the bot outlived the referee"
    );
    let left = std::fs::read_dir(scratch.join("player1"))
        .map(|files| files.map(|f| f.unwrap().metadata().unwrap().len()).sum())
        .unwrap_or(0);
    (output, left)
}

/// Issue 27: a bot that fills its `--scratch` filled the filesystem the
/// transcripts are written to, and every game of the match was lost. Sandboxed,
/// its `/scratch` is a tmpfs of `--scratch-mb` of its own: the bot meets
/// `ENOSPC` there, the shared 64 MiB disk keeps its room, and all three
/// transcripts are written whole. Unsandboxed the same bot is bounded only by
/// that disk (which shows the disk is small enough to fill).
#[test]
fn fills_its_scratch_and_every_transcript_is_kept_in_the_sandbox() {
    let (Some(open_disk), Some(boxed_disk)) = (SmallDisk::mount(), SmallDisk::mount()) else {
        crate::support::skip("mounting a 64 MiB tmpfs needs root");
        return;
    };
    let (_, open_left) = fill_scratch_on(&open_disk, &[]);
    assert!(
        open_left > 32 << 20,
        "unsandboxed the bot wrote only {open_left} bytes to the shared disk"
    );
    let (boxed, boxed_left) = fill_scratch_on(&boxed_disk, &["--sandbox", "--scratch-mb", "16"]);
    let err = String::from_utf8_lossy(&boxed.stderr);
    assert!(boxed.status.success(), "{err}");
    assert_eq!(
        boxed_left, 0,
        "nothing the sandboxed bot wrote reached the disk"
    );
    let out = boxed_disk.path().join("out");
    for game in 1..=3 {
        let transcript = out.join(format!("game-{game:04}.jsonl"));
        let v = verify(&[&transcript]);
        assert!(
            v.status.success(),
            "game {game}: {}{}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        );
    }
    // What the bot met, from its log: ENOSPC within its own 16 MiB in game 1,
    // and at once in the games after (its process, and scratch, are kept for
    // the match).
    let log = std::fs::read_to_string(out.join("stderr/player1.log")).unwrap();
    let fills: Vec<(u64, String)> = log
        .lines()
        .filter_map(|l| l.strip_prefix("FILL game "))
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (w[2].parse().unwrap(), w[3].to_owned())
        })
        .collect();
    assert_eq!(fills.len(), 3, "{log}");
    assert!(fills.iter().all(|(_, how)| how == "ENOSPC"), "{fills:?}");
    assert!((8 << 20..=16 << 20).contains(&fills[0].0), "{fills:?}");
    assert!(fills[1..].iter().all(|(wrote, _)| *wrote == 0), "{fills:?}");
}
