//! The dentry cache as a store between the games of a duplicate set (issue 28).
//! A sandboxed bot sees `/usr/bin` and the other system directories bound
//! read-only from the host: the same filesystem, so a name it looks up there
//! that does not exist leaves a negative dentry in the host's cache, which a
//! bot of a later game finds. `tests/spy/spy.py remember-dentries` leaves
//! each hand it is dealt under its place and deal (a fixed name set,
//! `tests/spy/dentries.py`) and claims every opponent's hand an earlier game
//! left; `remember-dentries-timed` reads by timing `stat` instead of asking
//! the kernel. Claims are checked against the transcripts.

use crate::spy_sets::{duplicate_set, duplicate_set_env, Set};

/// Whether the host's dentry cache holds `path`'s lookup, asked as the
/// noiseless spy asks (`openat2` with `RESOLVE_CACHED`, which looks nothing
/// up): `Some(true)` for a cached negative (or positive) dentry, `Some(false)`
/// for a name nobody looked up, `None` where the kernel has no `openat2`.
fn cached(path: &str) -> Option<bool> {
    use nix::libc;
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_CACHED: u64 = 0x20;
    let how = OpenHow {
        flags: (libc::O_RDONLY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_CACHED,
    };
    let c = std::ffi::CString::new(path).unwrap();
    // SAFETY: openat2 reads `how` (of the size given) and the path; a
    // descriptor it returns is closed at once.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd >= 0 {
        // SAFETY: the descriptor was just returned to us.
        unsafe { libc::close(fd as i32) };
        return Some(true);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOENT) => Some(true),
        Some(libc::EAGAIN) => Some(false),
        Some(libc::ENOSYS) => None,
        other => panic!("openat2 {path}: {other:?}"),
    }
}

/// Whether this host's referees show sandboxed bots their view from images
/// of their own (`referee/src/sandbox/view/image.rs`: the default for a root
/// referee, with erofs in the kernel and `mkfs.erofs` on the host, unless
/// `SCHMIER_VIEW_CACHE=none`); `Err` says why not.
pub fn images_made() -> Result<(), &'static str> {
    if std::env::var_os("SCHMIER_VIEW_CACHE").is_some_and(|v| v == "none") {
        return Err("SCHMIER_VIEW_CACHE=none");
    }
    if !nix::unistd::getuid().is_root() {
        return Err("not root");
    }
    let erofs = std::fs::read_to_string("/proc/filesystems").is_ok_and(|f| f.contains("erofs"));
    if !erofs {
        return Err("no erofs in this kernel");
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let mkfs = (path.split(':').chain(["/usr/sbin", "/sbin", "/usr/bin"]))
        .any(|d| std::path::Path::new(d).join("mkfs.erofs").exists());
    if !mkfs {
        return Err("no mkfs.erofs");
    }
    Ok(())
}

/// Each spy report's store (`store={...}`): what the process wrote and read.
fn stores(reports: &[String]) -> Vec<serde_json::Value> {
    (reports.iter())
        .map(|r| {
            let json = r.split(" store=").nth(1).unwrap_or_else(|| panic!("{r}"));
            let json = json.split(" game_start.game=").next().unwrap();
            serde_json::from_str(json).unwrap()
        })
        .collect()
}

/// Read without timing (`openat2`'s `RESOLVE_CACHED`: `ENOENT` where a bot
/// looked the name up, `EAGAIN` where none did), the store carries a set's
/// hands between its fresh processes unsandboxed. Sandboxed the same spy
/// makes no claim: `openat2` answers `ENOSYS`.
///
/// Unsandboxed the store is read without error but it is not kept without
/// loss: the kernel may free any unused dentry (memory pressure, a
/// `drop_caches` by anyone on the host), and a bit whose name was freed
/// reads 0. So the claims must be mostly right, not all: at least 90 % of
/// the claimed cards as dealt, where a guess gets about 2 %.
#[test]
fn a_sets_hands_left_in_the_dentry_cache_are_read_without_timing_only_unsandboxed() {
    if cached("/").is_none() {
        crate::support::skip("no openat2 on this kernel: the noiseless reader cannot exist");
        return;
    }
    let open = duplicate_set("remember-dentries", &[]);
    let pairs = open.claimed_and_dealt();
    let cards = pairs.len() * 6;
    let right: usize = (pairs.iter())
        .map(|(claimed, dealt)| {
            let (c, d) = (claimed.as_array().unwrap(), dealt.as_array().unwrap());
            c.iter().zip(d).filter(|(a, b)| a == b).count()
        })
        .sum();
    assert!(
        cards > 0 && right * 10 >= cards * 9,
        "unsandboxed, {right} of {cards} claimed cards right: {:?}",
        open.reports
    );
    let boxed = duplicate_set("remember-dentries", &["--sandbox"]);
    boxed.no_claims();
    boxed.every_game_announced_as_the_first();
    for s in stores(&boxed.reports) {
        assert_eq!(s["refused"], "ENOSYS", "{s}");
        assert!(s["written"].as_u64().unwrap() > 0, "{s}");
    }
}

