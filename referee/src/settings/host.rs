//! What the run asks of this operating system, checked before anything
//! starts (`TableArgs::resource_limits`, before the limits are resolved): a flag whose protection or measurement the OS cannot give
//! (`crate::os::HOST` says which) stops the run (exit 2), naming the OS and
//! the way out, never a run without what was asked for.

use super::isolation::LimitArgs;
use crate::config::Clock;
use crate::os::{Feature, Host};

/// Refuses the first feature `limits`, `clock` and `sandboxed` ask for that
/// `host` cannot honour.
pub fn check(host: &Host, limits: &LimitArgs, clock: Clock, sandboxed: bool) -> anyhow::Result<()> {
    for feature in asked(limits, clock, sandboxed) {
        host.require(feature)?;
    }
    Ok(())
}

/// The features a run asks for: given, not merely defaulted (a freezer
/// comes by default only with a sandbox, which is asked for itself).
fn asked(limits: &LimitArgs, clock: Clock, sandboxed: bool) -> Vec<Feature> {
    let wanted = |f: Feature| match f {
        Feature::Sandbox => sandboxed,
        Feature::FreezeWaiting => limits.freeze_waiting == Some(true),
        Feature::LimitCpus => limits.limit_cpus.is_some(),
        Feature::LimitProcs => limits.limit_procs.is_some(),
        Feature::LimitMemory => limits.limit_memory_mb.is_some(),
        Feature::LimitCpuSeconds => limits.limit_cpu_s.is_some(),
        Feature::LimitFiles => limits.limit_files.is_some(),
        Feature::BotNice => limits.bot_nice.is_some_and(|n| n != 0),
        Feature::CpuClock => clock == Clock::Cpu,
    };
    Feature::ALL.into_iter().filter(|&f| wanted(f)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An operating system that can honour none of them (as the Windows
    /// build will be, at first).
    const NONE: Host = Host {
        name: "Windows",
        supports: |_| false,
    };

    /// The run that asks for `feature` alone.
    fn asking(feature: Feature) -> (LimitArgs, Clock, bool) {
        let mut limits = LimitArgs::default();
        let (mut clock, mut sandboxed) = (Clock::Wall, false);
        match feature {
            Feature::Sandbox => sandboxed = true,
            Feature::FreezeWaiting => limits.freeze_waiting = Some(true),
            Feature::LimitCpus => limits.limit_cpus = Some(0.5),
            Feature::LimitProcs => limits.limit_procs = Some(8),
            Feature::LimitMemory => limits.limit_memory_mb = Some(512),
            Feature::LimitCpuSeconds => limits.limit_cpu_s = Some(60),
            Feature::LimitFiles => limits.limit_files = Some(64),
            Feature::BotNice => limits.bot_nice = Some(5),
            Feature::CpuClock => clock = Clock::Cpu,
        }
        (limits, clock, sandboxed)
    }

    #[test]
    fn each_flag_the_os_cannot_honour_stops_the_run_naming_the_os_and_the_way_out() {
        let mut refused = 0;
        for feature in Feature::ALL {
            let (limits, clock, sandboxed) = asking(feature);
            assert_eq!(asked(&limits, clock, sandboxed), [feature]);
            let Err(e) = check(&NONE, &limits, clock, sandboxed) else {
                panic!("{} was not refused", feature.flag());
            };
            let e = e.to_string();
            for said in [
                feature.flag(),
                "Windows",
                "Run the competition on Linux; docs/organisers.md",
            ] {
                assert!(e.contains(said), "{said:?} missing from: {e}");
            }
            refused += 1;
        }
        assert_eq!(refused, 9, "every feature was asked about");
    }

    #[test]
    fn a_run_asking_nothing_of_the_os_goes_ahead_anywhere() {
        let quiet = LimitArgs {
            freeze_waiting: Some(false),
            bot_nice: Some(0),
            ..LimitArgs::default()
        };
        assert!(asked(&quiet, Clock::Wall, false).is_empty());
        check(&NONE, &quiet, Clock::Wall, false).expect("nothing asked");
    }

    /// The table's limits are never resolved past a refusal: what `play`
    /// and `tournament` both call asks the operating system first.
    #[test]
    fn a_table_asking_for_a_sandbox_or_a_cgroup_limit_is_refused_before_its_limits() {
        let mut table = crate::settings::TableArgs::default();
        table.isolation.sandbox = Some(true);
        let e = table.resource_limits_on(&NONE, Clock::Wall).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--sandbox cannot be honoured on Windows"),
            "{e}"
        );
        let mut table = crate::settings::TableArgs::default();
        table.limits.limit_cpus = Some(1.0);
        let e = table.resource_limits_on(&NONE, Clock::Wall).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--limit-cpus cannot be honoured on Windows"),
            "{e}"
        );
        let plain = crate::settings::TableArgs::default();
        plain
            .resource_limits_on(&NONE, Clock::Wall)
            .expect("nothing asked of the OS");
    }

    #[test]
    fn linux_honours_every_feature() {
        assert_eq!(crate::os::HOST.name, "Linux");
        for feature in Feature::ALL {
            let (limits, clock, sandboxed) = asking(feature);
            if let Err(e) = check(&crate::os::HOST, &limits, clock, sandboxed) {
                panic!("{}: {e}", feature.flag());
            }
        }
    }
}
