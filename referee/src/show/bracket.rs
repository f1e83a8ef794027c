//! A tournament's page, drawn from an [`Index`]: the format, seed and settings
//! at the top, progress, the standings with each entrant's win rate drawn with
//! its 95% interval as a bar, a head-to-head matrix, the rounds of a knockout or
//! Swiss, and a link to every finished game's replay page. The same renderer
//! serves the page a running tournament keeps current (`tournament --page`,
//! which refreshes itself until the run ends) and `referee show DIR --html`;
//! `tournament/page.rs` gathers the [`Index`] for both. Plain HTML, no script:
//! what a browser shows is what the file says.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::show::escape::html as escape;
use crate::tournament::Standings;

/// What was written.
pub struct Written {
    pub page: PathBuf,
    pub replays: usize,
}

/// Is `dir` a finished tournament folder (it has standings)?
pub fn is_tournament(dir: &Path) -> bool {
    dir.join(crate::layout::tournament::STANDINGS).is_file()
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Running,
    Finished,
    /// Stopped (Ctrl-C, SIGTERM, an error); `--resume` continues it.
    Stopped,
}

/// Everything the page shows.
pub struct Index<'a> {
    pub title: String,
    /// (what, value) lines at the top: format, seed, sets, rules, time control…
    pub settings: Vec<(String, String)>,
    pub state: State,
    pub done: u64,
    /// Games this run plays, when known before it ends (not for a knockout or
    /// Swiss, whose later rounds depend on the earlier ones).
    pub total: Option<u64>,
    /// A knockout's or Swiss's current round: (round, games done, games).
    pub round: Option<(u32, u64, u64)>,
    pub standings: &'a Standings,
    /// Entrant names by entrant index.
    pub names: Vec<String>,
    /// `ahead[a][b]`: in how many of the games entrants `a` and `b` played at
    /// one table `a` finished above `b`; `met[a][b]`: how many such games.
    pub ahead: Vec<Vec<u32>>,
    pub met: Vec<Vec<u32>>,
    pub rounds: Vec<Round>,
    /// A knockout's winner, once there is one.
    pub champion: Option<String>,
    pub games: Vec<GameLink>,
    /// Seconds between reloads while the run goes on.
    pub refresh: u32,
}

/// One round of a knockout or Swiss.
pub struct Round {
    pub number: u32,
    /// A table's winner advances (a knockout).
    pub advancing: bool,
    pub tables: Vec<TableRow>,
    /// Entrants who sat the round out (a knockout's byes advance).
    pub byes: Vec<String>,
}

pub struct TableRow {
    pub index: u32,
    /// Each entrant at the table and its game wins there so far.
    pub entrants: Vec<(String, u32)>,
    pub done: u32,
    pub games: u32,
    /// A knockout table's winner, once its games are all played.
    pub advances: Option<String>,
}

pub struct GameLink {
    /// Relative to the page.
    pub href: String,
    pub label: String,
    pub summary: String,
}

pub fn render(index: &Index) -> String {
    let mut out = String::new();
    let refresh = match index.state {
        // Only while something can still change: a finished page stays put.
        State::Running => format!(
            "<meta http-equiv=\"refresh\" content=\"{}\">\n",
            index.refresh
        ),
        _ => String::new(),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n{refresh}\
         <title>{}</title>\n<style>\n{STYLE}</style></head>\n<body><main>\n<h1>{}</h1>\n",
        escape(&index.title),
        escape(&index.title)
    );
    out.push_str("<dl id=\"settings\">\n");
    for (what, value) in &index.settings {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(what), escape(value));
    }
    out.push_str("</dl>\n");
    progress(&mut out, index);
    standings(&mut out, index);
    matrix(&mut out, index);
    rounds(&mut out, index);
    games(&mut out, index);
    out.push_str("</main></body></html>\n");
    out
}

