//! Time control, resource limits and the referee's own exit: clocks, time bank,
//! bounded memory under an endless line, rlimits, SIGTERM and SIGKILL.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::hostile::processes_with;
use crate::support::{exclusive, play, referee, Done};

fn seat_faults(done: &Done, seat: u64) -> Vec<serde_json::Value> {
    done.lines(1)
        .into_iter()
        .filter(|l| l["type"] == "fault" && l["seat"] == seat)
        .collect()
}

/// Response times (µs) of one seat's answered decisions, from the timings sidecar.
fn timings(done: &Done, seat: u64) -> Vec<u64> {
    let text = std::fs::read_to_string(done.dir.join("timings/game-0001.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|t| t["seat"] == seat && t["fault"].is_null())
        .map(|t| t["micros"].as_u64().unwrap())
        .collect()
}

/// The timings sidecar's entries for one seat.
fn timing_entries(done: &Done, seat: u64) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(done.dir.join("timings/game-0001.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|t| t["seat"] == seat)
        .collect()
}

/// Two tables at once on this 2-core machine; in each, seat 1 sleeps 80% of the
/// 4 s limit and seat 2 sleeps 150% of it, for their first 2 decisions. The 80%
/// bot must never be flagged, the 150% bot always. The margins are ratios of the
/// limit (800 ms + grace on one side, 2 s on the other), large enough that no
/// busy host reaches them: at load average 18 the measured error of a sleeping
/// bot reached 212 ms, and a 500 ms limit's 100 ms margin was eaten at load 13.
/// The other seats are played in-process, so nothing else is timed.
#[test]
fn eighty_percent_is_never_flagged_and_150_percent_always_is() {
    let _alone = exclusive();
    let table = |seed: u64| {
        std::thread::spawn(move || {
            play()
                .seed(seed)
                .inproc_bystanders()
                .args([
                    "--decision-ms",
                    "4000",
                    "--grace-ms",
                    "20",
                    "--policy",
                    "lenient",
                ])
                .arg("--seat")
                .arg("1=python3 tests/hostile/bot.py sleep FRACTION=0.8 FIRST=2 LIMIT_MS=4000")
                .arg("--seat")
                .arg("2=python3 tests/hostile/bot.py sleep FRACTION=1.5 FIRST=2 LIMIT_MS=4000")
                .ok()
        })
    };
    let (a, b) = (table(1), table(2));
    for done in [a.join().unwrap(), b.join().unwrap()] {
        assert!(
            seat_faults(&done, 1).is_empty(),
            "80%: {:?}",
            seat_faults(&done, 1)
        );
        let slow = seat_faults(&done, 2);
        assert!(slow.iter().all(|f| f["fault"] == "timeout"), "{slow:?}");
        assert_eq!(
            slow.len(),
            2,
            "150%: every slow decision is flagged, once: {slow:?}"
        );
        // Timing error: measured response time minus the 3.2 s the bot slept.
        let mut err: Vec<i64> = timings(&done, 1)
            .iter()
            .take(2)
            .map(|&us| us as i64 - 3_200_000)
            .collect();
        err.sort();
        eprintln!(
            "timing error of the 80% bot (µs): min {} median {} max {} over {} decisions",
            err[0],
            err[err.len() / 2],
            err[err.len() - 1],
            err.len()
        );
        // The clock starts just after the write returns, and the bot may already
        // be asleep by then if the referee was preempted in between: a slightly
        // negative error is possible on a loaded machine, a large one is not.
        assert!(
            err[0] > -5_000,
            "measured far shorter than the sleep: {err:?}"
        );
    }
}

#[test]
fn the_cpu_clock_charges_cpu_not_sleep() {
    let _alone = exclusive();
    // Sleeping 150% of the limit costs no CPU: not flagged on the CPU clock.
    let done = play()
        .seed(3)
        .inproc_bystanders()
        .args(["--decision-ms", "300", "--clock", "cpu"])
        .arg("--seat")
        .arg("1=python3 tests/hostile/bot.py sleep FRACTION=1.5 FIRST=5 LIMIT_MS=300")
        .ok();
    assert!(
        seat_faults(&done, 1).is_empty(),
        "{:?}",
        seat_faults(&done, 1)
    );
    assert_eq!(done.lines(1)[0]["time_control"]["clock"], "cpu");
    // Spinning 300% of it is flagged, and early: at a CPU-time check, once the
    // limit plus grace (350 ms of CPU) is used and before the 900 ms it would
    // use, not at the wall-clock backstop (3.05 s) — a busy host slows the spin's
    // CPU time and its wall time alike, so it cannot push this out of range.
    let done = play()
        .seed(3)
        .inproc_bystanders()
        .args([
            "--decision-ms",
            "300",
            "--clock",
            "cpu",
            "--policy",
            "lenient",
        ])
        .arg("--seat")
        .arg("1=python3 tests/hostile/bot.py spin FRACTION=3 FIRST=1 LIMIT_MS=300")
        .ok();
    let faults = seat_faults(&done, 1);
    assert_eq!(faults[0]["fault"], "timeout", "{faults:?}");
    let detail = faults[0]["detail"].as_str().unwrap();
    assert!(detail.contains("CPU clock"), "{detail}");
    // How much CPU it had used lives in the sidecar, not in the transcript.
    let entry = timing_entries(&done, 1)
        .into_iter()
        .find(|t| t["request"] == faults[0]["request"])
        .expect("the timed-out request is in the sidecar");
    assert_eq!(entry["fault"], "timeout", "{entry}");
    let used = entry["micros"].as_u64().unwrap() / 1000;
    let wall = entry["wall_micros"].as_u64().unwrap() / 1000;
    eprintln!("flagged after {used} ms of CPU, {wall} ms of wall time");
    // At a CPU check: past the limit plus grace (350 ms) and before the spin's
    // 900 ms — unless the host was so busy that the bot did not get 350 ms of CPU
    // before the wall-clock backstop (10x the limit plus grace: 3.05 s), which is
    // then the legitimate reason.
    assert!(
        (350..900).contains(&used) || (wall >= 3050 && used < 350),
        "flagged after {used} ms of CPU and {wall} ms of wall time: {detail}"
    );
}

#[test]
fn the_time_bank_absorbs_a_few_slow_decisions() {
    let _alone = exclusive();
    // Two decisions 1 s over the 1 s limit: 2 s of a 5 s bank. Every other
    // decision is prompt, far inside 1 s even on a busy host.
    let slow = "1=python3 tests/hostile/bot.py sleep FRACTION=2 FIRST=2 LIMIT_MS=1000";
    let done = play()
        .seed(9)
        .inproc_bystanders()
        .args(["--decision-ms", "1000", "--time-bank-ms", "5000"])
        .arg("--seat")
        .arg(slow)
        .ok();
    assert!(
        seat_faults(&done, 1).is_empty(),
        "{:?}",
        seat_faults(&done, 1)
    );
    assert_eq!(done.lines(1)[0]["time_control"]["time_bank_ms"], 5000);
    // Without a bank the same bot times out.
    let done = play()
        .seed(9)
        .inproc_bystanders()
        .args(["--decision-ms", "1000", "--policy", "lenient"])
        .arg("--seat")
        .arg(slow)
        .ok();
    // Its two slow decisions time out. (Requests that queue behind them while it
    // sleeps may time out too: how many depends on the host, so only the first
    // two are pinned.)
    let faults = seat_faults(&done, 1);
    assert!(faults.len() >= 2, "{faults:?}");
    assert!(faults.iter().all(|f| f["fault"] == "timeout"), "{faults:?}");
}

/// Starts `cmd` (a referee's `play`) writing into `dir`, its output discarded.
fn spawn_playing_into(
    cmd: &mut std::process::Command,
    dir: &std::path::Path,
) -> std::process::Child {
    cmd.arg("--transcript")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `referee play --seed 1 --policy lenient` at a decision limit of `ms`.
fn lenient_game(ms: &str) -> std::process::Command {
    let mut cmd = referee();
    cmd.args([
        "play",
        "--seed",
        "1",
        "--decision-ms",
        ms,
        "--policy",
        "lenient",
    ]);
    cmd
}

/// The referee's peak RSS stays small while a bot streams 400 MB without a newline.
#[test]
fn memory_stays_bounded_under_an_endless_line() {
    let _alone = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_playing_into(
        lenient_game("2000")
            .args(["--max-faults", "1"])
            .arg("--seat")
            .arg("1=python3 tests/hostile/bot.py endless MB=400"),
        dir.path(),
    );
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(status) = std::fs::read_to_string(&status_file) {
            if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
                peak_kb = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("referee peak RSS while a bot streamed 400 MB in one line: {peak_kb} KiB");
    assert!(peak_kb > 0 && peak_kb < 64 * 1024, "peak RSS {peak_kb} KiB");
    let transcript = std::fs::read_to_string(dir.path().join("game-0001.jsonl")).unwrap();
    assert!(transcript.contains(r#""fault":"oversized""#));
}

#[test]
fn a_memory_limit_stops_a_hungry_bot() {
    let done = play()
        .seed(2)
        .args(["--limit-memory-mb", "100", "--keep-going"])
        .arg("--seat")
        .arg("1=python3 tests/hostile/bot.py hog")
        .ok();
    let faults = seat_faults(&done, 1);
    assert_eq!(faults[0]["fault"], "crash", "{faults:?}");
    // Without the limit the same bot plays a clean game.
    let done = play()
        .seed(2)
        .arg("--seat")
        .arg("1=python3 tests/hostile/bot.py hog")
        .ok();
    assert!(seat_faults(&done, 1).is_empty());
}

/// Starts a referee whose seat-1 bot never answers (so the game is slow), and
/// gives it time to start its bots.
/// Returns once the game is under way (its `.partial` transcript exists).
fn slow_referee(token: &str, dir: &std::path::Path) -> std::process::Child {
    let child = spawn_playing_into(
        lenient_game("5000")
            .arg("--seat")
            .arg(format!(
                "1=python3 tests/hostile/bot.py silent --tag {token}"
            ))
            .arg("--seat")
            .arg(format!(
                "2=python3 tests/hostile/bot.py fork-grandchild --tag {token}"
            )),
        dir,
    );
    let start = Instant::now();
    // Both bots and the grandchild (plus the referee itself, whose argv holds the token).
    let partial = dir.join("game-0001.jsonl.partial");
    // Waits for the event (all four processes up, the game under way); the 120 s
    // bound only turns a hang into a failure — at load average 19, 10 s was once
    // not enough for the bots to start.
    while (processes_with(token).len() < 4 || !partial.exists())
        && start.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        processes_with(token).len(),
        4,
        "{:?}",
        processes_with(token)
    );
    child
}

fn wait_until_gone(token: &str) -> Vec<String> {
    let start = Instant::now();
    // Polls for the event (every process gone); the bound only turns a hang into a
    // failure, so it is far beyond what a loaded host needs.
    while !processes_with(token).is_empty() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    processes_with(token)
}

#[test]
fn sigterm_to_the_referee_kills_every_bot_and_keeps_the_partial_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let token = format!("sigterm-{}", std::process::id());
    let mut child = slow_referee(&token, dir.path());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(
        wait_until_gone(&token).is_empty(),
        "{:?}",
        processes_with(&token)
    );
    assert!(dir.path().join("game-0001.jsonl.partial").exists());
    assert!(
        !dir.path().join("game-0001.jsonl").exists(),
        "an unfinished game never gets the final name"
    );
}

#[test]
fn sigkill_to_the_referee_still_takes_the_bots_down() {
    let dir = tempfile::tempdir().unwrap();
    let token = format!("sigkill-{}", std::process::id());
    let mut child = slow_referee(&token, dir.path());
    child.kill().unwrap();
    child.wait().unwrap();
    // The bots die with their parent (PR_SET_PDEATHSIG). A grandchild is not a
    // child of the referee: it is orphaned, which is the one thing a SIGKILLed
    // referee cannot clean up; it must not hold the game up, and here it is only
    // checked that the direct children die.
    let left: Vec<String> = wait_until_gone(&token)
        .into_iter()
        .filter(|p| !p.contains("fork-grandchild"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    for p in processes_with(&token) {
        let pid: i32 = p.split(':').next().unwrap().parse().unwrap();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// A task frozen by cgroup v1's freezer ignores SIGKILL until it is thawed.
/// With `--freeze-waiting` five of six seats are frozen at any time, so a
/// referee killed mid-game would leave them frozen for good (state D,
/// unkillable) but for its guard (`referee freeze-guard`), which thaws, kills
/// and removes what the dead referee left. Skipped where the referee freezes
/// with cgroup v2 (no v1 freezer hierarchy), whose frozen tasks die of
/// SIGKILL as they are.
#[test]
fn sigkill_to_a_referee_whose_bots_are_frozen_still_takes_them_down() {
    let dir = tempfile::tempdir().unwrap();
    let token = format!("frozen-{}", std::process::id());
    let bot =
        |seat: u32, mode: &str| format!("{seat}=python3 tests/hostile/bot.py {mode} --tag {token}");
    let mut run = referee();
    run.args([
        "play",
        "--seed",
        "1",
        "--decision-ms",
        "30000",
        "--freeze-waiting",
    ]);
    // Seat 1 asks first and never answers: the other five wait, frozen.
    for (seat, mode) in [
        (0, "instant"),
        (1, "silent"),
        (2, "instant"),
        (3, "instant"),
        (4, "instant"),
        (5, "instant"),
    ] {
        run.arg("--seat").arg(bot(seat, mode));
    }
    let mut child = spawn_playing_into(&mut run, dir.path());
    let freezer = std::path::Path::new("/sys/fs/cgroup/freezer");
    let prefix = format!("schmier-{}-", child.id());
    let frozen = || -> Vec<std::path::PathBuf> {
        let Ok(entries) = std::fs::read_dir(freezer) else {
            return Vec::new();
        };
        (entries.flatten())
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .filter(|d| {
                std::fs::read_to_string(d.join("freezer.state")).is_ok_and(|s| s.trim() == "FROZEN")
            })
            .collect()
    };
    // Waits for the event (five seats frozen in v1's hierarchy); the bound
    // only turns a host without one into a skip, and a hang into a failure.
    let start = Instant::now();
    while frozen().len() < 5
        && start.elapsed() < Duration::from_secs(60)
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let held = frozen();
    if held.len() < 5 {
        child.kill().unwrap();
        child.wait().unwrap();
        wait_until_gone(&token);
        return crate::support::skip(
            "the referee freezes its bots with cgroup v2 here (no v1 freezer hierarchy)",
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left = wait_until_gone(&token);
    // The guard removes each cgroup once its processes are gone: polls for
    // that (the bound only turns a hang into a failure).
    let start = Instant::now();
    while held.iter().any(|d| d.exists()) && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let cgroups_left: Vec<_> = held.iter().filter(|d| d.exists()).collect();
    if !left.is_empty() || !cgroups_left.is_empty() {
        // Leave the host as it was, then fail.
        for d in &held {
            let _ = std::fs::write(d.join("freezer.state"), "THAWED");
        }
        for p in &left {
            let pid: i32 = p.split(':').next().unwrap().parse().unwrap();
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    assert!(
        left.is_empty(),
        "frozen bots outlived the referee: {left:?}"
    );
    assert!(
        cgroups_left.is_empty(),
        "the referee's cgroups were left: {cgroups_left:?}"
    );
}

#[test]
fn no_timeouts_and_time_scale_change_the_limits() {
    let slow = "1=python3 tests/hostile/bot.py sleep FRACTION=3 FIRST=2 LIMIT_MS=200";
    // 600 ms decisions against a 200 ms limit: fine without limits...
    let done = play()
        .seed(6)
        .inproc_bystanders()
        .args(["--decision-ms", "200", "--no-timeouts"])
        .arg("--seat")
        .arg(slow)
        .ok();
    assert!(seat_faults(&done, 1).is_empty());
    assert_eq!(
        done.lines(1)[0]["time_control"]["decision_ms"],
        serde_json::Value::Null
    );
    // ...and with the limit scaled by 10 (200 ms -> 2 s: far more than 600 ms).
    let done = play()
        .seed(6)
        .inproc_bystanders()
        .args(["--decision-ms", "200", "--time-scale", "10"])
        .arg("--seat")
        .arg(slow)
        .ok();
    assert!(seat_faults(&done, 1).is_empty());
    assert_eq!(done.lines(1)[0]["time_control"]["decision_ms"], 2000);
}
