//! The output folder of a run: refuse to mix a new run's games with an old run's
//! (unless the user opts in with `--overwrite`), then create the folders the run
//! writes into.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::config::Output;

/// Checks that `output` holds no games of an earlier run — or, with `overwrite`,
/// deletes them — and creates the transcript, timings and stderr folders.
pub fn prepare(output: &Output, overwrite: bool) -> anyhow::Result<()> {
    let old = earlier_run(output)?;
    if !old.is_empty() {
        if !overwrite {
            let first = old[0].file_name().unwrap_or_default().to_string_lossy();
            bail!(
                "failed to start: {} already holds the games of another run ({first}{}); \
                 choose another --transcript, or pass --overwrite to delete them first",
                output.describe(),
                match old.len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                }
            );
        }
        for f in &old {
            std::fs::remove_file(f).with_context(|| format!("failed to delete {}", f.display()))?;
        }
    }
    let parent = match output {
        Output::File(p) => p.parent().map(Path::to_path_buf).unwrap_or_default(),
        Output::Dir(d) => d.clone(),
    };
    for dir in [parent, output.stderr_dir(), output.timings_dir()] {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("failed to create {}", dir.display()))?;
        }
    }
    Ok(())
}

/// The files a run writes that are already there: transcripts (finished or
/// `.partial`), timings sidecars and stderr logs. Nothing else is touched.
fn earlier_run(output: &Output) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    match output {
        Output::File(p) => {
            for f in [p.clone(), Output::timings(p)] {
                let mut partial = f.as_os_str().to_owned();
                partial.push(".partial");
                found.extend(
                    [f, PathBuf::from(partial)]
                        .into_iter()
                        .filter(|f| f.is_file()),
                );
            }
        }
        Output::Dir(d) => {
            found.extend(list(d, is_game)?);
            found.extend(list(&output.timings_dir(), is_game)?);
        }
    }
    found.extend(list(&output.stderr_dir(), |n| {
        n.starts_with("player") && n.ends_with(".log")
    })?);
    found.sort();
    Ok(found)
}

fn is_game(name: &str) -> bool {
    name.starts_with("game-") && (name.ends_with(".jsonl") || name.ends_with(".jsonl.partial"))
}

/// Files directly in `dir` whose name passes `keep`; none if `dir` does not exist.
fn list(dir: &Path, keep: fn(&str) -> bool) -> anyhow::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("failed to list {}", dir.display())),
    };
    Ok(entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(keep))
        .collect())
}
