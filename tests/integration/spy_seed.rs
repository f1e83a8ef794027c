//! The spy suite on seeds: a bot that sees its own first hand can try every
//! seed a person might type and keep the one that deals it that hand; the seed
//! then gives every hand and the stock. `tests/spy/seed_search.py` does exactly
//! that, the referee's derivations written out in Python. It works against
//! `referee play --seed 7` (a bot author's own match, where nothing is mixed
//! in), and against a tournament whose seed secret it is handed (the control:
//! the search is right); a tournament given `--seed 7` alone deals from a
//! secret the bot cannot know, and the search finds nothing. The rest checks
//! the secret's life: kept in the folder, out of a sandboxed bot's reach,
//! revealed only at the end, and enough to deal a finished run again.

use std::path::Path;
use std::process::Output;

use crate::support::{referee, refused, scratch, stderr, stdout, succeeds, SECRET};

/// What the seed-search bot said in each of its logs, and the deals of every
/// transcript (each deal's six hands and stock), by transcript.
struct Search {
    found: Vec<serde_json::Value>,
    predicted: Vec<serde_json::Value>,
    none: usize,
    peeks: Vec<String>,
    deals: Vec<Vec<serde_json::Value>>,
}

fn search(out: &Path, games: &Path) -> Search {
    let mut s = Search {
        found: Vec::new(),
        predicted: Vec::new(),
        none: 0,
        peeks: Vec::new(),
        deals: Vec::new(),
    };
    for log in files(&out.join("stderr")) {
        for line in std::fs::read_to_string(log).unwrap().lines() {
            if let Some(rest) = line.strip_prefix("SEED found ") {
                let json = rest.split_once(' ').unwrap().1;
                s.found.push(serde_json::from_str(json).unwrap());
            } else if let Some(json) = line.strip_prefix("SEED predicted ") {
                s.predicted.push(serde_json::from_str(json).unwrap());
            } else if line.starts_with("SEED none") {
                s.none += 1;
            } else if let Some(peek) = line.strip_prefix("SEED peek ") {
                s.peeks.push(peek.to_owned());
            }
        }
    }
    for t in files(games) {
        if t.extension().is_none_or(|e| e != "jsonl")
            || t.components().any(|c| c.as_os_str() == "timings")
        {
            continue;
        }
        let text = std::fs::read_to_string(&t).unwrap();
        let deals = (text.lines())
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|l| l["type"] == "deal")
            .collect();
        s.deals.push(deals);
    }
    s
}

/// The files under `dir`, recursively, sorted.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Each hand of a deal event, sorted as the bot sorts them.
fn hands(deal: &serde_json::Value) -> Vec<Vec<String>> {
    (deal["hands"].as_array().unwrap().iter())
        .map(|h| {
            let mut h: Vec<String> = (h.as_array().unwrap().iter())
                .map(|c| c.as_str().unwrap().to_owned())
                .collect();
            h.sort();
            h
        })
        .collect()
}

impl Search {
    /// Every seed found dealt exactly the transcript's hands and stock, and
    /// every later deal was predicted right: `at_least` claims in all.
    fn all_right(&self, at_least: usize) {
        let all: Vec<&serde_json::Value> = self.deals.iter().flatten().collect();
        let mut checked = 0;
        for claim in self.found.iter().chain(&self.predicted) {
            let claimed: Vec<Vec<String>> = serde_json::from_value(claim["hands"].clone()).unwrap();
            let deal = claim["deal"].as_u64().unwrap();
            let right = all
                .iter()
                .filter(|d| d["deal"].as_u64() == Some(deal))
                .any(|d| hands(d) == claimed);
            assert!(right, "a claim matches no deal {deal} played: {claim}");
            if let Some(stock) = claim.get("stock") {
                assert!(all.iter().any(|d| d["stock"] == *stock), "{claim}");
            }
            checked += 1;
        }
        assert!(
            checked >= at_least,
            "{checked} claims checked, wanted {at_least}"
        );
    }
}

const BELOW: &str = "200";

/// `referee play --seed 7` with the seed-search bot in seat 0: its deals are
/// the seed's alone, and the bot finds them (also sandboxed: what a sandbox
/// hides does not matter, hence the warning `play --sandbox --seed` prints).
#[test]
fn a_typed_play_seed_is_found_from_the_first_hand() {
    for sandbox in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m");
        let mut c = referee();
        c.args(["play", "--seed", "7", "--no-timeouts", "--quiet"])
            .arg("--seat")
            .arg(format!(
                "0=python3 tests/spy/seed_search.py play --below {BELOW}"
            ))
            .arg("--transcript")
            .arg(&out);
        if sandbox {
            c.arg("--sandbox");
        }
        let done = succeeds(&mut c);
        let s = search(&out, &out);
        assert_eq!(s.found.len(), 1, "{}", stderr(&done));
        assert_eq!(s.found[0]["candidate"], 7);
        let deals = s.deals[0].len();
        assert!(deals >= 2, "a game of one deal predicts nothing");
        s.all_right(deals);
        // Warned, `--quiet` or not, only where the bots are not trusted.
        let warned = stderr(&done).contains("warning: --seed 7: every deal of this match follows");
        assert_eq!(warned, sandbox, "{}", stderr(&done));
    }
}

