//! The one harness every integration test runs the binary through:
//! [`referee`] for any subcommand (a plain `Command`, so a test can also spawn
//! and signal it), [`play`] for a game or match with its transcript in a fresh
//! directory, [`succeeds`] and [`refused`] to judge how it ended, [`scratch`]
//! for an output folder, [`exclusive`] for the tests that must not share the
//! machine, and [`skip`] for a test that cannot run on this host.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const REFEREE: &str = env!("CARGO_BIN_EXE_referee");

/// A seed secret (`--seed-secret`) for the tests that compare two tournament
/// runs byte for byte: a run given none draws its own, and deals other cards.
pub const SECRET: &str = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7";

/// The repository root (sample bots live there).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub struct Run {
    pub dir: tempfile::TempDir,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// `referee play` with the given extra arguments, transcript in a fresh directory.
pub fn play() -> Run {
    Run {
        dir: tempfile::tempdir().expect("a temp dir"),
        args: vec!["play".into()],
        env: Vec::new(),
    }
}

pub struct Done {
    pub output: Output,
    pub dir: PathBuf,
}

impl Run {
    pub fn arg(mut self, a: impl Into<String>) -> Run {
        self.args.push(a.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, a: I) -> Run {
        self.args.extend(a.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable of the referee process.
    pub fn env(mut self, key: &str, value: &str) -> Run {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn team(self, cmd: &str) -> Run {
        self.arg("--team").arg(cmd)
    }

    /// Every seat not given by `--seat` is played inside the referee, so no
    /// bystander can be slowed into a timeout by a busy host.
    pub fn inproc_bystanders(self) -> Run {
        self.team("inproc:heuristic")
            .team("inproc:random")
            .team("inproc:random")
    }

    pub fn seed(self, seed: u64) -> Run {
        self.arg("--seed").arg(seed.to_string())
    }

    /// Runs it from the repository root and asserts it succeeded.
    pub fn ok(self) -> Done {
        let done = self.run();
        assert!(
            done.output.status.success(),
            "referee failed: {}\nstdout:\n{}\nstderr:\n{}",
            done.output.status,
            String::from_utf8_lossy(&done.output.stdout),
            String::from_utf8_lossy(&done.output.stderr)
        );
        done
    }

    pub fn run(self) -> Done {
        let out = self.dir.path().join("out");
        // Unless a test is about time limits, its bots (debug builds, on a busy
        // 2-core host) get a decision limit no busy host reaches, so a bystander
        // is never slowed into a timeout.
        let timed = self
            .args
            .iter()
            .any(|a| a == "--decision-ms" || a == "--no-timeouts" || a == "--time-scale");
        let relaxed: &[&str] = if timed {
            &[]
        } else {
            &["--decision-ms", "10000"]
        };
        let output = referee()
            .args(&self.args)
            .args(relaxed)
            .arg("--transcript")
            .arg(&out)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("the referee runs");
        // Keep the directory alive for inspection through `Done`.
        let dir = self.dir.keep();
        Done {
            output,
            dir: dir.join("out"),
        }
    }
}

impl Done {
    pub fn transcript(&self, game: u32) -> PathBuf {
        self.dir.join(format!("game-{game:04}.jsonl"))
    }

    pub fn text(&self, game: u32) -> String {
        std::fs::read_to_string(self.transcript(game)).expect("the transcript exists")
    }

    pub fn lines(&self, game: u32) -> Vec<serde_json::Value> {
        self.text(game)
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON lines"))
            .collect()
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.dir.parent().unwrap());
    }
}

/// The `referee` binary, run from the repository root (where the sample
/// bots' relative commands resolve). The caller adds arguments, environment
/// and pipes, then runs it with [`succeeds`] or [`refused`], or spawns it.
pub fn referee() -> Command {
    let mut cmd = Command::new(REFEREE);
    cmd.current_dir(root());
    cmd
}

/// `referee verify FILES...`.
pub fn verify(files: &[&Path]) -> Output {
    referee()
        .arg("verify")
        .args(files)
        .output()
        .expect("the referee runs")
}

/// A folder `name` for one test's output under Cargo's scratch space for
/// integration tests (`target/tmp`), one parent per test process and `group`
/// (the test module), never inside the checkout's sources. Anything an earlier
/// run left there is removed; the folder itself is not created (a refused
/// command must be seen to create nothing), its parent is.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{group}-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    dir
}

/// A lock taken by [`lock`], released when dropped.
pub struct Exclusive {
    _lock: nix::fcntl::Flock<std::fs::File>,
}

/// Waits for, then holds, the exclusive lock named `name`, across the threads
/// of one test process and across test processes (a runner such as nextest
/// starts one process per test, where an in-process mutex excludes nothing):
/// an `flock` on a file in Cargo's scratch space, which every test process of
/// this build shares. `flock` locks belong to the open file, so two threads
/// that each open the file exclude each other too; the kernel drops the lock
/// of a test process that dies.
pub fn lock(name: &str) -> Exclusive {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("failed to open the lock file {}: {e}", path.display()));
    let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .unwrap_or_else(|(_, e)| panic!("failed to lock {}: {e}", path.display()));
    Exclusive { _lock: lock }
}

/// Held by the timing-sensitive tests and by the tests that load the machine
/// (hundreds of MB through a pipe), so the former never run beside the latter on
/// CI's two cores, whichever runner starts them.
pub fn exclusive() -> Exclusive {
    lock("machine")
}

/// Says loudly that the calling test did not run (or ran only in part, as
/// `reason` says) on this host: straight to the standard error, which the test
/// harness does not capture, and into `target/tmp/skipped.txt`, which
/// `scripts/test` counts and lists after the run. With `SCHMIER_NO_SKIP` set a
/// skip is a failure instead, for a host that must run everything.
pub fn skip(reason: &str) {
    use std::io::Write;
    // libtest names each test's thread after the test; a runner that runs a
    // test on the main thread leaves only the reason to go by.
    let thread = std::thread::current();
    let test = match thread.name() {
        Some(name) if name != "main" => name,
        _ => "a test",
    };
    let line = format!("SKIPPED {test}: {reason}\n");
    if std::env::var_os("SCHMIER_NO_SKIP").is_some() {
        panic!("{test} may not skip here (SCHMIER_NO_SKIP), but: {reason}");
    }
    let _ = std::io::stderr().write_all(line.as_bytes());
    // SCHMIER_SKIP_RECORD: elsewhere, for the harness's own test of this.
    let record = std::env::var_os("SCHMIER_SKIP_RECORD").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped.txt"),
        PathBuf::from,
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&record)
        .unwrap_or_else(|e| panic!("failed to open {}: {e}", record.display()));
    // One write of one short line to a file opened for appending: lines of
    // tests skipping at once do not interleave.
    file.write_all(line.as_bytes())
        .unwrap_or_else(|e| panic!("failed to write {}: {e}", record.display()));
}

