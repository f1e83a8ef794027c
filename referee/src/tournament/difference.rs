//! Where two manifests differ, in plain words: each differing setting by the
//! flag that sets it and both values as a person would write them
//! ("--decision-ms: 1000 in the folder, 500 in this run"), never as raw JSON.
//! What `--resume`, `--from`, `merge` and `sprt --resume` say when they refuse.

use serde_json::Value;

use super::manifest::Manifest;

/// Where each side of a comparison comes from, as the message names it:
/// ("in the folder", "in this run").
pub struct Sides<'a> {
    pub ours: &'a str,
    pub theirs: &'a str,
}

impl Manifest {
    /// Every setting in which `self` (`sides.ours`) and `other`
    /// (`sides.theirs`) differ, joined by "; ", or `None` if they are the same.
    pub fn difference(&self, other: &Manifest, sides: &Sides) -> Option<String> {
        let mut diffs = Vec::new();
        if self.entrants != other.entrants {
            let list = |m: &Manifest| {
                let names: Vec<String> = (m.entrants.iter())
                    .map(|e| format!("{} ({})", e.name, e.command))
                    .collect();
                names.join(", ")
            };
            diffs.push(format!(
                "the entrants: {} {}, {} {}",
                list(self),
                sides.ours,
                list(other),
                sides.theirs
            ));
        }
        // Compared, never printed: a refused resume's message must not give
        // away a secret still in use.
        if self.seed_secret != other.seed_secret {
            diffs.push(format!(
                "the seed secret (--seed-secret): one {}, another {}",
                sides.ours, sides.theirs
            ));
        }
        let mut a = serde_json::to_value(self).expect("manifests serialize");
        let mut b = serde_json::to_value(other).expect("manifests serialize");
        for v in [&mut a, &mut b] {
            if let Value::Object(o) = v {
                o.remove("entrants");
                o.remove("seed_secret");
                // Follow from the format and entrants: named when those are.
                o.remove("matchups");
                o.remove("games");
            }
        }
        // An older folder has no isolation record: it is compared whole.
        let whole = self.isolation.is_none() || other.isolation.is_none();
        let mut leaves_a = Vec::new();
        let mut leaves_b = Vec::new();
        leaves(&a, "", whole, &mut leaves_a);
        leaves(&b, "", whole, &mut leaves_b);
        let mut paths: Vec<&String> = (leaves_a.iter().chain(&leaves_b)).map(|(p, _)| p).collect();
        paths.sort();
        paths.dedup();
        let get =
            |l: &[(String, Value)], p: &str| l.iter().find(|(k, _)| k == p).map(|(_, v)| v.clone());
        for path in paths {
            let (x, y) = (get(&leaves_a, path), get(&leaves_b, path));
            if x != y {
                // An SPRT's sets are its --max-sets.
                let label = match (path.as_str(), self.sprt.is_some()) {
                    ("sets", true) => "--max-sets".to_owned(),
                    _ => label(path),
                };
                diffs.push(format!(
                    "{}: {} {}, {} {}",
                    label,
                    value(path, x.as_ref()),
                    sides.ours,
                    value(path, y.as_ref()),
                    sides.theirs
                ));
                if path == "isolation.sandbox" && [&x, &y].iter().any(|v| own_views(v)) {
                    diffs.push(format!(
                        "({}: each bot saw its view from images of its own, which a root \
                         referee makes where the host has erofs and mkfs.erofs; {}=none \
                         turns them off)",
                        crate::sandbox::OWN_VIEWS,
                        crate::sandbox::VIEW_CACHE_ENV
                    ));
                }
            }
        }
        (!diffs.is_empty()).then(|| diffs.join("; "))
    }
}

/// Whether a sandbox record names the views from images (`sandbox/view/image.rs`).
fn own_views(record: &Option<Value>) -> bool {
    (record.as_ref().and_then(|r| r["layers"].as_array()))
        .is_some_and(|layers| layers.iter().any(|l| l == crate::sandbox::OWN_VIEWS))
}