/// One duplicate set of a three-entrant tournament, the seed-search bot as one
/// entrant (`bot_args` after its mode), `args` added.
fn tournament(out: &Path, bot_args: &str, args: &[&str]) -> Output {
    let mut c = referee();
    c.args([
        "tournament",
        "--sets",
        "1",
        "--seed",
        "7",
        "--quiet",
        "--no-timeouts",
    ])
    .arg("--entrant")
    .arg(format!(
        "s=python3 tests/spy/seed_search.py tournament --below {BELOW} {bot_args}"
    ))
    .args([
        "--entrant",
        "h=inproc:heuristic",
        "--entrant",
        "r=inproc:random",
    ])
    .args(args)
    .arg("--out")
    .arg(out);
    succeeds(&mut c)
}

#[test]
fn a_typed_tournament_seed_is_not_enough_without_the_secret() {
    // The control: handed the secret, the bot's search finds the seed in
    // every game it plays and predicts every later deal.
    let out = scratch("spy_seed", "told");
    tournament(
        &out,
        &format!("--secret {SECRET}"),
        &["--seed-secret", SECRET],
    );
    let told = search(&out, &out.join("games"));
    assert_eq!(told.deals.len(), 6);
    // Two processes of the entrant in each of the six games.
    assert_eq!(
        told.found.len(),
        12,
        "found in every game by both processes"
    );
    let deals: usize = told.deals.iter().map(Vec::len).sum();
    told.all_right(deals);

    // Not told: the same seed, a secret of the referee's own. Nothing found.
    let out = scratch("spy_seed", "secret");
    let done = tournament(&out, "", &[]);
    let blind = search(&out, &out.join("games"));
    assert_eq!((blind.found.len(), blind.predicted.len()), (0, 0));
    assert_eq!(blind.none, 12, "every process searched and found nothing");
    // No warning about the seed: the secret protects it.
    assert!(!stderr(&done).contains("warning"), "{}", stderr(&done));
}

/// The secret's life in one run: drawn, kept in the folder (0600), not in
/// tournament.json until the end, then revealed there and in the summary
/// under `--quiet`; with the seed it deals the run again from an empty
/// folder, byte for byte, and every transcript verifies.
#[test]
fn a_drawn_secret_is_kept_revealed_at_the_end_and_reproduces_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let out = scratch("spy_seed", "drawn");
    let done = crate::support::tournament_interrupted_after_matchup_0_drawing(&out);
    assert_eq!(done.status.code(), Some(130), "{}", stderr(&done));
    let kept = std::fs::read_to_string(out.join("seed-secret")).unwrap();
    let mode = std::fs::metadata(out.join("seed-secret"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let secret = kept.trim().to_owned();
    assert_eq!(secret.len(), 64);
    let manifest = std::fs::read_to_string(out.join("tournament.json")).unwrap();
    assert!(
        !manifest.contains("seed_secret") && !manifest.contains(&secret),
        "{manifest}"
    );
    assert!(!stdout(&done).contains(&secret) && !stderr(&done).contains(&secret));
    // Resumed from the folder alone: the same secret.
    let mut resume = referee();
    resume
        .args(["tournament", "--resume", "--quiet", "--out"])
        .arg(&out);
    let finished = succeeds(&mut resume);
    let said = stdout(&finished);
    assert!(said.contains(&format!("seed secret {secret}")), "{said}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tournament.json")).unwrap())
            .unwrap();
    assert_eq!(m["format_version"], "schmier-tournament/3");
    assert_eq!(m["seed_secret"], secret.as_str());
    assert!(crate::support::verify(&[&out]).status.success());

    // From an empty folder, given the published seed and secret.
    let again = scratch("spy_seed", "again");
    let mut c = crate::support::four_entrants(&again);
    c.args(["--seed-secret", &secret]);
    succeeds(&mut c);
    for name in [
        "tournament.json",
        "journal.jsonl",
        "standings.json",
        "seed-secret",
    ] {
        assert!(
            std::fs::read(out.join(name)).unwrap() == std::fs::read(again.join(name)).unwrap(),
            "{name} differs"
        );
    }
    for t in files(&out.join("games")) {
        let rel = t.strip_prefix(&out).unwrap();
        if rel.starts_with("games/timings") {
            continue;
        }
        assert!(
            std::fs::read(&t).unwrap() == std::fs::read(again.join(rel)).unwrap(),
            "{rel:?}"
        );
    }
    // Another secret, the same seed: other deals.
    let other = scratch("spy_seed", "other");
    succeeds(&mut crate::support::four_entrants(&other));
    let first_game = "games/r00-m0000-g001.jsonl";
    assert!(
        std::fs::read(out.join(first_game)).unwrap()
            != std::fs::read(other.join(first_game)).unwrap()
    );
    // A secret that differs from the folder's is refused by name, not printed.
    let mut wrong = referee();
    wrong
        .args(["tournament", "--resume", "--seed-secret", SECRET, "--out"])
        .arg(&out);
    let err = refused(&mut wrong);
    assert!(
        err.contains("seed secret") && !err.contains(&secret),
        "{err}"
    );
}

