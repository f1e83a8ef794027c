//! What exactly is executed for a bot command, and where.
//!
//! A bot runs in *its own directory*, never in the referee's or the output folder,
//! with an environment that holds nothing of the referee's. So a command given
//! relative to the referee's working directory is made absolute first:
//!
//! - the program is looked up on the bots' `PATH` (not the referee's), or made
//!   absolute if it contains a `/`;
//! - every argument that names an existing file or directory and looks like a path
//!   (contains `/` or `.`: `bot.py`, `sample-bots/js/bot.js`) is made absolute;
//! - the bot's directory is the folder the first such argument names (the
//!   script's folder for an interpreted bot; the argument itself if it is a
//!   folder), else the program's folder (a compiled bot) — as written, never
//!   a folder reached through a link at the argument's end: `./run ./weights`
//!   with `weights -> ../bob` runs in the folder holding `weights`, not in
//!   `bob`;
//! - a path argument that passes through a link leading out of the folder
//!   holding the link (and out of the bot's directory) is refused, naming the
//!   link, if the link lies in the referee's working directory or below it, or
//!   in the bot's directory: an entrant's folder handed to the organiser could
//!   hold `weights -> ../bob`, and its program would read another entrant's
//!   code. Links above those (`/home` on some systems) are the host's. The
//!   program's own path is not checked here: a virtual environment's
//!   `bin/python` is such a link, into the system;
//! - a script that names no file (`python3 my_bot.py` in the wrong folder) is an
//!   error naming the folder it was looked up in, before anything starts: else
//!   the interpreter, run in the program's folder, would report a path there
//!   (`can't open file '/usr/bin/my_bot.py'`).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// A resolved bot command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Absolute path of the executable.
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Absolute, canonical: the bot's working directory.
    pub dir: PathBuf,
    /// Its own writable directory (`--scratch`), absolute; shown read-write in
    /// its sandbox.
    pub scratch: Option<PathBuf>,
    /// Its lineup slot, if it has one: sandboxed, slots 0–2 and 3–5 (each
    /// bot's partner three slots on) run on disjoint halves of the CPUs.
    pub slot: Option<usize>,
    /// The path the program was named by, where it is a link (absolute, its
    /// folder's links resolved, its own name not): an unsandboxed bot is run
    /// by it, as a shell would, so that a virtual environment's `bin/python`
    /// (a link to the base interpreter) finds its environment (issue 45).
    /// A sandbox shows and runs `program`, the file itself.
    pub invoked: Option<PathBuf>,
}

impl Launch {
    /// What an unsandboxed bot's process is started from.
    pub fn invoked(&self) -> &Path {
        self.invoked.as_deref().unwrap_or(&self.program)
    }

    /// What a sandboxed bot's process is started from: the link it was
    /// named by where that lies in its own directory, which its sandbox
    /// shows (a virtual environment inside the bot's folder: `venv.rs`),
    /// else the program, the file the sandbox shows on its own.
    pub fn invoked_in_dir(&self) -> &Path {
        match &self.invoked {
            Some(link) if link.starts_with(&self.dir) => link,
            _ => &self.program,
        }
    }
}

/// Why a bot's command could not be resolved to a program and a directory.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("the command is empty")]
    Empty,
    #[error("failed to find the program {program:?} in {}: {error}", base.display())]
    NoProgram {
        program: String,
        base: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "failed to find the bot's script {script:?}: no such file in {} (the folder \
         the command's relative paths are read from)",
        base.display()
    )]
    NoScript { script: String, base: PathBuf },
    #[error(
        "failed to find the program {program:?} on the bots' PATH ({path}); \
         give its path, or set the bots' PATH with --bot-env PATH=..."
    )]
    NotOnPath { program: String, path: String },
    /// The referee's own executable, which runs the built-in bots.
    #[error("failed to find the referee's own executable for built-in bots: {0}")]
    NoOwnExecutable(std::io::Error),
    #[error("failed to find the bot's directory {}: {error}", dir.display())]
    NoDirectory { dir: PathBuf, error: std::io::Error },
    #[error("the bot's directory {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error(transparent)]
    LinkLeavesFolder(Box<LinkOut>),
    /// In-process and human seats are the referee's own code: no command.
    #[error("inproc:{0} runs inside the referee and has no command")]
    InProcess(String),
    #[error("a human seat runs inside the referee")]
    Human,
    #[error("remote:{0} runs on another machine and has no command here")]
    Remote(String),
    /// The referee's working directory, against which the command is read.
    #[error("{0}")]
    WorkingDirectory(std::io::Error),
}

