//! A bot's CPU time as its cgroup counts it (every task, those that exited
//! included), for `--clock cpu`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A cgroup's CPU time file: cgroup v2's `cpu.stat` (`usage_usec`) or v1's
/// `cpuacct.usage` (nanoseconds).
#[derive(Clone, Debug)]
pub struct CgroupCpu {
    file: Arc<PathBuf>,
    v2: bool,
}

impl CgroupCpu {
    pub fn v2(file: PathBuf) -> CgroupCpu {
        CgroupCpu {
            file: Arc::new(file),
            v2: true,
        }
    }

    pub fn v1(file: PathBuf) -> CgroupCpu {
        CgroupCpu {
            file: Arc::new(file),
            v2: false,
        }
    }

    pub fn read(&self) -> Option<Duration> {
        let text = std::fs::read_to_string(self.file.as_path()).ok()?;
        if self.v2 {
            let usec = text
                .lines()
                .find_map(|l| l.strip_prefix("usage_usec "))?
                .trim()
                .parse()
                .ok()?;
            Some(Duration::from_micros(usec))
        } else {
            Some(Duration::from_nanos(text.trim().parse().ok()?))
        }
    }
}
