//! How a game's bots were run, as recorded in every transcript header (format
//! 3) and in a tournament's manifest: the sandbox and its layers, the resource
//! limits, whether bots not on move were frozen, the pace and whether bots had
//! a scratch folder. With the header's
//! `referee`, `time_control` and `fault_policy` it says everything a result
//! depends on besides the bots themselves, so a published folder proves how it
//! was played, and `--resume` can refuse a run that would play it differently.
//!
//! Only what the referee was asked for and enforces is recorded, never what
//! depends on the host (bubblewrap's version, the uid a bot ran as, paths):
//! the same settings give the same record on every machine, so transcripts stay
//! byte-identical and shards played on different hosts still merge. One
//! exception is deliberate: `--sandbox` freezes waiting bots by default only
//! where the host can, and the record says what was done, so a shard played
//! frozen and one played unfrozen are different conditions and do not merge.
//!
//! (The record in words, as `referee verify` prints it with the clock and the
//! fault policy, is `audit.rs`'s `played_under`; how a table's settings become
//! a record is `config.rs`'s `TableSpec::isolation_record`.)

use serde::{Deserialize, Serialize};

/// The isolation and limits a game's bot processes ran under.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IsolationRecord {
    /// `--sandbox`: the sandbox every bot process ran in; `null`: none, each
    /// bot an ordinary process of the referee's user under the limits below.
    pub sandbox: Option<SandboxRecord>,
    pub limits: LimitsRecord,
    /// `--pace-ms`: no decision's consequences reached the seats sooner than
    /// this after its request; `null`: released as soon as judged.
    pub pace_ms: Option<u64>,
    /// `--scratch`: each bot process had a writable folder of its own, kept
    /// across the games of its table.
    pub scratch: bool,
    /// `--scratch-mb` under `--sandbox` with `--scratch`: the size of each
    /// bot's `/scratch` (a tmpfs of its own), in bytes. Written only then, so
    /// a header without it reads as it always did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch_bytes: Option<u64>,
}

/// The sandbox: which tool, and the layers that each hold on their own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxRecord {
    /// What makes the namespaces: `bubblewrap`.
    pub tool: String,
    /// The layers, outermost first (`sandbox/mod.rs` describes each).
    pub layers: Vec<String>,
    /// The size of each bot's private `/tmp` and `/dev/shm`.
    pub tmpfs_bytes: u64,
}

/// The per-bot limits asked for (`null`: none).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsRecord {
    /// `--limit-memory-mb`, in bytes (RLIMIT_AS, and a memory cgroup where the
    /// host gives one).
    pub memory_bytes: Option<u64>,
    /// `--limit-cpu-s`: CPU seconds for a bot's whole session (RLIMIT_CPU).
    pub cpu_seconds: Option<u64>,
    /// `--limit-files` (RLIMIT_NOFILE).
    pub open_files: Option<u64>,
    /// `--limit-procs`: processes in a bot's tree (a pids cgroup).
    pub processes: Option<u64>,
    /// `--limit-cpus`, in thousandths of one core (a cpu cgroup).
    pub cpu_millicores: Option<u64>,
    /// `--stderr-cap`: bytes of a bot's stderr kept in its log.
    pub stderr_cap_bytes: u64,
    /// `--freeze-waiting` (on by default with `--sandbox` where the host can):
    /// every bot but the one on move was frozen, its whole tree. Written only
    /// when true, so a header without it reads as it always did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub frozen_while_waiting: bool,
}

impl IsolationRecord {
    /// The record in plain words, one clause per concern:
    /// "sandboxed by bubblewrap (namespaces, seccomp, landlock; 64 MiB /tmp);
    /// limits: memory 512 MiB, …; no pace; no scratch folder".
    pub fn describe(&self) -> String {
        let sandbox = match &self.sandbox {
            Some(s) => format!(
                "sandboxed by {} ({}; {} MiB /tmp)",
                s.tool,
                s.layers.join(", "),
                s.tmpfs_bytes >> 20
            ),
            None => "not sandboxed".to_owned(),
        };
        let pace = match self.pace_ms {
            Some(ms) => format!("paced to {ms} ms a decision"),
            None => "no pace".to_owned(),
        };
        let scratch = match (self.scratch, self.scratch_bytes) {
            (true, Some(bytes)) => format!("a scratch folder per bot ({} MiB)", bytes >> 20),
            (true, None) => "a scratch folder per bot".to_owned(),
            (false, _) => "no scratch folder".to_owned(),
        };
        format!(
            "{sandbox}; limits: {}; {pace}; {scratch}",
            self.limits.describe()
        )
    }
}

impl LimitsRecord {
    /// "memory 512 MiB, CPU 60 s, 64 files, 16 processes, 0.5 cores, stderr 1 MiB".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = self.memory_bytes {
            parts.push(format!("memory {} MiB", b >> 20));
        }
        if let Some(s) = self.cpu_seconds {
            parts.push(format!("CPU {s} s"));
        }
        if let Some(n) = self.open_files {
            parts.push(format!("{n} open files"));
        }
        if let Some(n) = self.processes {
            parts.push(format!("{n} processes"));
        }
        if let Some(m) = self.cpu_millicores {
            parts.push(cores(m));
        }
        if parts.is_empty() {
            parts.push("none on memory, CPU, files or processes".into());
        }
        parts.push(format!("stderr log {} bytes", self.stderr_cap_bytes));
        if self.frozen_while_waiting {
            parts.push("frozen while others are on move".into());
        }
        parts.join(", ")
    }
}

/// `--limit-cpus` in words: "1 core", "0.5 cores", "2 cores".
pub fn cores(millicores: u64) -> String {
    match millicores {
        1000 => "1 core".to_owned(),
        m => format!("{} cores", m as f64 / 1000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_name_every_limit_and_the_sandbox() {
        let r = IsolationRecord {
            sandbox: Some(SandboxRecord {
                tool: "bubblewrap".into(),
                layers: vec!["namespaces".into(), "seccomp".into()],
                tmpfs_bytes: 64 << 20,
            }),
            limits: LimitsRecord {
                memory_bytes: Some(512 << 20),
                cpu_seconds: Some(60),
                open_files: None,
                processes: Some(16),
                cpu_millicores: Some(500),
                stderr_cap_bytes: 1024,
                frozen_while_waiting: true,
            },
            pace_ms: Some(200),
            scratch: true,
            scratch_bytes: Some(32 << 20),
        };
        assert_eq!(
            r.describe(),
            "sandboxed by bubblewrap (namespaces, seccomp; 64 MiB /tmp); limits: memory \
             512 MiB, CPU 60 s, 16 processes, 0.5 cores, stderr log 1024 bytes, frozen while \
             others are on move; paced to \
             200 ms a decision; a scratch folder per bot (32 MiB)"
        );
    }

    #[test]
    fn one_core_is_singular_and_every_other_count_plural() {
        assert_eq!(cores(1000), "1 core");
        assert_eq!(cores(500), "0.5 cores");
        assert_eq!(cores(1500), "1.5 cores");
        assert_eq!(cores(2000), "2 cores");
    }
}