/// A path argument that passes through a link out of the bot's folder.
#[derive(Debug, thiserror::Error)]
#[error(
    "the argument {argument:?} passes through the link {} (to {}), which leads out of {} \
     into {}: a bot is shown its own folder ({}) and no other; copy what it needs into \
     its folder, or if the link is yours, give the path it leads to",
    link.display(),
    written.display(),
    holder.display(),
    target.display(),
    dir.display()
)]
pub struct LinkOut {
    pub argument: String,
    /// The link, where it was found (its folder with links resolved).
    pub link: PathBuf,
    /// What the link says (`../bob`).
    pub written: PathBuf,
    /// The folder holding the link.
    pub holder: PathBuf,
    /// Where it leads, links resolved.
    pub target: PathBuf,
    /// The bot's directory.
    pub dir: PathBuf,
}

impl LaunchError {
    /// Whether the program (or the bot's directory) is missing: what the user
    /// fixes by giving the right path, rather than a program that fails to run.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            LaunchError::NoProgram { .. }
                | LaunchError::NoScript { .. }
                | LaunchError::NotOnPath { .. }
                | LaunchError::NoOwnExecutable(_)
                | LaunchError::NoDirectory { .. }
        )
    }
}

impl Launch {
    /// Resolves `argv` (as the user wrote it, relative to `base`, the referee's
    /// working directory) with `path` as the search path for a bare program name.
    pub fn resolve(argv: &[String], base: &Path, path: &str) -> Result<Launch, LaunchError> {
        Launch::resolve_with(argv, base, path, None)
    }

    /// Resolves `argv` as typed in `dir` (a tournament entrant's own `dir`,
    /// canonical), which is the bot's directory whatever the command names.
    pub fn resolve_in(argv: &[String], dir: &Path, path: &str) -> Result<Launch, LaunchError> {
        Launch::resolve_with(argv, dir, path, Some(dir.to_owned()))
    }

    fn resolve_with(
        argv: &[String],
        base: &Path,
        path: &str,
        dir: Option<PathBuf>,
    ) -> Result<Launch, LaunchError> {
        let (written_program, args) = argv.split_first().ok_or(LaunchError::Empty)?;
        let (program, invoked) = program(written_program, base, path)?;
        if let Some(script) = script(args) {
            if file_argument(base, script).is_none() {
                return Err(LaunchError::NoScript {
                    script: script.to_owned(),
                    base: base.to_owned(),
                });
            }
        }
        let paths: Vec<(&String, Option<PathBuf>)> =
            args.iter().map(|a| (a, file_argument(base, a))).collect();
        let dir = match (dir, paths.iter().find(|(_, abs)| abs.is_some())) {
            (Some(dir), _) => dir,
            (None, Some((first, _))) => named_folder(&base.join(first))?,
            (None, None) if has_folder(written_program) => {
                named_folder(&base.join(written_program))?
            }
            (None, None) => parent(&program),
        };
        for (a, _) in paths.iter().filter(|(_, abs)| abs.is_some()) {
            check_links(a, &base.join(a), base, &dir)?;
        }
        let args = paths
            .into_iter()
            .map(|(a, abs)| abs.map_or_else(|| OsString::from(a), PathBuf::into_os_string))
            .collect();
        Ok(Launch {
            program,
            args,
            dir,
            scratch: None,
            slot: None,
            invoked,
        })
    }
}

