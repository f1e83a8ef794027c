//! The view shown from images of its own (`view/image.rs`): which images a
//! run makes, and the mounts of them each bot is given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::canonical;
use super::kept::message::ViewMount;
use super::view::shown_as_system;
use super::{kept, view, Sandbox, SandboxError};
use crate::os::Launch;

/// A bot directory's image (in [`ImagePlan`]).
#[derive(Debug)]
pub(super) struct DirImage {
    /// Which of the plan's images.
    index: usize,
    /// The directory on the host.
    real: PathBuf,
    /// Its large files, relative to it: left out of the image and bound
    /// from the host, as the system view's are.
    large: Vec<PathBuf>,
}

impl ImagePlan {
    /// The host files bound into views rather than imaged: the holder keeps
    /// them resident as they are.
    pub(super) fn large_files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let dirs = (self.dirs.values()).flat_map(|d| d.large.iter().map(|f| d.real.join(f)));
        self.large.iter().cloned().chain(dirs)
    }
}

/// The images asked of the holder, in its order: the system view's (if a
/// bot needs it) and each bot directory's.
#[derive(Debug)]
pub(super) struct ImagePlan {
    /// The system view's image, and the directories of it each bot is shown.
    pub(super) system: Option<(usize, Vec<PathBuf>)>,
    /// The system view's large files, left out of its image and bound from
    /// the host (`image::LARGE_FILE`).
    pub(super) large: Vec<PathBuf>,
    /// Each bot directory's image.
    pub(super) dirs: BTreeMap<PathBuf, DirImage>,
    pub(super) specs: Vec<view::image::Spec>,
    pub(super) maker: view::image::Maker,
}

impl Sandbox {
    /// Whether `launch`'s bot is shown its view from mounts of its own
    /// (`image.rs`): where this run makes images, for every bot but a
    /// built-in one and a bot of the start check while the view is still
    /// being held. Such a bot is never started without them.
    pub fn shows_images(&self, launch: &Launch, before_any_game: bool) -> bool {
        self.images.is_some()
            && self.builtin_view(launch).is_none()
            && (!before_any_game || self.is_held())
    }

    /// The mounts of `launch`'s view made for it alone (`image.rs`), and
    /// where its init puts them (`launcher.rs`); none for a built-in bot,
    /// where this host makes no images, or for a bot of the start check
    /// while the view is still being held (it is sent hello and ended
    /// before any game: it has nothing to leave). Every other bot waits
    /// for the view to be held, images and all.
    pub fn view_mounts(
        &self,
        launch: &Launch,
        before_any_game: bool,
        request: &mut kept::message::Request,
    ) -> Result<Vec<std::os::fd::OwnedFd>, SandboxError> {
        let none = || Ok(Vec::new());
        let Some(plan) = self.images.as_ref() else {
            return none();
        };
        if !self.shows_images(launch, before_any_game) {
            return none();
        }
        self.held()?;
        let Some(files) = self.held_images()? else {
            return none();
        };
        let mount = |i: usize| match files.get(i) {
            Some(file) => view::image::mount(file)
                .map(Some)
                .map_err(SandboxError::ImageMount),
            None => Ok(None),
        };
        let (mut views, mut fds) = (Vec::new(), Vec::new());
        if let Some((i, dirs)) = &plan.system {
            if let Some(fd) = mount(*i)? {
                for dir in dirs {
                    let within = dir.strip_prefix("/").unwrap_or(dir);
                    views.push(ViewMount {
                        target: kept::pool::bytes(dir),
                        image: fds.len(),
                        within: kept::pool::bytes(within),
                    });
                }
                fds.push(fd);
                request.host_files = plan.large.iter().map(|f| kept::pool::bytes(f)).collect();
            }
        }
        if let Some(d) = plan.dirs.get(&launch.dir) {
            if let Some(fd) = mount(d.index)? {
                views.push(ViewMount {
                    target: kept::pool::bytes(&launch.dir),
                    image: fds.len(),
                    within: Vec::new(),
                });
                fds.push(fd);
                let large = d
                    .large
                    .iter()
                    .map(|f| kept::pool::bytes(&launch.dir.join(f)));
                request.host_files.extend(large);
            }
        }
        request.views = views;
        Ok(fds)
    }
}

