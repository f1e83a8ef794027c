//! The output folder of a run: refuse to mix a new run's games with an old run's
//! (unless the user opts in with `--overwrite`), check there is room, create the
//! folders the run writes into — and, when the run played no game, take back what
//! it made, so a corrected rerun into the same folder is not refused.
//!
//! A folder "holds another run" when it holds games: transcripts (finished or
//! `.partial`) or their timings. Bot stderr logs alone are not games: they are
//! what a run that never started its first game leaves (why a bot failed), and
//! the next run replaces them.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::layout::{is_game, is_stderr_log as is_log, Output};

/// Free space below which a run is refused before it starts: a transcript is a
/// few hundred KiB at most, so this leaves room for a long match or a bracket's
/// next games while telling a user early that the disk is (nearly) full.
pub const MIN_FREE_BYTES: u64 = 16 << 20;

/// What [`prepare`] made, to take back after a run that played no game.
pub struct Prepared {
    stderr_dir: PathBuf,
    /// Folders that did not exist before, innermost last.
    created: Vec<PathBuf>,
}

/// Checks that `output` holds no games of an earlier run — or, with `overwrite`,
/// deletes them — creates the transcript, timings and stderr folders, and
/// checks the free space there ([`MIN_FREE_BYTES`]).
pub fn prepare(output: &Output, overwrite: bool) -> anyhow::Result<Prepared> {
    refuse_tournament(output)?;
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
    // Logs of a run that played no game (or of the deleted one): replaced.
    for f in list(&output.stderr_dir(), is_log)? {
        std::fs::remove_file(&f).with_context(|| format!("failed to delete {}", f.display()))?;
    }
    let parent = output.folder();
    let mut prepared = Prepared {
        stderr_dir: output.stderr_dir(),
        created: Vec::new(),
    };
    for dir in [parent.clone(), output.stderr_dir(), output.timings_dir()] {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("failed to create {}", dir.display()))?;
            prepared.created.push(dir);
        }
    }
    let parent = if parent.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        parent
    };
    if let Err(e) = check_free_space(&parent) {
        prepared.tidy_unplayed();
        return Err(e);
    }
    Ok(prepared)
}

impl Prepared {
    /// After a run that played no game: removes the empty stderr logs and the
    /// folders this run created if they are empty, so that nothing left makes
    /// the folder hold another run and no message names a file that is gone.
    /// A non-empty log (a bot's own words on why it failed) stays.
    pub fn tidy_unplayed(&self) {
        if let Ok(logs) = list(&self.stderr_dir, is_log) {
            for log in logs {
                if std::fs::metadata(&log).is_ok_and(|m| m.len() == 0) {
                    let _ = std::fs::remove_file(log);
                }
            }
        }
        // remove_dir only removes an empty folder: anything kept keeps its folder.
        for dir in self.created.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// A tournament's or an SPRT's folder (or one anywhere inside it) is theirs:
/// a match written there would sit among their games (and be counted with
/// them), and `--overwrite` would delete what is not a play run's. Checked as
/// the flags are validated, before anything is said or made.
pub(crate) fn refuse_tournament(output: &Output) -> anyhow::Result<()> {
    let manifest = crate::layout::tournament::MANIFEST;
    if let Some(said) = crate::layout::tournament::inside_one(&output.folder()) {
        bail!(
            "failed to start: {said} (it holds {manifest}); `referee play` writes a folder \
             of its own: choose another --transcript"
        );
    }
    Ok(())
}

/// Refuses to start when the filesystem holding `dir` has less than
/// [`MIN_FREE_BYTES`] available to the referee.
pub fn check_free_space(dir: &Path) -> anyhow::Result<()> {
    let free = crate::os::files::free_bytes(dir)
        .with_context(|| format!("failed to check the free space of {}", dir.display()))?;
    if free < MIN_FREE_BYTES {
        bail!(
            "failed to start: only {} KiB free on the filesystem holding {}; the referee \
             needs at least {} MiB there for transcripts (free some space, or write elsewhere)",
            free >> 10,
            dir.display(),
            MIN_FREE_BYTES >> 20
        );
    }
    Ok(())
}

/// The games a run writes that are already there: transcripts (finished or
/// `.partial`) and timings sidecars. With any of them, stderr logs too (deleted
/// with them by `--overwrite`). Nothing else is touched.
fn earlier_run(output: &Output) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    match output {
        Output::File(p) => {
            for f in [p.clone(), Output::timings(p)] {
                let partial = crate::layout::partial(&f);
                found.extend([f, partial].into_iter().filter(|f| f.is_file()));
            }
        }
        Output::Dir(d) => {
            found.extend(list(d, is_game)?);
            found.extend(list(&output.timings_dir(), is_game)?);
        }
    }
    if !found.is_empty() {
        found.extend(list(&output.stderr_dir(), is_log)?);
    }
    found.sort();
    Ok(found)
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
