//! Which host user a sandboxed bot runs as: under a root referee, one of
//! its own, where other users can reach the bot's files.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{Sandbox, Unreachable, BOT_UIDS};
use crate::os::Launch;

impl Sandbox {
    /// The uid and gid bubblewrap runs as for `launch` (`None`: the referee's).
    /// A root referee runs each bot process as a uid of its own from
    /// [`BOT_UIDS`] (the same for every process given the same scratch
    /// path), if others can reach its files. Drawn
    /// at random among those this run has not handed out: a uid counted up
    /// per start would tell a bot how many bots started before it, and so
    /// which game of a duplicate set it plays.
    pub fn run_as(&self, launch: &Launch) -> Option<u32> {
        if !self.root || self.reachable_by_others(launch).is_err() {
            return None;
        }
        let mut uids = self.uids.lock().unwrap_or_else(|e| e.into_inner());
        let (used, by_scratch) = &mut *uids;
        if let Some(uid) = launch.scratch.as_ref().and_then(|s| by_scratch.get(s)) {
            return Some(*uid);
        }
        let span = BOT_UIDS.end - BOT_UIDS.start;
        if used.len() as u32 >= span / 2 {
            // The bots of that many starts ago are long gone.
            used.clear();
        }
        let uid = loop {
            let uid = BOT_UIDS.start + random_u32() % span;
            if used.insert(uid) {
                break uid;
            }
        };
        if let Some(scratch) = &launch.scratch {
            by_scratch.insert(scratch.clone(), uid);
        }
        Some(uid)
    }

    /// Whether bubblewrap runs as root where [`Sandbox::run_as`] names no
    /// user: the referee is root.
    pub fn runs_as_root(&self) -> bool {
        self.root
    }

    /// Whether other users can reach a bot's directory and program, and the
    /// referee's executable that confines it.
    pub(super) fn reachable_by_others(&self, launch: &Launch) -> Result<(), Unreachable> {
        reachable(&self.referee_file, launch)
    }
}

/// Whether other users can reach a bot's directory and program, and the
/// referee's executable that confines it (the file bubblewrap binds).
pub(super) fn reachable(referee: &Path, launch: &Launch) -> Result<(), Unreachable> {
    readable_by_others(&launch.dir)?;
    readable_by_others(&launch.program)?;
    // Not the scratch path: the bot's /scratch is a tmpfs, no host folder.
    readable_by_others(referee)
}

pub(super) fn readable_by_others(p: &Path) -> Result<(), Unreachable> {
    let mut cur = Some(p);
    while let Some(dir) = cur {
        let mode = std::fs::metadata(dir)
            .map_err(|e| Unreachable::Unreadable(dir.to_path_buf(), e))?
            .permissions()
            .mode();
        let need = if dir == p && !dir.is_dir() {
            0o004
        } else {
            0o001
        };
        if mode & need == 0 {
            let what = match need {
                0o004 => "readable",
                _ => "searchable",
            };
            return Err(Unreachable::Closed(dir.to_path_buf(), what));
        }
        cur = dir.parent();
    }
    Ok(())
}

/// 32 bits from the kernel's random source (`getrandom(2)`, which blocks only
/// before the pool is first seeded, long before a referee runs).
pub(super) fn random_u32() -> u32 {
    let mut bytes = [0u8; 4];
    // SAFETY: writes at most 4 bytes into the 4-byte buffer.
    let n = unsafe { nix::libc::getrandom(bytes.as_mut_ptr().cast(), 4, 0) };
    assert_eq!(
        n,
        4,
        "getrandom failed: {}",
        std::io::Error::last_os_error()
    );
    u32::from_ne_bytes(bytes)
}
