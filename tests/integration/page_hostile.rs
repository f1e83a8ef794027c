//! Pages no bot can break: bots whose names and replies are written to break a
//! page — `<!--<script>` (which, inside the page's JSON data element, would make
//! the browser's parser swallow the page's own script), `</script>`, quotes
//! ending an attribute, an `onerror` handler — leave `show --html` pages, a
//! tournament's replay pages and its page drawn in real headless Chromium: the
//! page's own script ran and drew every seat with its name, the fault's caption
//! quotes the reply as text, and nothing the bots sent ran.

use std::path::Path;

use crate::browser::{self, dom};
use crate::hostile::NEVER_REACHED_MS;
use crate::support::{play, referee, succeeds};

/// The hostile modes of `tests/hostile/bot.py` and the names they give.
const HOSTILE: [(&str, &str); 3] = [
    ("page-comment", "<!--<script>"),
    (
        "page-close",
        "</script><script>document.body.dataset.pwned=1</script>",
    ),
    (
        "page-quote",
        "\"'><img src=x onerror=\"document.body.dataset.pwned=1\">&amp;\u{2028}",
    ),
];

/// Entrant names for the same bots.
const ENTRANTS: [&str; 3] = ["<!--<script>", "</script><b>", "\"'><i x'y"];

fn bot(mode: &str) -> String {
    format!("python3 tests/hostile/bot.py {mode}")
}

/// `text` as Chromium's `--dump-dom` writes it in a text node.
fn as_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\u{a0}', "&nbsp;")
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not in the page:\n{text}"))
        + start.len();
    &text[from..from + text[from..].find(end).unwrap()]
}

/// The page as drawn at the start of deal 1: every seat drawn by the page's
/// script with its six cards and its heading naming `names[seat]`, and no
/// trace of a bot's script having run.
fn drawn(page: &Path, names: &[String; 6]) {
    let d = dom(page, "deal=1");
    assert!(!d.contains("data-pwned"), "a bot's script ran:\n{d}");
    assert!(
        between(&d, "id=\"counter\">", "<").starts_with("step "),
        "the page's script did not run:\n{d}"
    );
    for (s, name) in names.iter().enumerate() {
        let seat = between(&d, &format!("id=\"seat-{s}\""), "</section>");
        assert_eq!(seat.matches("data-card=").count(), 6, "seat {s}: {seat}");
        let heading = between(seat, "<h2>", "<span");
        // The page prints names through names::printable, which shows U+2028
        // as \u{2028}.
        let shown = as_text(&name.replace('\u{2028}', "\\u{2028}"));
        assert!(
            heading.contains(&shown),
            "seat {s}: {heading} lacks {shown}"
        );
    }
}

#[test]
fn a_show_page_of_hostile_names_and_replies_loads_and_draws_every_seat() {
    if !browser::available() {
        return;
    }
    let mut run = play().seed(23).inproc_bystanders();
    run = run.args(["--decision-ms", NEVER_REACHED_MS, "--startup-ms", "10000"]);
    for (seat, (mode, _)) in [1, 2, 4].iter().zip(HOSTILE) {
        run = run.arg("--seat").arg(format!("{seat}={}", bot(mode)));
    }
    let done = run.ok();
    let lines = done.lines(1);
    let names: [String; 6] =
        std::array::from_fn(|s| lines[0]["seats"][s]["name"].as_str().unwrap().to_owned());
    for (seat, (_, name)) in [1, 2, 4].iter().zip(HOSTILE) {
        assert_eq!(names[*seat], name, "the transcript keeps the name as sent");
    }
    let page = done.dir.join("hostile.html");
    succeeds(
        referee()
            .arg("show")
            .arg(done.transcript(1))
            .arg("--html")
            .arg(&page),
    );
    drawn(&page, &names);
    // Each hostile seat's first reply is a fault whose caption quotes it.
    let faults: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i]["type"] == "fault")
        .collect();
    assert_eq!(faults.len(), 3, "one malformed reply each");
    for i in faults {
        // Transcript line i is the page's step i, counted from 1 (the header
        // has no step).
        let d = dom(&page, &format!("step={i}"));
        let caption = between(&d, "id=\"caption\" class=\"fault\">", "</div>");
        assert!(caption.starts_with("Fault: seat"), "{caption}");
        assert!(caption.contains("&lt;"), "the reply is quoted: {caption}");
        assert!(!d.contains("data-pwned"), "a bot's script ran:\n{d}");
    }
}

#[test]
fn a_tournament_of_hostile_names_keeps_its_page_and_replay_pages_drawn() {
    if !browser::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let mut cmd = referee();
    cmd.arg("tournament")
        .args([
            "--quiet",
            "--page",
            "--seed",
            "5",
            "--seed-secret",
            crate::support::SECRET,
        ])
        .args(["--decision-ms", NEVER_REACHED_MS, "--startup-ms", "10000"]);
    // The organiser's names are as hostile as the bots' own (an entrant's name
    // holds no `=` and no control character).
    for ((mode, _), name) in HOSTILE.iter().zip(ENTRANTS) {
        cmd.arg("--entrant").arg(format!("{name}={}", bot(mode)));
    }
    succeeds(cmd.arg("--out").arg(&out));
    let index = out.join("index.html");
    let d = dom(&index, "");
    assert!(!d.contains("data-pwned"), "a bot's script ran:\n{d}");
    let standings = between(&d, "id=\"standings\"", "</table>");
    for name in ENTRANTS {
        assert!(
            standings.contains(&as_text(name)),
            "{name:?} is not in the standings: {standings}"
        );
    }
    let mut pages: Vec<_> = std::fs::read_dir(out.join("index-games"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    pages.sort();
    assert_eq!(pages.len(), 6, "a duplicate set of six games: {pages:?}");
    for page in &pages {
        // Who sat where, from the page's own transcript.
        let transcript = out
            .join("games")
            .join(page.with_extension("jsonl").file_name().unwrap());
        let header: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&transcript)
                .unwrap_or_else(|e| panic!("{}: {e}", transcript.display()))
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        // A tournament's pages name the entrants, whose bots these are.
        let names: [String; 6] = std::array::from_fn(|s| {
            let hello = header["seats"][s]["name"].as_str().unwrap();
            let i = HOSTILE.iter().position(|(_, n)| *n == hello).unwrap();
            ENTRANTS[i].to_owned()
        });
        drawn(page, &names);
    }
}
