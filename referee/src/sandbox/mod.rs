//! `--sandbox`: each bot process in its own namespaces, through bubblewrap.
//!
//! Why bubblewrap rather than namespaces set up here: it is the established,
//! audited tool for exactly this (Flatpak's sandbox), it gets the details right
//! that a hand-written setup gets wrong (read-only remounts of locked mounts, a
//! read-only `/proc/sys`, capabilities dropped, a reaping pid 1). It adds about
//! 17 ms to a bot's start, mostly the kernel making the namespaces, and nothing
//! measurable per decision (BENCHMARKS.md).
//!
//! A bubblewrap is kept for the run and serves one bot after another, each
//! in fresh PID, mount, network and IPC namespaces and fresh `/proc`,
//! `/tmp`, `/dev/shm` and `/scratch` mounts of its own (`launcher.rs`,
//! [`Sandbox::wrap_launcher`]); [`Sandbox::wrap`] builds a sandbox for one
//! bot alone, where a kept one cannot be had ([`Sandbox::keeps`]).
//!
//! Three layers, each holding on its own: the namespaces (what the bot can see),
//! the seccomp filters (`seccomp.rs`: what it can call; the outer one installed
//! before bubblewrap starts, the inner one, which refuses host-wide shared
//! state, by the wrapper below just before the bot's exec), and Landlock (`landlock.rs`: what it can open, bind,
//! connect to and signal). Landlock forbids mounting, so it cannot be applied
//! before bubblewrap: bubblewrap runs the referee's own executable in place of
//! the bot (`referee landlock RULES -- BOT...`, bound read-only into every
//! sandbox at its path: the executable the run started from, bound from a
//! private name of it, whatever the path names later: `own_exe.rs`), which
//! restricts itself and execs the bot, no extra process left.
//! It closes what the namespaces leave open: bubblewrap's root and the parents of
//! the bot's directory are a writable tmpfs, `/proc/self` is writable, `/dev/tty`
//! is the operator's terminal, the network namespace has a working loopback, and
//! the sandbox's pid 1 can be signalled. `--sandbox` requires Landlock ABI 6
//! (Linux 6.12) and refuses to start without it.
//!
//! What a sandboxed bot gets, per process: user, PID, network (loopback only,
//! nothing reachable), IPC, UTS and mount namespaces; the system view
//! (`view.rs`: the parts of `/usr` programs need, `/etc`, the `/bin`, `/lib*`
//! links) read-only, every page of it held in memory (`resident.rs`); its own
//! directory read-only (a built-in bot, the referee's own executable, is shown
//! only that executable and its libraries' directories instead of both:
//! `own_view.rs`); with `--scratch`, a tmpfs of `--scratch-mb` of its own at
//! [`SCRATCH_INSIDE`] (bounded per bot, never the host folder); on half of the CPUs,
//! its partner on the other half;
//! a private empty `/tmp` and `/dev/shm` (its writable scratch, tmpfs of
//! [`TMPFS_BYTES`] each, so that no bot takes the host's memory through them);
//! a fresh `/proc` showing only its own processes, its host-wide counters
//! replaced by constants (`procmask.rs`); a minimal `/dev`. Nothing else: not the output
//! folder, not the other bots' directories, not `$HOME`. Landlock then allows
//! writing only to `/tmp` and `/dev/shm`, reading only what is shown (of
//! `/proc` only an allow-list, `procview.rs`), no TCP,
//! and no signal or abstract socket beyond the bot's own tree.
//!
//! No `--new-session`: a session per bot puts each bot in a scheduler autogroup
//! of its own, and on a loaded host that made decisions far slower in the tail
//! (BENCHMARKS.md). What a new session guards against, pushing keystrokes into
//! the operator's terminal, the seccomp filter refuses instead (`TIOCSTI`,
//! `TIOCLINUX`), and Landlock keeps the bot from opening `/dev/tty` at all.
//!
//! bubblewrap's own pid 1 inside the sandbox keeps the environment bubblewrap was
//! started with (readable at `/proc/1/environ`), so bubblewrap is started with the
//! bot's cleared environment, never the referee's. A referee running as root
//! starts bubblewrap as an unprivileged user of the bot process's own (one of
//! [`BOT_UIDS`]; uid 65534 inside): the bot then has no more rights on the host
//! than any other user, so it cannot read root-only files of the directories it
//! sees, and per-user kernel limits are per bot. Where others cannot reach the
//! bot's files it warns and starts bubblewrap as root, the bot still without
//! capabilities and not root inside. A referee that is not root cannot map
//! other users: its bots share its own.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use seccompiler::BpfProgram;