/// Shards deal from one secret, given to each; without one a shard is
/// refused, and shards of two secrets do not merge.
#[test]
fn shards_share_one_secret_or_are_refused() {
    let out = scratch("spy_seed", "shard-alone");
    let mut c = crate::support::four_entrants(&out);
    c.args(["--shard", "0/2"]);
    let err = refused(&mut c);
    assert!(err.contains("--seed-secret-file"), "{err}");
    assert!(!out.exists(), "a refused shard writes nothing");

    let file = scratch("spy_seed", "secret-file");
    let made = succeeds(referee().arg("secret"));
    std::fs::write(&file, &made.stdout).unwrap();
    let other = SECRET;
    let shards: Vec<_> = (0..2)
        .map(|k| scratch("spy_seed", &format!("shard-{k}")))
        .collect();
    for (k, dir) in shards.iter().enumerate() {
        let mut c = crate::support::four_entrants(dir);
        c.args(["--shard", &format!("{k}/2"), "--seed-secret-file"])
            .arg(&file);
        succeeds(&mut c);
        // A shard's end is not the tournament's: nothing revealed.
        let m = std::fs::read_to_string(dir.join("tournament.json")).unwrap();
        assert!(!m.contains("seed_secret"), "{m}");
    }
    let merged = scratch("spy_seed", "merged");
    succeeds(
        referee()
            .arg("merge")
            .args(&shards)
            .arg("--out")
            .arg(&merged),
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("tournament.json")).unwrap())
            .unwrap();
    let secret = String::from_utf8(made.stdout).unwrap();
    assert_eq!(m["seed_secret"], secret.trim());
    // The unsharded run on the same secret is the same tournament.
    let whole = scratch("spy_seed", "whole");
    let mut c = crate::support::four_entrants(&whole);
    c.arg("--seed-secret-file").arg(&file);
    succeeds(&mut c);
    for name in [
        "tournament.json",
        "journal.jsonl",
        "standings.json",
        "seed-secret",
    ] {
        assert!(
            std::fs::read(merged.join(name)).unwrap() == std::fs::read(whole.join(name)).unwrap(),
            "{name} differs"
        );
    }
    // A shard of another secret does not merge with them.
    let stray = scratch("spy_seed", "shard-1-other");
    let mut c = crate::support::four_entrants(&stray);
    c.args(["--shard", "1/2", "--seed-secret", other]);
    succeeds(&mut c);
    let mut merge = referee();
    merge
        .arg("merge")
        .arg(&shards[0])
        .arg(&stray)
        .arg("--out")
        .arg(scratch("spy_seed", "not-merged"));
    let err = refused(&mut merge);
    assert!(err.contains("the seed secret"), "{err}");
}

/// `--seed-secret-file` inside a bot's own directory (which a sandboxed bot
/// sees, read-only, and here readable by anyone): an unsandboxed bot reads
/// it, a sandboxed one cannot.
#[test]
fn a_secret_file_is_hidden_from_sandboxed_bots() {
    let bot_dir = scratch("spy_seed", "peek-bot");
    std::fs::create_dir_all(&bot_dir).unwrap();
    let script = bot_dir.join("seed_search.py");
    std::fs::copy(
        crate::support::root().join("tests/spy/seed_search.py"),
        &script,
    )
    .unwrap();
    let file = bot_dir.join("seed-secret");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    for sandbox in [false, true] {
        let out = scratch("spy_seed", &format!("peek-{sandbox}"));
        let mut c = referee();
        c.args(["tournament", "--sets", "1", "--quiet", "--no-timeouts"])
            .arg("--entrant")
            .arg(format!(
                "s=python3 {} tournament --below 1 --peek {}",
                script.display(),
                file.display()
            ))
            .args([
                "--entrant",
                "h=inproc:heuristic",
                "--entrant",
                "r=inproc:random",
            ])
            .arg("--seed-secret-file")
            .arg(&file)
            .arg("--out")
            .arg(&out);
        if sandbox {
            c.arg("--sandbox");
        }
        succeeds(&mut c);
        let s = search(&out, &out.join("games"));
        assert_eq!(s.peeks.len(), 12, "both processes tried in every game");
        for peek in &s.peeks {
            match sandbox {
                false => assert_eq!(peek, &format!("ok {SECRET}")),
                // Covered by /dev/null, which Landlock does not let it open
                // there (or, were it opened, reads empty).
                true => assert!(peek.starts_with("blocked"), "{peek}"),
            }
        }
    }
}
