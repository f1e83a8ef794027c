//! A Python bot with packages of its own (issue 45): sandboxed, by the one
//! recipe the docs give (a plain virtual environment inside the bot's
//! folder, made from the system's Python), it imports them; an environment
//! a sandbox cannot run is refused before any bot starts, saying how; and a
//! bot that exits before `hello` is reported as exited, with its status and
//! the end of its stderr, sandboxed or not. (Unsandboxed, any plain
//! environment works: `play::a_bot_run_by_a_virtual_environments_python_…`.)

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{play, root, stderr};

/// The system's Python, which a sandbox shows, and the docs' recipe names.
const SYSTEM_PYTHON: &str = "/usr/bin/python3";

/// Whether this host has [`SYSTEM_PYTHON`] (says so loudly if not).
fn has_system_python() -> bool {
    let there = Path::new(SYSTEM_PYTHON).is_file();
    if !there {
        crate::support::skip("no /usr/bin/python3, the Python the recipe names");
    }
    there
}

/// A folder every user can reach (a root referee runs sandboxed bots as
/// users of their own), holding `bot/`, the bot's folder.
fn place() -> (tempfile::TempDir, PathBuf) {
    let place = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(place.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bot = place.path().canonicalize().unwrap().join("bot");
    std::fs::create_dir(&bot).unwrap();
    (place, bot)
}

/// A plain virtual environment at `venv` made by `python` (its
/// `bin/python` a link), holding one package of its own, `venv_probe`.
fn environment(python: &str, venv: &Path) {
    let made = std::process::Command::new(python)
        .args(["-m", "venv", "--without-pip"])
        .arg(venv)
        .status()
        .unwrap();
    assert!(made.success());
    let link = std::fs::symlink_metadata(venv.join("bin/python")).unwrap();
    assert!(link.file_type().is_symlink());
    let lib = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .expect("lib/python3.*")
        .path();
    std::fs::write(
        lib.join("site-packages/venv_probe.py"),
        "WHERE = __file__\n",
    )
    .unwrap();
}

/// In `bot`: `sample.py` (the sample bot, with its kit) and `with_package.py`,
/// which imports the environment's package, then plays as the sample bot.
fn bot_files(bot: &Path) -> PathBuf {
    let sample = root().join("sample-bots/python");
    std::fs::copy(sample.join("bot.py"), bot.join("sample.py")).unwrap();
    std::fs::copy(sample.join("schmier_kit.py"), bot.join("schmier_kit.py")).unwrap();
    let script = bot.join("with_package.py");
    std::fs::write(
        &script,
        "import os, runpy, sys\nimport venv_probe\nprint('venv_probe from', venv_probe.WHERE, file=sys.stderr)\nrunpy.run_path(os.path.join(os.path.dirname(__file__), 'sample.py'), run_name='__main__')\n",
    )
    .unwrap();
    script
}

/// The recipe: `/usr/bin/python3 -m venv BOT/.venv`, the command naming
/// `BOT/.venv/bin/python`. Sandboxed, the bot imports the environment's
/// package and plays a game without a fault (it died on the import when
/// the sandbox ran the link's target, the base interpreter).
#[test]
fn a_sandboxed_bot_imports_the_packages_of_a_plain_environment_in_its_folder() {
    if !has_system_python() {
        return;
    }
    let (_place, bot) = place();
    environment(SYSTEM_PYTHON, &bot.join(".venv"));
    let script = bot_files(&bot);
    let command = format!(
        "{} {}",
        bot.join(".venv/bin/python").display(),
        script.display()
    );
    let done = play()
        .seed(3)
        .args(["--sandbox"])
        .team(&command)
        .team("inproc:heuristic")
        .team("inproc:random")
        .run();
    assert!(done.output.status.success(), "{}", stderr(&done.output));
    let lines = done.lines(1);
    let faults: Vec<_> = lines.iter().filter(|l| l["type"] == "fault").collect();
    assert!(faults.is_empty(), "{faults:?}");
    assert!(done.text(1).contains("\"result\""));
    let log = std::fs::read_to_string(done.dir.join("stderr/player0.log")).unwrap();
    let inside = bot.join(".venv/lib");
    assert!(
        log.contains(&format!("venv_probe from {}", inside.display())),
        "{log}"
    );
}

/// An environment outside the bot's folder (the sandbox does not show it),
/// and one made from an interpreter the sandbox does not show (its
/// `pyvenv.cfg`'s `home`, as pyenv's): refused before any bot starts,
/// exit 2, naming the environment and the recipe.
#[test]
fn an_environment_a_sandbox_cannot_run_is_refused_saying_how_to_make_one() {
    if !has_system_python() {
        return;
    }
    let (place, bot) = place();
    let script = bot_files(&bot);
    let outside = place.path().canonicalize().unwrap().join("v");
    environment(SYSTEM_PYTHON, &outside);
    let inside = bot.join(".venv");
    environment(SYSTEM_PYTHON, &inside);
    let cfg = std::fs::read_to_string(inside.join("pyvenv.cfg")).unwrap();
    let elsewhere = place.path().join("pyenv/versions/3.11.7/bin");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let cfg = cfg.replace(
        "home = /usr/bin",
        &format!("home = {}", elsewhere.display()),
    );
    assert!(cfg.contains("pyenv/versions"), "{cfg}");
    std::fs::write(inside.join("pyvenv.cfg"), cfg).unwrap();
    let recipe = format!("/usr/bin/python3 -m venv {}/.venv", bot.display());
    let cases = [
        (outside.clone(), "outside the bot's folder", recipe.clone()),
        (
            inside.clone(),
            "which a sandbox does not show",
            "/usr/bin/python3 -m venv".to_owned(),
        ),
    ];
    for (venv, why, how) in cases {
        let command = format!("{} {}", venv.join("bin/python").display(), script.display());
        let done = play()
            .seed(3)
            .args(["--sandbox"])
            .team(&command)
            .team("inproc:heuristic")
            .team("inproc:random")
            .run();
        let err = stderr(&done.output);
        assert_eq!(done.output.status.code(), Some(2), "{err}");
        assert!(err.contains(&venv.display().to_string()), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(err.contains(&how), "{err}");
        assert!(!done.transcript(1).exists(), "no game is played");
    }
}

/// A bot that dies on an import, sandboxed and not: the console says it
/// exited before hello, with its status and the end of its stderr (the
/// traceback's last line), not that it stopped reading its stdin.
#[test]
fn a_bot_that_exits_before_hello_is_reported_with_its_status_and_stderr() {
    let (_place, bot) = place();
    let script = bot.join("dies.py");
    std::fs::write(&script, "import sys\nimport schmier_no_such_module\n").unwrap();
    for sandbox in [false, true] {
        let command = format!("python3 {}", script.display());
        let mut run = (play().seed(3).team(&command))
            .team("inproc:heuristic")
            .team("inproc:random");
        if sandbox {
            run = run.args(["--sandbox"]);
        }
        let done = run.run();
        let err = stderr(&done.output);
        assert!(!done.output.status.success(), "{err}");
        assert!(
            err.contains("failed to start: exited before hello: exit status: 1"),
            "sandboxed {sandbox}: {err}"
        );
        assert!(
            err.contains("ModuleNotFoundError: No module named 'schmier_no_such_module'"),
            "sandboxed {sandbox}: {err}"
        );
        assert!(!err.contains("not reading its stdin"), "{err}");
    }
}