use crate::os::{find_on_path, Launch, DEFAULT_PATH};
use kept::launcher::ViewMount;
use landlock::Rules;
use procmask::ProcMasks;
use view::holder::{Held, Holder, Starting};
use view::{link_dirs, shown_as_system, system_paths, SYSTEM_LINKS};

/// The unprivileged user a bot is inside its sandbox, whoever runs it.
pub const NOBODY: u32 = 65534;

/// The host uids (and gids) a root referee runs sandboxed bots as, one per bot
/// process (one per scratch directory, which keeps its owner): per-user kernel
/// limits (pending signals, inotify instances, message queue bytes) are then
/// per bot, and one bot's use of them is neither seen nor felt by another. A
/// range no account should use; each uid drawn at random, so that two
/// referees on one host rarely hand out the same one.
pub const BOT_UIDS: std::ops::Range<u32> = 0x5C4E_0000..0x5C4F_0000;

/// The tool that makes the namespaces, as transcripts record it.
pub const TOOL: &str = "bubblewrap";

/// The sandbox's layers as transcripts and manifests record them, outermost
/// first (the module doc says what each holds). A layer added or removed here
/// changes what every sandboxed run records.
pub const LAYERS: [&str; 3] = ["namespaces", "seccomp", "landlock-abi-6"];

pub use kept::launcher::SCRATCH_INSIDE;

/// The size of each sandbox's private `/tmp` and of its `/dev/shm`: tmpfs
/// lives in the host's memory, so an unbounded one lets a bot take the host's.
pub const TMPFS_BYTES: u64 = 64 << 20;

pub(crate) mod devices;
mod error;
pub(crate) mod kept;
pub(crate) mod landlock;
mod procmask;
pub(crate) mod procview;
pub(crate) mod seccomp;
pub(crate) mod view;

pub use error::{Refusal, SandboxError, Unreachable};
pub use kept::launcher::{run as launcher_run, LauncherArgs};
pub use landlock::{exec as landlock_exec, LandlockArgs};
pub use view::holder::{run as hold_view, HoldArgs};
pub use view::image::{stage as stage_view, StageArgs, CACHE_ENV as VIEW_CACHE_ENV};

/// What every sandboxed bot of a run shares: where bubblewrap is, what must stay
/// hidden, and the seccomp program.
#[derive(Debug)]
pub struct Sandbox {
    bwrap: PathBuf,
    /// Where transcripts, timings and logs go: never shown to a bot.
    outputs: Vec<PathBuf>,
    /// Each bot's directory: hidden from the others even if it lies inside theirs.
    bot_dirs: Vec<PathBuf>,
    /// The referee runs as root: bots are started as users of their own
    /// (`BOT_UIDS`) where they can be.
    root: bool,
    pub seccomp: Arc<BpfProgram>,
    /// The referee's own executable, which bubblewrap runs in place of the bot
    /// to confine it with Landlock before it execs the bot (`landlock.rs`):
    /// the path it was started from, where every sandbox shows it.
    referee: PathBuf,
    /// A name of that executable no one else renames or deletes, bound at
    /// `referee` (`own_exe.rs`): the executable the referee started from,
    /// whatever `referee` names later.
    referee_file: PathBuf,
    /// Constant stand-ins for `/proc`'s host-wide files (`procmask.rs`).
    masks: ProcMasks,
    /// Every page a bot can read, held in memory for the run (`resident.rs`)
    /// by a process of its own (`holder.rs`): being held from
    /// [`Sandbox::prepare`] on, held once [`Sandbox::held`] says so.
    resident: Mutex<Hold>,
    /// The bot uids handed out, and the uid of each scratch directory.
    uids: Mutex<(BTreeSet<u32>, BTreeMap<PathBuf, u32>)>,
    /// The size of each bot's `/scratch` tmpfs (`--scratch-mb`).
    scratch_bytes: u64,
    /// What a built-in bot (the referee's own executable) is shown of the
    /// system: its libraries, file by file (`own_view.rs`); `None`:
    /// the whole system view.
    own_libraries: Option<Vec<PathBuf>>,
    /// The sandboxes kept across games, idle (`slot.rs`).
    pool: kept::pool::Pool,
    /// Which images of the view bots are shown, where this host can make
    /// them (`image.rs`); `None`: bots see the host's paths bound.
    images: Option<ImagePlan>,
    /// Whether every bot of the run that is not built in is shown its view
    /// from images (none gets a sandbox of its own, from the host's paths).
    own_views: bool,
}

