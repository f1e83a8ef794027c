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
//! - the bot's directory is that of the first such file argument (the script of an
//!   interpreted bot), else that of the program (a compiled bot);
//! - a script that names no file (`python3 my_bot.py` in the wrong folder) is an
//!   error naming the folder it was looked up in, before anything starts: else
//!   the interpreter, run in the program's folder, would report a path there
//!   (`can't open file '/usr/bin/my_bot.py'`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The `PATH` bots get unless `--bot-env PATH=...` says otherwise. A constant, so
/// nothing of the referee's environment reaches a bot.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

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
    #[error("failed to find the referee's own executable: {0}")]
    OwnExecutableGone(std::io::Error),
    #[error("failed to find the bot's directory {}: {error}", dir.display())]
    NoDirectory { dir: PathBuf, error: std::io::Error },
    #[error("the bot's directory {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
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
                | LaunchError::OwnExecutableGone(_)
                | LaunchError::NoDirectory { .. }
        )
    }
}

impl Launch {
    /// Resolves `argv` (as the user wrote it, relative to `base`, the referee's
    /// working directory) with `path` as the search path for a bare program name.
    pub fn resolve(argv: &[String], base: &Path, path: &str) -> Result<Launch, LaunchError> {
        let (program, args) = argv.split_first().ok_or(LaunchError::Empty)?;
        let program = if program.contains('/') {
            std::fs::canonicalize(base.join(program)).map_err(|error| LaunchError::NoProgram {
                program: program.clone(),
                base: base.to_owned(),
                error,
            })?
        } else {
            find_on_path(program, path).ok_or_else(|| LaunchError::NotOnPath {
                program: program.clone(),
                path: path.to_owned(),
            })?
        };
        if let Some(script) = script(args) {
            if file_argument(base, script).is_none() {
                return Err(LaunchError::NoScript {
                    script: script.to_owned(),
                    base: base.to_owned(),
                });
            }
        }
        let mut dir = None;
        let args = args
            .iter()
            .map(|a| match file_argument(base, a) {
                Some(abs) => {
                    if dir.is_none() {
                        dir = Some(if abs.is_dir() {
                            abs.clone()
                        } else {
                            parent(&abs)
                        });
                    }
                    abs.into_os_string()
                }
                None => OsString::from(a),
            })
            .collect();
        let dir = dir.unwrap_or_else(|| parent(&program));
        Ok(Launch {
            program,
            args,
            dir,
            scratch: None,
            slot: None,
        })
    }
}

/// `arg` made absolute if it names an existing file or directory and looks like a
/// path rather than a word (`hang` stays a word even if a file of that name exists).
fn file_argument(base: &Path, arg: &str) -> Option<PathBuf> {
    if arg.starts_with('-') || !(arg.contains('/') || arg.contains('.')) {
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

pub(crate) fn find_on_path(name: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .and_then(|p| std::fs::canonicalize(p).ok())
}

#[cfg(test)]
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
}
