//! One vocabulary for results: a team is named by its entrants (the names its two
//! bots gave in `hello`), never by a number that changes meaning when seats rotate.
//!
//! A name is whatever text a bot chose, so it is data, never terminal control:
//! [`printable`] is the one function every console line and page passes
//! bot-given text through (names here and in `show`, fault details quoting a
//! bot's output). Transcripts keep the text exactly as sent (JSON escapes what it
//! must): a name is shown escaped, recorded as is.
//!
//! Whole reports built from files (`verify`, `diff`, `merge`, `replay`, an
//! error message quoting a transcript, a journal or a `tournament.json`) go
//! through [`printable_lines`] where they are printed: whatever such a file
//! holds — a header's `referee`, its sandbox's tool and layers, a seat's
//! command — anyone can edit, and a file that verifies can still carry ESC.

use std::borrow::Cow;

/// `text` (a bot's name, or anything else a bot chose) safe to print on a
/// terminal or a page: every character that is not printing text — C0 controls
/// (carriage return, newline and tab included: a name is one line), ESC and so
/// every escape sequence (cursor moves, erase line, OSC 52 clipboard writes),
/// DEL, C1 controls (a lone U+009B is a CSI on some terminals), and the Unicode
/// direction controls that reorder the text around them — is written as
/// `\u{..}` with its code point in hex. Everything else passes unchanged, so an
/// ordinary name prints as itself.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_control(c) {
            out += &format!("\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` of several lines for a console: [`printable`] on each line, the
/// newlines that end them kept. For what is printed at once (a report, an
/// error), so that nothing read from a file reaches the terminal as control.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_control(c)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(printable).collect();
    Cow::Owned(lines.join("\n"))
}

/// Control characters (Unicode category Cc: C0, DEL, C1), the bidirectional
/// embedding, override, isolate and mark characters, and the line and paragraph
/// separators (which some terminals and pages break lines at).
fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}'
        )
}

/// Names for the three teams, from the six players' names in lineup (or seat)
/// order: team `k` holds positions `k` and `k + 3`. Partners with one name give
/// that name, others `"a & b"`; teams whose names collide get `#1`, `#2`, ... in
/// team order, so every team's name is unique.
/// Names pass through [`printable`]: team names are for consoles and pages.
pub fn team_names<S: AsRef<str>>(players: &[S]) -> [String; 3] {
    let mut names: [String; 3] =
        std::array::from_fn(|k| partners(players[k].as_ref(), players[k + 3].as_ref()));
    let plain = names.clone();
    for k in 0..3 {
        if plain.iter().filter(|n| **n == plain[k]).count() > 1 {
            let nth = plain[..=k].iter().filter(|n| **n == plain[k]).count();
            names[k] = format!("{} #{nth}", plain[k]);
        }
    }
    names
}

/// A team's two players in one name: `"random"` when both have that name,
/// else `"a & b"` (each through [`printable`]).
pub fn partners(a: &str, b: &str) -> String {
    let (a, b) = (printable(a), printable(b));
    if a == b {
        a.into_owned()
    } else {
        format!("{a} & {b}")
    }
}

/// `"heuristic 22, random #1 9, random #2 -3"`: scores by team, with names.
pub fn scores_text(names: &[String; 3], scores: [i32; 3]) -> String {
    (0..3)
        .map(|k| format!("{} {}", names[k], scores[k]))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_keeps_its_lines_and_escapes_everything_else() {
        let report = "ok a.jsonl\n  played under: ref\u{1b}[2J\u{7};\r\u{9b}1A\tx\n";
        assert_eq!(
            printable_lines(report),
            "ok a.jsonl\n  played under: ref\\u{1b}[2J\\u{7};\\u{d}\\u{9b}1A\\u{9}x\n"
        );
        assert!(matches!(
            printable_lines("plain\nlines\n"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn teams_are_named_by_their_entrants_and_never_collide() {
        let players = [
            "heuristic",
            "random",
            "random",
            "heuristic",
            "random",
            "random",
        ];
        assert_eq!(
            team_names(&players),
            ["heuristic", "random #1", "random #2"]
        );
        let mixed = ["a", "b", "c", "x", "b", "c"];
        assert_eq!(team_names(&mixed), ["a & x", "b", "c"]);
        let three = ["p", "p", "p", "p", "p", "p"];
        assert_eq!(team_names(&three), ["p #1", "p #2", "p #3"]);
    }

    /// Every character a terminal or a page could act on, as the probe's bot sent
    /// them: none survives, and the text around them is kept.
    #[test]
    fn control_characters_are_shown_escaped_never_passed_through() {
        let evil =
            "a\u{1b}[2Kb\rc\u{1b}[1Ad\u{1b}]52;c;aGk=\u{7}e\u{9b}f\u{202e}g\u{2066}h\ti\nj\u{7f}";
        let shown = printable(evil);
        assert!(
            !shown.chars().any(is_control),
            "a control character survived: {shown:?}"
        );
        for kept in [
            "a",
            "[2Kb",
            "c",
            "[1Ad",
            "]52;c;aGk=",
            "e",
            "f",
            "g",
            "h",
            "i",
            "j",
        ] {
            assert!(shown.contains(kept), "{kept:?} lost from {shown:?}");
        }
        assert!(shown.starts_with("a\\u{1b}[2Kb\\u{d}c"), "{shown}");
        // Plain names, accents and symbols included, print as themselves.
        for plain in ["random", "Zoë's bot ♠ v2", "a & b #1", "名前"] {
            assert!(matches!(printable(plain), Cow::Borrowed(p) if p == plain));
        }
        let teams = team_names(&[evil, "x", "y", "z", "x", "y"]);
        assert!(!teams[0].chars().any(is_control), "{teams:?}");
    }
}
