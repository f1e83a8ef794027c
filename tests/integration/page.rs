//! `referee tournament --page`: the tournament's page in a real headless
//! browser (see `browser.rs`), while the run is held at a gate and again when it
//! has ended; its replay pages' size; a knockout's rounds on it. Expectations
//! come from the run's own records — the journal mid-run, `standings.json` and
//! the bracket the referee prints at the end — never from the page's code.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::browser::{self, dom};
use crate::support::{referee, root, succeeds};

/// A guard against a hang, far above what a held run needs to reach its gate
/// on a loaded two-core host.
const PATIENCE: Duration = Duration::from_secs(600);

fn wait(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The text between `start` (first occurrence) and the next `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not in {text}"))
        + start.len();
    let to = text[from..].find(end).unwrap() + from;
    &text[from..to]
}

/// A standings row as the page shows it: rank, name, games, wins, duplicate score.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Shown {
    rank: String,
    name: String,
    games: String,
    wins: String,
    duplicate: String,
}

fn rows(dom: &str) -> Vec<Shown> {
    let table = between(dom, "id=\"standings\"", "</table>");
    let cell =
        |row: &str, class: &str| between(row, &format!("class=\"{class}\">"), "<").to_owned();
    (table.split("<tr class=\"entrant\">").skip(1))
        .map(|row| Shown {
            rank: cell(row, "rank"),
            name: cell(row, "name"),
            games: cell(row, "games"),
            wins: cell(row, "wins"),
            duplicate: cell(row, "duplicate"),
        })
        .collect()
}

/// The links of the page's list of games, as written.
fn links(dom: &str) -> Vec<String> {
    let list = between(dom, "id=\"games\"", "</ol>");
    (list.split("<a href=\"").skip(1))
        .map(|l| l[..l.find('"').unwrap()].to_owned())
        .collect()
}

fn journal(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Games and wins of each entrant (by index), counted from journal lines.
fn tally(lines: &[Value], entrants: usize) -> Vec<(u32, u32)> {
    let mut out = vec![(0, 0); entrants];
    for l in lines {
        let teams: Vec<usize> = (l["teams"].as_array().unwrap().iter())
            .map(|t| t.as_u64().unwrap() as usize)
            .collect();
        for &e in &teams {
            out[e].0 += 1;
        }
        if let Some(w) = l["winner"].as_u64() {
            out[teams[w as usize]].1 += 1;
        }
    }
    out
}

/// A replay page as drawn at its start: its title, its seats' headings, and
/// where its back link leads.
fn replay(index: &Path, href: &str) -> (String, Vec<String>, String) {
    let page = index.with_file_name(href);
    assert!(page.is_file(), "{href} is not there");
    let d = dom(&page, "deal=1");
    let title = between(&d, "<h1 id=\"title\">", "<").to_owned();
    let seats = (0..6)
        .map(|s| between(&d, &format!("id=\"seat-{s}\""), "<span").to_owned())
        .collect();
    let back = between(&d, "id=\"back\" href=\"", "\"").to_owned();
    // The shared script drew the table: every seat holds its six cards.
    for s in 0..6 {
        let seat = between(&d, &format!("id=\"seat-{s}\""), "</section>");
        assert_eq!(
            seat.matches("data-card=").count(),
            6,
            "{href} seat {s}: {seat}"
        );
    }
    (title, seats, back)
}

const NAMES: [&str; 4] = ["alice", "bob", "carol", "dave"];

/// A round robin of four, one table at a time, whose fourth entrant (a Python
/// bot behind a gate: tests/tournament/gated_bot.py) holds its first table
/// before hello while the gate file exists. The first matchup is alice, bob
/// and carol, so the run stops after exactly its six games until the gate
/// opens. The entrants' names differ from those their bots give in `hello`.
/// Held there, the run is stopped with Ctrl-C, then resumed to its end.
#[test]
fn the_page_of_a_running_tournament_shows_its_progress_and_then_its_end() {
    if !browser::available() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("tournament");
    let gate = scratch.path().join("gate");
    let waiting = scratch.path().join("gate.waiting");
    std::fs::write(&gate, b"closed").unwrap();
    let log = |name: &str| Stdio::from(std::fs::File::create(scratch.path().join(name)).unwrap());
    let mut tournament = referee();
    tournament
        .current_dir(root())
        .args([
            "tournament",
            "--format",
            "round-robin",
            "--seed",
            "2026",
            "--seed-secret",
            crate::support::SECRET,
        ])
        .args(["--jobs", "1", "--page", "--quiet"])
        // Generous limits: the held bot waits before hello, and a busy host
        // must not make anyone late.
        .args(["--startup-ms", "600000", "--decision-ms", "10000"])
        .arg("--bot-env")
        .arg(format!("SCHMIER_TEST_GATE={}", gate.display()))
        .args(["--entrant", "alice=inproc:heuristic"])
        .args(["--entrant", "bob=inproc:random"])
        .args(["--entrant", "carol=inproc:heuristic"])
        .args([
            "--entrant",
            "dave=python3 tests/tournament/gated_bot.py simple",
        ])
        .arg("--out")
        .arg(&dir);
    let mut run = tournament
        .stdout(log("stdout"))
        .stderr(log("stderr"))
        .spawn()
        .unwrap();
    let stderr = || std::fs::read_to_string(scratch.path().join("stderr")).unwrap();
    let index = dir.join("index.html");
    wait("dave's bot to reach the gate", || {
        if let Ok(Some(status)) = run.try_wait() {
            panic!("the run ended early ({status}): {}", stderr());
        }
        waiting.exists()
    });
    // The sixth game's page is written after it is journaled, and the table
    // may reach the gate first; nothing more can happen until it opens.
    wait("the page of six games", || {
        std::fs::read_to_string(&index).is_ok_and(|p| p.contains("data-done=\"6\""))
    });

    let lines = journal(&dir);
    assert_eq!(lines.len(), 6);
    let d = dom(&index, "");
    assert!(d.contains("data-state=\"running\""), "{d}");
    assert!(
        d.contains("http-equiv=\"refresh\""),
        "a running page reloads: {d}"
    );
    assert!(
        d.contains("<span id=\"done\">6</span> of 24 games played"),
        "{d}"
    );
    // Each entrant's games and wins as the journal records them; the ranks in
    // order.
    let counts = tally(&lines, 4);
    let shown = rows(&d);
    assert_eq!(shown.len(), 4, "{d}");
    for (i, row) in shown.iter().enumerate() {
        assert_eq!(row.rank, (i + 1).to_string());
        let e = NAMES
            .iter()
            .position(|n| *n == row.name)
            .expect("an entrant");
        assert_eq!(row.games, counts[e].0.to_string(), "{row:?}");
        assert_eq!(row.wins, counts[e].1.to_string(), "{row:?}");
    }
    // Dave has played nothing yet, against anyone.
    let dave = between(&d, "<th class=\"name\">dave</th></tr>", "</table>");
    let dave_row = between(dave, "<th class=\"name\">dave</th>", "</tr>");
    assert_eq!(dave_row.matches("<td>–</td>").count(), 3, "{dave_row}");
    // A link to each journaled game's replay, titled with its matchup, its
    // players named as entrants, and a way back.
    let hrefs = links(&d);
    assert_eq!(hrefs.len(), 6, "{hrefs:?}");
    for (href, line) in hrefs.iter().zip(&lines) {
        assert!(
            href.ends_with(&format!("g{:03}.html", line["game"].as_u64().unwrap())),
            "{href}"
        );
    }
    let (title, seats, back) = replay(&index, &hrefs[0]);
    let teams: Vec<&str> = (lines[0]["teams"].as_array().unwrap().iter())
        .map(|t| NAMES[t.as_u64().unwrap() as usize])
        .collect();
    assert!(title.ends_with(&teams.join(" vs ")), "{title}");
    for (s, seat) in seats.iter().enumerate() {
        let want = format!("seat {s} · {} · team {}", teams[s % 3], s % 3);
        assert!(seat.contains(&want), "{seat} lacks {want:?}");
    }
    assert_eq!(back, "../index.html");

    // Ctrl-C while held: the page says the run stopped, and stops reloading.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(130), "{}", stderr());
    let d = dom(&index, "");
    assert!(d.contains("data-state=\"stopped\""), "{d}");
    assert!(!d.contains("http-equiv=\"refresh\""), "{d}");
    assert!(d.contains("<span id=\"done\">6</span> of 24"), "{d}");

    // Resumed with the gate open, it plays the other eighteen games.
    std::fs::remove_file(&gate).unwrap();
    succeeds(tournament.arg("--resume"));

    let standings: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("standings.json")).unwrap())
            .unwrap();
    let d = dom(&index, "");
    assert!(d.contains("data-state=\"finished\""), "{d}");
    assert!(
        !d.contains("http-equiv=\"refresh\""),
        "a finished page stays: {d}"
    );
    assert_eq!(standings["games"], 24);
    assert!(
        d.contains("<span id=\"done\">24</span> of 24 games played"),
        "{d}"
    );
    let want: Vec<Shown> = (standings["entrants"].as_array().unwrap().iter())
        .map(|e| Shown {
            rank: e["rank"].to_string(),
            name: e["name"].as_str().unwrap().to_owned(),
            games: e["games"].to_string(),
            wins: e["wins"].to_string(),
            duplicate: format!("{:.2}", e["duplicate_score"].as_f64().unwrap()),
        })
        .collect();
    assert_eq!(rows(&d), want);
    let hrefs = links(&d);
    assert_eq!(hrefs.len(), 24);
    // Dave's own games: his seats carry his entrant name too.
    let lines = journal(&dir);
    let (at, line) = (lines.iter().enumerate())
        .find(|(_, l)| l["teams"].as_array().unwrap().contains(&Value::from(3)))
        .expect("dave played");
    let href = (hrefs.iter())
        .find(|h| {
            h.ends_with(&format!(
                "m{:04}-g{:03}.html",
                line["matchup"].as_u64().unwrap(),
                line["game"].as_u64().unwrap()
            ))
        })
        .unwrap_or_else(|| panic!("no link to journal line {at}"));
    let (_, seats, _) = replay(&index, href);
    assert!(
        seats.iter().filter(|s| s.contains(" · dave · ")).count() == 2,
        "{seats:?}"
    );
}

/// A tournament of 180 games (five entrants, three duplicate sets a matchup,
/// long games between strong and weak bots): its replay pages, script and
/// style included, take at most 1.25 times the bytes of the transcripts they
/// draw (self-contained pages with whole frames took 7 times). A bound in
/// bytes alone (it was 10 MB) holds only for one set of deals: how long
/// random bots play depends on the cards, and every tournament's deals now
/// depend on its seed secret too (these took 18.9 MB of transcripts).
#[test]
fn the_replay_pages_of_180_games_take_about_what_their_transcripts_take() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("t");
    succeeds(
        referee()
            .args(["tournament", "--format", "round-robin", "--sets", "3"])
            .args([
                "--seed",
                "1",
                "--seed-secret",
                crate::support::SECRET,
                "--quiet",
                "--page",
            ])
            .args([
                "--entrant",
                "a=inproc:heuristic",
                "--entrant",
                "b=inproc:random",
            ])
            .args([
                "--entrant",
                "c=inproc:heuristic",
                "--entrant",
                "d=inproc:random",
            ])
            .args(["--entrant", "e=inproc:random", "--out"])
            .arg(&dir),
    );
    let folder = dir.join("index-games");
    let mut pages = 0;
    let mut bytes = 0;
    for e in std::fs::read_dir(&folder).unwrap() {
        let e = e.unwrap();
        pages += u32::from(e.file_name().to_string_lossy().ends_with(".html"));
        bytes += e.metadata().unwrap().len();
    }
    assert_eq!(pages, 180);
    let transcripts: u64 = (std::fs::read_dir(dir.join("games")).unwrap())
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    eprintln!(
        "180 replay pages: {bytes} bytes in {} (the transcripts: {transcripts} bytes)",
        folder.display()
    );
    assert!(
        bytes as f64 <= 1.25 * transcripts as f64,
        "{bytes} bytes of pages for {transcripts} of transcripts"
    );
    // The pages share one script and one style, beside them.
    let one = std::fs::read_to_string(folder.join("r00-m0000-g001.html")).unwrap();
    assert!(one.contains("<script src=\"replay.js\"></script>"));
    assert!(one.contains("href=\"replay.css\""));
    assert!(folder.join("replay.js").is_file() && folder.join("replay.css").is_file());
    if browser::available() {
        replay(&dir.join("index.html"), "index-games/r00-m0009-g006.html");
    }
}

/// The page of a tournament played by rounds draws each round as the
/// referee's own bracket printed it: every table with its entrants' game wins
/// (and in a knockout who advanced), and the byes. Returns the page and what
/// was printed.
fn drawn_as_printed(format: &[&str], dir: &Path) -> (String, String) {
    let mut cmd = referee();
    cmd.arg("tournament")
        .args(format)
        .args(["--quiet", "--page"]);
    for (i, bot) in [
        "heuristic",
        "random",
        "random",
        "heuristic",
        "random",
        "random",
        "random",
    ]
    .iter()
    .enumerate()
    {
        cmd.arg("--entrant").arg(format!("p{i}=inproc:{bot}"));
    }
    let out = succeeds(cmd.arg("--out").arg(dir));
    let printed = String::from_utf8(out.stdout).unwrap();
    // The printed bracket: "round R:" then "  table T: a 3, b 2, c 1 -> a
    // advances" and "  bye: x" lines. (A Swiss's "met before" lines are the
    // standings' repeat meetings on the page, not per round.)
    let mut rounds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in printed.lines() {
        if let Some(r) = line
            .strip_prefix("round ")
            .and_then(|r| r.strip_suffix(':'))
        {
            current = Some(r.to_owned());
        } else if let (Some(r), Some(rest)) = (&current, line.strip_prefix("  ")) {
            if !rest.starts_with("met before") {
                rounds.entry(r.clone()).or_default().push(rest.to_owned());
            }
        }
    }
    assert!(rounds.len() >= 2, "{printed}");

    let d = dom(&dir.join("index.html"), "");
    let drawn = between(&d, "id=\"rounds\"", "id=\"games\"");
    let sections: Vec<&str> = drawn.split("<section class=\"round\"").skip(1).collect();
    assert_eq!(sections.len(), rounds.len(), "{drawn}");
    for (section, (r, lines)) in sections.iter().zip(&rounds) {
        assert!(
            section.starts_with(&format!(" data-round=\"{r}\"")),
            "{section}"
        );
        let mut shown = Vec::new();
        for row in section.split("<tr><td>").skip(1) {
            let cells: Vec<&str> = row
                .split("</td>")
                .map(|c| &c[c.rfind('>').map_or(0, |i| i + 1)..])
                .collect();
            assert!(cells[2].ends_with("6 of 6"), "{row}");
            shown.push(match row.contains("advances") {
                true => format!("table {}: {} -> {} advances", cells[0], cells[1], cells[3]),
                false => format!("table {}: {}", cells[0], cells[1]),
            });
        }
        if let Some(byes) = section.split("<p>Bye: ").nth(1) {
            shown.push(format!("bye: {}", &byes[..byes.find('<').unwrap()]));
        }
        assert_eq!(&shown, lines, "round {r}");
    }
    (d, printed)
}

/// A knockout's page: its bracket as printed, and the champion, who tops the
/// standings.
#[test]
fn a_knockout_page_draws_the_bracket_the_referee_printed() {
    if !browser::available() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let (d, printed) = drawn_as_printed(
        &[
            "--format",
            "knockout",
            "--seed",
            "5",
            "--seed-secret",
            crate::support::SECRET,
        ],
        &scratch.path().join("k"),
    );
    let champion = between(&printed, "champion: ", "\n").to_owned();
    assert!(
        d.contains(&format!("<p id=\"champion\">Champion: {champion}</p>")),
        "{d}"
    );
    let top = between(&d, "<tr class=\"entrant\">", "</tr>");
    assert!(
        top.contains(&format!("<td class=\"name\">{champion}</td>")),
        "{top}"
    );
}

/// A Swiss's page: its rounds as printed, who sat each out, and no champion.
#[test]
fn a_swiss_page_draws_the_rounds_the_referee_printed() {
    if !browser::available() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let (d, _) = drawn_as_printed(
        &[
            "--format",
            "swiss",
            "--rounds",
            "3",
            "--seed",
            "4",
            "--seed-secret",
            crate::support::SECRET,
        ],
        &scratch.path().join("s"),
    );
    assert!(
        d.contains("<p>Bye: "),
        "seven entrants at tables of three: {d}"
    );
    assert!(!d.contains("id=\"champion\""));
}

/// A page that cannot be written costs the run nothing but the page: one
/// warning naming the file, and the tournament completes.
#[test]
fn a_page_that_cannot_be_written_is_a_warning_not_the_end_of_the_run() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("t");
    let mut cmd = referee();
    cmd.args([
        "tournament",
        "--seed",
        "3",
        "--seed-secret",
        crate::support::SECRET,
        "--quiet",
    ])
    .args([
        "--entrant",
        "a=inproc:heuristic",
        "--entrant",
        "b=inproc:random",
    ])
    .args(["--entrant", "c=inproc:random", "--out"])
    .arg(&dir);
    succeeds(&mut cmd);
    // A folder where the page would go: renaming the new page there fails.
    std::fs::create_dir(dir.join("index.html")).unwrap();
    let out = succeeds(cmd.args(["--resume", "--page"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning = "referee: warning: the tournament's page is not kept current: failed to";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(stderr.contains("index.html"), "{stderr}");
    assert!(dir.join("standings.json").is_file());
    // The replay pages, which could be written, were.
    assert!(dir.join("index-games/r00-m0000-g006.html").is_file());
}