const STYLE: &str = "body { font: 15px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1em; }
td, th { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }
td.name, th.name { text-align: left; font-weight: 600; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; }
dt { font-weight: 600; } dd { margin: 0; }
#progress { font-size: 18px; }
.running { color: #1d6b3a; } .stopped { color: #a33; }
.bar { position: relative; width: 240px; height: 14px; background: #eee; }
.bar .ci { position: absolute; top: 3px; height: 8px; background: #7aa7e0; }
.bar .rate { position: absolute; top: 0; width: 2px; height: 14px; margin-left: -1px; background: #123; }
#matrix td { text-align: center; } #matrix td.self { background: #f3f3f3; }
.advances { font-weight: 600; color: #1d6b3a; }
li { margin: 2px 0; }
";

fn progress(out: &mut String, index: &Index) {
    let (class, state) = match index.state {
        State::Running => ("running", "running"),
        State::Finished => ("finished", "finished"),
        State::Stopped => ("stopped", "stopped (--resume continues it)"),
    };
    let of = index.total.map_or(String::new(), |t| format!(" of {t}"));
    let _ = write!(
        out,
        "<p id=\"progress\" class=\"{class}\" data-state=\"{class}\" data-done=\"{}\">\
         <span id=\"done\">{}</span>{of} games played — {state}",
        index.done, index.done
    );
    if let Some((r, done, total)) = index.round {
        let _ = write!(out, "; round {r}: {done} of {total} games");
    }
    if index.state == State::Running {
        let _ = write!(out, " (this page reloads every {} seconds)", index.refresh);
    }
    out.push_str("</p>\n");
}

fn standings(out: &mut String, index: &Index) {
    let s = index.standings;
    let _ = write!(
        out,
        "<h2>Standings</h2>\n<p id=\"ranked-by\">Ranked by: {}.</p>\n<p>Win rate with its 95% \
         interval (the bar spans 0–100%; the blue part is the interval, the dark line the win \
         rate). Rating: the Plackett–Luce fit to every game's ranking, with its 95% interval \
         (docs/organisers.md, \"The rating\", states the model).{}</p>\n\
         <table id=\"standings\"><tr><th>rank</th><th class=\"name\">entrant</th><th>games</th>\
         <th>wins</th><th>win rate</th><th>95% interval</th><th>duplicate score</th>\
         <th>rating ± 95%</th><th>forfeits</th></tr>\n",
        escape(&s.ranked_by),
        // A Swiss's count of pairs seated together again.
        s.repeat_meetings
            .map_or(String::new(), |n| format!(" Repeat meetings: {n}."))
    );
    let pct = |x: f64| (x * 1000.0).round() / 10.0;
    for e in &s.entrants {
        let [lo, hi] = e.win_rate_ci;
        let _ = writeln!(
            out,
            "<tr class=\"entrant\"><td class=\"rank\">{}</td><td class=\"name\">{}</td>\
             <td class=\"games\">{}</td><td class=\"wins\">{}</td><td>{:.1}%</td>\
             <td><div class=\"bar\" title=\"95% interval {:.1}%–{:.1}%\">\
             <span class=\"ci\" data-lo=\"{lo}\" data-hi=\"{hi}\" style=\"left:{}%;width:{}%\"></span>\
             <span class=\"rate\" style=\"left:{}%\"></span></div></td>\
             <td class=\"duplicate\">{:.2}</td>\
             <td class=\"rating\" title=\"95% interval {:+.1} to {:+.1}\">{:+.1} ± {:.1}</td>\
             <td>{}</td></tr>",
            e.rank,
            escape(&e.name),
            e.games,
            e.wins,
            e.win_rate * 100.0,
            lo * 100.0,
            hi * 100.0,
            pct(lo),
            pct(hi - lo),
            pct(e.win_rate),
            e.duplicate_score,
            e.rating_ci[0],
            e.rating_ci[1],
            e.rating,
            (e.rating_ci[1] - e.rating_ci[0]) / 2.0,
            e.forfeits,
        );
    }
    out.push_str("</table>\n");
    superiority(out, s);
    if !s.head_to_head.is_empty() {
        out.push_str(
            "<table id=\"gauntlet\"><tr><th class=\"name\">challenger</th><th class=\"name\">\
             opponent</th><th>games</th><th>score difference a game</th><th>95% interval</th></tr>\n",
        );
        for h in &s.head_to_head {
            let _ = writeln!(
                out,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td>\
                 <td>{:+.2}</td><td>{:+.2} to {:+.2}</td></tr>",
                escape(&h.challenger),
                escape(&h.opponent),
                h.games,
                h.score_difference,
                h.ci[0],
                h.ci[1]
            );
        }
        out.push_str("</table>\n");
    }
}

/// The likelihood-of-superiority matrix, entrants in rank order, when the
/// standings have one.
fn superiority(out: &mut String, s: &Standings) {
    let Some(m) = &s.likelihood_of_superiority else {
        return;
    };
    out.push_str(
        "<p>Likelihood of superiority: how likely the row entrant is stronger than the column \
         entrant, by the rating's model.</p>\n<table id=\"superiority\"><tr><th></th>",
    );
    for e in &s.entrants {
        let _ = write!(out, "<th class=\"name\">{}</th>", escape(&e.name));
    }
    out.push_str("</tr>\n");
    for (e, row) in s.entrants.iter().zip(m) {
        let _ = write!(out, "<tr><th class=\"name\">{}</th>", escape(&e.name));
        for p in row {
            match p {
                Some(p) => {
                    let _ = write!(out, "<td>{:.1}%</td>", p * 100.0);
                }
                None => out.push_str("<td class=\"self\"></td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn matrix(out: &mut String, index: &Index) {
    let n = index.names.len();
    out.push_str(
        "<h2>Head to head</h2>\n<p>Row against column: the games the row entrant finished \
         above the column entrant, of the games they played at one table.</p>\n\
         <table id=\"matrix\"><tr><th></th>",
    );
    for name in &index.names {
        let _ = write!(out, "<th class=\"name\">{}</th>", escape(name));
    }
    out.push_str("</tr>\n");
    for a in 0..n {
        let _ = write!(
            out,
            "<tr><th class=\"name\">{}</th>",
            escape(&index.names[a])
        );
        for b in 0..n {
            if a == b {
                out.push_str("<td class=\"self\"></td>");
                continue;
            }
            let (ahead, met) = (index.ahead[a][b], index.met[a][b]);
            if met == 0 {
                out.push_str("<td>–</td>");
            } else {
                let _ = write!(
                    out,
                    "<td title=\"{} above {} in {ahead} of {met} games\">{ahead}/{met}</td>",
                    escape(&index.names[a]),
                    escape(&index.names[b])
                );
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn rounds(out: &mut String, index: &Index) {
    if index.rounds.is_empty() {
        return;
    }
    out.push_str("<h2>Rounds</h2>\n<div id=\"rounds\">\n");
    for r in &index.rounds {
        let _ = write!(
            out,
            "<section class=\"round\" data-round=\"{}\"><h3>Round {}</h3>\n<table>\
             <tr><th>table</th><th class=\"name\">entrants (game wins)</th><th>games</th>{}</tr>\n",
            r.number,
            r.number,
            if r.advancing {
                "<th class=\"name\">advances</th>"
            } else {
                ""
            }
        );
        for t in &r.tables {
            let who: Vec<String> = (t.entrants.iter())
                .map(|(name, wins)| format!("{} {wins}", escape(name)))
                .collect();
            let advances = match r.advancing {
                true => format!(
                    "<td class=\"name advances\">{}</td>",
                    t.advances.as_deref().map(escape).unwrap_or_default()
                ),
                false => String::new(),
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"name\">{}</td><td>{} of {}</td>{advances}</tr>",
                t.index,
                who.join(", "),
                t.done,
                t.games,
            );
        }
        out.push_str("</table>\n");
        if !r.byes.is_empty() {
            let byes: Vec<String> = r.byes.iter().map(|b| escape(b)).collect();
            let _ = writeln!(out, "<p>Bye: {}</p>", byes.join(", "));
        }
        out.push_str("</section>\n");
    }
    if let Some(c) = &index.champion {
        let _ = writeln!(out, "<p id=\"champion\">Champion: {}</p>", escape(c));
    }
    out.push_str("</div>\n");
}

fn games(out: &mut String, index: &Index) {
    let _ = write!(
        out,
        "<h2>Games</h2>\n<p>{} replays, one page each.</p>\n<ol id=\"games\">\n",
        index.games.len()
    );
    for g in &index.games {
        let _ = writeln!(
            out,
            "<li><a href=\"{}\">{}</a> — {}</li>",
            escape(&g.href),
            escape(&g.label),
            escape(&g.summary)
        );
    }
    out.push_str("</ol>\n");
}
