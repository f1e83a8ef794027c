//! How a game's bots were run, as recorded in every transcript header (format
//! 3) and in a tournament's manifest: the sandbox and its layers, the resource
//! limits, the pace and whether bots had a scratch folder. With the header's
//! `referee`, `time_control` and `fault_policy` it says everything a result
//! depends on besides the bots themselves, so a published folder proves how it
//! was played, and `--resume` can refuse a run that would play it differently.
//!
//! Only what the referee was asked for and enforces is recorded, never what
//! depends on the host (bubblewrap's version, the uid a bot ran as, paths):
//! the same settings give the same record on every machine, so transcripts stay
//! byte-identical and shards played on different hosts still merge.

use serde::{Deserialize, Serialize};

use crate::config::TableSpec;
use crate::transcript::{FaultPolicy, TimeControlRecord};
use schmier_protocol::wire::Clock;

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
}

/// The sandbox: which tool, and the layers that each hold on their own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxRecord {
    /// What makes the namespaces: `bubblewrap`.
    pub tool: String,
    /// The layers, outermost first (`bot/sandbox.rs` describes each).
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
}

impl TableSpec {
    /// What this table's transcripts record of how its bots run.
    pub fn isolation_record(&self) -> IsolationRecord {
        let l = &self.limits;
        IsolationRecord {
            sandbox: self.isolation.sandbox.as_ref().map(|_| SandboxRecord {
                tool: crate::bot::SANDBOX_TOOL.into(),
                layers: crate::bot::SANDBOX_LAYERS.map(String::from).to_vec(),
                tmpfs_bytes: crate::bot::TMPFS_BYTES,
            }),
            limits: LimitsRecord {
                memory_bytes: l.memory_bytes,
                cpu_seconds: l.cpu_seconds,
                open_files: l.open_files,
                processes: l.processes,
                cpu_millicores: l.cpu_millicores,
                stderr_cap_bytes: self.stderr_cap,
            },
            pace_ms: self.pace.map(|d| d.as_millis() as u64),
            scratch: self.isolation.scratch.is_some(),
        }
    }
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
        let scratch = match self.scratch {
            true => "a scratch folder per bot",
            false => "no scratch folder",
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
            parts.push(format!("{} cores", m as f64 / 1000.0));
        }
        if parts.is_empty() {
            parts.push("none on memory, CPU, files or processes".into());
        }
        parts.push(format!("stderr log {} bytes", self.stderr_cap_bytes));
        parts.join(", ")
    }
}

/// Everything a header (or a manifest) records of how its games were played,
/// in words: the referee, the isolation, the clock and the fault policy. What
/// `referee verify` prints; equal texts mean equal conditions.
pub fn played_under(
    referee: Option<&str>,
    time: &TimeControlRecord,
    policy: &FaultPolicy,
    isolation: Option<&IsolationRecord>,
) -> String {
    let isolation = match isolation {
        Some(i) => i.describe(),
        None => "isolation not recorded (written before transcript format 3)".to_owned(),
    };
    let clock = match time.decision_ms {
        Some(ms) => format!(
            "{} clock, {ms} ms a decision + {} ms grace, {} ms to start, {} ms time bank",
            match time.clock {
                Clock::Wall => "wall",
                Clock::Cpu => "CPU",
            },
            time.grace_ms,
            time.startup_ms.unwrap_or(0),
            time.time_bank_ms
        ),
        None => "no time limits".to_owned(),
    };
    let faults = format!(
        "{}; {}; {}",
        match policy.forfeit {
            true => "a faulted team forfeits",
            false => "no forfeits",
        },
        match policy.max_faults {
            Some(n) => format!("the fallback replaces a seat after {n} faults"),
            None => "a seat is replaced only when its bot is gone".to_owned(),
        },
        match policy.restart {
            true => "crashed bots are restarted",
            false => "crashed bots are not restarted",
        }
    );
    format!(
        "{}; {isolation}; {clock}, lines up to {} bytes; {faults}",
        referee.unwrap_or("referee version not recorded"),
        time.max_line_bytes
    )
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
            },
            pace_ms: Some(200),
            scratch: true,
        };
        assert_eq!(
            r.describe(),
            "sandboxed by bubblewrap (namespaces, seccomp; 64 MiB /tmp); limits: memory \
             512 MiB, CPU 60 s, 16 processes, 0.5 cores, stderr log 1024 bytes; paced to \
             200 ms a decision; a scratch folder per bot"
        );
    }
}
