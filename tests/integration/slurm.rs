//! `examples/slurm/` on a real single-node Slurm (Debian's `slurm-wlm` and
//! `munge`, which `scripts/test` installs): the test writes a cluster's
//! configuration into a temporary folder, starts munged, slurmctld and slurmd
//! there, and follows examples/slurm/README.md literally from a copy of the
//! repository: `examples/slurm/submit.sh`, wait, compare `results/merged` byte for
//! byte with an unsharded run, `referee verify` it. The second test cancels the
//! task whose bot is held at a gate and recovers with the one command the README
//! gives. Every daemon and job is stopped when a test ends, pass or fail.
//!
//! Starting the daemons needs root; without it (or without the packages) the
//! tests print why and return, unless `SCHMIER_REQUIRE_SLURM` is set (as
//! `scripts/test` does where it can install and run Slurm): then they fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{copy_dir, referee, root, succeeds as run_ok, verify, REFEREE};

/// The bracket both tests play, in place of examples/sample-bracket.toml in
/// the copy: in-process bots and one Python bot behind a gate (absent unless a
/// test creates it), four entrants, so four matchups over the example's eight
/// shards (four of them empty, which a merge must handle too). Generous time
/// limits: runs are compared byte for byte, and a busy host must not make a bot
/// late.
const BRACKET: &str = r#"format = "round-robin"
sets = 1
seed = 2026
decision_ms = 10000
startup_ms = 600000
env = { SCHMIER_TEST_GATE = "@GATE@" }

[[entrant]]
name = "heuristic"
command = "inproc:heuristic"

[[entrant]]
name = "random"
command = "inproc:random"

[[entrant]]
name = "heuristic-2"
command = "inproc:heuristic"

[[entrant]]
name = "python"
command = "python3 tests/tournament/gated_bot.py simple"
"#;

/// Every wait for the cluster: a guard against a hang, far above what the
/// jobs need (about half a minute on a loaded two-core host).
const PATIENCE: Duration = Duration::from_secs(600);

/// Why Slurm cannot run here, if it cannot.
fn unavailable() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("starting slurmctld and slurmd needs root".into());
    }
    for tool in [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scancel",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!(
                "{tool} is not installed (scripts/test installs slurm-wlm and munge)"
            ));
        }
    }
    None
}

/// True when the test may run; otherwise says loudly why not, or fails where
/// Slurm is required.
fn runnable(test: &str) -> bool {
    let Some(reason) = unavailable() else {
        return true;
    };
    if std::env::var_os("SCHMIER_REQUIRE_SLURM").is_some() {
        panic!("{test}: Slurm is required here (SCHMIER_REQUIRE_SLURM) but {reason}");
    }
    crate::support::skip(&format!("{reason}; this test did not run"));
    false
}