/// A plain recursive copy of files and folders (what a tournament directory or
/// an example holds).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Runs a command to its end and asserts it succeeded, showing its output if not.
pub fn succeeds(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not start: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A finished command's standard output, as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A finished command's standard error, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs a command that must refuse its input: exit status 2 (bad input, not a
/// crash: no panic) with a message; its standard error.
pub fn refused(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not start: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{cmd:?} should have refused with status 2\nstdout:\n{}\nstderr:\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{cmd:?} panicked: {stderr}");
    stderr
}

/// The four-entrant tournament of [`tournament_interrupted_after_matchup_0`]
/// into `out`: one table at a time, seed 3, `-q`, no seed secret given.
pub fn four_entrants(out: &Path) -> Command {
    let mut c = referee();
    c.args(["tournament", "--jobs", "1", "--seed", "3", "-q"])
        .args([
            "--entrant",
            "a=inproc:random",
            "--entrant",
            "b=inproc:random",
        ])
        .args(["--entrant", "c=inproc:heuristic"])
        .args([
            "--entrant",
            "g=python3 tests/tournament/gated_bot.py random",
        ])
        .args(["--startup-ms", "120000"])
        .arg("--out")
        .arg(out);
    c
}

/// A four-entrant tournament into `out` ([`four_entrants`]), interrupted with
/// SIGINT once its second table waits for the gated bot's hello: matchup 0
/// (a, b, c, all in process) is complete, six games, and nothing after it is.
/// Returns the referee's output (its exit status is the caller's to check).
/// It deals from [`SECRET`], so that its resume can be compared with a run
/// of its own.
pub fn tournament_interrupted_after_matchup_0(out: &Path) -> Output {
    interrupted_after_matchup_0(out, Some(SECRET))
}

/// [`tournament_interrupted_after_matchup_0`] on a secret the referee draws.
pub fn tournament_interrupted_after_matchup_0_drawing(out: &Path) -> Output {
    interrupted_after_matchup_0(out, None)
}

fn interrupted_after_matchup_0(out: &Path, secret: Option<&str>) -> Output {
    let gate = PathBuf::from(format!("{}.gate", out.display()));
    std::fs::write(&gate, b"closed").unwrap();
    let waiting = PathBuf::from(format!("{}.waiting", gate.display()));
    let mut c = four_entrants(out);
    if let Some(secret) = secret {
        c.args(["--seed-secret", secret]);
    }
    let child = c
        .arg("--bot-env")
        .arg(format!("SCHMIER_TEST_GATE={}", gate.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    interrupt_when(child, "the gated bot waited", || waiting.exists())
}

/// Sends SIGINT to `child` once `ready()` holds — an event the child causes
/// (a file a gated bot makes, a journal line), never a time — and returns
/// its output. Panics if the child ends first, or after ten minutes.
pub fn interrupt_when(
    mut child: std::process::Child,
    what: &str,
    ready: impl FnMut() -> bool,
) -> Output {
    wait_while_running(&mut child, what, ready);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    child.wait_with_output().unwrap()
}

/// Polls until `ready()` holds, an event the still-running `child` causes.
/// Panics if the child ends first, or after ten minutes.
pub fn wait_while_running(
    child: &mut std::process::Child,
    what: &str,
    mut ready: impl FnMut() -> bool,
) {
    let start = std::time::Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before {what}");
        }
        assert!(
            start.elapsed().as_secs() < 600,
            "gave up waiting until {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The command an interrupted run printed on the line after "Resume with:".
pub fn resume_command(stderr: &str) -> String {
    stderr
        .lines()
        .skip_while(|l| !l.contains("Resume with:"))
        .nth(1)
        .expect("the resume command")
        .trim()
        .to_owned()
}

/// Releases the `hold` spies (`tests/spy/spy.py hold`) of processes `pids`:
/// sends each SIGWINCH (which a spy ignores until it waits, so the signal is
/// sent again every 20 ms) until `referee` is done, or five minutes.
pub fn release_held<T>(pids: &[u32], referee: &std::thread::JoinHandle<T>) {
    let start = std::time::Instant::now();
    while !referee.is_finished() && start.elapsed() < std::time::Duration::from_secs(300) {
        for pid in pids {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid as i32),
                nix::sys::signal::Signal::SIGWINCH,
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
