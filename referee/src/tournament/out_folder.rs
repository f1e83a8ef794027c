//! A tournament's `--out` folder made ready before anything is played: a new
//! run needs it empty (or absent) and writes the manifest; `--resume` needs the
//! same tournament's folder; `--overwrite` removes what a tournament wrote, and
//! only from a folder that holds one. A `referee play` folder is named as such.

use std::path::Path;

use anyhow::{bail, Context};

use super::manifest::Manifest;
use crate::layout::tournament::MANIFEST;

/// A new run needs an empty (or absent) directory; `--resume` needs the same
/// tournament's directory; `--overwrite` replaces the tournament in it.
pub(crate) fn prepare(
    dir: &Path,
    manifest: &Manifest,
    resume: bool,
    overwrite: bool,
) -> anyhow::Result<()> {
    let busy = crate::layout::holds_anything;
    if busy(dir) && overwrite {
        remove_tournament(dir)?;
    }
    let busy = busy(dir);
    if busy && !resume {
        if !dir.join(MANIFEST).is_file() {
            refuse_play_folder(dir, "start")?;
            bail!(
                "failed to start: {} is not empty and holds no tournament; choose another --out",
                dir.display()
            );
        }
        bail!(
            "failed to start: {} is not empty; add --resume to continue the tournament in it, \
             --overwrite to replace it, or choose another --out",
            dir.display()
        );
    }
    if busy {
        if !dir.join(MANIFEST).is_file() {
            refuse_play_folder(dir, "resume")?;
        }
        let old = Manifest::read(dir)
            .with_context(|| format!("failed to resume: {} holds no tournament", dir.display()))?;
        refuse_other_kind(dir, manifest.sprt.is_some(), &old)?;
        let sides = super::difference::Sides {
            ours: "in this run",
            theirs: "in the folder",
        };
        if let Some(diff) = manifest.difference(&old, &sides) {
            bail!(
                "failed to resume: {} holds a different tournament ({diff}); give the \
                 folder's settings, or only `--resume --out {}`, which reads them from it",
                dir.display(),
                dir.display()
            );
        }
        return Ok(());
    }
    std::fs::create_dir_all(crate::layout::tournament::games(dir))
        .with_context(|| format!("failed to create {}", dir.display()))?;
    // The secret first: no manifest is ever without it.
    if let Some(secret) = &manifest.seed_secret {
        super::seed_secret::store(dir, secret)?;
    }
    Ok(crate::safe_create::write_atomic(
        &dir.join(MANIFEST),
        &manifest.bytes(),
    )?)
}

/// `--resume` of a tournament's folder by `referee sprt`, or of an SPRT's by
/// `referee tournament`, is refused saying what the folder holds and which
/// command continues it (their settings differ in kind, not in a flag).
pub(crate) fn refuse_other_kind(dir: &Path, sprt: bool, old: &Manifest) -> anyhow::Result<()> {
    let (holds, command) = match (sprt, old.sprt.is_some()) {
        (true, false) => ("a tournament, not an SPRT", "tournament"),
        (false, true) => ("an SPRT (`referee sprt`), not a tournament", "sprt"),
        _ => return Ok(()),
    };
    bail!(
        "failed to resume: {} holds {holds}; `referee {command} --resume --out {}` \
         continues it",
        dir.display(),
        dir.display()
    )
}

/// An `--out` inside another tournament's folder is refused before anything
/// starts: that tournament's readers (`show`, `verify`, its page) take every
/// transcript beneath it for one of its own games, so its count would grow
/// by this run's games.
pub(crate) fn refuse_nested(out: &Path) -> anyhow::Result<()> {
    let Ok(absolute) = std::path::absolute(out) else {
        return Ok(());
    };
    let parent = absolute.parent();
    if let Some(holder) = parent.and_then(crate::layout::tournament::enclosing) {
        bail!(
            "failed to start: --out {} is inside the tournament folder {}, which would \
             count this run's games as its own (`show`, `verify`); choose an --out \
             outside it",
            out.display(),
            holder.display()
        );
    }
    Ok(())
}

/// A `referee play` folder (its `game-NNNN.jsonl` transcripts) is named as
/// such: it is a match, not a tournament to resume or replace.
pub(crate) fn refuse_play_folder(dir: &Path, failed_to: &str) -> anyhow::Result<()> {
    let play = std::fs::read_dir(dir).ok().and_then(|d| {
        d.flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| crate::layout::is_transcript(n))
            .min()
    });
    if let Some(first) = play {
        bail!(
            "failed to {failed_to}: {} holds a `referee play` match ({first}), not a \
             tournament; choose another --out",
            dir.display()
        );
    }
    Ok(())
}

/// `--overwrite`: removes what a tournament writes, and only from a folder that
/// holds one (its manifest), so a mistyped --out never deletes anything else.
/// Whatever else is in the folder stays, and keeps it busy.
fn remove_tournament(dir: &Path) -> anyhow::Result<()> {
    if !dir.join(MANIFEST).is_file() {
        refuse_play_folder(dir, "start")?;
        bail!(
            "failed to start: {} is not empty and holds no tournament ({} is missing), so \
             --overwrite deletes nothing there; choose another --out",
            dir.display(),
            MANIFEST
        );
    }
    for name in crate::layout::tournament::FILES {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                bail!("--overwrite: failed to remove {}: {e}", path.display())
            }
            _ => {}
        }
    }
    for name in crate::layout::tournament::FOLDERS {
        let path = dir.join(name);
        match std::fs::remove_dir_all(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                bail!("--overwrite: failed to remove {}: {e}", path.display())
            }
            _ => {}
        }
    }
    Ok(())
}
