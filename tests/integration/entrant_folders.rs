//! What an entrant hands the organiser is a folder, and its bot sees that
//! folder and no other: a link planted in it (`weights -> ../bob`) never makes
//! another entrant's folder the bot's directory. The entrants are real
//! processes: `ALICE/run` lists the folder it runs in to its stderr log, reads
//! `notes.txt` there, then plays as the sample Python bot.

use std::path::{Path, PathBuf};

use crate::support::{refused, root, scratch, succeeds, REFEREE};

/// Two entrants' folders side by side in `base`: `alice` (a `run` script and
/// a `v1` folder) and `bob` (his `bot.py` and `notes.txt`).
fn two_folders(base: &Path) -> PathBuf {
    let (alice, bob) = (base.join("ALICE"), base.join("bob"));
    for d in [&alice.join("v1"), &bob] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(bob.join("bot.py"), "# bob's secret strategy\n").unwrap();
    std::fs::write(bob.join("notes.txt"), "BOBS-NOTES\n").unwrap();
    std::fs::write(alice.join("v1/model"), "alice's model\n").unwrap();
    let bot = root().join("sample-bots/python/bot.py");
    let run = alice.join("run");
    std::fs::write(
        &run,
        format!(
            "#!/bin/sh\n\
             touch \"{mark}\"\n\
             echo \"RAN IN $(pwd): $(ls | tr '\\n' ' ')\" >&2\n\
             cat notes.txt >&2 2>/dev/null\n\
             exec python3 {bot}\n",
            mark = base.join("alice-ran").display(),
            bot = bot.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
    alice
}

/// `referee tournament` in `base` with `alice=COMMAND` and two built-in
/// entrants, one set, into `base/out`.
fn tournament(base: &Path, alice: &str) -> std::process::Command {
    let mut c = std::process::Command::new(REFEREE);
    c.current_dir(base)
        .args([
            "tournament",
            "--jobs",
            "1",
            "--seed",
            "5",
            "--sets",
            "1",
            "-q",
        ])
        .args(["--entrant", &format!("alice={alice}")])
        .args([
            "--entrant",
            "b=builtin:random",
            "--entrant",
            "c=builtin:random",
        ])
        .args(["--out", "out"]);
    c
}

/// Every stderr log under `dir`, concatenated.
fn logs(dir: &Path) -> String {
    let mut text = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            text += &logs(&p);
        } else if p.extension().is_some_and(|x| x == "log") {
            text += &std::fs::read_to_string(&p).unwrap_or_default();
        }
    }
    text
}

#[test]
fn a_link_out_of_an_entrants_folder_is_refused_naming_it_and_bobs_folder_is_never_shown() {
    let base = scratch("entrant-folders", "linked");
    std::fs::create_dir_all(&base).unwrap();
    let base = base.canonicalize().unwrap();
    let alice = two_folders(&base);
    std::os::unix::fs::symlink("../bob", alice.join("weights")).unwrap();
    let err = refused(&mut tournament(&base, "ALICE/run ALICE/weights"));
    let link = alice.join("weights");
    assert!(
        err.contains(&format!("the link {} (to ../bob)", link.display()))
            && err.contains(&base.join("bob").display().to_string()),
        "the refusal names the link and where it leads: {err}"
    );
    assert!(err.contains("alice"), "and the entrant: {err}");
    assert!(
        !base.join("alice-ran").exists(),
        "alice's program never ran"
    );
    assert!(!logs(&base.join("out")).contains("BOBS-NOTES"));
    // The same through the entrant's own `dir` (a tournament file's `dir`).
    let err = refused(
        tournament(&base, "./run ./weights")
            .args(["--entrant-dir", &format!("alice={}", alice.display())]),
    );
    assert!(err.contains("(to ../bob)"), "{err}");
    assert!(!base.join("alice-ran").exists());
}

#[test]
fn a_link_that_stays_in_the_entrants_folder_plays_and_the_bot_sees_only_that_folder() {
    let base = scratch("entrant-folders", "inside");
    std::fs::create_dir_all(&base).unwrap();
    let base = base.canonicalize().unwrap();
    let alice = two_folders(&base);
    // A link to a folder of alice's own: followed, and the bot runs in the
    // folder holding it (as written), not in `v1`.
    std::os::unix::fs::symlink("v1", alice.join("weights")).unwrap();
    succeeds(&mut tournament(&base, "ALICE/run ALICE/weights"));
    let said = logs(&base.join("out"));
    let want = format!("RAN IN {}: run v1 weights", alice.display());
    let ran = said.lines().filter(|l| l.starts_with("RAN IN")).count();
    assert!(
        ran > 0,
        "alice's program ran and listed its folder:\n{said}"
    );
    assert_eq!(
        said.lines().filter(|l| l.trim_end() == want).count(),
        ran,
        "every process of alice's ran in her folder ({want}):\n{said}"
    );
    assert!(!said.contains("BOBS-NOTES"), "{said}");
}
