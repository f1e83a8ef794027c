//! Spies of the clock (issue 28, items 4 and 5): work a CPU clock must charge
//! though it was done in processes that are gone by the time it looks, and a
//! bot that spins while others think, which must not slow the seat on move
//! into a timeout. The bots are `tests/spy/clock.py`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::spy::tag;
use crate::support::{exclusive, root, skip, REFEREE};

fn bot(mode: &str, args: &str, token: &str) -> String {
    format!("python3 tests/spy/clock.py {mode} {args} --tag {token}")
}

/// A finished `referee ARGS` run: its output folder (and the temporary
/// directory holding it).
struct Ran {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Ran {
    /// Game 1's lines of `type`.
    fn lines_of(&self, kind: &str) -> Vec<serde_json::Value> {
        read_lines(&self.dir.join("game-0001.jsonl"))
            .into_iter()
            .filter(|l| l["type"] == kind)
            .collect()
    }

    fn timings(&self) -> Vec<serde_json::Value> {
        read_lines(&self.dir.join("timings/game-0001.jsonl"))
    }
}

fn read_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect()
}

/// `referee play ARGS` (one game, seed 3, lenient, in-process bots but in the
/// seats `ARGS` gives), inside `boost` where there is one; asserts it succeeded.
fn play_table(boost: Option<&Boost>, args: &[String]) -> Ran {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let mut all: Vec<String> = ["play", "--seed", "3", "--policy", "lenient"]
        .into_iter()
        .chain(["--startup-ms", "20000", "--grace-ms", "50"])
        .chain(["--team", "inproc:heuristic", "--team", "inproc:random"])
        .chain(["--team", "inproc:random"])
        .map(String::from)
        .chain(args.iter().cloned())
        .collect();
    all.push("--transcript".into());
    all.push(dir.to_string_lossy().into_owned());
    let mut cmd = match boost {
        Some(boost) => boost.referee(&all),
        None => {
            let mut cmd = Command::new(REFEREE);
            cmd.current_dir(root()).args(&all);
            cmd
        }
    };
    let output = cmd.output().expect("the referee runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ran { _tmp: tmp, dir }
}

fn seat(n: u32, cmd: String) -> [String; 2] {
    ["--seat".into(), format!("{n}={cmd}")]
}

/// A bot whose first decision forks ten workers in turn, each spinning 100 ms
/// of its own CPU and exiting: 1 CPU-s against a 300 ms CPU limit. Summing the
/// live tasks (as the referee once did) charged it almost nothing; the bot's
/// cgroup charges all of it, sandboxed or not (the unit test in
/// `referee/src/os/linux/cpu.rs` shows the live-task sum missing the same work).
///
/// What the test asserts is the charge, not just the timeout: the sidecar's
/// CPU time of the timed-out decision is past the limit plus grace, so the
/// CPU clock ended it, not the wall-clock backstop (ten times the limit),
/// which would time out a bot charged nothing once the host is slow enough.
/// The bot needs a ninth of one core to be charged 350 ms within the
/// backstop's 3 s: in the boosted cgroup ([`Boost`]) it has far more whatever
/// the host's load.
#[test]
fn work_in_short_lived_workers_is_charged_sandboxed_or_not() {
    let _machine = exclusive();
    let boost = Boost::new();
    if boost.is_none() {
        skip("no cgroup v1 cpu hierarchy to boost: the CPU share is the host's");
    }
    for sandbox in [false, true] {
        let mut args: Vec<String> = ["--clock", "cpu", "--decision-ms", "300"]
            .map(String::from)
            .into();
        args.extend(seat(1, bot("workers", "1 1000", &tag("workers"))));
        if sandbox {
            args.push("--sandbox".into());
        }
        let ran = play_table(boost.as_ref(), &args);
        let faults = ran.lines_of("fault");
        // The work goes on past the timeout, so the next request may find the
        // bot still at it and time out too: the CPU it spends is its own.
        assert!(!faults.is_empty(), "sandbox {sandbox}: no timeout");
        for f in &faults {
            assert_eq!(
                (f["seat"].as_u64(), f["fault"].as_str()),
                (Some(1), Some("timeout")),
                "sandbox {sandbox}: {faults:?}"
            );
        }
        let timings = ran.timings();
        let timed_out = (timings.iter())
            .find(|t| t["fault"] == "timeout")
            .expect("the timeout is in the sidecar");
        let charged = timed_out["micros"].as_u64().unwrap();
        assert!(
            charged > 350_000,
            "sandbox {sandbox}: the workers' CPU was not charged ({charged} µs): {timed_out}"
        );
        assert!(timed_out["wall_micros"].is_u64(), "{timed_out}");
    }
}

/// A v1 `cpu` cgroup for the referee under test with 256 times the default
/// weight, removed on drop. Why: on a host busy with other work (this
/// machine's other builds and tests), a bot on move competes with every
/// runnable task there, and no referee can give it a core the host does not
/// have. In this cgroup the scheduler guarantees the table's runnable tasks,
/// together, `262144 / (262144 + 1024 n)` of each CPU against `n` runnable
/// tasks outside (at the default nice): more than 80 % against 60. What
/// stays in the test's hands is what the referee decides — who at the table
/// may run.
struct Boost {
    dir: PathBuf,
}

impl Boost {
    fn new() -> Option<Boost> {
        let dir = Path::new("/sys/fs/cgroup/cpu").join(format!("schmier-test-{}", tag("boost")));
        std::fs::create_dir(&dir).ok()?;
        let boost = Boost { dir };
        std::fs::write(boost.dir.join("cpu.shares"), "262144").ok()?;
        Some(boost)
    }

    /// `referee ARGS` started inside the cgroup (it moves itself in before it
    /// execs, so every bot it starts is inside too).
    fn referee(&self, args: &[String]) -> Command {
        let mut cmd = Command::new("sh");
        cmd.current_dir(root())
            .arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join("cgroup.procs"))
            .arg(REFEREE)
            .args(args);
        cmd
    }
}