/// Through the host's binds (`SCHMIER_VIEW_CACHE=none`, or a host that
/// cannot make images) the names a sandboxed bot looks up are cached in the
/// host's dentry cache, where a later game's bot can time them; with each
/// bot's view from erofs mounts of its own (the default for a root referee,
/// `image.rs`) none is. The write side is checked here without timing, from
/// outside: after the set, every marker name the spies wrote is in the
/// host's cache through the binds and none through the images, and a name of
/// the same shape that nobody looked up is in neither. The timed read through
/// the binds is recorded, not asserted (how well it reads depends on the
/// host's load; its rate is measured by `scripts/dentry-channel.py`,
/// SECURITY.md).
#[test]
fn negative_dentries_a_sandboxed_bot_leaves_reach_the_hosts_cache_only_through_binds() {
    if cached("/").is_none() {
        crate::support::skip("no openat2 on this kernel: cannot look at the host's dentry cache");
        return;
    }
    let bound = duplicate_set_env(
        "remember-dentries-timed",
        &["--sandbox"],
        &[("SCHMIER_VIEW_CACHE", "none")],
    );
    let (kept, markers) = in_the_hosts_cache(&bound);
    assert!(
        !markers.is_empty() && kept * 10 >= markers.len() * 9,
        "through the binds, {kept} of {} markers in the host's cache",
        markers.len()
    );
    record_the_timed_read(&bound, "through the binds", markers.len());
    if let Err(why) = images_made() {
        crate::support::skip(&format!(
            "this host makes no images of the view ({why}): the closed channel is not checked"
        ));
        return;
    }
    let imaged = duplicate_set("remember-dentries-timed", &["--sandbox"]);
    let (kept, markers) = in_the_hosts_cache(&imaged);
    assert!(
        !markers.is_empty() && kept == 0,
        "views from images: {kept} of {} markers in the host's cache",
        markers.len()
    );
    record_the_timed_read(&imaged, "views from images", markers.len());
}

/// How many of the marker names the set's spies looked up are in the host's
/// dentry cache, and the names. Every process must have written; a name of
/// the same shape that nobody looked up must not be cached.
fn in_the_hosts_cache(set: &Set) -> (usize, Vec<String>) {
    let stores = stores(&set.reports);
    let markers: Vec<String> = (stores.iter())
        .flat_map(|s| s["markers"].as_array().unwrap().clone())
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    // Each of the twelve processes left its hand at each deal it was dealt.
    assert!(
        stores.iter().all(|s| s["written"].as_u64().unwrap() > 0),
        "{stores:?}"
    );
    // Every marker, but for any the kernel freed since (it may free an unused
    // dentry at any time: see above), is counted; no name nobody looked up
    // may be cached.
    let mut kept = 0;
    for m in &markers {
        assert!(m.starts_with("/usr/bin/."), "{m}");
        kept += usize::from(cached(m) == Some(true));
        let never = format!("{m}-never-looked-up");
        assert_eq!(cached(&never), Some(false), "{never}");
    }
    (kept, markers)
}

/// The timed reader's claims, for the record.
fn record_the_timed_read(boxed: &Set, how: &str, written: usize) {
    let pairs = boxed.claimed_and_dealt();
    let wrong_cards: usize = (pairs.iter())
        .map(|(claimed, dealt)| {
            let (c, d) = (claimed.as_array().unwrap(), dealt.as_array().unwrap());
            c.iter().zip(d).filter(|(a, b)| a != b).count()
        })
        .sum();
    let right = pairs.iter().filter(|(c, d)| c == d).count();
    eprintln!(
        "recorded, not asserted: sandboxed, {how}, the timed reader claimed {} opponents' \
         hands, {right} exactly right, {wrong_cards} of {} cards wrong; {} markers written",
        pairs.len(),
        pairs.len() * 6,
        written
    );
}

