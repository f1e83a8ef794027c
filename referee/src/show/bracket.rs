//! `referee show DIR --html OUT.html` for a tournament folder: the standings, each
//! entrant's win rate drawn with its 95% interval as a bar, and a link to every
//! game's replay page. The replay pages are written beside the page, in
//! `OUT-games/`, one per transcript under `DIR/games/`, so the page and its
//! folder can be copied anywhere and opened without a network.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::Value;

use super::{html, Replay};
use crate::load::{transcripts_in, Transcript};
use crate::transcript::Line;

/// What was written.
pub struct Written {
    pub page: PathBuf,
    pub replays: usize,
}

/// Is `dir` a tournament folder (it has standings)?
pub fn is_tournament(dir: &Path) -> bool {
    dir.join(crate::layout::tournament::STANDINGS).is_file()
}

pub fn write(dir: &Path, out: &Path) -> anyhow::Result<Written> {
    let path = dir.join(crate::layout::tournament::STANDINGS);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    let standings: Value = serde_json::from_str(&text)
        .with_context(|| format!("failed to read {}: not JSON", path.display()))?;
    if standings["format"] != "schmier-standings/1" {
        bail!(
            "failed to read {}: format {} is not \"schmier-standings/1\"",
            path.display(),
            standings["format"]
        );
    }
    let games_dir = crate::layout::tournament::games(dir);
    let games = transcripts_in(&games_dir)?;
    let stem = out
        .file_stem()
        .and_then(|s| s.to_str())
        .context("the page needs a file name, e.g. bracket.html")?;
    let folder_name = format!("{stem}-games");
    let folder = out.with_file_name(&folder_name);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("failed to create {}", folder.display()))?;
    let mut rows = String::new();
    for rel in &games {
        let transcript = Transcript::read(&games_dir.join(rel))?;
        let name = rel.with_extension("html");
        let page = html::render(&Replay::new(&transcript)?)?;
        let target = folder.join(&name);
        crate::safe_create::write_atomic(&target, page.as_bytes())?;
        let href = format!("{folder_name}/{}", name.display());
        let _ = writeln!(
            rows,
            "<li><a href=\"{}\">{}</a> {}</li>",
            escape(&href),
            escape(&rel.with_extension("").display().to_string()),
            escape(&summary(&transcript))
        );
    }
    let page = page(&standings, &rows, games.len())?;
    crate::safe_create::write_atomic(out, page.as_bytes())?;
    Ok(Written {
        page: out.to_owned(),
        replays: games.len(),
    })
}

/// "heuristic, random, python: team 0 (heuristic) won 22-9-(-3)".
fn summary(t: &Transcript) -> String {
    let mut names = Vec::new();
    let mut result = String::new();
    for (_, line) in &t.lines {
        match line {
            Line::Header(h) => {
                names = (h.seats.iter())
                    .map(|s| crate::names::printable(&s.name).into_owned())
                    .collect();
            }
            Line::Result(r) => {
                let scores: Vec<String> = r.scores.iter().map(|s| s.to_string()).collect();
                result = match r.ranking.first() {
                    Some(first) if r.winner.is_some() || !r.forfeited.is_empty() => format!(
                        "first: team {} ({}), scores {}",
                        first.index(),
                        names.get(first.index()).cloned().unwrap_or_default(),
                        scores.join(" / ")
                    ),
                    _ => format!("no winner, scores {}", scores.join(" / ")),
                };
            }
            _ => {}
        }
    }
    let teams: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    format!("— {}: {result}", teams.join(", "))
}

fn page(standings: &Value, games: &str, count: usize) -> anyhow::Result<String> {
    let entrants = standings["entrants"]
        .as_array()
        .context("standings.json has no \"entrants\" list")?;
    let mut rows = String::new();
    for e in entrants {
        let num = |k: &str| e[k].as_f64().unwrap_or(0.0);
        let (lo, hi) = (
            e["win_rate_ci"][0].as_f64().unwrap_or(0.0),
            e["win_rate_ci"][1].as_f64().unwrap_or(0.0),
        );
        let pct = |x: f64| (x * 1000.0).round() / 10.0;
        let _ = writeln!(
            rows,
            "<tr class=\"entrant\"><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td>\
             <td>{:.1}%</td><td><div class=\"bar\" title=\"95% interval {:.1}%–{:.1}%\">\
             <span class=\"ci\" data-lo=\"{lo}\" data-hi=\"{hi}\" style=\"left:{}%;width:{}%\"></span>\
             <span class=\"rate\" style=\"left:{}%\"></span></div></td>\
             <td>{:.2}</td><td>{:.1} ± {:.1}</td><td>{}</td></tr>",
            e["rank"],
            escape(e["name"].as_str().unwrap_or("?")),
            e["games"],
            e["wins"],
            num("win_rate") * 100.0,
            lo * 100.0,
            hi * 100.0,
            pct(lo),
            pct(hi - lo),
            pct(num("win_rate")),
            num("duplicate_score"),
            num("rating"),
            num("rating_uncertainty"),
            e["forfeits"],
        );
    }
    Ok(format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Schmier tournament: standings</title>
<style>
body {{ font: 15px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; }}
td, th {{ padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }}
td.name, th.name {{ text-align: left; font-weight: 600; }}
.bar {{ position: relative; width: 240px; height: 14px; background: #eee; }}
.bar .ci {{ position: absolute; top: 3px; height: 8px; background: #7aa7e0; }}
.bar .rate {{ position: absolute; top: 0; width: 2px; height: 14px; margin-left: -1px; background: #123; }}
li {{ margin: 2px 0; }}
</style></head>
<body><main>
<h1>Standings</h1>
<p>{} games. Win rate with its 95% interval (the bar spans 0–100%; the blue part is
the interval, the dark line the win rate).{}</p>
<table id="standings"><tr><th>rank</th><th class="name">entrant</th><th>games</th><th>wins</th>
<th>win rate</th><th>95% interval</th><th>duplicate score</th><th>rating</th><th>forfeits</th></tr>
{rows}</table>
<h2>Games</h2>
<p>{count} replays, one page each.</p>
<ol id="games">
{games}</ol>
</main></body></html>
"#,
        standings["games"],
        // A Swiss's count of pairs seated together again.
        standings["repeat_meetings"]
            .as_u64()
            .map_or(String::new(), |n| format!(" Repeat meetings: {n}."))
    ))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