/// A bot directory's image (in [`ImagePlan`]).
#[derive(Debug)]
struct DirImage {
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
    fn large_files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let dirs = (self.dirs.values()).flat_map(|d| d.large.iter().map(|f| d.real.join(f)));
        self.large.iter().cloned().chain(dirs)
    }
}

/// The layer a run's record adds when every bot that is not built in saw
/// its view from mounts of its own (`image.rs`; SECURITY.md, "The dentry
/// cache").
pub const OWN_VIEWS: &str = "erofs-views";

/// The images asked of the holder, in its order: the system view's (if a
/// bot needs it) and each bot directory's.
#[derive(Debug)]
struct ImagePlan {
    /// The system view's image, and the directories of it each bot is shown.
    system: Option<(usize, Vec<PathBuf>)>,
    /// The system view's large files, left out of its image and bound from
    /// the host (`image::LARGE_FILE`).
    large: Vec<PathBuf>,
    /// Each bot directory's image.
    dirs: BTreeMap<PathBuf, DirImage>,
    specs: Vec<view::image::Spec>,
    maker: view::image::Maker,
}

impl Sandbox {
    /// Checks that this host can give what `--sandbox` promises, by starting a
    /// sandboxed `true`; fails closed, saying why and what to do.
    /// `outputs` and `bot_dirs` are absolute.
    /// `launches` are the bots' resolved commands.
    pub fn prepare(outputs: Vec<PathBuf>, launches: &[Launch]) -> Result<Sandbox, SandboxError> {
        let bwrap = find_on_path("bwrap", &std::env::var("PATH").unwrap_or_default())
            .ok_or(SandboxError::NoBubblewrap)?;
        landlock::probe()?;
        let referee = crate::os::own_exe::path().map_err(SandboxError::NoOwnExecutable)?;
        let referee_file = crate::os::own_exe::pinned().unwrap_or_else(|| referee.clone());
        let root = nix::unistd::getuid().is_root();
        let bot_dirs: Vec<PathBuf> = launches.iter().map(|l| l.dir.clone()).collect();
        let own_libraries = view::own::files(&referee);
        // A built-in bot is shown only the referee's executable and its
        // libraries, not its directory: there is nothing of that to hold, and
        // of the system view only the libraries if every bot is built in.
        let builtin = |l: &Launch| own_libraries.is_some() && is_builtin(&referee, l);
        let shown_dirs: Vec<PathBuf> = (launches.iter())
            .filter(|l| !builtin(l))
            .map(|l| l.dir.clone())
            .collect();
        let system = match (&own_libraries, launches.iter().all(builtin)) {
            (Some(dirs), true) => dirs.clone(),
            _ => system_paths().into_iter().chain(link_dirs()).collect(),
        };
        let began = std::time::Instant::now();
        let hidden: Vec<PathBuf> = outputs.iter().map(|o| canonical(o)).collect();
        let images = match launches.iter().all(builtin) {
            true => None,
            false => image_plan(root, &system, &shown_dirs, &hidden, &bot_dirs),
        };
        tracing::debug!("images planned in {:?}", began.elapsed());
        // Bots started in sandboxes of their own (not kept) see the host's
        // paths, never images: what they read is held as it is.
        let unkept =
            (launches.iter()).any(|l| !builtin(l) && root && reachable(&referee_file, l).is_err());
        // The view is held while the rest is prepared and the host probed
        // (no bot runs in the probe); the sandbox is ready once it is held.
        let holding = start_holding(
            &hidden,
            system,
            &shown_dirs,
            &referee_file,
            root,
            images.as_ref(),
            unkept,
        )
        .map_err(SandboxError::hold_failed)?;
        let sandbox = Sandbox {
            bwrap,
            outputs,
            bot_dirs,
            root,
            resident: Mutex::new(Hold::Starting(holding, began)),
            seccomp: seccomp::deny_list()?,
            referee,
            referee_file,
            masks: ProcMasks::create()?,
            uids: Mutex::new((BTreeSet::new(), BTreeMap::new())),
            scratch_bytes: TMPFS_BYTES,
            own_libraries,
            pool: kept::pool::Pool::default(),
            own_views: images.is_some() && !unkept,
            images,
        };
        if sandbox.root {
            readable_by_others(sandbox.masks.dir()).map_err(|reason| {
                SandboxError::MasksUnreachable {
                    reason,
                    dir: sandbox.masks.dir().to_path_buf(),
                }
            })?;
        }
        sandbox.probe()?;
        tracing::debug!("sandbox probed in {:?}", began.elapsed());
        Ok(sandbox)
    }

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

