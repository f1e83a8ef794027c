//! A version uploaded by its owner: an archive and a command, presented with
//! the entrant's token (`referee season submit DIR NAME --archive FILE
//! --token T -- CMD`, or the site's upload, which calls [`submit_archive`]).
//!
//! In order, each step before anything is written:
//! 1. the season is open, and the token is the entrant's (`tokens.rs`): a
//!    wrong token, or another entrant's, is refused before the archive is
//!    even looked at; then the season must run its bots in a sandbox, or its
//!    organiser must have opted in to unsandboxed uploads at `init`
//!    (`--allow-unsandboxed-uploads`): else it takes no upload;
//! 2. the command names only the archive's files or the system's programs
//!    (`python3 bot.py`, `./run --fast`): no absolute path, no `..`, no
//!    built-in bot;
//! 3. the archive is unpacked (`unpack.rs`) into a fresh folder
//!    `DIR/uploads/.incoming-…`, inside the season's folder, judged entry
//!    by entry; refused, that folder is removed: nothing else was written
//!    (one left by a referee killed meanwhile is removed by a later upload,
//!    once an hour old);
//! 4. `check-bot` runs on it as the season's tables would (in the sandbox,
//!    when the season has one: `submit.rs`);
//! 5. admitted, the folder is renamed `DIR/uploads/NAME/vN` (N: the
//!    version's number) and the version recorded; refused by `check-bot`, the
//!    version is recorded with its report (what its owner is shown) and its
//!    files are removed.
//!
//! Blocking (it runs the bot): from async code, call it on a blocking thread
//! (`tokio::task::spawn_blocking`).

use std::path::{Component, Path, PathBuf};

use super::db::Db;
use super::settings::Settings;
use super::submit::{self, Submission};
use super::unpack::{self, Refusal, CAPS};
use crate::config::BotSpec;

/// The folder of a season's uploads, `DIR/uploads/NAME/vN`.
pub const UPLOADS: &str = "uploads";

/// What became of an upload that was taken (checked, and recorded).
#[derive(Debug)]
pub struct Uploaded {
    /// The version's number (from 1, per entrant).
    pub number: i64,
    /// It passed `check-bot`: it plays from the next set on. If not, it was
    /// recorded with its report and never plays.
    pub admitted: bool,
    /// How it was checked, in words ("passed check-bot in the season's
    /// sandbox", "failed check-bot", "cannot be seated: …").
    pub checked: String,
    /// `check-bot`'s checklist, what to show its owner.
    pub report: String,
    /// Where its files are (admitted only).
    pub dir: Option<PathBuf>,
    /// Files and bytes unpacked.
    pub files: u64,
    pub bytes: u64,
}

