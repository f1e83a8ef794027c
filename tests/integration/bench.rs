//! `referee bench` runs and its figures hang together. Never how fast: a test
//! that asserted speed would fail on a busy host. What is checked is that the
//! command measured what it says — the decisions it counted are the decisions of
//! the games it played (replayed here with `referee play` from the seeds it
//! reports), and its derived figures follow from its measured ones.

use serde_json::Value;

use crate::support::{self, referee};

fn f(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number in {v}"))
}

/// Decisions in a transcript: one action event per decision.
fn decisions_in(lines: &[Value]) -> u64 {
    lines
        .iter()
        .filter(|l| {
            matches!(
                l["type"].as_str(),
                Some("bid" | "trump" | "exchange" | "dealer_discard" | "play")
            )
        })
        .count() as u64
}

#[test]
fn bench_counts_the_games_it_plays_and_its_figures_agree() {
    let _machine = support::exclusive();
    let out = referee()
        .args([
            "bench",
            "--games",
            "2",
            "--jobs",
            "1,2",
            "--bot",
            "heuristic",
        ])
        .args(["--trips", "300", "--decision-ms", "60000", "--json"])
        .output()
        .expect("the referee runs");
    assert!(
        out.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("bench --json prints JSON");

    let floor = (f(&report, "before.round_trip.median_us")
        + f(&report, "after.round_trip.median_us"))
        / 2.0;
    for b in ["before", "after"] {
        let rt = &report[b]["round_trip"];
        assert!(
            f(rt, "median_us") > 0.0 && f(rt, "median_us") <= f(rt, "p99_us"),
            "{rt}"
        );
        assert_eq!(report[b]["trips"], 300);
    }
    assert!(f(&report, "bot_side.requests") > 0.0 && f(&report, "bot_side.request_us") > 0.0);

    let phases = report["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 2, "one phase per --jobs value");
    for (phase, jobs) in phases.iter().zip([1, 2]) {
        assert_eq!(phase["jobs"], jobs);
        assert_eq!(phase["games"], 2);
        let tables = phase["tables"].as_array().expect("tables");
        assert_eq!(tables.len(), jobs as usize);
        // Replay each table's match with `play`: the decisions bench counted
        // are exactly the action events of those games.
        let mut replayed = 0;
        for t in tables {
            let games = t["games"].as_u64().unwrap() as u32;
            let done = support::play()
                .args(["--team", "builtin:heuristic"].repeat(3))
                .args(["--events", "batched", "--games", &games.to_string(), "-q"])
                .seed(t["seed"].as_u64().unwrap())
                .ok();
            replayed += (1..=games)
                .map(|g| decisions_in(&done.lines(g)))
                .sum::<u64>();
        }
        let decisions = f(phase, "decisions");
        assert_eq!(decisions as u64, replayed, "{phase}");
        assert_eq!(
            phase["answered"], phase["decisions"],
            "no fault, every decision answered"
        );

        let wall = f(phase, "wall_s");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs());
        assert!(
            close(f(phase, "decisions_per_s") * wall, decisions),
            "{phase}"
        );
        assert!(close(f(phase, "games_per_s") * wall, 2.0), "{phase}");
        assert!(close(
            f(phase, "bytes_per_s") * wall,
            f(phase, "bytes_per_decision") * decisions
        ));
        // At least a reply and a request went through the pipes per decision.
        assert!(f(phase, "bytes_per_decision") > 100.0, "{phase}");

        // Scaling is the rate over that of the jobs-1 phase of the same run.
        if jobs == 1 {
            assert!(phase["scaling"].is_null(), "{phase}");
        } else {
            let one = f(&phases[0], "decisions_per_s");
            assert!(
                close(f(phase, "scaling"), f(phase, "decisions_per_s") / one),
                "{phase}"
            );
        }

        let per = &phase["per_decision"];
        assert!(f(per, "median_us") > 0.0 && f(per, "median_us") <= f(per, "p99_us"));
        assert!(
            close(f(phase, "ratio"), f(per, "median_us") / floor),
            "{phase}"
        );
        // The timed steps and the rest add up to the mean decision.
        let k = &phase["breakdown"];
        let parts = [
            "request_us",
            "write_us",
            "wait_us",
            "handoff_us",
            "reply_us",
            "apply_us",
            "fanout_us",
            "transcript_us",
            "rest_us",
        ];
        assert!(parts.iter().all(|p| f(k, p) >= 0.0), "{k}");
        let sum: f64 = parts.iter().map(|p| f(k, p)).sum();
        assert!(
            (sum - f(per, "mean_us")).abs() <= 0.01 * f(per, "mean_us"),
            "the breakdown ({sum} µs) is not the mean decision ({per})"
        );
        // Waiting for the reply is the pipe both ways plus the bot: never nothing.
        assert!(f(k, "wait_us") > 0.0, "{k}");
    }
}