/// The program, absolute and canonical: `written` made absolute from `base`
/// if it holds a `/`, else looked up on `path`; and, where that named a
/// link, the link's own path (see [`Launch::invoked`]).
fn program(
    written: &str,
    base: &Path,
    path: &str,
) -> Result<(PathBuf, Option<PathBuf>), LaunchError> {
    let named = if has_folder(written) {
        base.join(written)
    } else {
        on_path(written, path).ok_or_else(|| LaunchError::NotOnPath {
            program: written.to_owned(),
            path: path.to_owned(),
        })?
    };
    let program = std::fs::canonicalize(&named).map_err(|error| LaunchError::NoProgram {
        program: written.to_owned(),
        base: base.to_owned(),
        error,
    })?;
    let link = std::fs::symlink_metadata(&named).is_ok_and(|m| m.file_type().is_symlink());
    let invoked = match (link, named.parent(), named.file_name()) {
        (true, Some(folder), Some(name)) => {
            std::fs::canonicalize(folder).ok().map(|f| f.join(name))
        }
        _ => None,
    };
    Ok((program, invoked))
}

/// The folder `written` names as a bot's, canonical: `written` itself if it
/// is a folder (and not a link to one), else the folder holding it, both read
/// as written (`a/b/..` is `a`). Links in that folder's own path are followed
/// (and checked by [`check_links`]); a link at its end is not.
fn named_folder(written: &Path) -> Result<PathBuf, LaunchError> {
    let written = lexical(written);
    let folder = match std::fs::symlink_metadata(&written) {
        Ok(m) if m.is_dir() => written,
        _ => parent(&written),
    };
    let dir = std::fs::canonicalize(&folder).map_err(|error| LaunchError::NoDirectory {
        dir: folder.clone(),
        error,
    })?;
    match dir.is_dir() {
        true => Ok(dir),
        false => Err(LaunchError::NotADirectory(dir)),
    }
}

/// `p` (absolute) with `.` dropped and each `..` taking away the name before
/// it, without reading the file system.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Follows `written` (absolute: the argument `argument` read from `base`) as
/// the kernel would, one name at a time, and refuses it at the first link
/// that lies in `base` or below, or in the bot's directory `dir`, and leads
/// out of the folder holding it, unless link and target both lie in `dir`.
fn check_links(argument: &str, written: &Path, base: &Path, dir: &Path) -> Result<(), LaunchError> {
    let mut at = PathBuf::from("/");
    for c in written.components() {
        let name = match c {
            Component::Normal(name) => name,
            Component::ParentDir => {
                at.pop();
                continue;
            }
            Component::RootDir | Component::Prefix(_) => {
                at = PathBuf::from("/");
                continue;
            }
            Component::CurDir => continue,
        };
        let next = at.join(name);
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            at = next;
            continue;
        }
        // A dangling link names no file: the argument is then a word.
        let Ok(target) = std::fs::canonicalize(&next) else {
            return Ok(());
        };
        let watched = at.starts_with(base) || at.starts_with(dir);
        let inside = target.starts_with(&at) || (at.starts_with(dir) && target.starts_with(dir));
        if watched && !inside {
            return Err(LaunchError::LinkLeavesFolder(Box::new(LinkOut {
                argument: argument.to_owned(),
                written: std::fs::read_link(&next).unwrap_or_default(),
                link: next,
                holder: at,
                target,
                dir: dir.to_owned(),
            })));
        }
        at = target;
    }
    Ok(())
}

/// Whether `written` names a folder, not a bare program name: it holds a
/// path separator of this OS (`/`; on Windows `\` too).
fn has_folder(written: &str) -> bool {
    written.chars().any(std::path::is_separator)
}

/// `arg` made absolute if it names an existing file or directory and looks like a
/// path rather than a word (`hang` stays a word even if a file of that name exists).
fn file_argument(base: &Path, arg: &str) -> Option<PathBuf> {
    if arg.starts_with('-') || !(has_folder(arg) || arg.contains('.')) {
        return None;
    }
    std::fs::canonicalize(base.join(arg)).ok()
}

/// Flags whose value is code or a module, not a file (`sh -c`, `python3 -m`,
/// `node -e`, `ruby -r`).
const CODE_FLAGS: [&str; 9] = [
    "-c",
    "-e",
    "-m",
    "-p",
    "-r",
    "--eval",
    "--print",
    "--require",
    "--command",
];

/// Extensions of the scripts interpreters run.
const SCRIPT_EXTENSIONS: [&str; 18] = [
    "py", "js", "mjs", "cjs", "ts", "rb", "pl", "php", "lua", "jar", "sh", "bash", "r", "jl",
    "exs", "dart", "kts", "go",
];