/// Why an upload was not taken; nothing of it was written or recorded.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The token is not this entrant's (or the season has no such entrant):
    /// the same answer either way. HTTP: 403.
    #[error("the name and token do not match an entrant of this season")]
    Forbidden,
    /// The season is closed: it takes no versions. HTTP: 409.
    #[error("the season is closed, or its final was called; it takes no more versions")]
    Closed,
    /// The season runs its bots without a sandbox and its organiser did not
    /// opt in to uploads (`season init --allow-unsandboxed-uploads`). HTTP:
    /// 403, as JSON saying why and what the organiser can do.
    #[error("{}", super::settings::UNSANDBOXED)]
    Unsandboxed,
    /// The command or the archive was refused, and why (naming the entry).
    /// HTTP: 400 (413 for [`Refusal::ArchiveTooLarge`]).
    #[error("the upload was refused: {0}")]
    Refused(String),
    /// The archive was refused; the owner's to correct.
    #[error("the archive was refused: {0}")]
    Archive(#[from] Refusal),
    /// The referee failed (the database, the disk). HTTP: 500.
    #[error("failed to take the upload: {0:#}")]
    Internal(#[from] anyhow::Error),
}

/// Takes an upload into the season at `dir`: `archive` (a `.tar.gz`) as
/// the new version of `entrant`, run as `command` in its folder, if `token`
/// is the entrant's. An upload that passes every check and fails `check-bot`
/// is `Ok` with `admitted: false` and the report; an `Err` wrote nothing.
pub fn submit_archive(
    dir: &Path,
    entrant: &str,
    token: &str,
    command: &str,
    archive: &[u8],
) -> Result<Uploaded, UploadError> {
    let mut db = Db::open(&dir.join(crate::layout::season::DB))?;
    if !super::tokens::authenticate(&db, entrant, token)? {
        return Err(UploadError::Forbidden);
    }
    if db.get("closed")?.is_some() || db.refuse_frozen("upload a version").is_err() {
        return Err(UploadError::Closed);
    }
    let id = (db.entrant(entrant)?).ok_or(UploadError::Forbidden)?;
    let settings = Settings::read(&db)?;
    if !settings.takes_uploads() {
        return Err(UploadError::Unsandboxed);
    }
    confined(&submit::parse_command(entrant, command)?).map_err(UploadError::Refused)?;
    let incoming = incoming(dir)?;
    let unpacked = unpack::unpack(archive, incoming.path(), &CAPS)?;
    let s = Submission {
        name: entrant.to_owned(),
        command: command.to_owned(),
        dir: None,
        unchecked: false,
    };
    let verdict = submit::examine(dir, &settings, &s, Some(incoming.path()))?;
    let number = db.next_number(id)?;
    let kept = match verdict.admitted {
        true => Some(keep(incoming, &dir.join(UPLOADS).join(entrant), number)?),
        false => None, // its files go with `incoming`
    };
    let text = kept.as_ref().map(|d| d.to_string_lossy().into_owned());
    let number = submit::record(&mut db, id, command, text.as_deref(), &verdict)?;
    Ok(Uploaded {
        number,
        admitted: verdict.admitted,
        checked: verdict.checked,
        report: verdict.report,
        dir: kept,
        files: unpacked.files,
        bytes: unpacked.bytes,
    })
}

/// Why an upload's command is not confined to its folder, if it is not:
/// a path it names is absolute or climbs out, or it is no command at all.
/// (A sandbox shows the bot its own folder alone; without one, this keeps
/// an upload from running another entrant's files.)
pub fn confined(bot: &BotSpec) -> Result<(), String> {
    let BotSpec::Command { argv, .. } = bot else {
        return Err(format!(
            "an upload's command runs a program of its archive or of the system \
             (`python3 bot.py`, `./run`), not the built-in bot {:?}",
            bot.display()
        ));
    };
    for word in argv {
        // `--model=../x` names a path too.
        for part in std::iter::once(word.as_str()).chain(word.split_once('=').map(|(_, v)| v)) {
            let path = Path::new(part);
            if path.is_absolute() {
                return Err(format!(
                    "the command's {:?} is an absolute path; name the archive's files \
                     relative to its folder, and programs by name (`python3`)",
                    crate::names::printable(word)
                ));
            }
            if path.components().any(|c| c == Component::ParentDir) {
                return Err(format!(
                    "the command's {:?} climbs out of the bot's folder (`..`)",
                    crate::names::printable(word)
                ));
            }
        }
    }
    Ok(())
}

/// A fresh folder for an upload, `DIR/uploads/.incoming-…`: removed when
/// dropped, unless kept.
fn incoming(dir: &Path) -> anyhow::Result<tempfile::TempDir> {
    let uploads = dir.join(UPLOADS);
    open_folder(&uploads)?;
    remove_stale(&uploads, STALE);
    let t = tempfile::Builder::new()
        .prefix(".incoming-")
        .tempdir_in(&uploads)
        .map_err(|e| anyhow::anyhow!("failed to make a folder in {}: {e}", uploads.display()))?;
    // Searchable by the unprivileged user a sandboxed bot runs as.
    crate::os::files::set_mode(t.path(), 0o755)?;
    Ok(t)
}

/// How old an unfinished upload's folder is when it is taken for one left
/// by a referee killed while taking it: far longer than any check takes.
const STALE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes the `.incoming-…` folders in `uploads` older than `age` (what a
/// killed upload leaves); one that cannot be removed is left.
fn remove_stale(uploads: &Path, age: std::time::Duration) {
    let entries = std::fs::read_dir(uploads).into_iter().flatten().flatten();
    for e in entries.filter(|e| e.file_name().to_string_lossy().starts_with(".incoming-")) {
        let old = (e.metadata().and_then(|m| m.modified()).ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|elapsed| elapsed > age);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// `folder` made (mode 0755) if missing.
fn open_folder(folder: &Path) -> anyhow::Result<()> {
    if !folder.is_dir() {
        std::fs::create_dir_all(folder)
            .map_err(|e| anyhow::anyhow!("failed to make {}: {e}", folder.display()))?;
        crate::os::files::set_mode(folder, 0o755)?;
    }
    Ok(())
}

/// Moves the unpacked folder to `entrant/vN`; where it is now.
fn keep(incoming: tempfile::TempDir, entrant: &Path, number: i64) -> anyhow::Result<PathBuf> {
    open_folder(entrant)?;
    let to = entrant.join(format!("v{number}"));
    // A rename fails onto a folder that holds anything: a second upload of
    // the entrant at the same moment is refused, not mixed into this one.
    std::fs::rename(incoming.path(), &to).map_err(|e| {
        anyhow::anyhow!(
            "failed to move the upload to {} ({e}); another upload of the entrant at \
             the same moment? Send it again",
            to.display()
        )
    })?;
    let _ = incoming.keep();
    Ok(std::fs::canonicalize(&to)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bot(command: &str) -> BotSpec {
        crate::settings::parse_bot(command, "test").unwrap()
    }

    #[test]
    fn a_killed_uploads_folder_is_removed_once_stale_and_not_before() {
        let uploads = tempfile::tempdir().unwrap();
        let stale = uploads.path().join(".incoming-old");
        let fresh = uploads.path().join(".incoming-new");
        let kept = uploads.path().join("alice");
        for d in [&stale, &fresh, &kept] {
            std::fs::create_dir_all(d.join("sub")).unwrap();
        }
        let hours_ago = std::time::SystemTime::now() - 2 * STALE;
        for d in [&stale, &kept] {
            let f = std::fs::File::open(d).unwrap();
            f.set_modified(hours_ago).unwrap();
        }
        remove_stale(uploads.path(), STALE);
        assert!(!stale.exists());
        assert!(fresh.exists() && kept.exists());
    }

    #[test]
    fn an_uploads_command_names_only_its_own_files_and_the_systems_programs() {
        for ok in [
            "python3 bot.py",
            "./run --fast",
            "sub/bot --model=weights/a.bin",
        ] {
            assert_eq!(confined(&bot(ok)), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("python3 ../bob/v1/bot.py", "climbs out"),
            ("python3 sub/../../bot.py", "climbs out"),
            ("./run --model=../../bob/v1/w", "climbs out"),
            ("/usr/bin/python3 bot.py", "absolute path"),
            ("python3 /work/bob/bot.py", "absolute path"),
            ("builtin:heuristic", "not the built-in bot"),
        ] {
            let err = confined(&bot(bad)).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