    /// Each bot's `/scratch` a tmpfs of `bytes` (`--scratch-mb`; else
    /// [`TMPFS_BYTES`]).
    pub fn with_scratch_bytes(mut self, bytes: u64) -> Sandbox {
        self.scratch_bytes = bytes;
        self
    }

    /// The size of each bot's `/scratch` tmpfs.
    pub fn scratch_bytes(&self) -> u64 {
        self.scratch_bytes
    }

    /// Whether a table may build a game's sandboxes while the game before it
    /// is played: only a root referee can give a sandbox built at the
    /// lowest priority its usual priority back (`process.rs`, `release`), and
    /// one built at the usual priority takes CPU from the game being played.
    pub fn builds_ahead(&self) -> bool {
        self.root
    }

    /// Whether a bot started `hold` is built ahead: at nice 19, and, in a
    /// kept sandbox, pinned to its CPUs by the referee when it is released
    /// (`BotProcess::release`), not by its wrapper, whose own confining at
    /// nice 19 would otherwise wait on the one CPU of a host's half beside
    /// whatever else runs there.
    pub fn built_ahead(&self, hold: bool) -> bool {
        hold && self.builds_ahead()
    }

    /// Refuses a bot whose directory would show more than the bot's own files.
    pub fn check(&self, launch: &Launch) -> Result<(), SandboxError> {
        let dir = &launch.dir;
        if dir == Path::new("/") {
            return Err(SandboxError::RootDirectory);
        }
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            let home = std::fs::canonicalize(&home).unwrap_or_else(|_| PathBuf::from(home));
            if home.starts_with(dir) {
                return Err(SandboxError::HoldsHome(dir.clone()));
            }
        }
        if self.outputs.iter().any(|out| &canonical(out) == dir) {
            return Err(SandboxError::HoldsOutput(dir.clone()));
        }
        if let (true, Err(e)) = (self.root, self.reachable_by_others(launch)) {
            // Such a bot gets a sandbox of its own (`keeps`), built by
            // bubblewrap from the host's directories: no image mounts.
            let images = match self.images {
                Some(_) => {
                    ", and it sees the host's directories, not images of its own, so it can \
                     leave bits for a later game in the dentry cache (SECURITY.md, \"The \
                     dentry cache\")"
                }
                None => "",
            };
            eprintln!(
                "referee: warning: {e}, so this bot's sandbox runs as root (without \
                 capabilities, as uid {NOBODY} inside): it can read root-only files of the \
                 directories it sees{images}. `chmod o+rx` them, or run the referee as an \
                 ordinary user, to have it run as an unprivileged user"
            );
        }
        Ok(())
    }

    /// The uid and gid bubblewrap runs as for `launch` (`None`: the referee's).
    /// A root referee runs each bot process as a uid of its own from
    /// [`BOT_UIDS`] (the same for every process given the same scratch
    /// directory, which that uid owns), if others can reach its files. Drawn
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
    fn reachable_by_others(&self, launch: &Launch) -> Result<(), Unreachable> {
        reachable(&self.referee_file, launch)
    }

    /// The layers a record of this run names, outermost first: [`LAYERS`],
    /// and [`OWN_VIEWS`] where every bot but the built-in ones sees its
    /// view from mounts of its own.
    pub fn layers(&self) -> Vec<String> {
        let own = self.own_views.then_some(OWN_VIEWS);
        LAYERS
            .iter()
            .copied()
            .chain(own)
            .map(String::from)
            .collect()
    }

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
        request: &mut kept::launcher::Request,
    ) -> Result<Vec<std::os::fd::OwnedFd>, SandboxError> {
        let none = || Ok(Vec::new());
        let Some(plan) = self.images.as_ref() else {
            return none();
        };
        if !self.shows_images(launch, before_any_game) {
            return none();
        }
        self.held()?;
        let files: Vec<std::fs::File> = {
            let hold = self.resident.lock().unwrap_or_else(|p| p.into_inner());
            match &*hold {
                Hold::Held { images, .. } => (images.iter())
                    .map(std::fs::File::try_clone)
                    .collect::<Result<_, _>>()
                    .map_err(SandboxError::ImageMount)?,
                _ => return none(),
            }
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

    /// The bubblewrap command line that runs `launch` sandboxed; its stdout
    /// passed in descriptor `stdout_fd` (see `landlock.rs`); `hold`: the bot
    /// is run only once the referee writes a newline to its stdin.
    pub fn wrap(
        &self,
        launch: &Launch,
        stdout_fd: Option<i32>,
        hold: bool,
    ) -> (PathBuf, Vec<OsString>) {
        let mut a = Args::default();
        self.isolate(&mut a);
        match self.builtin_view(launch) {
            Some(dirs) => show(&mut a, dirs),
            None => show(&mut a, &system_paths()),
        }
        a.add(&[&"--proc", &"/proc"]);
        a.0.extend(self.masks.args());
        if self.builtin_view(launch).is_none() {
            self.show_bot(&mut a, launch);
        } else {
            self.show_private(&mut a, launch);
        }
        // The referee's executable, for the Landlock wrapper; bound last, so that
        // no tmpfs above covers it.
        a.add(&[&"--ro-bind", &self.referee_file, &self.referee]);
        read_only_root(&mut a);
        a.add(&[&"--chdir", &launch.dir, &"--", &self.referee]);
        let bot = std::iter::once(launch.program.clone().into_os_string())
            .chain(launch.args.iter().cloned());
        a.0.extend(self.rules(launch).command_line(bot, stdout_fd, hold));
        (self.bwrap.clone(), a.0)
    }

    /// The bubblewrap command line of a sandbox kept for bots like `launch`
    /// (`launcher.rs`): what [`Sandbox::wrap`] shows but the bot's own
    /// `/proc`, `/tmp`, `/dev/shm` and `/scratch`, which the launcher mounts
    /// afresh for each bot; its capabilities kept inside the sandbox's user
    /// namespace, for the launcher to build those with.
    pub fn wrap_launcher(&self, launch: &Launch) -> (PathBuf, Vec<OsString>) {
        let mut a = Args::default();
        self.isolate(&mut a);
        // The launcher keeps its capabilities (inside the sandbox's user
        // namespace only); each bot drops them all (`launcher.rs`).
        let drop_at = a.0.iter().position(|w| w == "--cap-drop");
        if let Some(i) = drop_at {
            a.0[i] = "--cap-add".into();
        }
        match self.builtin_view(launch) {
            Some(dirs) => show(&mut a, dirs),
            None => show(&mut a, &system_paths()),
        }
        a.add(&[&"--proc", &"/proc"]);
        a.add(&[&"--ro-bind", &self.masks.dir(), &self.masks.dir()]);
        a.add(&[&"--dev", &"/dev", &"--dir", &"/tmp"]);
        if launch.scratch.is_some() {
            a.add(&[&"--dir", &SCRATCH_INSIDE]);
        }
        if self.builtin_view(launch).is_none() {
            self.show_own(&mut a, launch);
        }
        a.add(&[&"--ro-bind", &self.referee_file, &self.referee]);
        read_only_root(&mut a);
        a.add(&[&"--chdir", &"/", &"--", &self.referee]);
        a.add(&[&kept::launcher::SUBCOMMAND, &"--masks", &self.masks.dir()]);
        (self.bwrap.clone(), a.0)
    }

    /// What a launcher is sent to start `launch` (`launcher.rs`).
    pub fn request(
        &self,
        launch: &Launch,
        env: &[(String, String)],
        limits: crate::os::process::ResourceLimits,
        hold: bool,
    ) -> kept::launcher::Request {
        use kept::pool::bytes;
        let bot = std::iter::once(launch.program.clone().into_os_string())
            .chain(launch.args.iter().cloned())
            .collect();
        let mut shown = vec![self.referee.clone()];
        if self.builtin_view(launch).is_none() {
            shown.push(launch.dir.clone());
            shown.push(launch.program.clone());
        }
        let mut rules = self.rules(launch);
        if self.built_ahead(hold) {
            rules.cpu.clear();
        }
        kept::launcher::Request {
            wrapper: kept::launcher::wrapper_line(&rules, bot, hold),
            env: (env.iter())
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect(),
            dir: bytes(&launch.dir),
            tmpfs_bytes: TMPFS_BYTES,
            scratch_bytes: launch.scratch.as_ref().map(|_| self.scratch_bytes),
            masks: self.masks.pairs(),
            keep: beneath_tmp(&shown).iter().map(|p| bytes(p)).collect(),
            limits: [limits.memory_bytes, limits.cpu_seconds, limits.open_files],
            nice: if self.built_ahead(hold) { 19 } else { 0 },
            views: Vec::new(),
            host_files: Vec::new(),
        }
    }

    /// Whether bots like `launch` are started in kept sandboxes
    /// (`launcher.rs`): only where bubblewrap runs unprivileged. Run as
    /// root (a root referee's bot whose files others cannot reach), it
    /// builds its mounts before its user namespace, so they are locked
    /// inside it and the launcher could not mount a bot's fresh `/proc`;
    /// such a bot gets a sandbox of its own.
    pub fn keeps(&self, launch: &Launch) -> bool {
        !self.root || self.reachable_by_others(launch).is_ok()
    }

    /// The kept sandboxes of this run (`slot.rs`).
    pub fn pool(&self) -> &kept::pool::Pool {
        &self.pool
    }

    /// New namespaces of every kind, no capabilities, and never root inside.
    fn isolate(&self, a: &mut Args) {
        a.add(&[
            &"--unshare-user",
            &"--unshare-pid",
            &"--unshare-net",
            &"--unshare-ipc",
            &"--unshare-uts",
            &"--unshare-cgroup-try",
            &"--die-with-parent",
            &"--cap-drop",
            &"ALL",
            &"--hostname",
            &"bot",
        ]);
        if self.root {
            // Never root inside, whoever runs bubblewrap.
            let nobody = NOBODY.to_string();
            a.add(&[&"--uid", &nobody, &"--gid", &nobody]);
        }
    }

    /// The directories a built-in bot (`launch` runs the referee's own
    /// executable in its own directory) is shown instead of the system view
    /// and its directory; `None` for any other bot, or where the referee's
    /// libraries could not be told (`own_view.rs`).
    fn builtin_view(&self, launch: &Launch) -> Option<&[PathBuf]> {
        match is_builtin(&self.referee, launch) {
            true => self.own_libraries.as_deref(),
            false => None,
        }
    }

    /// A private `/dev`, `/tmp` and `/dev/shm`; with `--scratch`, a private
    /// tmpfs of its own at [`SCRATCH_INSIDE`].
    fn show_private(&self, a: &mut Args, launch: &Launch) {
        let size = TMPFS_BYTES.to_string();
        a.add(&[
            &"--dev",
            &"/dev",
            &"--size",
            &size,
            &"--tmpfs",
            &"/tmp",
            &"--size",
            &size,
            &"--tmpfs",
            &"/dev/shm",
        ]);
        // Its own scratch: a tmpfs bounded on its own, never the host folder,
        // which shares a filesystem the bot could fill with the transcripts'
        // (issue 27). The host folder stays hidden among `outputs`.
        if launch.scratch.is_some() {
            let size = self.scratch_bytes.to_string();
            a.add(&[&"--size", &size, &"--tmpfs", &SCRATCH_INSIDE]);
        }
    }

    /// What [`Sandbox::show_private`] shows, and the bot's directory and
    /// program read-only, with the referee's outputs and the other bots'
    /// directories inside it hidden.
    fn show_bot(&self, a: &mut Args, launch: &Launch) {
        self.show_private(a, launch);
        self.show_own(a, launch);
    }

    /// The bot's directory and program read-only, with the referee's
    /// outputs and the other bots' directories inside it hidden.
    fn show_own(&self, a: &mut Args, launch: &Launch) {
        a.add(&[&"--ro-bind", &launch.dir, &launch.dir]);
        if !launch.program.starts_with(&launch.dir) && !shown_as_system(&launch.program) {
            a.add(&[&"--ro-bind", &launch.program, &launch.program]);
        }
        // Hidden paths inside the bot's own directory are covered by an empty
        // tmpfs. They exist by now: the referee creates its output folder first.
        for h in self
            .outputs
            .iter()
            .chain(&self.bot_dirs)
            .map(|h| canonical(h))
        {
            if h != launch.dir && h.starts_with(&launch.dir) && h.is_dir() {
                a.add(&[&"--tmpfs", &h]);
            }
            // A hidden file (a tournament's --seed-secret-file) is covered by
            // /dev/null, which Landlock then refuses to open there.
            if h.starts_with(&launch.dir) && h.is_file() {
                a.add(&[&"--ro-bind", &"/dev/null", &h]);
            }
        }
    }

    /// The CPUs `launch`'s bot runs on ([`cpu_half`] of its lineup slot;
    /// none: wherever).
    pub fn cpus(&self, launch: &Launch) -> Vec<usize> {
        launch.slot.map(cpu_half).unwrap_or_default()
    }

    /// The Landlock rules for `launch`: read what the sandbox shows, write only
    /// its scratch (`landlock.rs`).
    pub fn rules(&self, launch: &Launch) -> Rules {
        let mut read = match self.builtin_view(launch) {
            Some(dirs) => dirs.to_vec(),
            None => {
                let mut read = system_paths();
                read.extend(link_dirs());
                read.extend([launch.dir.clone(), launch.program.clone()]);
                read
            }
        };
        read.push(self.referee.clone());
        let mut write: Vec<PathBuf> = vec!["/tmp".into(), "/dev/shm".into()];
        write.extend(
            launch
                .scratch
                .as_ref()
                .map(|_| PathBuf::from(SCRATCH_INSIDE)),
        );
        Rules {
            read,
            write,
            cpu: self.cpus(launch),
            device: ["null", "zero", "full", "random", "urandom"]
                .iter()
                .map(|d| Path::new("/dev").join(d))
                .collect(),
            list: vec!["/dev".into()],
        }
    }

    fn probe(&self) -> Result<(), SandboxError> {
        let truth = find_on_path("true", DEFAULT_PATH).ok_or(SandboxError::NoTrue)?;
        let launch = Launch {
            dir: truth.parent().unwrap_or(Path::new("/usr")).to_path_buf(),
            program: truth,
            args: Vec::new(),
            scratch: None,
            slot: None,
            invoked: None,
        };
        let (program, args) = self.wrap(&launch, None, false);
        let mut cmd = std::process::Command::new(&program);
        cmd.args(&args).env_clear();
        if let Some(id) = self.run_as(&launch) {
            use std::os::unix::process::CommandExt;
            // std drops the supplementary groups too when root changes uid.
            cmd.uid(id).gid(id);
        }
        let out = cmd
            .output()
            .map_err(|e| SandboxError::CannotRun(program.clone(), e))?;
        if out.status.success() {
            return Ok(());
        }
        let refusal = Refusal {
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        // bubblewrap's own words are all there is to tell its refusals apart.
        Err(if refusal.stderr.contains("Landlock") {
            SandboxError::LandlockFailed(refusal)
        } else if refusal.stderr.contains("Unknown option") {
            SandboxError::OldBubblewrap(refusal)
        } else {
            SandboxError::NoNamespaces(refusal)
        })
    }
}

/// Where the holding of the view is (`Sandbox::held`).
#[derive(Debug)]
enum Hold {
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
fn start_holding(
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

/// The images bots of this run are shown (`image.rs`), if this host can
/// make them: one of the system view's directories, one of each bot
/// directory outside it; each with the referee's outputs and (in a bot's
/// directory) other bots' directories shown empty. Says once why not, to a
/// root referee.
fn image_plan(
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
fn open_images(images: &view::holder::Images) -> Result<Vec<std::fs::File>, String> {
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

/// Whether other users can reach a bot's directory and program, and the
/// referee's executable that confines it (the file bubblewrap binds).
fn reachable(referee: &Path, launch: &Launch) -> Result<(), Unreachable> {
    readable_by_others(&launch.dir)?;
    readable_by_others(&launch.program)?;
    if let Some(scratch) = &launch.scratch {
        readable_by_others(scratch)?;
    }
    readable_by_others(referee)
}

/// Warns if some of the view is too large to hold.
fn warn_left_out(held: Held) {
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

/// Of `shown`, what lies beneath `/tmp` (not inside another of them): the
/// launcher puts it back over each bot's fresh `/tmp`.
fn beneath_tmp(shown: &[PathBuf]) -> Vec<PathBuf> {
    let tmp = Path::new("/tmp");
    let under: Vec<&PathBuf> = (shown.iter())
        .filter(|p| p.starts_with(tmp) && p.as_path() != tmp)
        .collect();
    let mut kept: Vec<PathBuf> = Vec::new();
    for p in &under {
        let inside_another = under.iter().any(|q| q != p && p.starts_with(q) && *q != *p);
        if !inside_another && !kept.contains(p) {
            kept.push((*p).clone());
        }
    }
    kept
}

/// A bubblewrap command line being built.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn add(&mut self, words: &[&dyn AsRef<std::ffi::OsStr>]) {
        self.0.extend(words.iter().map(|w| w.as_ref().to_owned()));
    }
}

/// Whether `launch` is a built-in bot: the referee's own executable
/// `referee`, run in its own directory (`config.rs`, `BotSpec::launch`).
/// The sandbox's root and `/dev` tmpfs mounts read-only, once everything
/// is mounted on them: a bot could leave a mode, times or an extended
/// attribute on them (Landlock does not govern metadata), and a kept
/// sandbox's are shared by every bot it serves (`kept_state.rs`). Only those
/// two mounts: bubblewrap would make a device node bound in `/dev` unusable
/// (`nodev`) if it remounted it.
fn read_only_root(a: &mut Args) {
    a.add(&[&"--remount-ro", &"/dev", &"--remount-ro", &"/"]);
}

fn is_builtin(referee: &Path, launch: &Launch) -> bool {
    launch.program == referee && Some(launch.dir.as_path()) == referee.parent()
}

/// `paths` of the system view (`view.rs`), read-only, and its merged-usr
/// links as links.
fn show(a: &mut Args, paths: &[PathBuf]) {
    for path in paths {
        a.add(&[&"--ro-bind", path, path]);
    }
    for link in SYSTEM_LINKS {
        let path = Path::new(link);
        match path.read_link() {
            Ok(target) => a.add(&[&"--symlink", &target, link]),
            Err(_) if path.is_dir() => a.add(&[&"--ro-bind", link, link]),
            Err(_) => {}
        }
    }
}

/// The CPUs lineup slot `slot` runs on: the first half of those the referee
/// may use for slots 0–2, the second for 3–5, so that partners (three slots
/// apart) never share a CPU. Pipe, socket and memfd inode numbers come from
/// host-wide counters handed to each CPU in batches of 1024: on one CPU two
/// partners read each other's allocations in them (SECURITY.md, "Host-wide
/// counters that remain"). Empty (no pinning) with fewer than two CPUs.
fn cpu_half(slot: usize) -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the kernel.
    let mut set: nix::libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<nix::libc::cpu_set_t>();
    // SAFETY: `set` is a cpu_set_t of `size` bytes.
    if unsafe { nix::libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return Vec::new();
    }
    let cpus: Vec<usize> = (0..nix::libc::CPU_SETSIZE as usize)
        // SAFETY: `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { nix::libc::CPU_ISSET(c, &set) })
        .collect();
    if cpus.len() < 2 {
        return Vec::new();
    }
    let (first, second) = cpus.split_at(cpus.len() / 2);
    match slot % 6 < 3 {
        true => first.to_vec(),
        false => second.to_vec(),
    }
}

/// 32 bits from the kernel's random source (`getrandom(2)`, which blocks only
/// before the pool is first seeded, long before a referee runs).
fn random_u32() -> u32 {
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

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn readable_by_others(p: &Path) -> Result<(), Unreachable> {
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