/// A single-node cluster in a temporary folder, stopped on drop.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        // munged insists that every user can reach its socket's folder, and
        // that no one else can write where its key lies.
        std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key)
            .unwrap();
        std::fs::write(d.join("munge/munge.key"), key).unwrap();
        std::fs::set_permissions(
            d.join("munge/munge.key"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        let cluster = Cluster {
            conf: d.join("slurm.conf"),
            dir,
        };
        let p = |rel: &str| d.join(rel).display().to_string();
        run_ok(Command::new("munged").args([
            &format!("--key-file={}", p("munge/munge.key")),
            &format!("--socket={}", p("munge/munge.sock")),
            &format!("--pid-file={}", p("munge/munged.pid")),
            &format!("--log-file={}", p("munge/munged.log")),
            &format!("--seed-file={}", p("munge/munged.seed")),
        ]));
        // The node's name as slurmd sees it; its size fixed (config_overrides)
        // so that a task of the example (2 CPUs, 2 GB) fits on any host.
        let probe = run_ok(Command::new("slurmd").arg("-C"));
        let probe = String::from_utf8_lossy(&probe.stdout);
        let host = probe
            .split_whitespace()
            .find_map(|w| w.strip_prefix("NodeName="))
            .expect("slurmd -C names the node")
            .to_owned();
        let conf = format!(
            "ClusterName=schmiertest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={ctld_pid}
SlurmdPidFile={slurmd_pid}
SlurmctldLogFile={ctld_log}
SlurmdLogFile={slurmd_log}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=4096 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
",
            ctld = free_port(),
            slurmd = free_port(),
            sock = p("munge/munge.sock"),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("log/slurmctld.log"),
            slurmd_log = p("log/slurmd.log"),
        );
        std::fs::write(&cluster.conf, conf).unwrap();
        run_ok(cluster.command("slurmctld").arg("-f").arg(&cluster.conf));
        run_ok(cluster.command("slurmd").arg("-f").arg(&cluster.conf));
        // The node is usable once the controller has heard from slurmd.
        cluster.wait("the node to come up", || {
            let out = cluster.command("sinfo").args(["-h", "-o", "%T"]).output();
            out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        cluster
    }

    /// A Slurm command pointed at this cluster.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn wait(&self, what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            if start.elapsed() > PATIENCE {
                panic!("gave up waiting for {what}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Until no job is pending or running.
    fn wait_idle(&self) {
        self.wait("every job to end", || {
            let out = run_ok(self.command("squeue").args(["-h", "-o", "%i %T"]));
            out.stdout.is_empty()
        });
    }

    /// `JobState=` of a job or array task, as `scontrol show job` reports it.
    fn state(&self, job: &str) -> String {
        let out = run_ok(self.command("scontrol").args(["show", "job", job]));
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .find_map(|w| w.strip_prefix("JobState="))
            .unwrap_or("?")
            .to_owned()
    }

    fn logs(&self) -> String {
        let mut text = String::new();
        for log in ["log/slurmctld.log", "log/slurmd.log"] {
            let body = std::fs::read_to_string(self.dir.path().join(log)).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(30).collect();
            text += &format!("--- last lines of {log}\n");
            for l in tail.into_iter().rev() {
                text += l;
                text.push('\n');
            }
        }
        text
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Jobs first, while slurmd can still end them, then the daemons in the
        // reverse order of their start.
        let _ = self.command("scancel").args(["--user=root"]).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            let out = self.command("squeue").args(["-h"]).output();
            if out.map_or(true, |o| !o.status.success() || o.stdout.is_empty()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        for pid_file in ["slurmd.pid", "slurmctld.pid", "munge/munged.pid"] {
            let Ok(text) = std::fs::read_to_string(self.dir.path().join(pid_file)) else {
                continue;
            };
            let Ok(pid) = text.trim().parse::<i32>() else {
                continue;
            };
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let start = Instant::now();
            while nix::sys::signal::kill(pid, None).is_ok() {
                if start.elapsed() > Duration::from_secs(20) {
                    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// A copy of what a user's checkout holds for the example: examples/, the bots
/// the bracket runs, and the referee where the README builds it
/// (target/release/referee; here the binary under test).
fn checkout(gate: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    copy_dir(&root().join("examples/slurm"), &r.join("examples/slurm"));
    copy_dir(
        &root().join("sample-bots/python"),
        &r.join("sample-bots/python"),
    );
    std::fs::create_dir_all(r.join("tests/tournament")).unwrap();
    std::fs::copy(
        root().join("tests/tournament/gated_bot.py"),
        r.join("tests/tournament/gated_bot.py"),
    )
    .unwrap();
    std::fs::write(
        r.join("examples/sample-bracket.toml"),
        BRACKET.replace("@GATE@", &gate.display().to_string()),
    )
    .unwrap();
    std::fs::create_dir_all(r.join("target/release")).unwrap();
    std::os::unix::fs::symlink(REFEREE, r.join("target/release/referee")).unwrap();
    dir
}

/// The unsharded run of the same bracket, for comparison, on the seed secret
/// `submit.sh` made for the shards (so it runs after them).
fn reference(checkout: &Path) -> PathBuf {
    let out = checkout.join("reference");
    run_ok(
        referee()
            .args(["tournament", "examples/sample-bracket.toml", "--quiet"])
            .args(["--seed-secret-file", "results/seed-secret"])
            .arg("--out")
            .arg(&out)
            .current_dir(checkout),
    );
    out
}

/// `examples/slurm/submit.sh [TASKS]` as the README gives it; the array's and
/// the merge's job ids.
fn submit(cluster: &Cluster, checkout: &Path, tasks: Option<&str>) -> (String, String) {
    let out = run_ok(
        cluster
            .command("examples/slurm/submit.sh")
            .args(tasks)
            .current_dir(checkout),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let job = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().nth(1))
            .unwrap_or_else(|| panic!("submit.sh names the {prefix} job:\n{text}"))
            .to_owned()
    };
    (job("tournament:"), job("merge:"))
}

/// The files of a finished tournament that must be deterministic (not the
/// timings or bot logs, which hold wall-clock figures).
fn deterministic(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for name in [
        "tournament.json",
        "seed-secret",
        "journal.jsonl",
        "standings.json",
        "standings.csv",
    ] {
        let bytes = std::fs::read(dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
        files.insert(name.to_owned(), bytes);
    }
    for entry in std::fs::read_dir(dir.join("games")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".jsonl") && !name.ends_with(".timings.jsonl") {
            let bytes = std::fs::read(dir.join("games").join(&name)).unwrap();
            files.insert(format!("games/{name}"), bytes);
        }
    }
    files
}

/// The merged folder is the unsharded run, byte for byte, and every transcript
/// in it verifies.
fn assert_merged_equals(merged: &Path, reference: &Path) {
    let (m, r) = (deterministic(merged), deterministic(reference));
    // Four matchups of one duplicate set: 24 transcripts.
    assert_eq!(r.len(), 5 + 24, "{:?}", r.keys());
    assert_eq!(m.keys().collect::<Vec<_>>(), r.keys().collect::<Vec<_>>());
    for (name, bytes) in &r {
        if &m[name] != bytes {
            // The first line that differs says what happened (a fault, a seat).
            let (ours, theirs) = (
                String::from_utf8_lossy(&m[name]),
                String::from_utf8_lossy(bytes),
            );
            let first = ours
                .lines()
                .zip(theirs.lines())
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .map(|(i, (a, b))| format!("line {}:\n  merged:    {a}\n  unsharded: {b}", i + 1))
                .unwrap_or_else(|| "one is a prefix of the other".into());
            panic!("{name} differs from the unsharded run, {first}");
        }
    }
    let transcripts: Vec<PathBuf> = m
        .keys()
        .filter(|k| k.starts_with("games/"))
        .map(|k| merged.join(k))
        .collect();
    let refs: Vec<&Path> = transcripts.iter().map(PathBuf::as_path).collect();
    let out = verify(&refs);
    assert!(
        out.status.success(),
        "referee verify: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// One cluster at a time, in this process or another: each test's jobs take
/// the node's two CPUs, and two clusters would fight over the daemons.
fn one_at_a_time() -> crate::support::Exclusive {
    crate::support::lock("slurm")
}

#[test]
fn slurm_example_merges_to_the_unsharded_run() {
    if !runnable("slurm_example_merges_to_the_unsharded_run") {
        return;
    }
    let _one = one_at_a_time();
    let gate = tempfile::tempdir().unwrap();
    let repo = checkout(&gate.path().join("never-created"));
    let cluster = Cluster::start();
    let (array, merge) = submit(&cluster, repo.path(), None);
    cluster.wait_idle();
    let reference = reference(repo.path());
    let merged = repo.path().join("results/merged");
    for k in 0..8 {
        assert_eq!(
            cluster.state(&format!("{array}_{k}")),
            "COMPLETED",
            "task {k}"
        );
    }
    assert_eq!(cluster.state(&merge), "COMPLETED");
    assert_merged_equals(&merged, &reference);
}

#[test]
fn slurm_lost_task_recovers_with_the_documented_command() {
    if !runnable("slurm_lost_task_recovers_with_the_documented_command") {
        return;
    }
    let _one = one_at_a_time();
    let gates = tempfile::tempdir().unwrap();
    let gate = gates.path().join("gate");
    let waiting = gates.path().join("gate.waiting");
    let repo = checkout(&gate);
    let r = repo.path();
    let cluster = Cluster::start();
    std::fs::write(&gate, b"closed").unwrap();
    let (array, first_merge) = submit(&cluster, r, None);
    // The first task to seat the Python bot holds there (one task runs at a
    // time: each takes both CPUs); that task is lost.
    cluster.wait("a task to reach the gate", || waiting.exists());
    let running = run_ok(
        cluster
            .command("squeue")
            .args(["-h", "-t", "RUNNING", "-j", &array, "-o", "%K"]),
    );
    let k = String::from_utf8_lossy(&running.stdout).trim().to_owned();
    assert!(k.parse::<u32>().is_ok(), "one running task, not {k:?}");
    run_ok(cluster.command("scancel").arg(format!("{array}_{k}")));
    // The gate opens for the tasks still queued only once the lost task's
    // referee has stopped (it prints how to resume): opened earlier, its bot
    // could begin a game that the cancellation then cuts short.
    let task_log = r.join(format!("results/slurm-{array}_{k}.out"));
    cluster.wait("the cancelled task's referee to stop", || {
        std::fs::read_to_string(&task_log).is_ok_and(|t| t.contains("Resume with:"))
    });
    std::fs::remove_file(&gate).unwrap();
    cluster.wait_idle();
    assert_eq!(cluster.state(&format!("{array}_{k}")), "CANCELLED");
    assert_eq!(cluster.state(&first_merge), "FAILED");
    // The first merge ran after the array (afterany), refused the unfinished
    // shard, and left nothing behind.
    let merged = r.join("results/merged");
    for left in [&merged, &r.join("results/merging")] {
        assert!(!left.exists(), "a refused merge left {}", left.display());
    }
    let merge_log = format!("results/slurm-{first_merge}-merge.out");
    let merge_text = std::fs::read_to_string(r.join(&merge_log)).unwrap();
    assert!(
        merge_text.contains(&format!("shard {k}/8 in results/shard-{k} is not finished")),
        "{merge_text}"
    );
    // The cancelled task said how to resume it by hand: its shard explicitly.
    let task_log = std::fs::read_to_string(&task_log).unwrap();
    assert!(
        task_log.contains("Resume with:") && task_log.contains(&format!("--shard {k}/8")),
        "{task_log}"
    );
    // The README's one recovery command.
    let secret = std::fs::read(r.join("results/seed-secret")).unwrap();
    let (again, merge) = submit(&cluster, r, Some(&k));
    cluster.wait_idle();
    assert_eq!(
        std::fs::read(r.join("results/seed-secret")).unwrap(),
        secret,
        "a re-submission keeps the shards' secret"
    );
    let reference = reference(r);
    assert_eq!(cluster.state(&format!("{again}_{k}")), "COMPLETED");
    assert_eq!(cluster.state(&merge), "COMPLETED");
    assert_merged_equals(&merged, &reference);
}

/// A copy of what examples/slurm/README.md's "A season's workers" needs: the
/// sbatch file and the referee where the README builds it.
fn season_checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    copy_dir(&root().join("examples/slurm"), &r.join("examples/slurm"));
    std::fs::create_dir_all(r.join("target/release")).unwrap();
    std::os::unix::fs::symlink(REFEREE, r.join("target/release/referee")).unwrap();
    dir
}

/// The README's season steps: a season served on loopback with `--jobs 0`
/// (so every set is played by a worker), `season-workers.sbatch` as an array
/// of two tasks, and the run's `--sets` target: the tasks end by themselves
/// once the last set is planned, every set is finished, and `verify` checks
/// the season (each counted result from a transcript, the ratings refitted).
#[test]
fn slurm_array_of_season_workers_plays_the_seasons_sets() {
    if !runnable("slurm_array_of_season_workers_plays_the_seasons_sets") {
        return;
    }
    let _one = one_at_a_time();
    const SETS: u64 = 4;
    let repo = season_checkout();
    let r = repo.path();
    let season = r.join("runs/s1");
    run_ok(
        referee()
            .args(["season", "init"])
            .arg(&season)
            .args(["--seed", "2026", "--unchecked"])
            .args(["--entrant", "heur=builtin:heuristic"])
            .args(["--entrant", "rand=builtin:random"])
            .args(["--entrant", "cautious=builtin:heuristic"]),
    );
    let workers = r.join("season-workers");
    std::fs::create_dir(&workers).unwrap();
    let made = run_ok(
        referee()
            .args(["season", "worker-token"])
            .arg(&season)
            .arg("slurm"),
    );
    std::fs::write(workers.join("token"), &made.stdout).unwrap();
    let cluster = Cluster::start();
    let port = free_port();
    let mut run = referee()
        .args(["season", "run"])
        .arg(&season)
        .args(["--serve", &format!("127.0.0.1:{port}")])
        .args(["--workers", "--jobs", "0", "--sets", &SETS.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = run_ok(
        cluster
            .command("sbatch")
            // One CPU a task, so that both run at once on the two-CPU node.
            .args(["--parsable", "--array=0-1", "--cpus-per-task=1"])
            .arg("examples/slurm/season-workers.sbatch")
            .env("SCHMIER_SEASON_SERVER", format!("http://127.0.0.1:{port}"))
            .current_dir(r),
    );
    let array = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    // The run ends once its sets are finished (and it has told the asking
    // workers so, for a few seconds more); the tasks, once told. A task that
    // ends any other way has failed: say how at once.
    let task_logs = || {
        let mut text = String::new();
        for k in 0..2 {
            let log = workers.join(format!("slurm-{array}_{k}.out"));
            let body = std::fs::read_to_string(&log).unwrap_or_default();
            text += &format!("--- {}\n{body}", log.display());
        }
        text
    };
    cluster.wait("the season's run to reach its sets", || {
        if run.try_wait().unwrap().is_some() {
            return true;
        }
        // Both tasks gone from the queue: each must have completed (told by
        // the lingering run), not failed.
        let queued = run_ok(cluster.command("squeue").args(["-h", "-j", &array]));
        if queued.stdout.is_empty() {
            for k in 0..2 {
                let state = cluster.state(&format!("{array}_{k}"));
                assert_eq!(state, "COMPLETED", "task {k}:\n{}", task_logs());
            }
        }
        false
    });
    let ended = run.wait_with_output().unwrap();
    assert!(
        ended.status.success(),
        "season run: {}",
        String::from_utf8_lossy(&ended.stderr)
    );
    cluster.wait_idle();
    for k in 0..2 {
        let state = cluster.state(&format!("{array}_{k}"));
        let log = std::fs::read_to_string(workers.join(format!("slurm-{array}_{k}.out")))
            .unwrap_or_default();
        assert_eq!(
            state, "COMPLETED",
            "task {k} ended by itself; its log:\n{log}"
        );
    }
    let standings = run_ok(
        referee()
            .args(["season", "standings", "--json"])
            .arg(&season),
    );
    let standings: serde_json::Value = serde_json::from_slice(&standings.stdout).unwrap();
    assert_eq!(standings["sets"], SETS, "{standings}");
    let checked = referee().arg("verify").arg(&season).output().unwrap();
    assert!(
        checked.status.success(),
        "referee verify: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}