/// The leaves of `v` as dotted paths; the sandbox and the format are leaves
/// of their own (told whole, in words).
fn leaves(v: &Value, path: &str, whole_isolation: bool, out: &mut Vec<(String, Value)>) {
    let whole =
        matches!(path, "isolation.sandbox" | "format") || (whole_isolation && path == "isolation");
    match v {
        Value::Object(o) if !whole && !o.is_empty() => {
            for (k, v) in o {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(v, &p, whole_isolation, out);
            }
        }
        other => out.push((path.to_owned(), other.clone())),
    }
}

/// The flag (or the words) that names a manifest field.
fn label(path: &str) -> String {
    let flag = match path {
        "seed" => "--seed",
        "sets" => "--sets",
        "format" => "--format",
        "shard" => "--shard",
        "referee" => "the referee version",
        "format_version" => "the tournament.json format",
        "time_control.clock" => "--clock",
        "time_control.time_bank_ms" => "--time-bank-ms",
        "time_control.startup_ms" => "--startup-ms",
        "time_control.decision_ms" => "--decision-ms",
        "time_control.grace_ms" => "--grace-ms",
        "time_control.max_line_bytes" => "--max-line-bytes",
        "fault_policy.max_faults" => "--max-faults",
        "fault_policy.forfeit" => "--policy",
        "fault_policy.restart" => "--no-restart",
        "rules.stick_the_dealer" => "--stick-the-dealer",
        "rules.trump_anytime" => "--trump-anytime",
        "isolation" => "the isolation record",
        "isolation.sandbox" => "--sandbox",
        "isolation.limits.memory_bytes" => "--limit-memory-mb",
        "isolation.limits.cpu_seconds" => "--limit-cpu-s",
        "isolation.limits.open_files" => "--limit-files",
        "isolation.limits.processes" => "--limit-procs",
        "isolation.limits.cpu_millicores" => "--limit-cpus",
        "isolation.limits.stderr_cap_bytes" => "--stderr-cap",
        "isolation.pace_ms" => "--pace-ms",
        "isolation.scratch" => "--scratch",
        "isolation.scratch_bytes" => "--scratch-mb",
        "sprt" => "the SPRT's hypotheses",
        "sprt.h0" => "--h0",
        "sprt.h1" => "--h1",
        "sprt.alpha" => "--alpha",
        "sprt.beta" => "--beta",
        other => return other.replace('.', " "),
    };
    flag.to_owned()
}

/// A value as a person would write it for `path`.
fn value(path: &str, v: Option<&Value>) -> String {
    let Some(v) = v else {
        return "not recorded".into();
    };
    match (path, v) {
        ("isolation.sandbox", Value::Null) => "not sandboxed".into(),
        ("isolation.sandbox", v) => {
            match serde_json::from_value::<crate::isolation_record::SandboxRecord>(v.clone()) {
                Ok(s) => format!("sandboxed by {} ({})", s.tool, s.layers.join(", ")),
                Err(_) => v.to_string(),
            }
        }
        ("isolation", Value::Object(_)) => {
            match serde_json::from_value::<crate::isolation_record::IsolationRecord>(v.clone()) {
                Ok(i) => i.describe(),
                Err(_) => v.to_string(),
            }
        }
        ("isolation", Value::Null) | ("referee", Value::Null) => {
            "not recorded (an older referee's folder)".into()
        }
        ("fault_policy.forfeit", Value::Bool(b)) => match b {
            true => "a faulted team forfeits (competition)".into(),
            false => "no forfeits (lenient)".into(),
        },
        ("fault_policy.restart", Value::Bool(b)) => match b {
            true => "crashed bots restarted".into(),
            false => "crashed bots not restarted".into(),
        },
        ("isolation.scratch", Value::Bool(b)) => match b {
            true => "a scratch folder per bot".into(),
            false => "no scratch folder".into(),
        },
        ("isolation.limits.memory_bytes" | "isolation.scratch_bytes", Value::Number(n)) => {
            format!("{} MiB", n.as_u64().unwrap_or(0) >> 20)
        }
        ("isolation.limits.cpu_millicores", Value::Number(n)) => {
            crate::isolation_record::cores(n.as_u64().unwrap_or(0))
        }
        ("format", Value::Object(o)) => {
            let mut parts: Vec<String> = (o.iter())
                .filter(|(k, _)| *k != "kind")
                .map(|(k, v)| format!("{k} {}", plain(v)))
                .collect();
            let kind = o.get("kind").map(plain).unwrap_or_default();
            match parts.is_empty() {
                true => kind,
                false => {
                    parts.insert(0, kind);
                    parts.join(", ")
                }
            }
        }
        ("shard", Value::Null) => "the whole tournament".into(),
        ("shard", Value::Object(o)) => format!(
            "shard {} of {}",
            o.get("index").map(plain).unwrap_or_default(),
            o.get("count").map(plain).unwrap_or_default()
        ),
        ("isolation.pace_ms", Value::Null) => "no pace".into(),
        (p, Value::Null) if p.ends_with("_ms") || p.starts_with("isolation.limits") => {
            "no limit".into()
        }
        (_, v) => plain(v),
    }
}

