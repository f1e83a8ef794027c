//! A Python virtual environment as a sandboxed bot's program (issue 45).
//!
//! `python3 -m venv v` makes `v/bin/python` a link to the base interpreter
//! and writes `v/pyvenv.cfg`, whose `home =` names the base interpreter's
//! folder. Python finds its environment by the path it was started by: a
//! `pyvenv.cfg` in that path's folder or the one above; it then reads its
//! standard library beside `home`. So a sandboxed bot runs in its
//! environment only where the sandbox shows all three: the path it is
//! started by (`Launch::invoked_in_dir`), the environment, and `home`.
//!
//! The sandbox shows a bot its own folder and the system's interpreters
//! (`view.rs`), and never more for an environment's sake: `pyvenv.cfg` is
//! the entrant's file, and a folder it names is not the organiser's choice
//! to show. So the one recipe is an environment inside the bot's folder,
//! made from an interpreter the sandbox shows (`/usr/bin/python3 -m venv
//! BOT/.venv`); any other environment is refused before a bot starts,
//! saying how to make one that works, rather than failing in the bot with
//! `ModuleNotFoundError` (or without its standard library).

use std::path::{Path, PathBuf};

use super::view::shown_as_system;
use crate::os::Launch;

/// Why a sandbox cannot run a bot's virtual environment.
#[derive(Debug, thiserror::Error)]
pub enum VenvError {
    #[error(
        "its program {} is the Python of the virtual environment {}, outside the bot's \
         folder {}: a sandbox shows the bot its own folder and not the environment, so the \
         bot would not find its packages. Make the environment inside the bot's folder \
         from the system's Python (`/usr/bin/python3 -m venv {}/.venv`, then install the \
         packages with {}/.venv/bin/pip) and name {}/.venv/bin/python in the command",
        program.display(), venv.display(), dir.display(), dir.display(), dir.display(),
        dir.display()
    )]
    Outside {
        program: PathBuf,
        venv: PathBuf,
        dir: PathBuf,
    },
    #[error(
        "its program {} is the Python of the virtual environment {}, made from the \
         interpreter in {} (its pyvenv.cfg's `home`), which a sandbox does not show \
         (pyenv, a Python under $HOME or /opt): the bot would start without its standard \
         library. Make the environment from the system's Python instead (`/usr/bin/python3 \
         -m venv {}`), or from an interpreter inside the bot's folder",
        program.display(), venv.display(), home.display(), venv.display()
    )]
    Home {
        program: PathBuf,
        venv: PathBuf,
        home: PathBuf,
    },
}

/// Refuses a bot whose program is the Python of a virtual environment a
/// sandbox cannot run: one outside the bot's folder, or made from an
/// interpreter the sandbox does not show. A program in no environment
/// passes.
pub fn check(launch: &Launch) -> Result<(), VenvError> {
    let named = launch.invoked();
    let Some(venv) = environment_of(named) else {
        return Ok(());
    };
    let program = named.to_path_buf();
    if !venv.starts_with(&launch.dir) {
        return Err(VenvError::Outside {
            program,
            venv,
            dir: launch.dir.clone(),
        });
    }
    let home = home(&venv).unwrap_or_else(|| {
        let program = &launch.program;
        program.parent().unwrap_or(program).to_path_buf()
    });
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    if shown_as_system(&home) || home.starts_with(&launch.dir) {
        return Ok(());
    }
    Err(VenvError::Home {
        program,
        venv,
        home,
    })
}

/// The virtual environment a Python started by `named` runs in: the folder
/// of `named`, or the one above it, whichever holds a `pyvenv.cfg` (as
/// Python looks for it).
fn environment_of(named: &Path) -> Option<PathBuf> {
    let bin = named.parent()?;
    [Some(bin), bin.parent()]
        .into_iter()
        .flatten()
        .find(|d| d.join("pyvenv.cfg").is_file())
        .map(Path::to_path_buf)
}

/// The most of a `pyvenv.cfg` read (Python's own is a few lines; this one
/// is the entrant's file).
const CFG_BYTES: u64 = 64 << 10;

/// The `home` an environment's `pyvenv.cfg` names, if it names one.
fn home(venv: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let file = std::fs::File::open(venv.join("pyvenv.cfg")).ok()?;
    let mut cfg = String::new();
    file.take(CFG_BYTES).read_to_string(&mut cfg).ok()?;
    cfg.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(program: &Path, invoked: Option<PathBuf>, dir: &Path) -> Launch {
        Launch {
            program: program.to_path_buf(),
            args: Vec::new(),
            dir: dir.to_path_buf(),
            scratch: None,
            slot: None,
            invoked,
        }
    }

    /// A folder holding `bot/` and an environment at `at` (relative to
    /// it) whose `pyvenv.cfg` says `home`; returns (folder, bot, python).
    fn environment(at: &str, home: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let place = tempfile::tempdir().unwrap();
        let root = place.path().canonicalize().unwrap();
        let bot = root.join("bot");
        let venv = root.join(at);
        std::fs::create_dir_all(&bot).unwrap();
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        let cfg = format!("home = {home}\ninclude-system-site-packages = false\n");
        std::fs::write(venv.join("pyvenv.cfg"), cfg).unwrap();
        (place, bot, venv.join("bin/python"))
    }

    #[test]
    fn an_environment_in_the_bots_folder_from_the_systems_python_passes() {
        let (_place, bot, python) = environment("bot/.venv", "/usr/bin");
        let l = launch(Path::new("/usr/bin/python3.11"), Some(python), &bot);
        check(&l).unwrap();
        assert_eq!(l.invoked_in_dir(), l.invoked());
    }

    #[test]
    fn an_environment_outside_the_bots_folder_is_refused_with_the_recipe() {
        let (_place, bot, python) = environment("v", "/usr/bin");
        let l = launch(Path::new("/usr/bin/python3.11"), Some(python), &bot);
        let e = check(&l).unwrap_err().to_string();
        assert!(e.contains("outside the bot's folder"), "{e}");
        assert!(
            e.contains(&format!("/usr/bin/python3 -m venv {}/.venv", bot.display())),
            "{e}"
        );
        // Not run by the link the sandbox would not show.
        assert_eq!(l.invoked_in_dir(), Path::new("/usr/bin/python3.11"));
    }

    #[test]
    fn an_environment_made_from_an_interpreter_the_sandbox_does_not_show_is_refused() {
        let (_place, bot, python) = environment("bot/.venv", "/opt/pyenv-like/3.11/bin");
        let l = launch(
            Path::new("/opt/pyenv-like/3.11/bin/python3.11"),
            Some(python),
            &bot,
        );
        let e = check(&l).unwrap_err().to_string();
        assert!(e.contains("/opt/pyenv-like/3.11/bin"), "{e}");
        assert!(e.contains("does not show"), "{e}");
    }

    #[test]
    fn a_program_in_no_environment_passes() {
        let place = tempfile::tempdir().unwrap();
        let l = launch(Path::new("/usr/bin/python3.11"), None, place.path());
        check(&l).unwrap();
    }
}
