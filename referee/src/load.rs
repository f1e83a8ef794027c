//! Reading transcripts back for the tools (`diff`, `show`): a file into typed
//! [`Line`]s, a folder into its transcripts. Parsing goes through the transcript
//! types, so the tools read exactly what `play` writes and `verify` checks.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::transcript::Line;

/// A transcript's lines, each with its 1-based line number.
pub struct Transcript {
    pub path: PathBuf,
    pub lines: Vec<(usize, Line)>,
}

impl Transcript {
    pub fn read(path: &Path) -> anyhow::Result<Transcript> {
        let file = std::fs::File::open(path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        let mut lines = Vec::new();
        for (i, raw) in std::io::BufReader::new(file).lines().enumerate() {
            let raw = raw.with_context(|| format!("failed to read {}", path.display()))?;
            if raw.trim().is_empty() {
                continue;
            }
            let line: Line = serde_json::from_str(&raw).with_context(|| {
                format!(
                    "failed to read {}:{}: not a transcript line",
                    path.display(),
                    i + 1
                )
            })?;
            lines.push((i + 1, line));
        }
        Ok(Transcript {
            path: path.to_owned(),
            lines,
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
