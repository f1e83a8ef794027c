//! The standings' rating and order end to end: identical bots rate alike,
//! a forfeiting bot ranks last, and every output says what it ranks by.

use std::path::{Path, PathBuf};

use crate::support::{referee, succeeds};

fn scratch(name: &str) -> PathBuf {
    crate::support::scratch("rating", name)
}

/// A round robin of `entrants` (`name=command`) with `args`; its folder and
/// standings.json.
fn tournament(name: &str, entrants: &[&str], args: &[&str]) -> (PathBuf, serde_json::Value) {
    let dir = scratch(name);
    let mut c = referee();
    c.args(["tournament", "--quiet"]).args(args);
    for e in entrants {
        c.args(["--entrant", e]);
    }
    c.arg("--out").arg(&dir);
    let out = succeeds(&mut c);
    let console = String::from_utf8_lossy(&out.stdout).into_owned();
    let standings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("standings.json")).unwrap()).unwrap();
    ranked_by_everywhere(&dir, &console, &standings);
    fits_the_schema(&dir, &standings);
    (dir, standings)
}

/// The one line that says what the standings rank by is in the JSON, first
/// in the CSV and on the console.
fn ranked_by_everywhere(dir: &Path, console: &str, standings: &serde_json::Value) {
    let ranked_by = standings["ranked_by"].as_str().expect("ranked_by");
    assert!(ranked_by.starts_with("rating then"), "{ranked_by}");
    let csv = std::fs::read_to_string(dir.join("standings.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        format!("# ranked by: {ranked_by}")
    );
    assert!(
        csv.lines().nth(1).unwrap().starts_with("rank,name,"),
        "{csv}"
    );
    assert!(
        console.contains(&format!("ranked by: {ranked_by}\n")),
        "{console}"
    );
}

/// standings.json fits `schema/standings.json` (the independent validator
/// reads one document a line: the file is given to it on one line).
fn fits_the_schema(dir: &Path, standings: &serde_json::Value) {
    let line = dir.join("standings-line.json");
    std::fs::write(&line, format!("{standings}\n")).unwrap();
    let (ok, text) = crate::schema::validate("standings.json", &line, None);
    assert!(ok && text.trim() == "1 valid", "{text}");
    // And the schema says something: without the ranked-by line, or with a
    // rating that is not a number, the file does not fit.
    for broken in [
        {
            let mut s = standings.clone();
            s.as_object_mut().unwrap().remove("ranked_by");
            s
        },
        {
            let mut s = standings.clone();
            s["entrants"][0]["rating"] = "high".into();
            s
        },
    ] {
        std::fs::write(&line, format!("{broken}\n")).unwrap();
        let (ok, text) = crate::schema::validate("standings.json", &line, None);
        assert!(!ok, "{text}");
    }
}

fn names(standings: &serde_json::Value) -> Vec<&str> {
    (standings["entrants"].as_array().unwrap().iter())
        .map(|r| r["name"].as_str().unwrap())
        .collect()
}

/// Two identical heuristic entrants (and a random one) over 120 games: their
/// ratings differ by less than twice the standard error of the difference,
/// i.e. the likelihood that either is the stronger lies between Φ(−2) and
/// Φ(2). (Weng-Lin, updated game by game, gave them 40.2 ± 2.5 and 34.9 ±
/// 2.4.)
#[test]
fn two_identical_entrants_rate_alike() {
    let (_, s) = tournament(
        "identical",
        &[
            "h1=builtin:heuristic",
            "h2=builtin:heuristic",
            "r=builtin:random",
        ],
        &[
            "--seed",
            "1",
            "--seed-secret",
            crate::support::SECRET,
            "--sets",
            "20",
        ],
    );
    assert_eq!(s["games"], 120);
    let order = names(&s);
    assert_eq!(order[2], "r", "{s}");
    let m = &s["likelihood_of_superiority"];
    let p = m[0][1].as_f64().expect("h1 against h2");
    let (lo, hi) = (0.022_750_131_948_179_2, 0.977_249_868_051_820_8);
    assert!(lo < p && p < hi, "likelihood of superiority {p}: {s}");
    assert!(m[0][0].is_null());
    let (a, b) = (&s["entrants"][0], &s["entrants"][1]);
    let gap = (a["rating"].as_f64().unwrap() - b["rating"].as_f64().unwrap()).abs();
    let se = |r: &serde_json::Value| r["rating_error"].as_f64().unwrap();
    // A bound the difference's own error cannot exceed (errors of two
    // ratings whose correlation is at most 1).
    assert!(gap < 2.0 * (se(a) + se(b)), "{gap}: {s}");
}

/// A bot that answers with garbage forfeits every game; it ranks last, below
/// the random bot that never faults, in the order and in every figure that
/// ranks: its rating, and its duplicate score (each forfeited game scores the
/// worst result on that deal, not the fallback's play).
#[test]
fn a_forfeiting_bot_ranks_last() {
    let (_, s) = tournament(
        "garbage",
        &[
            "garbage=python3 tests/hostile/bot.py garbage",
            "h=builtin:heuristic",
            "r=builtin:random",
        ],
        &["--seed", "4", "--seed-secret", crate::support::SECRET],
    );
    assert_eq!(names(&s), ["h", "r", "garbage"], "{s}");
    let (r, g) = (&s["entrants"][1], &s["entrants"][2]);
    assert!(g["forfeits"].as_u64().unwrap() > 0, "{g}");
    assert_eq!(r["forfeits"], 0);
    for figure in ["rating", "duplicate_score"] {
        assert!(
            g[figure].as_f64().unwrap() < r[figure].as_f64().unwrap(),
            "{figure}: {s}"
        );
    }
    let m = &s["likelihood_of_superiority"];
    assert!(m[1][2].as_f64().unwrap() > 0.5, "random over garbage: {s}");
}