/// The images bots of this run are shown (`image.rs`), if this host can
/// make them: one of the system view's directories, one of each bot
/// directory outside it; each with the referee's outputs and (in a bot's
/// directory) other bots' directories shown empty. Says once why not, to a
/// root referee.
pub(super) fn image_plan(
    root: bool,
    system: &[PathBuf],
    shown_dirs: &[PathBuf],
    hidden: &[PathBuf],
    bot_dirs: &[PathBuf],
) -> Option<ImagePlan> {
    use view::image::Spec;
    let maker = match view::image::maker(root) {
        Ok(m) => m,
        Err(why) => {
            if root {
                eprintln!(
                    "referee: warning: sandboxed bots see the system's directories bound from \
                     the host ({why}), so a bot can leave bits for a later game in the host's \
                     dentry cache (SECURITY.md, \"The dentry cache\")"
                );
            }
            return None;
        }
    };
    let inside = |p: &Path, dir: &Path| p != dir && p.starts_with(dir);
    let mut specs = Vec::new();
    let dirs: Vec<PathBuf> = system.iter().filter(|p| p.is_dir()).cloned().collect();
    let large = view::image::large_files(&dirs, hidden);
    let system = (!dirs.is_empty()).then(|| {
        let covers = (hidden.iter())
            .filter(|h| dirs.iter().any(|d| inside(h, d)))
            .chain(&large)
            .map(|h| h.strip_prefix("/").unwrap_or(h).to_path_buf())
            .collect();
        let sources = (dirs.iter())
            .map(|d| (d.strip_prefix("/").unwrap_or(d).to_path_buf(), d.clone()))
            .collect();
        specs.push(Spec { sources, covers });
        (specs.len() - 1, dirs)
    });
    let others: Vec<PathBuf> = bot_dirs.iter().map(|d| canonical(d)).collect();
    let mut by_dir = BTreeMap::new();
    for dir in shown_dirs {
        if by_dir.contains_key(dir) || shown_as_system(dir) || !dir.is_dir() {
            continue;
        }
        let real = canonical(dir);
        let skip: Vec<PathBuf> = (hidden.iter().chain(&others))
            .filter(|h| inside(h, &real))
            .cloned()
            .collect();
        let large: Vec<PathBuf> = (view::image::large_files(std::slice::from_ref(&real), &skip))
            .iter()
            .filter_map(|f| f.strip_prefix(&real).ok().map(Path::to_path_buf))
            .collect();
        let covers = (skip.iter())
            .filter_map(|h| h.strip_prefix(&real).ok().map(Path::to_path_buf))
            .chain(large.iter().cloned())
            .collect();
        specs.push(Spec {
            sources: vec![(PathBuf::new(), real.clone())],
            covers,
        });
        let index = specs.len() - 1;
        by_dir.insert(dir.clone(), DirImage { index, real, large });
    }
    Some(ImagePlan {
        large: if system.is_some() { large } else { Vec::new() },
        system,
        dirs: by_dir,
        specs,
        maker,
    })
}

/// Opens the images the holder made: open, they stay usable even if
/// another referee's cache pruning removes their names. `Err` if one could
/// not be made or opened: no bot is then started without it (fails closed).
pub(super) fn open_images(images: &view::holder::Images) -> Result<Vec<std::fs::File>, String> {
    let open = |image: &Result<PathBuf, String>| match image {
        Ok(path) => std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display())),
        Err(why) => Err(why.clone()),
    };
    (images.iter())
        .map(|image| {
            let file = open(image).map_err(|why| {
                format!(
                    "an image of the sandboxed bots' view could not be made ({why}), and no \
                     sandboxed bot is started without one. Set {env}=DIR to keep the images \
                     in another folder, or {env}=none to show bots the host's directories \
                     instead, which leaves a bot able to pass bits to a later game through \
                     the dentry cache (SECURITY.md, \"The dentry cache\")",
                    env = view::image::CACHE_ENV
                )
            })?;
            tracing::debug!("bots are shown the image {image:?}");
            Ok(file)
        })
        .collect()
}
