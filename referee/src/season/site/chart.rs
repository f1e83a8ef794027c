//! The rating over time as an inline SVG: one line per version (the rating
//! after each finished set), the newest version's 95% interval as a band.

use super::entrant::VersionInfo;

const W: f64 = 640.0;
const H: f64 = 240.0;
/// Room for the axis labels.
const PAD: f64 = 40.0;
const COLOURS: [&str; 6] = [
    "#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#57606a",
];

/// The chart of `versions`' ratings; a sentence if none has played a set.
pub fn svg(versions: &[VersionInfo]) -> String {
    let points: Vec<(f64, f64, f64)> = (versions.iter())
        .flat_map(|v| {
            v.history
                .iter()
                .map(|r| (r.after_sets as f64, r.low, r.high))
        })
        .collect();
    if points.is_empty() {
        return "<p id=\"rating-chart\">No rating yet: no finished set.</p>".into();
    }
    let x0 = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x1 = points
        .iter()
        .map(|p| p.0)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(x0 + 1.0);
    let y0 = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let y1 = points
        .iter()
        .map(|p| p.2)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(y0 + 1.0);
    let x = |s: f64| PAD + (s - x0) / (x1 - x0) * (W - 2.0 * PAD);
    let y = |r: f64| H - PAD + (r - y0) / (y1 - y0) * (2.0 * PAD - H);
    let mut out = format!(
        "<svg id=\"rating-chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" \
         width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"rating after each finished set\">\
         <rect x=\"{PAD}\" y=\"{PAD}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#ccc\"/>",
        W - 2.0 * PAD,
        H - 2.0 * PAD
    );
    if let Some(v) = versions.iter().rev().find(|v| !v.history.is_empty()) {
        let upper = v
            .history
            .iter()
            .map(|r| format!("{:.1},{:.1}", x(r.after_sets as f64), y(r.high)));
        let lower = v
            .history
            .iter()
            .rev()
            .map(|r| format!("{:.1},{:.1}", x(r.after_sets as f64), y(r.low)));
        let band: Vec<String> = upper.chain(lower).collect();
        out += &format!(
            "<polygon class=\"interval\" points=\"{}\" fill=\"#1f6feb22\" stroke=\"none\"/>",
            band.join(" ")
        );
    }
    for (k, v) in versions
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.history.is_empty())
    {
        let line: Vec<String> = (v.history.iter())
            .map(|r| format!("{:.1},{:.1}", x(r.after_sets as f64), y(r.rating)))
            .collect();
        out += &format!(
            "<polyline class=\"rating\" data-version=\"{}\" points=\"{}\" fill=\"none\" \
             stroke=\"{}\" stroke-width=\"2\"><title>v{}</title></polyline>",
            v.number,
            line.join(" "),
            COLOURS[k % COLOURS.len()],
            v.number
        );
    }
    out + &axes(x0, x1, y0, y1) + "</svg>"
}

fn axes(x0: f64, x1: f64, y0: f64, y1: f64) -> String {
    let text = |x: f64, y: f64, anchor: &str, s: String| {
        format!(
            "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" font-size=\"11\">{s}</text>"
        )
    };
    [
        text(PAD - 4.0, H - PAD, "end", format!("{y0:+.0}")),
        text(PAD - 4.0, PAD + 4.0, "end", format!("{y1:+.0}")),
        text(PAD, H - PAD + 16.0, "middle", format!("{x0:.0}")),
        text(W - PAD, H - PAD + 16.0, "middle", format!("{x1:.0}")),
        text(
            W / 2.0,
            H - 6.0,
            "middle",
            "finished sets in the season".into(),
        ),
    ]
    .concat()
}
