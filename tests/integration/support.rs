//! A tiny builder for running `referee play` in a scratch directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const REFEREE: &str = env!("CARGO_BIN_EXE_referee");

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
        let output = Command::new(REFEREE)
            .args(&self.args)
            .args(relaxed)
            .arg("--transcript")
            .arg(&out)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(root())
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

/// `referee verify FILES...`.
pub fn verify(files: &[&Path]) -> Output {
    Command::new(REFEREE)
        .arg("verify")
        .args(files)
        .output()
        .expect("the referee runs")
}

/// Held by the timing-sensitive tests and by the tests that load the machine
/// (hundreds of MB through a pipe), so the former never run beside the latter on
/// CI's two cores.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
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
