//! Spies of the third round (issue 28): files of `/proc` that show more than
//! a bot's own state, and the page-map partner channel. Each is shown to work
//! without `--sandbox` on this host and to be refused with it.

use crate::spy::{partners_talk_only_unsandboxed, spy};
use crate::support::play;

/// Unsandboxed (the spy runs as the referee's user), every class of `/proc`
/// file is read: the page maps and `smaps` (page-cache residency, the
/// partner's mappings), the mount table and uid maps (host paths, the host
/// uid), another process's files (the sandbox's pid 1, the spy's own child),
/// host-wide ones (`/proc/cgroups` counts the host's cgroups). Sandboxed each
/// is refused (`EACCES`, Landlock), and what runtimes read of their own
/// process and the host's masked summaries still reads.
#[test]
fn proc_files_that_show_more_than_the_bots_own_state_are_refused_sandboxed() {
    let results = |sandbox: bool| -> Vec<(String, String)> {
        let spied = spy("proc-files", sandbox, play().seed(3));
        assert!(spied.others_faulted().is_empty(), "{:?}", spied.faults);
        let seen: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&spied.report().1).unwrap();
        seen.into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap().to_owned()))
            .collect()
    };
    let class = |k: &str| k.split(':').next().unwrap().to_owned();
    let open = results(false);
    let classes: std::collections::BTreeSet<String> = open.iter().map(|(k, _)| class(k)).collect();
    assert_eq!(classes.len(), 6, "{open:?}");
    for c in &classes {
        assert!(
            open.iter().any(|(k, v)| &class(k) == c && v == "ok"),
            "no file of class {c} read unsandboxed: {open:?}"
        );
    }
    let boxed = results(true);
    assert_eq!(boxed.len(), open.len());
    for (k, v) in &boxed {
        if class(k) == "allowed" {
            assert_eq!(v, "ok", "{k} refused in the sandbox: {boxed:?}");
        } else {
            assert_ne!(v, "ok", "{k} read in the sandbox: {boxed:?}");
        }
    }
    for c in classes.iter().filter(|c| *c != "allowed") {
        assert!(
            boxed.iter().any(|(k, v)| &class(k) == c && v == "EACCES"),
            "class {c} not refused by Landlock: {boxed:?}"
        );
    }
}

/// Bit 56 of `/proc/self/pagemap` says whether a page is mapped by this
/// process alone: a partner that keeps the pages of its token mapped tells
/// the other its token, without timing. Sandboxed, `pagemap` is not readable.
#[test]
fn partners_talking_through_page_maps() {
    partners_talk_only_unsandboxed("partner-pagemap");
}

/// Sandboxed, partners run on disjoint halves of the host's CPUs (and may not
/// move: `sched_setaffinity` is refused, `spy_shared::calls_that_reach_…`):
/// the host-wide inode counter, handed to each CPU in batches, then tells one
/// partner almost nothing of the other's pipes (SECURITY.md: 13–30 bit/s
/// where the scheduler puts them, 0.3–0.5 bit/s on disjoint CPUs).
/// Unsandboxed they may run on the same CPUs.
#[test]
fn partners_run_on_disjoint_cpus_in_the_sandbox() {
    let cpus = |sandbox: bool| -> Vec<std::collections::BTreeSet<String>> {
        let spied = spy("partner-affinity", sandbox, play().seed(3));
        assert_eq!(spied.reports.len(), 2, "{:?}", spied.reports);
        (spied.reports.iter())
            .map(|(_, d)| {
                let list = d.strip_prefix("cpus=").unwrap_or_else(|| panic!("{d}"));
                list.split(',').map(str::to_owned).collect()
            })
            .collect()
    };
    let open = cpus(false);
    if open[0].len() < 2 {
        crate::support::skip("one CPU: partners cannot be kept apart");
        return;
    }
    assert_eq!(open[0], open[1], "unsandboxed both may run anywhere");
    let boxed = cpus(true);
    assert!(!boxed[0].is_empty() && !boxed[1].is_empty(), "{boxed:?}");
    assert!(
        boxed[0].is_disjoint(&boxed[1]),
        "partners share a CPU: {boxed:?}"
    );
}