/// The interpreter's script among `args`, if the first argument that is not a
/// flag (nor a flag's code) is a plain file name with a script's extension:
/// `python3 -u my_bot.py` names `my_bot.py`; `sh -c '...'`, `python3 -m pkg.bot`
/// and `./bot data.txt` name none.
fn script(args: &[String]) -> Option<&str> {
    let mut previous: Option<&str> = None;
    for arg in args {
        let is_code = previous.is_some_and(|p| CODE_FLAGS.contains(&p));
        if is_code {
            return None;
        }
        if !arg.starts_with('-') {
            let plain =
                !arg.contains(|c: char| c.is_whitespace() || "=;$'\"|&<>()*?{}".contains(c));
            let ext = Path::new(arg).extension().and_then(|e| e.to_str());
            let scripted =
                ext.is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
            return (plain && scripted).then_some(arg.as_str());
        }
        previous = Some(arg);
    }
    None
}

fn parent(p: &Path) -> PathBuf {
    p.parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

/// `name` looked up in `path`'s folders, made canonical.
pub fn find_on_path(name: &str, path: &str) -> Option<PathBuf> {
    on_path(name, path).and_then(|p| std::fs::canonicalize(p).ok())
}

/// The first program `name` in `path`'s folders, as found there (a link
/// not followed): this OS's rules (`files::on_path`).
fn on_path(name: &str, path: &str) -> Option<PathBuf> {
    super::imp::files::on_path(name, path)
}

// Unix paths, modes and symlinks.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_script_makes_its_directory_the_bots_and_becomes_absolute() {
        let root = tempfile::tempdir().unwrap();
        let bot_dir = root.path().join("bot");
        std::fs::create_dir(&bot_dir).unwrap();
        std::fs::write(bot_dir.join("bot.py"), "").unwrap();
        std::fs::write(root.path().join("hang"), "").unwrap();
        let got = Launch::resolve(
            &words(&["sh", "bot/bot.py", "hang", "-x"]),
            root.path(),
            "/nonexistent:/usr/bin:/bin",
        )
        .unwrap();
        let bot_dir = std::fs::canonicalize(bot_dir).unwrap();
        assert_eq!(got.dir, bot_dir);
        assert_eq!(
            got.args,
            [
                bot_dir.join("bot.py").into_os_string(),
                "hang".into(),
                "-x".into()
            ]
        );
        assert!(got.program.is_absolute(), "{got:?}");
        assert_eq!(got.program, std::fs::canonicalize("/bin/sh").unwrap());
    }

    #[test]
    fn a_compiled_bot_runs_in_its_own_directory_and_a_missing_program_says_where_it_looked() {
        let got = Launch::resolve(&words(&["/bin/sh", "-c", "true"]), Path::new("/"), "").unwrap();
        assert_eq!(got.dir, got.program.parent().unwrap());
        let err = Launch::resolve(&words(&["no-such-bot-xyz"]), Path::new("/"), "/nonexistent")
            .unwrap_err();
        assert!(err.is_not_found(), "{err}");
        let err = err.to_string();
        assert!(
            err.contains("no-such-bot-xyz") && err.contains("/nonexistent"),
            "{err}"
        );
        let empty = Launch::resolve(&[], Path::new("/"), "").unwrap_err();
        assert!(
            !empty.is_not_found(),
            "an empty command is not a missing program"
        );
    }

    #[test]
    fn a_missing_script_is_named_with_its_folder_and_code_or_a_module_is_no_script() {
        let root = tempfile::tempdir().unwrap();
        let err = Launch::resolve(
            &words(&["sh", "-x", "my_bot.py"]),
            root.path(),
            "/bin:/usr/bin",
        )
        .unwrap_err();
        assert!(err.is_not_found(), "{err}");
        let said = err.to_string();
        assert!(
            said.contains("script \"my_bot.py\": no such file in")
                && said.contains(&root.path().display().to_string()),
            "{said}"
        );
        // Code, a module, a compiled bot's data file: none is a script.
        for argv in [
            &["sh", "-c", "exec python3 bot.py"][..],
            &["sh", "-e", "x.py"][..],
            &["python3", "-m", "pkg.bot"][..],
            &["sh", "data.txt", "x.py"][..],
            &["sh", "KEY=x.py"][..],
        ] {
            assert!(
                Launch::resolve(&words(argv), root.path(), "/bin:/usr/bin").is_ok(),
                "{argv:?}"
            );
        }
    }

    /// Two entrants' folders side by side, as handed to the organiser: `alice`
    /// holds `run`, `bot.py`, and whatever links a test adds; `bob` holds his
    /// code.
    fn two_entrants() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let (alice, bob) = (base.join("alice"), base.join("bob"));
        for d in [&alice, &bob, &alice.join("v1")] {
            std::fs::create_dir(d).unwrap();
        }
        for f in [
            alice.join("run"),
            alice.join("bot.py"),
            alice.join("v1/model"),
            bob.join("bot.py"),
        ] {
            std::fs::write(f, "").unwrap();
        }
        (root, alice, bob)
    }

    fn link(target: &str, at: &Path) {
        std::os::unix::fs::symlink(target, at).unwrap();
    }

    #[test]
    fn a_link_out_of_the_bots_folder_is_refused_naming_it_and_never_becomes_its_directory() {
        let (root, alice, _bob) = two_entrants();
        let base = alice.parent().unwrap();
        link("../bob", &alice.join("weights"));
        std::fs::create_dir(alice.join("v2")).unwrap();
        link("../../bob", &alice.join("v2/sub"));
        // `weights` at the argument's end, `sub` inside it, `weights/..`
        // (which the kernel reads as bob's parent), or the entrant's own
        // `dir`: each is refused, naming the link and where it leads.
        for (argv, at) in [
            (&["alice/run", "alice/weights"][..], "alice/weights"),
            (&["sh", "alice/v2/sub/bot.py"][..], "alice/v2/sub"),
            (&["alice/run", "alice/weights/.."][..], "alice/weights"),
            (
                &["alice/run", "alice/bot.py", "alice/weights"][..],
                "alice/weights",
            ),
        ] {
            let err = Launch::resolve(&words(argv), base, "/bin:/usr/bin").unwrap_err();
            let said = err.to_string();
            assert!(
                matches!(&err, LaunchError::LinkLeavesFolder(out) if out.link == base.join(at)),
                "{argv:?}: {said}"
            );
            assert!(
                said.contains("../bob") && said.contains(&base.join("bob").display().to_string()),
                "{said}"
            );
            assert!(!err.is_not_found(), "{said}");
        }
        let err = Launch::resolve_in(&words(&["./run", "./weights"]), &alice, "").unwrap_err();
        assert!(matches!(err, LaunchError::LinkLeavesFolder(_)), "{err}");
        drop(root);
    }

    #[test]
    fn links_that_stay_in_the_bots_folder_are_followed_and_a_linked_program_runs_in_the_folder_named(
    ) {
        let (_root, alice, bob) = two_entrants();
        let base = alice.parent().unwrap();
        std::fs::create_dir(alice.join("v2")).unwrap();
        link("../v1/model", &alice.join("v2/model"));
        link("v1", &alice.join("current"));
        let got = Launch::resolve(
            &words(&[
                "alice/run",
                "alice/bot.py",
                "alice/v2/model",
                "alice/current",
            ]),
            base,
            "",
        )
        .unwrap();
        assert_eq!(got.dir, alice);
        assert_eq!(got.args[1], alice.join("v1/model").into_os_string());
        // The first argument a link to a folder of its own: the folder
        // holding the link is the bot's, not the folder it leads to.
        let got = Launch::resolve(&words(&["alice/run", "alice/current"]), base, "").unwrap();
        assert_eq!(got.dir, alice);
        // A program that is a link: it runs in the folder it was named in.
        link("../bob/bot.py", &alice.join("linked"));
        let got = Launch::resolve(&words(&["alice/linked"]), base, "").unwrap();
        assert_eq!((got.dir, got.program), (alice.clone(), bob.join("bot.py")));
        // A folder the organiser names by a path through `..` is the one named.
        let got = Launch::resolve(
            &words(&["sh", "alice/../bob/bot.py"]),
            base,
            "/bin:/usr/bin",
        )
        .unwrap();
        assert_eq!(got.dir, bob);
    }
}
