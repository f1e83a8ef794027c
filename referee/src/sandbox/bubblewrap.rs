//! bubblewrap's command lines: a sandbox for one bot alone
//! ([`Sandbox::wrap`]) or one kept for bots of a view
//! ([`Sandbox::wrap_launcher`], `kept/`), what each shows, and the
//! Landlock rules and the request a kept sandbox's bot is started with.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::canonical;
use super::landlock::Rules;
use super::prepare::is_builtin;
use super::view::{link_dirs, shown_as_system, system_paths, SYSTEM_LINKS};
use super::{kept, Sandbox, NOBODY, SCRATCH_INSIDE, TMPFS_BYTES};
use crate::os::Launch;

impl Sandbox {
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
        let bot = std::iter::once(launch.invoked_in_dir().as_os_str().to_owned())
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
        limits: crate::os::ResourceLimits,
        hold: bool,
    ) -> kept::message::Request {
        use kept::pool::bytes;
        let bot = std::iter::once(launch.invoked_in_dir().as_os_str().to_owned())
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
        kept::message::Request {
            wrapper: kept::message::wrapper_line(&rules, bot, hold),
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

    /// New namespaces of every kind, no capabilities, and never root inside.
    pub(super) fn isolate(&self, a: &mut Args) {
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
    /// libraries could not be told (`view/own.rs`).
    pub(super) fn builtin_view(&self, launch: &Launch) -> Option<&[PathBuf]> {
        match is_builtin(&self.referee, launch) {
            true => self.own_libraries.as_deref(),
            false => None,
        }
    }

    /// A private `/dev`, `/tmp` and `/dev/shm`; with `--scratch`, a private
    /// tmpfs of its own at [`SCRATCH_INSIDE`].
    pub(super) fn show_private(&self, a: &mut Args, launch: &Launch) {
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
    pub(super) fn show_bot(&self, a: &mut Args, launch: &Launch) {
        self.show_private(a, launch);
        self.show_own(a, launch);
    }

    /// The bot's directory and program read-only, with the referee's
    /// outputs and the other bots' directories inside it hidden.
    pub(super) fn show_own(&self, a: &mut Args, launch: &Launch) {
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
}

/// A bubblewrap command line being built.
#[derive(Default)]
pub(super) struct Args(Vec<OsString>);

impl Args {
    pub(super) fn add(&mut self, words: &[&dyn AsRef<std::ffi::OsStr>]) {
        self.0.extend(words.iter().map(|w| w.as_ref().to_owned()));
    }
}

/// Whether `launch` is a built-in bot: the referee's own executable
/// `referee`, run in its own directory (`config.rs`, `BotSpec::launch`).
/// The sandbox's root and `/dev` tmpfs mounts read-only, once everything
/// is mounted on them: a bot could leave a mode, times or an extended
/// attribute on them (Landlock does not govern metadata), and a kept
/// sandbox's are shared by every bot it serves (`kept/state.rs`). Only those
/// two mounts: bubblewrap would make a device node bound in `/dev` unusable
/// (`nodev`) if it remounted it.
pub(super) fn read_only_root(a: &mut Args) {
    a.add(&[&"--remount-ro", &"/dev", &"--remount-ro", &"/"]);
}

/// `paths` of the system view (`view.rs`), read-only, and its merged-usr
/// links as links.
pub(super) fn show(a: &mut Args, paths: &[PathBuf]) {
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

/// Of `shown`, what lies beneath `/tmp` (not inside another of them): the
/// launcher puts it back over each bot's fresh `/tmp`.
pub(super) fn beneath_tmp(shown: &[PathBuf]) -> Vec<PathBuf> {
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