impl Drop for Boost {
    fn drop(&mut self) {
        let start = std::time::Instant::now();
        while std::fs::remove_dir(&self.dir).is_err() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// How a table with a hog went for the victim: its faults, and each of its
/// decisions' own CPU and wall time (ms), as it reports them.
struct Starved {
    victim_faults: Vec<serde_json::Value>,
    decisions: Vec<(u64, u64)>,
}

/// The victim in seat 1 (five decisions of 200 ms of its own CPU, 400 ms
/// limit), the hog in seat 2, in-process bots elsewhere, in `boost`.
fn table_with_a_hog(boost: &Boost, flags: &[&str]) -> Starved {
    let token = tag("hog");
    let mut args: Vec<String> = vec!["--decision-ms".into(), "400".into()];
    args.extend(seat(1, bot("victim", "5 200", &token)));
    args.extend(seat(2, bot("hog", "0", &token)));
    args.extend(flags.iter().map(|f| f.to_string()));
    let ran = play_table(Some(boost), &args);
    let victim_faults = (ran.lines_of("fault").into_iter())
        .filter(|f| f["seat"] == 1)
        .collect();
    let log = std::fs::read_to_string(ran.dir.join("stderr/player1.log")).unwrap_or_default();
    let decisions = (log.lines())
        .filter_map(|l| l.strip_prefix("CLOCK victim "))
        .map(|l| {
            let (cpu, wall) = l.split_once(' ').unwrap();
            (cpu.parse().unwrap(), wall.parse().unwrap())
        })
        .collect();
    Starved {
        victim_faults,
        decisions,
    }
}

/// A hog spinning three threads per CPU from its first request on — while
/// the others think as well as on its own turn — beside an honest victim
/// that needs 200 ms of its own CPU per decision against a 400 ms wall-clock
/// limit.
///
/// Without the sandbox (no freezer), the victim shares the CPUs with the
/// hog's threads: with `3c` spinning threads on `c` CPUs it gets at most
/// `c / (3c + 1)` of one, under a third, so 200 ms of CPU take over 600 ms,
/// past 400 + 50: it times out, whatever the host's speed (a busier host only
/// slows it more). With `--sandbox` the hog is frozen whenever it is not on
/// move, so the victim competes only with the world outside the boosted
/// cgroup (above: over 80 % of a CPU, 250 ms at most for its 200 ms) and the
/// referee, idle while it waits: no timeout, with a margin of almost 2x.
/// The same holds unsandboxed with `--freeze-waiting`.
#[test]
fn no_seat_is_starved_by_a_hog_under_the_sandbox() {
    let _machine = exclusive();
    let Some(boost) = Boost::new() else {
        skip("no writable cgroup v1 cpu hierarchy to guarantee the table its CPU share");
        return;
    };
    let open = table_with_a_hog(&boost, &[]);
    assert_eq!(open.decisions.len(), 5, "{:?}", open.decisions);
    assert!(
        (open.victim_faults.iter()).any(|f| f["fault"] == "timeout"),
        "the hog should starve the victim unsandboxed: {:?}",
        open.decisions
    );
    // Sandboxed the freezer is on by default; unsandboxed it can be asked
    // for (`--freeze-waiting`): the only difference from the run above.
    for flags in [&["--sandbox"][..], &["--freeze-waiting"]] {
        let fair = table_with_a_hog(&boost, flags);
        assert_eq!(fair.decisions.len(), 5, "{flags:?}: {:?}", fair.decisions);
        for (cpu, _) in &fair.decisions {
            assert!(*cpu >= 200, "the victim did its work: {:?}", fair.decisions);
        }
        assert!(
            fair.victim_faults.is_empty(),
            "starved with {flags:?}: {:?}; its decisions (CPU ms, wall ms): {:?}",
            fair.victim_faults,
            fair.decisions
        );
    }
}

/// Every `NICE n` the nice spy reported in the logs beneath `dir`.
fn nice_reports(dir: &Path) -> Vec<i32> {
    let mut logs = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(p) = logs.pop() {
        match std::fs::read_dir(&p) {
            Ok(entries) => logs.extend(entries.flatten().map(|e| e.path())),
            Err(_) => {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                found.extend(
                    (text.lines()).filter_map(|l| l.strip_prefix("NICE ")?.parse::<i32>().ok()),
                );
            }
        }
    }
    found
}

/// A tournament of the nice spy and two built-in bots (one matchup, six
/// games: its processes fresh in each, so most are built ahead and
/// released), with `flags`; every nice value the spy reported.
fn nice_in_a_tournament(flags: &[&str]) -> Vec<i32> {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let token = tag("nice");
    // It tries to raise its own priority at every decision: in vain.
    let spy = format!("n={}", bot("nice", "lower", &token));
    let mut cmd = crate::support::referee();
    cmd.args(["tournament", "--entrant", &spy])
        .args([
            "--entrant",
            "b=builtin:random",
            "--entrant",
            "c=builtin:heuristic",
        ])
        // No clock: a spy slowed by a test beside it is never forfeited.
        .args(["--jobs", "1", "-q", "--no-timeouts", "--out"])
        .arg(&out)
        .args(flags);
    crate::support::succeeds(&mut cmd);
    nice_reports(&out.join("stderr"))
}

/// The bots' priority (`--bot-nice`). A root referee that freezes waiting
/// bots (by default with `--sandbox`, or `--freeze-waiting`) runs their
/// every process at nice -5, so that on a busy host the seat on move, the
/// only one running, is not slowed to half a CPU by the host's other work:
/// sandboxed in a tournament (bots built ahead at nice 19 and released) and
/// in a match (bots started at once in kept sandboxes), and unsandboxed. It
/// leaves them at 0 where they are not frozen, gives them what
/// `--bot-nice` says, and refuses a value that is not a nice value. A
/// sandboxed bot cannot raise its own priority (no CAP_SYS_NICE, and
/// `RLIMIT_NICE` 0 whatever the referee's was).
#[test]
fn bots_run_at_the_nice_value_the_referee_gives_them() {
    if !nix::unistd::geteuid().is_root() {
        skip("a priority above the usual one is a root referee's");
        return;
    }
    let all = |v: &[i32], n: i32| !v.is_empty() && v.iter().all(|&x| x == n);
    let sandboxed = nice_in_a_tournament(&["--sandbox"]);
    assert!(all(&sandboxed, -5), "tournament --sandbox: {sandboxed:?}");
    // Six games' decisions (two seats, each playing six cards a hand in at
    // least four hands a game): the bots of the later games were built ahead.
    assert!(
        sandboxed.len() >= 6 * 2 * 24,
        "{} decisions",
        sandboxed.len()
    );
    let told = nice_in_a_tournament(&["--sandbox", "--bot-nice", "4"]);
    assert!(all(&told, 4), "--bot-nice 4: {told:?}");
    let token = tag("nice");
    for (flags, nice) in [
        (&["--sandbox"][..], -5),
        (&["--freeze-waiting"], -5),
        (&[], 0),
        (&["--freeze-waiting", "--bot-nice", "0"], 0),
    ] {
        let mut args: Vec<String> = seat(1, bot("nice", "", &token)).into();
        args.push("--no-timeouts".into());
        args.extend(flags.iter().map(|f| f.to_string()));
        let ran = play_table(None, &args);
        let reported = nice_reports(&ran.dir.join("stderr"));
        assert!(all(&reported, nice), "play {flags:?}: {reported:?}");
    }
    for bad in ["20", "-21"] {
        let message =
            crate::support::refused(crate::support::referee().args(["play", "--bot-nice", bad]));
        assert!(
            message.contains("from -20 (first) to 19 (last)"),
            "--bot-nice {bad}: {message}"
        );
    }
}