/// A bot folder that changes while its image is made (a file written next
/// to it, as a package install or a `.pyc` write does to the system view)
/// is imaged again, and the run plays: `mkfs.erofs`, which fails on a file
/// it listed and cannot find, once failed the image, and then the whole run
/// (exit 2, no bot started). Here a stand-in `mkfs.erofs`, first on `PATH`,
/// writes a file into the bot's folder and fails the first time it is asked
/// for that folder's image, and runs the real one otherwise.
#[test]
fn a_bot_folder_that_changes_while_its_image_is_made_is_imaged_again() {
    use std::os::unix::fs::PermissionsExt;
    if let Err(why) = images_made() {
        crate::support::skip(&format!("this host makes no images of the view ({why})"));
        return;
    }
    let real = (std::env::var("PATH").unwrap().split(':'))
        .chain(["/usr/sbin", "/sbin", "/usr/bin"])
        .map(|d| std::path::Path::new(d).join("mkfs.erofs"))
        .find(|p| p.exists())
        .expect("images_made found one");
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("bot");
    std::fs::create_dir(&folder).unwrap();
    for d in [dir.path(), &folder] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let script = folder.join("bot.py");
    std::fs::copy(crate::support::root().join("tests/hostile/bot.py"), &script).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let changed = dir.path().join("changed");
    let mkfs = bin.join("mkfs.erofs");
    std::fs::write(
        &mkfs,
        format!(
            "#!/bin/sh
\
             for root; do :; done
\
             if [ -e \"$root/bot.py\" ] && [ ! -e '{changed}' ]; then
\
             touch '{changed}'
\
             echo late > '{late}'
\
             echo 'mkfs.erofs: No such file or directory' >&2
\
             exit 1
\
             fi
\
             exec '{real}' \"$@\"
",
            changed = changed.display(),
            late = folder.join("late.txt").display(),
            real = real.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&mkfs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = dir.path().join("out");
    let output = crate::support::referee()
        .args(["play", "--sandbox", "--seed", "1", "--seat"])
        .arg(format!("1=python3 {} instant", script.display()))
        .args(["--team", "inproc:heuristic", "--team", "inproc:random"])
        .args(["--team", "inproc:random", "--transcript"])
        .arg(&out)
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        changed.exists(),
        "the stand-in never changed the folder: {stderr}"
    );
    assert!(output.status.success(), "{}: {stderr}", output.status);
    let game = std::fs::read_to_string(out.join("game-0001.jsonl")).unwrap();
    assert!(
        game.lines().last().unwrap().contains("\"result\""),
        "{game}"
    );
    assert!(!game.contains("\"fault\""), "{game}");
}

/// Where the view was to be shown from images and one cannot be made, no
/// sandboxed bot starts: the run stops before any game, saying why and how
/// to turn images off. It fails closed: no bot is shown the host's
/// directories in their place. (`mkfs.erofs` here is a stand-in that
/// refuses, first on `PATH`; the cache is new, so every image must be built.)
#[test]
fn a_view_whose_image_cannot_be_made_starts_no_sandboxed_bot() {
    use std::os::unix::fs::PermissionsExt;
    if let Err(why) = images_made() {
        crate::support::skip(&format!("this host makes no images of the view ({why})"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let ran = dir.path().join("mkfs-ran");
    let mkfs = bin.join("mkfs.erofs");
    std::fs::write(
        &mkfs,
        format!(
            "#!/bin/sh\ntouch '{}'\necho 'mkfs.erofs: refused' >&2\nexit 1\n",
            ran.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&mkfs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = dir.path().join("out");
    let output = crate::support::referee()
        .args(["play", "--sandbox", "--games", "1", "--seed", "1"])
        .args([
            "--team",
            "python3 sample-bots/python/bot.py",
            "--transcript",
        ])
        .arg(&out)
        .env("PATH", path)
        .env("SCHMIER_VIEW_CACHE", dir.path().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(ran.exists(), "the stand-in mkfs.erofs never ran: {stderr}");
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("could not be made") && stderr.contains("SCHMIER_VIEW_CACHE=none"),
        "{stderr}"
    );
    let transcripts = std::fs::read_dir(&out).map_or(0, |d| d.count());
    assert_eq!(transcripts, 0, "a game was played: {stderr}");
}

/// A sandboxed transcript says whether its bots saw their view from images
/// of their own: the layer `erofs-views` where this host makes them, and not
/// with `SCHMIER_VIEW_CACHE=none`; `verify`'s "played under" line says the
/// same. (The bot is a copy of the sample Python bot in a folder other users
/// can read, so that a root referee keeps its sandbox and shows it images.)
#[test]
fn a_sandboxed_transcript_records_whether_bots_saw_views_of_their_own() {
    let dir = sample_bot_copy();
    let bot = format!("python3 {}/bot.py", dir.path().display());
    let layers = |env: &str| {
        let out = play_one_sandboxed(&bot, dir.path(), env);
        let game = out.join("game-0001.jsonl");
        let text = std::fs::read_to_string(&game).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let verified = crate::support::verify(&[&game]);
        let said = String::from_utf8_lossy(&verified.stdout).into_owned();
        let layers: Vec<String> = (header["isolation"]["sandbox"]["layers"].as_array())
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect();
        let in_words = said
            .lines()
            .any(|l| l.contains("played under") && l.contains("erofs-views"));
        (layers, in_words)
    };
    let (bound, bound_said) = layers("none");
    assert_eq!(bound, ["namespaces", "seccomp", "landlock-abi-6"]);
    assert!(!bound_said);
    if let Err(why) = images_made() {
        crate::support::skip(&format!("this host makes no images of the view ({why})"));
        return;
    }
    let (imaged, imaged_said) = layers("");
    assert_eq!(
        imaged,
        ["namespaces", "seccomp", "landlock-abi-6", "erofs-views"]
    );
    assert!(imaged_said);
}

/// A bot's large file (a model's weights, say) is left out of its
/// directory's image and bound from the host (`image::LARGE_FILE`): the bot
/// reads it whole and as it is, sandboxed with images and with binds.
#[test]
fn a_bots_large_file_reads_as_it_is_on_the_host_from_its_view() {
    let sha256 = |b: &[u8]| ring::digest::digest(&ring::digest::SHA256, b);
    let dir = sample_bot_copy();
    // 3 MiB that no other file has: each byte from a counter's digest.
    let mut weights = Vec::with_capacity(3 << 20);
    let mut i = 0u64;
    while weights.len() < 3 << 20 {
        weights.extend_from_slice(sha256(&i.to_le_bytes()).as_ref());
        i += 1;
    }
    std::fs::write(dir.path().join("weights.bin"), &weights).unwrap();
    let want: String = (sha256(&weights).as_ref().iter())
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(
        dir.path().join("check.py"),
        "import hashlib, runpy, sys\n\
         with open('weights.bin', 'rb') as f:\n    \
         print('WEIGHTS', hashlib.sha256(f.read()).hexdigest(), file=sys.stderr, flush=True)\n\
         sys.argv = ['bot.py']\n\
         runpy.run_path('bot.py', run_name='__main__')\n",
    )
    .unwrap();
    let bot = format!("python3 {}/check.py", dir.path().display());
    for env in ["none", ""] {
        let out = play_one_sandboxed(&bot, dir.path(), env);
        for seat in [0, 3] {
            let log =
                std::fs::read_to_string(out.join(format!("stderr/player{seat}.log"))).unwrap();
            assert!(
                log.contains(&format!("WEIGHTS {want}")),
                "SCHMIER_VIEW_CACHE={env:?}, seat {seat}: {log}"
            );
        }
    }
}

/// The sample Python bot, copied into a folder other users can read (so
/// that a root referee keeps its sandbox and shows it images).
fn sample_bot_copy() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = crate::support::root();
    for f in ["bot.py", "schmier_kit.py"] {
        std::fs::copy(root.join("sample-bots/python").join(f), dir.path().join(f)).unwrap();
    }
    dir
}

/// One sandboxed game of `bot` (both seats of a team) against the built-in
/// bots, with `SCHMIER_VIEW_CACHE=env` unless `env` is empty; its
/// transcript folder, in `dir`. The game must succeed.
fn play_one_sandboxed(bot: &str, dir: &std::path::Path, env: &str) -> std::path::PathBuf {
    let out = dir.join(format!("out-{env}"));
    let mut cmd = crate::support::referee();
    cmd.args([
        "play",
        "--sandbox",
        "--games",
        "1",
        "--team",
        bot,
        "--transcript",
    ])
    .arg(&out);
    if !env.is_empty() {
        cmd.env("SCHMIER_VIEW_CACHE", env);
    }
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    out
}
