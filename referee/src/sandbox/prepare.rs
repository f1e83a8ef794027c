//! A run's sandbox made ready: the host probed, the view's holding begun,
//! and what each bot may be refused or given (its CPUs, its kept sandbox).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::canonical;
use super::hold::{start_holding, Hold};
use super::images::image_plan;
use super::procmask::ProcMasks;
use super::users::{reachable, readable_by_others};
use super::view::{link_dirs, system_paths};
use super::{
    kept, landlock, seccomp, view, Refusal, Sandbox, SandboxError, LAYERS, NOBODY, OWN_VIEWS,
    TMPFS_BYTES,
};
use crate::os::{find_on_path, Launch, DEFAULT_PATH};

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

    pub(super) fn probe(&self) -> Result<(), SandboxError> {
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

    /// Refuses a bot whose directory would show more than the bot's own
    /// files, or whose virtual environment it could not run (`venv.rs`).
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
        super::venv::check(launch)?;
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

    /// Whether bots like `launch` are started in kept sandboxes
    /// (`launcher.rs`): only where bubblewrap runs unprivileged. Run as
    /// root (a root referee's bot whose files others cannot reach), it
    /// builds its mounts before its user namespace, so they are locked
    /// inside it and the launcher could not mount a bot's fresh `/proc`;
    /// such a bot gets a sandbox of its own.
    pub fn keeps(&self, launch: &Launch) -> bool {
        !self.root || self.reachable_by_others(launch).is_ok()
    }

    /// The kept sandboxes of this run (`kept/pool.rs`).
    pub fn pool(&self) -> &kept::pool::Pool {
        &self.pool
    }

    /// The CPUs `launch`'s bot runs on ([`cpu_half`] of its lineup slot;
    /// none: wherever).
    pub fn cpus(&self, launch: &Launch) -> Vec<usize> {
        launch.slot.map(cpu_half).unwrap_or_default()
    }
}

pub(super) fn is_builtin(referee: &Path, launch: &Launch) -> bool {
    launch.program == referee && Some(launch.dir.as_path()) == referee.parent()
}

/// The CPUs lineup slot `slot` runs on: the first half of those the referee
/// may use for slots 0–2, the second for 3–5, so that partners (three slots
/// apart) never share a CPU. Pipe, socket and memfd inode numbers come from
/// host-wide counters handed to each CPU in batches of 1024: on one CPU two
/// partners read each other's allocations in them (SECURITY.md, "Host-wide
/// counters that remain"). Empty (no pinning) with fewer than two CPUs.
pub(super) fn cpu_half(slot: usize) -> Vec<usize> {
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
