//! The site's HTML, drawn on the server: whole pages with their style and
//! their few lines of script inline (no external asset, no network).

use std::path::Path;

use super::chart;
use super::entrant::Entrant;
use super::Failure;
use crate::season::standings::{Row, Standings};
use crate::show::escape::html as esc;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;max-width:70em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border-bottom:1px solid #ddd;\
padding:.25em .6em;text-align:left}td.n{text-align:right}tr.earlier td{color:#666}\
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;max-height:30em}\
nav a{margin-right:1em}.order{color:#444}";

/// The standings page's script: at each `sets` event whose count differs
/// from the one shown, the table is fetched again and put in place.
const LIVE: &str = "const es=new EventSource('/events');\
es.addEventListener('sets',async e=>{const n=JSON.parse(e.data).sets;\
const t=document.getElementById('standings');if(String(n)===t.dataset.sets)return;\
const r=await fetch('/standings-table');if(r.ok)t.outerHTML=await r.text();});";

/// A page around `body`.
pub fn shell(title: &str, body: &str, script: &str) -> String {
    let script = match script.is_empty() {
        true => String::new(),
        false => format!("<script>{script}</script>"),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\
         <nav><a href=\"/\">Standings</a><a href=\"/api/standings\">JSON</a></nav>\
         {body}{script}</body></html>\n",
        esc(title)
    )
}

/// A path segment with every byte but the unreserved ones percent-encoded.
pub fn segment(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn name_link(name: &str) -> String {
    format!(
        "<a href=\"/entrants/{}\">{}</a>",
        segment(name),
        esc(&crate::names::printable(name))
    )
}

pub fn has_final(dir: &Path) -> bool {
    crate::layout::tournament::is_tournament(&dir.join(FINAL))
}

/// The final bracket's folder in the season's (`season final`).
const FINAL: &str = "final";

/// The standings page around `table` ([`standings_table`]).
pub fn standings(table: &str, with_final: bool) -> String {
    let fin = match with_final {
        true => "<p><a href=\"/final\">The final bracket</a></p>",
        false => "",
    };
    let body = format!(
        "<h1>Season standings</h1>{fin}{table}<p>Updated as sets land, without a reload.</p>"
    );
    shell("Season standings", &body, LIVE)
}

/// The standings table (what `/standings-table` serves to the page's script).
pub fn standings_table(s: &Standings) -> String {
    let mut rows = String::new();
    for (k, r) in s.entrants.iter().enumerate() {
        rows += &row(&(k + 1).to_string(), r, "");
        for e in &r.earlier {
            rows += &row("", e, " class=\"earlier\"");
        }
    }
    format!(
        "<section id=\"standings\" data-sets=\"{}\"><p class=\"order\">After \
         <span id=\"sets\">{}</span> finished set(s), {} game(s); {}.</p><table><thead><tr>\
         <th>rank</th><th>entrant</th><th>version</th><th>rating</th><th>95% interval</th>\
         <th>sets</th><th>games</th><th>wins</th><th>forfeits</th></tr></thead><tbody>{rows}\
         </tbody></table></section>",
        s.sets,
        s.sets,
        s.games,
        esc(s.order)
    )
}

fn row(rank: &str, r: &Row, class: &str) -> String {
    let (rating, interval) = match (r.rating, r.low, r.high) {
        (Some(x), Some(l), Some(h)) => (format!("{x:+.0}"), format!("[{l:+.0}, {h:+.0}]")),
        _ => ("-".into(), "no finished set".into()),
    };
    format!(
        "<tr{class}><td class=\"n\">{rank}</td><td>{}</td><td>v{}</td><td class=\"n\">{rating}</td>\
         <td>{interval}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
         <td class=\"n\">{}</td></tr>",
        name_link(&r.entrant),
        r.number,
        r.sets,
        r.games,
        r.wins,
        r.forfeits
    )
}

pub fn entrant(e: &Entrant) -> String {
    let name = esc(&crate::names::printable(&e.name));
    let body = [
        format!("<h1>{name}</h1><h2>Rating over time</h2>"),
        chart::svg(&e.versions),
        versions(e),
        cross(e),
        recent(e),
        faults(e),
        format!(
            "<h2>Your bot's logs</h2><form method=\"post\" action=\"/entrants/{}/logs\">\
             <label>Token <input type=\"password\" name=\"token\" autocomplete=\"off\"></label> \
             <button>Show the logs</button></form>",
            segment(&e.name)
        ),
    ]
    .concat();
    shell(&format!("{} — season", e.name), &body, "")
}

fn versions(e: &Entrant) -> String {
    let mut rows = String::new();
    for v in &e.versions {
        let last = v.history.last();
        let command = esc(&crate::names::printable(&v.command));
        rows += &format!(
            "<tr><td>v{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            v.number,
            v.replaced.map_or("first".into(), |p| format!("replaced v{p}")),
            match v.remote {
                true => format!("remote seat (<code>{command}</code>, played through its owner's referee connect)"),
                false => format!("<code>{command}</code>"),
            },
            match v.admitted {
                true => format!("admitted ({})", esc(&v.checked)),
                false => format!("not admitted: it {}", esc(&v.checked)),
            },
            last.map_or("-".into(), |r| format!("{:+.0} [{:+.0}, {:+.0}]", r.rating, r.low, r.high)),
        );
    }
    format!(
        "<h2>Versions</h2><table id=\"versions\"><thead><tr><th>version</th><th>lineage</th>\
         <th>command</th><th>check</th><th>rating</th></tr></thead><tbody>{rows}</tbody></table>"
    )
}

fn cross(e: &Entrant) -> String {
    let rows: String = (e.cross.iter())
        .map(|c| {
            format!(
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                name_link(&c.opponent),
                c.games,
                c.ahead,
                c.behind
            )
        })
        .collect();
    format!(
        "<h2>Against each entrant</h2><table id=\"cross\"><thead><tr><th>opponent</th>\
         <th>games together</th><th>finished ahead</th><th>finished behind</th></tr></thead>\
         <tbody>{rows}</tbody></table>"
    )
}

fn recent(e: &Entrant) -> String {
    let rows: String = (e.recent.iter())
        .map(|g| {
            let note = match (g.forfeited, g.faults) {
                (true, _) => "forfeited".to_owned(),
                (false, 0) => String::new(),
                (false, n) => format!("{n} fault(s)"),
            };
            format!(
                "<tr><td><a class=\"replay\" href=\"{}\">set {} game {}</a></td><td>v{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{note}</td></tr>",
                g.href,
                g.set,
                g.game,
                g.version,
                g.place,
                g.score,
                esc(&crate::names::printable(&g.opponents.join(", ")))
            )
        })
        .collect();
    format!(
        "<h2>Recent games</h2><table id=\"recent\"><thead><tr><th>game (replay)</th>\
         <th>version</th><th>place</th><th>score</th><th>against</th><th></th></tr></thead>\
         <tbody>{rows}</tbody></table>"
    )
}

fn faults(e: &Entrant) -> String {
    if e.faults.is_empty() {
        return "<h2>Faults</h2><p id=\"faults\">None.</p>".into();
    }
    let items: String = (e.faults.iter())
        .map(|f| format!("<li>{}</li>", esc(f)))
        .collect();
    format!("<h2>Faults</h2><ul id=\"faults\">{items}</ul>")
}

/// `/final`: the standings `season final`'s bracket wrote (or, while it
/// plays, its partial standings); 404 before there is one.
pub fn final_bracket(dir: &Path) -> Result<String, Failure> {
    use crate::layout::tournament::{PARTIAL_STANDINGS, STANDINGS};
    let folder = dir.join(FINAL);
    let (file, done) = match folder.join(STANDINGS).is_file() {
        true => (folder.join(STANDINGS), true),
        false => (folder.join(PARTIAL_STANDINGS), false),
    };
    if !has_final(dir) || !file.is_file() {
        return Err(Failure::not_found(
            "the season has no final bracket (yet)".into(),
        ));
    }
    let text = std::fs::read_to_string(&file).map_err(anyhow::Error::from)?;
    let s: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let rows: String = (s["entrants"].as_array().into_iter().flatten())
        .map(|r| {
            let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
            format!(
                "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{:+.0}</td><td>[{:+.0}, {:+.0}]</td></tr>",
                r["rank"],
                esc(&crate::names::printable(r["name"].as_str().unwrap_or("?"))),
                r["games"],
                r["wins"],
                f("rating"),
                r["rating_ci"][0].as_f64().unwrap_or(f64::NAN),
                r["rating_ci"][1].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect();
    let body = format!(
        "<h1>The final bracket{}</h1><p class=\"order\">{} game(s); ranked by {}.</p><table id=\"final\">\
         <thead><tr><th>rank</th><th>entrant</th><th>games</th><th>wins</th><th>rating</th>\
         <th>95% interval</th></tr></thead><tbody>{rows}</tbody></table>",
        if done { "" } else { " (under way)" },
        s["games"],
        esc(s["ranked_by"].as_str().unwrap_or(""))
    );
    Ok(shell("The final bracket", &body, ""))
}
