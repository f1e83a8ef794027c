//! `DIR/sprt.html`: the test on one self-contained page — the verdict, the
//! settings, and the LLR after each set drawn between its two bounds as an
//! inline SVG (no script, no external file), so the page can be mailed or
//! archived as it is.

use std::fmt::Write;

use super::report::Report;
use crate::show::escape::html as escape;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 320.0;
/// Room for the axis labels.
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

pub fn render(r: &Report) -> String {
    let title = format!("SPRT: {} vs {}", r.new, r.base);
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>\n\
         body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 680px; color: #222; }}\n\
         table {{ border-collapse: collapse; }} td, th {{ padding: 2px 12px 2px 0; text-align: left; }}\n\
         .verdict {{ font-size: 1.2em; font-weight: bold; }}\n\
         .forfeits {{ color: #b03030; font-weight: bold; }}\n\
         </style>\n</head>\n<body>\n<h1>{}</h1>\n<p class=\"verdict\">{}</p>\n<p>{}</p>\n",
        escape(&title),
        escape(&title),
        escape(&r.verdict_text()),
        escape(&r.line()),
    );
    if let Some(said) = r.forfeits.text(r.games) {
        let _ = writeln!(
            page,
            "<p class=\"forfeits\">Forfeits: {}. Each counts the worst duplicate score of \
             its set, not what the stand-in that finished its cards scored; the faults are in \
             standings.json, each game's in games/.</p>",
            escape(&said)
        );
    }
    page.push_str(&chart(r));
    page.push_str("<table>\n");
    let rows = [
        ("new", r.new.clone()),
        ("base", r.base.clone()),
        ("third", r.third.clone()),
        ("seed", r.seed.to_string()),
        ("measure", r.measure.to_owned()),
        (
            "hypotheses",
            format!("H0: {} · H1: {} points per game", r.h0, r.h1),
        ),
        ("errors", format!("α = {} · β = {}", r.alpha, r.beta)),
        ("max sets", r.max_sets.to_string()),
        (
            "forfeits",
            format!(
                "new {} · base {} (counted games)",
                r.forfeits.new, r.forfeits.base
            ),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(page, "<tr><th>{k}</th><td>{}</td></tr>", escape(&v));
    }
    page.push_str("</table>\n</body>\n</html>\n");
    page
}

/// LLR (vertical) against sets played (horizontal), from (0, 0); the bounds as
/// dashed lines.
fn chart(r: &Report) -> String {
    let sets = f64::from(r.sets.max(1));
    let llrs = r.history.iter().map(|s| s.llr);
    let lo = llrs.clone().fold(r.lower, f64::min) * 1.1;
    let hi = llrs.fold(r.upper, f64::max) * 1.1;
    let x = |set: f64| LEFT + set / sets * (WIDTH - LEFT - RIGHT);
    let y = |llr: f64| TOP + (hi - llr) / (hi - lo) * (HEIGHT - TOP - BOTTOM);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"LLR after each set\">"
    );
    let (x0, x1) = (x(0.0), x(sets));
    let _ = writeln!(
        svg,
        "<line x1=\"{x0}\" y1=\"{:.1}\" x2=\"{x1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
        y(0.0),
        y(0.0)
    );
    // H1's label above its line, H0's below, at the right: they never overlap.
    for (bound, colour, label, dy) in [
        (r.upper, "#2a7d2a", "H1 accepted", -4.0),
        (r.lower, "#b03030", "H0 accepted", 14.0),
    ] {
        let yb = y(bound);
        let _ = writeln!(
            svg,
            "<line class=\"bound\" x1=\"{x0}\" y1=\"{yb:.1}\" x2=\"{x1}\" y2=\"{yb:.1}\" \
             stroke=\"{colour}\" stroke-dasharray=\"6 4\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" fill=\"{colour}\" \
             text-anchor=\"end\">{label} ({bound:+.2})</text>",
            x1 - 4.0,
            yb + dy
        );
    }
    // The LLR scale: its top and bottom values.
    for (value, at) in [(hi, TOP + 10.0), (lo, HEIGHT - BOTTOM)] {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{at:.1}\" font-size=\"11\" text-anchor=\"end\">{value:+.1}</text>",
            LEFT - 4.0
        );
    }
    let mut points = format!("{x0:.1},{:.1}", y(0.0));
    for s in &r.history {
        let _ = write!(points, " {:.1},{:.1}", x(f64::from(s.set)), y(s.llr));
    }
    let _ = writeln!(
        svg,
        "<polyline class=\"llr\" points=\"{points}\" fill=\"none\" stroke=\"#1f4e99\" stroke-width=\"2\"/>"
    );
    let bottom = HEIGHT - BOTTOM;
    let _ = writeln!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{bottom}\" stroke=\"#444\"/>\n\
         <text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"12\">0</text>\n\
         <text x=\"{x1:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{} sets</text>\n\
         <text x=\"14\" y=\"{:.1}\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\" \
         text-anchor=\"middle\">LLR</text>\n</svg>",
        bottom + 30.0,
        bottom + 30.0,
        r.sets,
        HEIGHT / 2.0,
        HEIGHT / 2.0
    );
    svg
}
