//! Reading transcripts back — the one reader, for `verify`, `show`, `diff` and
//! the tournament's outcome reader: a file into typed [`Line`]s, a folder into its
//! transcripts. Parsing goes through the transcript types, so the tools read
//! exactly what `play` writes. Replaying the lines is `verify.rs`'s one loop.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::transcript::Line;

/// How every transcript opens: its header line, as the referee writes it.
const HEADER: &[u8] = br#"{"type":"header""#;

/// What a transcript is, for a user who gave another file.
pub const WHAT_A_TRANSCRIPT_IS: &str = "a transcript is one game's .jsonl file, as `referee \
     play` writes it (DIR/game-0001.jsonl) or a tournament (DIR/games/r00-m0000-g001.jsonl)";

/// A transcript's lines, each with its 1-based line number, up to the first
/// line that is not a transcript line (`damaged`).
pub struct Transcript {
    pub path: PathBuf,
    pub lines: Vec<(usize, Line)>,
    /// The first line that could not be read as a transcript line, and why;
    /// nothing after it is read. A file cut off mid-line ends in one.
    pub damaged: Option<(usize, String)>,
}

/// A file that could not be read: which, at which line (0: the file itself),
/// and why.
#[derive(Debug, thiserror::Error)]
#[error("failed to read {}{}: {reason}", path.display(), at(*line))]
pub struct LoadError {
    pub path: PathBuf,
    pub line: usize,
    pub reason: String,
}

fn at(line: usize) -> String {
    match line {
        0 => String::new(),
        n => format!(":{n}"),
    }
}

impl Transcript {
    /// Reads a whole, readable transcript: a damaged line is an error naming the
    /// file and the line (what `show`, `diff` and the tournament need).
    pub fn read(path: &Path) -> Result<Transcript, LoadError> {
        let t = Transcript::load(path)?;
        if let (Some(_), true, Some(what)) = (&t.damaged, t.lines.is_empty(), other_file(path)) {
            return Err(LoadError {
                path: path.to_owned(),
                line: 0,
                reason: what,
            });
        }
        match &t.damaged {
            Some((line, reason)) => Err(LoadError {
                path: path.to_owned(),
                line: *line,
                reason: reason.clone(),
            }),
            None => Ok(t),
        }
    }

    /// Reads the lines up to the first damaged one, which is kept in `damaged`
    /// (what `verify` needs: an earlier inconsistency is reported first).
    pub fn load(path: &Path) -> Result<Transcript, LoadError> {
        let fail = |line, e: &dyn std::fmt::Display| LoadError {
            path: path.to_owned(),
            line,
            reason: e.to_string(),
        };
        let bytes = std::fs::read(path).map_err(|e| fail(0, &e))?;
        let mut lines = Vec::new();
        let mut damaged = None;
        let count = bytes.split(|&b| b == b'\n').count();
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let n = i + 1;
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Line>(raw) {
                Ok(line) => lines.push((n, line)),
                Err(e) => {
                    // The last line without its newline: the file was cut off.
                    let torn = n == count && !bytes.ends_with(b"\n");
                    // A first line that does not even open as a header: some
                    // other file (a README, a config), said as such.
                    let other = lines.is_empty() && !raw.trim_ascii_start().starts_with(HEADER);
                    let json = serde_json::from_slice::<serde_json::Value>(raw).is_ok();
                    let why = match (other, torn) {
                        (true, _) => format!(
                            "not a transcript: its first line is {}; {WHAT_A_TRANSCRIPT_IS}",
                            match json {
                                true => "JSON, but not a transcript's header",
                                false => "not JSON",
                            }
                        ),
                        (false, true) => format!("the file ends inside a line (cut off?): {e}"),
                        (false, false) => format!("not a transcript line: {e}"),
                    };
                    damaged = Some((n, why));
                    break;
                }
            }
        }
        Ok(Transcript {
            path: path.to_owned(),
            lines,
            damaged,
        })
    }

    /// The header, which must be the first line.
    pub fn header(&self) -> anyhow::Result<&crate::transcript::Header> {
        match self.lines.first() {
            Some((_, Line::Header(h))) => Ok(h),
            _ => bail!(
                "failed to read {}: the first line is not a header",
                self.path.display()
            ),
        }
    }
}

/// What `path` is if it is another file the referee writes (a tournament's
/// journal, manifest or standings, a game's timings, a page), said with where
/// the transcripts are: the words for a user who gave it to a tool that reads
/// transcripts, instead of the parser's complaint about its first line.
pub fn other_file(path: &Path) -> Option<String> {
    use crate::layout::{tournament, Kind};
    let name = path.file_name()?.to_str()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let what = match tournament::kind(Path::new(name)) {
        _ if name.ends_with(".html") => {
            return Some("a page, not a transcript: open it in a browser".into())
        }
        _ if dir.file_name().is_some_and(|d| d == "timings") => {
            let game = dir.parent().unwrap_or(Path::new(".")).join(name);
            return Some(format!(
                "a game's timings (wall-clock figures beside its transcript), not a \
                 transcript: the game's transcript is {}",
                game.display()
            ));
        }
        Some(Kind::Journal) => "a tournament's journal (one line per finished game)",
        Some(Kind::Manifest) => "a tournament's manifest (its settings and entrants)",
        Some(Kind::Standings | Kind::PartialStandings) => "a tournament's standings",
        Some(Kind::SprtReport) => "a sequential test's report",
        Some(Kind::SeedSecret) => "a tournament's seed secret (what its deals are mixed with)",
        _ => return None,
    };
    Some(format!(
        "{what}, not a game's transcript: `referee show --html OUT.html {}` draws the \
         tournament's page, and its games are the transcripts in {}",
        dir.display(),
        dir.join(tournament::GAMES).display()
    ))
}

/// Is `path` a transcript: a `*.jsonl` file (not a `.partial` game in progress)
/// whose first line is a transcript header? Timings sidecars, a tournament's
/// journal and other JSON-lines files beside the games are not.
pub fn is_transcript(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !name.ends_with(".jsonl") {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    let header: serde_json::Value = serde_json::from_str(&first).unwrap_or_default();
    header["type"] == "header"
        && header["format"]
            .as_str()
            .is_some_and(|f| f.starts_with("schmier-transcript/"))
}

/// The transcripts under `dir` (recursively), as paths relative to it, sorted.
pub fn transcripts_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let here = dir.join(&rel);
        let entries = std::fs::read_dir(&here)
            .with_context(|| format!("failed to list {}", here.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("failed to list {}", here.display()))?;
            let rel = rel.join(entry.file_name());
            let kind = entry
                .file_type()
                .with_context(|| format!("failed to inspect {}", dir.join(&rel).display()))?;
            if kind.is_dir() {
                pending.push(rel);
            } else if is_transcript(&dir.join(&rel)) {
                found.push(rel);
            }
        }
    }
    found.sort();
    Ok(found)
}