/// A JSON value without JSON's quotes: `wall`, `1000`, `true`, `none`.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        Value::Array(a) => (a.iter().map(plain).collect::<Vec<_>>()).join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tournament's manifest from flags, as `referee tournament` makes it.
    fn manifest(flags: &[&str]) -> Manifest {
        use clap::{Args, FromArgMatches};
        let argv = ["t", "--seed", "9", "--fill", "inproc:random"]
            .into_iter()
            .chain(["--entrant", "a=inproc:heuristic", "--out", "/nonexistent/t"])
            .chain(flags.iter().copied());
        let matches = super::super::args::TournamentArgs::augment_args(clap::Command::new("t"))
            .try_get_matches_from(argv)
            .unwrap();
        let cfg = super::super::args::TournamentArgs::from_arg_matches(&matches)
            .unwrap()
            .validate()
            .unwrap();
        let schedule = super::super::format::matchups(3, &cfg.format, cfg.sets, cfg.seed);
        super::super::run::manifest(&cfg, &schedule)
    }

    const SIDES: Sides = Sides {
        ours: "here",
        theirs: "there",
    };

    #[test]
    fn each_difference_is_named_by_its_flag_with_both_values_in_words() {
        let base = manifest(&[]);
        assert_eq!(base.difference(&base, &SIDES), None);
        let cases: [(&[&str], &str); 6] = [
            (
                &["--decision-ms", "500"],
                "--decision-ms: 500 here, 1000 there",
            ),
            (
                &["--no-timeouts"],
                "--decision-ms: no limit here, 1000 there",
            ),
            (
                &["--limit-memory-mb", "256"],
                "--limit-memory-mb: 256 MiB here, no limit there",
            ),
            (
                &["--limit-cpus", "0.5"],
                "--limit-cpus: 0.5 cores here, no limit there",
            ),
            (&["--pace-ms", "300"], "--pace-ms: 300 here, no pace there"),
            (
                &["--policy", "lenient"],
                "--policy: no forfeits (lenient) here, a faulted team forfeits (competition) there",
            ),
        ];
        for (flags, want) in cases {
            let diff = manifest(flags).difference(&base, &SIDES).unwrap();
            assert!(diff.contains(want), "{flags:?}: {diff}");
            assert!(!diff.contains('{') && !diff.contains('"'), "{diff}");
        }
        // A sandboxed run's --scratch-mb (issue 27): refused when it
        // differs, and kept when a resume takes its settings from the folder.
        let scratch = |mb: u64| {
            let mut m = base.clone();
            let i = m.isolation.as_mut().unwrap();
            (i.scratch, i.scratch_bytes) = (true, Some(mb << 20));
            m
        };
        assert_eq!(
            scratch(32).difference(&scratch(64), &SIDES).unwrap(),
            "--scratch-mb: 32 MiB here, 64 MiB there"
        );
        let kept = super::super::folder::table_args(&scratch(32), None);
        assert_eq!(kept.isolation.scratch_mb, Some(32));
        let older = Manifest {
            isolation: None,
            referee: None,
            ..base.clone()
        };
        let diff = base.difference(&older, &SIDES).unwrap();
        assert!(
            diff.contains("the isolation record: not sandboxed; limits: ")
                && diff.contains("not recorded (an older referee's folder) there")
                && !diff.contains("--pace-ms"),
            "{diff}"
        );
    }
}
