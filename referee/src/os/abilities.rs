//! What a run may ask of the host that not every operating system can
//! honour, and the one answer to "can this one?": each implementation says
//! what it can ([`HOST`]); settings validation asks it before anything
//! starts, and a run that asked for a protection this OS cannot give stops
//! there (exit 2), never runs without it.

/// A protection or measurement a run may ask for that rests on the
/// operating system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// `--sandbox`: namespaces, seccomp, Landlock.
    Sandbox,
    /// `--freeze-waiting`: a freezer per bot.
    FreezeWaiting,
    /// `--limit-cpus`: a CPU bandwidth limit on a bot's whole tree.
    LimitCpus,
    /// `--limit-procs`: a process limit on a bot's tree alone.
    LimitProcs,
    /// `--limit-memory-mb`: an address-space limit per process.
    LimitMemory,
    /// `--limit-cpu-s`: a CPU-time limit per process.
    LimitCpuSeconds,
    /// `--limit-files`: an open-file limit per process.
    LimitFiles,
    /// `--bot-nice`: a priority for a bot's whole tree.
    BotNice,
    /// `--clock cpu`: the CPU time of a bot's tree.
    CpuClock,
}

impl Feature {
    /// Every feature, in the order they are checked.
    pub const ALL: [Feature; 9] = [
        Feature::Sandbox,
        Feature::FreezeWaiting,
        Feature::LimitCpus,
        Feature::LimitProcs,
        Feature::LimitMemory,
        Feature::LimitCpuSeconds,
        Feature::LimitFiles,
        Feature::BotNice,
        Feature::CpuClock,
    ];

    /// The flag that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            Feature::Sandbox => "--sandbox",
            Feature::FreezeWaiting => "--freeze-waiting",
            Feature::LimitCpus => "--limit-cpus",
            Feature::LimitProcs => "--limit-procs",
            Feature::LimitMemory => "--limit-memory-mb",
            Feature::LimitCpuSeconds => "--limit-cpu-s",
            Feature::LimitFiles => "--limit-files",
            Feature::BotNice => "--bot-nice",
            Feature::CpuClock => "--clock cpu",
        }
    }

    /// What of Linux it rests on, for the refusal.
    fn rests_on(self) -> &'static str {
        match self {
            Feature::Sandbox => "Linux namespaces, seccomp and Landlock",
            Feature::FreezeWaiting => "a cgroup freezer per bot",
            Feature::LimitCpus => "a cpu cgroup per bot",
            Feature::LimitProcs => "a pids cgroup per bot",
            Feature::LimitMemory => "RLIMIT_AS",
            Feature::LimitCpuSeconds => "RLIMIT_CPU",
            Feature::LimitFiles => "RLIMIT_NOFILE",
            Feature::BotNice => "nice values for a process tree",
            Feature::CpuClock => "the CPU times of a process tree (/proc or a cgroup)",
        }
    }
}

/// An operating system the referee runs on: its name, and which features
/// it can honour.
#[derive(Clone, Copy, Debug)]
pub struct Host {
    pub name: &'static str,
    pub supports: fn(Feature) -> bool,
}

/// The operating system this referee was built for (`super::imp`).
pub const HOST: Host = Host {
    name: super::imp::NAME,
    supports: super::imp::supports,
};

impl Host {
    /// `Ok` if this OS can honour `feature`; else the refusal, naming the
    /// flag, the OS and the way out.
    pub fn require(&self, feature: Feature) -> anyhow::Result<()> {
        if (self.supports)(feature) {
            return Ok(());
        }
        anyhow::bail!(
            "{flag} cannot be honoured on {os}: it rests on {what}, and the referee never \
             runs without a protection it was asked for. Run the competition on Linux; \
             docs/organisers.md (\"Operating systems\")",
            flag = feature.flag(),
            os = self.name,
            what = feature.rests_on(),
        )
    }
}
