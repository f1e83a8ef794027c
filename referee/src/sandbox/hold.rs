//! The sandbox's view held in memory for the run (`view/resident.rs`, by
//! a process of its own: `view/holder.rs`), and no bot of a game run
//! before it is.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::canonical;
use super::images::{open_images, ImagePlan};
use super::view::holder::{Held, HoldArgs, Holder, Starting};
use super::{Sandbox, SandboxError};

impl Sandbox {
    /// Waits until the view is held (at once if it is): no bot that may be
    /// told anything of a game runs before, so that the page cache is no
    /// store between games (`resident.rs`). Only a tournament's start check,
    /// whose bots are sent hello and ended before any game is dealt, starts
    /// bots while it is being held (`Spawn::before_any_game`).
    pub fn held(&self) -> Result<(), SandboxError> {
        let mut hold = self.resident.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(*hold, Hold::Starting(..)) {
            let Hold::Starting(starting, began) =
                std::mem::replace(&mut *hold, Hold::Failed(String::new()))
            else {
                unreachable!("matched just above")
            };
            *hold = match starting.wait() {
                Ok(holder) => {
                    warn_left_out(holder.held);
                    // The holder's report is read only now: this is when
                    // the view was seen held, not how long holding it took.
                    tracing::debug!(
                        "view held ({} MiB), seen {:?} after the sandbox was begun",
                        holder.held.bytes >> 20,
                        began.elapsed()
                    );
                    match open_images(&holder.images) {
                        Ok(images) => Hold::Held {
                            _holder: holder,
                            images,
                        },
                        Err(why) => Hold::Failed(why),
                    }
                }
                Err(e) => Hold::Failed(e.to_string()),
            };
        }
        match &*hold {
            Hold::Failed(why) => Err(SandboxError::hold_failed(std::io::Error::other(
                why.clone(),
            ))),
            _ => Ok(()),
        }
    }

    /// [`Sandbox::held`] for async code: waits on a blocking thread, unless
    /// the view is already held.
    pub async fn held_async(sandbox: &Arc<Sandbox>) -> Result<(), SandboxError> {
        if sandbox.is_held() {
            return Ok(());
        }
        let sandbox = Arc::clone(sandbox);
        (tokio::task::spawn_blocking(move || sandbox.held()).await)
            .unwrap_or_else(|e| Err(SandboxError::hold_failed(std::io::Error::other(e))))
    }

    /// The images of the view the holder made, open (each a clone of the
    /// one held), once the view is held; `None` before.
    pub(super) fn held_images(&self) -> Result<Option<Vec<std::fs::File>>, SandboxError> {
        let hold = self.resident.lock().unwrap_or_else(|p| p.into_inner());
        match &*hold {
            Hold::Held { images, .. } => (images.iter())
                .map(std::fs::File::try_clone)
                .collect::<Result<_, _>>()
                .map(Some)
                .map_err(SandboxError::ImageMount),
            _ => Ok(None),
        }
    }

    /// Whether [`Sandbox::held`] has returned `Ok` (the view is held).
    /// Never blocks: `false` while another thread waits in `held`.
    pub fn is_held(&self) -> bool {
        match self.resident.try_lock() {
            Ok(hold) => matches!(*hold, Hold::Held { .. }),
            Err(std::sync::TryLockError::Poisoned(p)) => {
                matches!(*p.into_inner(), Hold::Held { .. })
            }
            Err(std::sync::TryLockError::WouldBlock) => false,
        }
    }
}

/// Where the holding of the view is (`Sandbox::held`).
#[derive(Debug)]
pub(super) enum Hold {
    /// Being held, since the instant given.
    Starting(Starting, std::time::Instant),
    /// Held for the run: dropped with the sandbox. With the images asked
    /// for, in order, open.
    Held {
        _holder: Holder,
        images: Vec<std::fs::File>,
    },
    /// The holder failed, as said.
    Failed(String),
}

/// Starts holding every page of what sandboxed bots can read
/// (`resident.rs`, in a process of its own: `holder.rs`): the system view,
/// the bots' own directories (their outputs hidden) and the referee's
/// executable.
/// With `images`, the paths they show are held only if an image could not
/// be made (or `host_too`: some bot sees them as they are), and the images
/// (`holder.rs`).
pub(super) fn start_holding(
    hidden: &[PathBuf],
    system: Vec<PathBuf>,
    bot_dirs: &[PathBuf],
    referee: &Path,
    root: bool,
    images: Option<&ImagePlan>,
    host_too: bool,
) -> std::io::Result<Starting> {
    let mut roots = system;
    roots.extend(bot_dirs.iter().map(|d| canonical(d)));
    let mut args = HoldArgs {
        root: Vec::new(),
        hidden: hidden.to_vec(),
        others_only: root,
        ..HoldArgs::default()
    };
    match images {
        Some(plan) => {
            // What no image shows (files of the system view) is held as is.
            let (imaged, files): (Vec<PathBuf>, Vec<PathBuf>) =
                roots.into_iter().partition(|p| p.is_dir() && !host_too);
            args.root = files;
            // Bound from the host into every view: held as they are (with
            // `host_too` they are, already, within the roots held whole).
            if !host_too {
                args.root.extend(plan.large_files());
            }
            args.imaged = imaged;
            args.image = (plan.specs.iter())
                .map(|s| serde_json::to_string(s).expect("a spec serialises"))
                .collect();
            args.image_cache = Some(plan.maker.cache.clone());
            args.mkfs = Some(plan.maker.mkfs.clone());
        }
        None => args.root = roots,
    }
    args.root.push(referee.to_path_buf());
    Holder::start(referee.to_path_buf(), args)
}

/// Warns if some of the view is too large to hold.
pub(super) fn warn_left_out(held: Held) {
    if held.left_out.0 > 0 {
        eprintln!(
            "referee: warning: the sandbox holds in memory only {} MiB of what bots can read; \
             {} files ({} MiB) past that are not held, so a bot could leave bits for a later \
             game in which of their pages are cached (SECURITY.md, \"Duplicate-set memory\"). \
             Keep the bots' directories small",
            held.bytes >> 20,
            held.left_out.0,
            held.left_out.1 >> 20
        );
    }
}
