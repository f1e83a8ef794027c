//! A bot's name is data, never terminal control: a bot whose `hello` name is a
//! console-injection probe (erase line, carriage return, cursor up, an OSC 52
//! clipboard write, a C1 CSI, a right-to-left override) leaves no control
//! character in anything the referee prints — `play`, `verify`, `show` (text and
//! page), `check-bot`, `tournament` — while the transcript keeps the name exactly
//! as the bot sent it.

use std::path::Path;
use std::process::Output;

use crate::support::play;

/// The name `tests/hostile/bot.py evil-name` gives in its `hello`.
const EVIL: &str = "evil\u{1b}[2K\rgood\u{1b}[1A\u{1b}]52;c;aGVsbG8=\u{7}\u{9b}2J\u{202e}eman";

const BOT: &str = "python3 tests/hostile/bot.py evil-name";

/// What a terminal or a page could act on: control characters (C0 but the
/// newline that ends each line, DEL, C1) and the bidirectional controls.
pub fn controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

/// Both streams of a finished command, checked; returns stdout and stderr.
fn clean(what: &str, out: &Output) -> String {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        let found = controls(text);
        assert!(
            found.is_empty(),
            "{what}: {stream} carries {found:?}:\n{text}"
        );
    }
    format!("{stdout}{stderr}")
}

fn referee(args: &[&str], files: &[&Path]) -> Output {
    crate::support::referee()
        .args(args)
        .args(files)
        .output()
        .expect("the referee runs")
}

#[test]
fn a_name_made_of_escape_sequences_reaches_no_console_and_stays_data_in_the_transcript() {
    let done = play()
        .seed(3)
        .inproc_bystanders()
        .arg("--seat")
        .arg(format!("1={BOT}"))
        .ok();
    let console = clean("play", &done.output);
    // The per-hand lines name teams, so the name was printed (escaped).
    assert!(
        console.contains("evil\\u{1b}[2K\\u{d}good"),
        "the name is shown, escaped:\n{console}"
    );
    let header = &done.lines(1)[0];
    assert_eq!(
        header["seats"][1]["name"], EVIL,
        "the transcript keeps the name"
    );
    // JSON escapes C0 (ESC, CR, BEL) in the file itself; C1 and the direction
    // controls are plain JSON string characters and stay as sent (see SECURITY.md:
    // read transcripts with `referee show`, bots' stderr logs with `less`).
    let text = done.text(1);
    let raw: Vec<char> = (controls(text.lines().next().unwrap()).into_iter())
        .filter(|&c| (c as u32) < 0x80)
        .collect();
    assert!(raw.is_empty(), "raw C0 in the transcript: {raw:?}");
    assert!(text.contains(r#"evil\u001b[2K\rgood"#), "{text}");

    let transcript = done.transcript(1);
    let v = referee(&["verify"], &[&transcript]);
    assert!(v.status.success());
    clean("verify", &v);
    clean("show", &referee(&["show"], &[&transcript]));
    clean(
        "show --seat 1",
        &referee(&["show", "--seat", "1"], &[&transcript]),
    );
    let page = done.dir.join("page.html");
    let shown = referee(&["show", "--html", page.to_str().unwrap()], &[&transcript]);
    assert!(shown.status.success(), "{}", clean("show --html", &shown));
    let html = std::fs::read_to_string(&page).unwrap();
    let found: Vec<char> = controls(&html).into_iter().filter(|&c| c != '\t').collect();
    assert!(found.is_empty(), "the page carries {found:?}");

    // Two games: the per-game lines on stderr and the tally.
    let done = play()
        .seed(3)
        .args(["--games", "2"])
        .inproc_bystanders()
        .arg("--seat")
        .arg(format!("1={BOT}"))
        .ok();
    clean("play --games 2", &done.output);
}

#[test]
fn check_bot_prints_the_name_escaped() {
    let out = referee(&["check-bot", "--", BOT], &[]);
    let console = clean("check-bot", &out);
    assert!(console.contains("evil"), "{console}");
}

#[test]
fn a_tournament_console_and_its_page_carry_no_control_character() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let run = crate::support::referee()
        .args([
            "tournament",
            "--sets",
            "1",
            "--seed",
            "4",
            "--seed-secret",
            crate::support::SECRET,
        ])
        .args(["--entrant", &format!("evil={BOT}")])
        .args([
            "--entrant",
            "h=builtin:heuristic",
            "--entrant",
            "r=builtin:random",
        ])
        .args(["--decision-ms", "10000"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", clean("tournament", &run));
    clean("tournament", &run);
    let page = dir.path().join("t.html");
    let shown = referee(&["show", "--html", page.to_str().unwrap()], &[&out]);
    assert!(shown.status.success(), "{}", clean("show --html", &shown));
    let html = std::fs::read_to_string(&page).unwrap();
    let found: Vec<char> = controls(&html).into_iter().filter(|&c| c != '\t').collect();
    assert!(found.is_empty(), "the tournament page carries {found:?}");
}

#[test]
fn an_entrant_named_with_a_control_character_is_refused() {
    let out = crate::support::referee()
        .args(["tournament", "--entrant", "a\u{1b}[2K=builtin:random"])
        .args([
            "--entrant",
            "b=builtin:random",
            "--entrant",
            "c=builtin:random",
        ])
        .args(["--out", "/nonexistent/never-written"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("control character"), "{err}");
    assert!(
        controls(&err).is_empty(),
        "the refusal quotes the name escaped: {err}"
    );
}
