//! An entrant's own stderr logs, behind its token: `GET
//! /api/entrants/NAME/logs` (JSON) or `GET /entrants/NAME/logs` (a page)
//! with `Authorization: Bearer TOKEN`, or the form on the entrant's page,
//! which posts `token=…` to `/entrants/NAME/logs`. No token: 401; a token
//! that is not NAME's (another entrant's included): 403, and nothing read.
//!
//! The files are found from the database: the sets the entrant's versions
//! played (their ids name the tables' log folders, `layout.rs`) and the
//! lineup slots its versions held in them — no name from the URL reaches
//! the filesystem.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use serde::Serialize;

use super::{bearer, pages, with_db, Failure, Shared};
use crate::season::db::Db;
use crate::season::tokens::authenticate;
use crate::show::escape::html as esc;

/// The most recent sets whose logs are shown.
const SETS: usize = 10;
/// The end of each log shown, in bytes.
const TAIL: u64 = 32 * 1024;

/// One bot process's stderr in one set.
#[derive(Serialize)]
pub struct Log {
    pub set: i64,
    /// The entrant's version number.
    pub version: i64,
    /// The file, relative to the season's `stderr/` folder.
    pub file: String,
    /// Its last bytes (lossily decoded).
    pub text: String,
    /// Whether earlier bytes were left out.
    pub cut: bool,
}

pub async fn api(
    State(site): State<Shared>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let logs = read(&site, name, bearer(&headers)).await?;
    Ok(axum::Json(logs).into_response())
}

pub async fn page_bearer(
    State(site): State<Shared>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Result<Html<String>, Failure> {
    page(&site, name, bearer(&headers)).await
}

pub async fn page(
    site: &Shared,
    name: String,
    token: Option<String>,
) -> Result<Html<String>, Failure> {
    let logs = read(site, name.clone(), token).await?;
    Ok(Html(render(&name, &logs)))
}

/// `name`'s logs if `token` is its token.
async fn read(site: &Shared, name: String, token: Option<String>) -> Result<Vec<Log>, Failure> {
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return Err(Failure(
            StatusCode::UNAUTHORIZED,
            "an entrant's logs need its token: `Authorization: Bearer TOKEN`, or the form on its page".into(),
        ));
    };
    with_db(site, move |db, dir| {
        if !authenticate(db, &name, &token)? {
            return Err(Failure(
                StatusCode::FORBIDDEN,
                format!(
                    "that is not the token of entrant {:?}",
                    crate::names::printable(&name)
                ),
            ));
        }
        Ok(collect(db, dir, &name)?)
    })
    .await
}

/// The logs of `name`'s versions in the last [`SETS`] sets they played.
fn collect(db: &Db, dir: &Path, name: &str) -> anyhow::Result<Vec<Log>> {
    let versions = db.versions()?;
    let mine: Vec<_> = versions.iter().filter(|v| v.name == name).collect();
    let stderr = dir.join(crate::layout::tournament::STDERR);
    let folders: Vec<String> = match std::fs::read_dir(&stderr) {
        // Folders only, not links (`file_type` does not follow them).
        Ok(entries) => (entries.flatten())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut logs = Vec::new();
    let sets = db.sets()?;
    let played =
        (sets.iter().rev()).filter(|s| s.versions.iter().any(|v| mine.iter().any(|m| m.id == *v)));
    for set in played.take(SETS) {
        let Ok(m) = u32::try_from(set.id) else {
            continue;
        };
        let fresh = crate::layout::tournament::table(dir, 0, m, 1, true).logs;
        let name = fresh
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = name.trim_end_matches("g001");
        let mut tables: Vec<&String> = folders.iter().filter(|f| f.starts_with(prefix)).collect();
        tables.sort();
        for (pos, v) in set.versions.iter().enumerate() {
            let Some(version) = mine.iter().find(|m| m.id == *v) else {
                continue;
            };
            for table in &tables {
                for (file, text, cut) in slot_logs(&stderr.join(table), pos)? {
                    logs.push(Log {
                        set: set.id,
                        version: version.number,
                        file: format!("{table}/{file}"),
                        text,
                        cut,
                    });
                }
            }
        }
    }
    Ok(logs)
}

/// The logs in a table's folder of the lineup slots at team position `pos`
/// (slot `s` plays for position `s % 3`): file name, tail, whether cut.
fn slot_logs(table: &Path, pos: usize) -> anyhow::Result<Vec<(String, String, bool)>> {
    let Ok(entries) = std::fs::read_dir(table) else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = (entries.flatten())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| crate::layout::is_stderr_log(n))
        .filter(|n| slot_of(n).is_some_and(|s| s % 3 == pos))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let (text, cut) = tail(&table.join(&n))?;
        out.push((n, text, cut));
    }
    Ok(out)
}

/// The lineup slot of `player3.log` or `player3.restart1.log`.
fn slot_of(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("player")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn tail(path: &Path) -> anyhow::Result<(String, bool)> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let cut = len > TAIL;
    if cut {
        f.seek(SeekFrom::Start(len - TAIL))?;
    }
    let mut bytes = Vec::new();
    f.take(TAIL).read_to_end(&mut bytes)?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), cut))
}

/// The logs page.
fn render(name: &str, logs: &[Log]) -> String {
    let mut body = format!(
        "<h1>{}'s logs</h1><p>The stderr of its bots in the last sets they played (the end \
         of each file).</p>",
        esc(&crate::names::printable(name))
    );
    if logs.is_empty() {
        body += "<p id=\"logs\">No log yet.</p>";
    }
    for l in logs {
        body += &format!(
            "<h3>set {}, v{}: {}{}</h3><pre class=\"log\">{}</pre>",
            l.set,
            l.version,
            esc(&l.file),
            if l.cut { " (its end)" } else { "" },
            esc(&l.text)
        );
    }
    pages::shell(&format!("{name}'s logs"), &body, "")
}
