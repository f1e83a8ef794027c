//! Spies of the second round: channels through state the kernel keeps for the
//! whole host (locks and watches on shared files, the page cache, the vsock
//! port table, host-wide counters in `/proc`), descriptors the referee
//! inherited, per-user limits, and the memory of a bot's private `/tmp`. Each
//! is shown to work without `--sandbox` on this host, so the check can fail,
//! and to be stopped with it.

use crate::spy::{partners_talk_only_unsandboxed, spy, tag, works_only_unsandboxed};
use crate::support::{play, root};

/// The `name=result` pairs of a `syscalls` report.
fn results(detail: &str) -> Vec<(String, String)> {
    detail
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Every call the inner seccomp filter refuses: each works (or answers as the
/// kernel would) unsandboxed, and gets `EPERM` sandboxed; Unix sockets stay.
#[test]
fn calls_that_reach_host_wide_state_are_refused_with_eperm() {
    let (open, boxed) = works_only_unsandboxed_report("syscalls");
    let open = results(&open);
    let boxed = results(&boxed);
    assert_eq!(open.len(), 24, "{open:?}");
    for (name, got) in &open {
        assert_ne!(got, "EPERM", "{name} refused even unsandboxed: {open:?}");
    }
    for (name, got) in &boxed {
        let want = if name == "unix" { "ok" } else { "EPERM" };
        assert_eq!(got, want, "{name} in the sandbox: {boxed:?}");
    }
    assert_eq!(open.len(), boxed.len());
}

/// A root referee runs a bot whose files no other user can reach in a
/// sandbox of its own, bubblewrap run as root, which maps the bot's user to
/// the host's root: the owner of the device nodes bubblewrap binds from the
/// host. Neither they nor the sandbox's root and `/dev` take a mode, an
/// owner, times or an extended attribute (issue 43), and the host's
/// `/dev/null` keeps its mode.
#[test]
fn a_bot_no_other_user_can_reach_changes_no_shared_or_host_inode() {
    use std::os::unix::fs::PermissionsExt;
    if !nix::unistd::geteuid().is_root() {
        crate::support::skip("not root: no referee here runs bubblewrap as root");
        return;
    }
    // A folder of mode 0700, root's: no other user reaches the spy.
    let place = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(place.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::copy(root().join("tests/spy/spy.py"), place.path().join("spy.py")).unwrap();
    let script = place.path().join("spy.py");
    let null = std::fs::metadata("/dev/null").unwrap().permissions().mode();
    let boxed = crate::spy::spy_at(script.to_str().unwrap(), "litter", true, play().seed(3));
    crate::spy_sets::nothing_shared_changes(&boxed.report().1);
    assert_eq!(
        std::fs::metadata("/dev/null").unwrap().permissions().mode(),
        null
    );
}

/// The `syscalls` spy reports `ok` either way (its verdict is the list), so
/// each run's detail is returned.
fn works_only_unsandboxed_report(mode: &str) -> (String, String) {
    let open = spy(mode, false, play().seed(3));
    let boxed = spy(mode, true, play().seed(3));
    assert!(boxed.others_faulted().is_empty(), "{:?}", boxed.faults);
    (open.report().1.clone(), boxed.report().1.clone())
}

#[test]
fn partners_talking_through_locks_on_a_shared_file() {
    let open = spy("partner-lock", false, play().seed(3));
    for (_, detail) in &open.reports {
        assert!(detail.contains("locks: flock,ofd,posix"), "{detail}");
    }
    partners_talk_only_unsandboxed("partner-lock");
}

/// The host's `/dev/null` is in every sandbox; its times, set by one
/// partner, are read by the other unsandboxed (as root, the owner: a root
/// referee's own sandbox maps its bot to root). Sandboxed, setting them is
/// refused and the node is read-only (issue 43).
#[test]
fn partners_talking_through_the_times_of_dev_null() {
    if !nix::unistd::geteuid().is_root() {
        crate::support::skip("not root: only /dev/null's owner sets its times, so the channel cannot be shown open here");
        let boxed = spy("partner-devnull", true, play().seed(3));
        assert!(boxed.reports.iter().all(|r| !r.0), "{:?}", boxed.reports);
        return;
    }
    partners_talk_only_unsandboxed("partner-devnull");
}

#[test]
fn partners_talking_through_inotify_events_on_a_shared_file() {
    partners_talk_only_unsandboxed("partner-inotify");
}

#[test]
fn partners_talking_through_page_cache_residency() {
    partners_talk_only_unsandboxed("partner-pagecache");
}

#[test]
fn partners_talking_through_the_hosts_vsock_port_table() {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import socket; socket.socket(40, socket.SOCK_STREAM)"])
        .status()
        .unwrap();
    if !probe.success() {
        // No vsock on this host: the channel cannot be shown open, only shut.
        crate::support::skip("this host has no AF_VSOCK: checked only that the sandbox refuses it");
        let boxed = spy("partner-vsock", true, play().seed(3));
        assert!(boxed.reports.iter().all(|r| !r.0), "{:?}", boxed.reports);
        return;
    }
    partners_talk_only_unsandboxed("partner-vsock");
}

/// The host's thread count (`/proc/loadavg`) shows 300 threads a bot starts;
/// in the sandbox `/proc`'s host-wide files read constants (or are gone).
#[test]
fn host_wide_counters_in_proc_are_constant_in_the_sandbox() {
    let (open, boxed) = works_only_unsandboxed("proc-counters");
    let seen = |s: &crate::spy::Spied| -> serde_json::Value {
        serde_json::from_str(&s.report().1).unwrap()
    };
    let (open, boxed) = (seen(&open), seen(&boxed));
    assert!(open["seen"]["sys/fs/file-nr"]
        .as_str()
        .unwrap()
        .contains('\t'));
    assert_eq!(boxed["rose"], 0, "{boxed}");
    let b = &boxed["seen"];
    assert_eq!(b["loadavg"], "0.00 0.00 0.00 1/1 1\n");
    assert_eq!(b["sys/fs/file-nr"], "ENOENT");
    assert_eq!(b["sys/fs/aio-nr"], "ENOENT");
    assert_eq!(b["pressure"], serde_json::json!([]));
    let meminfo = b["meminfo"].as_str().unwrap();
    let value = |key: &str| {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("{key} in {meminfo}"))
            .trim()
            .to_owned()
    };
    assert_eq!(value("MemTotal:"), value("MemFree:"), "{meminfo}");
    // The spy keeps 300 characters of each: the last line may be cut.
    let vmstat = b["vmstat"].as_str().unwrap();
    let whole = vmstat.lines().count() - 1;
    assert!(whole > 5, "{vmstat}");
    assert!(
        vmstat.lines().take(whole).all(|l| l.ends_with(" 0")),
        "{vmstat}"
    );
    let stat = b["stat"].as_str().unwrap();
    assert!(stat.starts_with("cpu 0 0"), "{stat}");
}

/// A private `/tmp` or `/dev/shm` lives in the host's memory: unsandboxed a
/// bot writes 80 MiB to each (then removes them); sandboxed each stops at its
/// 64 MiB with `ENOSPC`.
#[test]
fn a_sandboxed_bots_tmp_and_dev_shm_are_bounded() {
    let (_, boxed) = works_only_unsandboxed("fill-tmp");
    let got: serde_json::Value = serde_json::from_str(&boxed.report().1).unwrap();
    for dir in ["/tmp", "/dev/shm"] {
        assert_eq!(got[dir][1], "ENOSPC", "{got}");
        assert!(got[dir][0].as_u64().unwrap() <= 64 << 20, "{got}");
    }
}

/// A descriptor the referee inherited (here the write end of a pipe as fd 9)
/// reaches no bot, sandboxed or not: the spy writes into every descriptor it
/// holds above 2, and nothing arrives. Shown first to find and use one when
/// started with it directly.
#[test]
fn a_descriptor_the_referee_inherited_reaches_no_bot() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let with_fd_9 = |cmd: &mut std::process::Command| -> std::fs::File {
        let (read, write) = nix::unistd::pipe().unwrap();
        let raw = write.as_raw_fd();
        // SAFETY: dup2 only, in the child before exec; the copy at 9 is not
        // close-on-exec.
        unsafe {
            cmd.pre_exec(move || {
                if nix::libc::dup2(raw, 9) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = cmd.spawn().unwrap();
        drop(write);
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::File::from(read)
    };
    let heard = |mut pipe: std::fs::File| {
        let mut got = String::new();
        let _ = pipe.read_to_string(&mut got);
        got
    };
    let token = tag("inherited-fd");
    let spy_cmd = format!("python3 tests/spy/spy.py inherited-fd --tag {token}");
    let mut direct = std::process::Command::new("python3");
    direct
        .args(["tests/spy/spy.py", "inherited-fd", "--tag", &token])
        .current_dir(root())
        .stdin(std::fs::File::open(root().join("tests/spy/one-request.jsonl")).unwrap());
    assert!(
        heard(with_fd_9(&mut direct)).contains(&format!("LEAK-{token}")),
        "the spy finds and uses an inherited descriptor"
    );
    for sandbox in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = crate::support::referee();
        cmd.args(["play", "--seed", "3", "--policy", "lenient"])
            .args(["--startup-ms", "20000", "--decision-ms", "10000"])
            .arg("--seat")
            .arg(format!("1={spy_cmd}"))
            .arg("--transcript")
            .arg(dir.path().join("out"))
            .args(sandbox.then_some("--sandbox"))
            .current_dir(root());
        let got = heard(with_fd_9(&mut cmd));
        assert_eq!(got, "", "sandbox {sandbox}");
        let log = std::fs::read_to_string(dir.path().join("out/stderr/player1.log")).unwrap();
        assert!(
            log.contains("SPY inherited-fd blocked wrote into []"),
            "sandbox {sandbox}: {log}"
        );
    }
}

/// A root referee runs each sandboxed bot process as a host uid of its own
/// (from 0x5C4E0000), so per-user kernel limits are per bot; partners differ.
/// Read from outside (inside, every bot is 65534): both partners wait at their
/// first request until the test has looked. A non-root referee can map no other
/// uid: every bot is the referee's user, which is checked instead, loudly.
#[test]
fn each_sandboxed_bot_is_a_host_user_of_its_own_under_a_root_referee() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::copy(root().join("tests/spy/spy.py"), dir.path().join("spy.py")).unwrap();
    let token = tag("hold");
    let cmd = format!("python3 {}/spy.py hold --tag {token}", dir.path().display());
    let run = play()
        .seed(3)
        .args(["--policy", "lenient", "--no-timeouts", "--sandbox"])
        .team("builtin:heuristic")
        .team(&cmd);
    let referee = std::thread::spawn(move || run.ok());
    let start = std::time::Instant::now();
    let (pids, uids) = loop {
        let (pids, uids): (Vec<u32>, Vec<u32>) = crate::hostile::processes_with(&token)
            .into_iter()
            .filter_map(|p| {
                let (pid, cmd) = p.split_once(": ")?;
                let program = cmd.split(' ').next()?;
                // The bot is the process running spy.py, not bubblewrap around it.
                let uid = program.contains("python3").then(|| host_uid(pid))??;
                Some((pid.parse::<u32>().ok()?, uid))
            })
            .unzip();
        if uids.len() == 2 || start.elapsed().as_secs() >= 60 {
            break (pids, uids);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    // Released before any assertion, so a failure leaves nothing running.
    crate::support::release_held(&pids, &referee);
    referee.join().unwrap();
    assert_eq!(uids.len(), 2, "both partners seen within 60 s: {uids:?}");
    if nix::unistd::getuid().is_root() {
        assert_ne!(uids[0], uids[1]);
        for uid in &uids {
            assert!((0x5C4E_0000..0x5C4F_0000).contains(uid), "{uid:#x}");
        }
    } else {
        let me = nix::unistd::getuid().as_raw();
        assert_eq!(uids, [me, me]);
        crate::support::skip(&format!(
            "not root: every sandboxed bot runs as the referee's uid {me}; checked that only, \
             not that partners get different uids"
        ));
    }
}

/// The real uid of process `pid`, as the host sees it.
fn host_uid(pid: &str) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A `--scratch` folder that already holds something (what an earlier run's
/// bots left) is refused before anything starts, saying so: exit 2.
#[test]
fn a_scratch_folder_that_is_not_empty_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    std::fs::create_dir(scratch.path().join("player1")).unwrap();
    std::fs::write(scratch.path().join("player1/hand"), "AS KS").unwrap();
    for sandbox in [false, true] {
        let mut run = play()
            .seed(3)
            .arg("--scratch")
            .arg(scratch.path().to_str().unwrap());
        if sandbox {
            run = run.arg("--sandbox");
        }
        let done = run.run();
        let err = String::from_utf8_lossy(&done.output.stderr);
        assert_eq!(done.output.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("--scratch {}", scratch.path().display()))
                && err.contains("not empty"),
            "{err}"
        );
        assert!(!done.transcript(1).exists(), "nothing played");
    }
}

/// A scratch folder has no per-bot size limit (unlike the sandbox's `/tmp`), and
/// the referee says so rather than fall silent; when it shares the filesystem of
/// the transcripts, the warning says what a bot filling it would cost.
#[test]
fn a_scratch_folder_says_it_has_no_size_limit() {
    use std::os::unix::fs::MetadataExt;
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let done = play()
        .seed(3)
        .arg("--scratch")
        .arg(scratch.path().to_str().unwrap())
        .ok();
    let err = String::from_utf8_lossy(&done.output.stderr);
    assert!(
        err.contains(&format!("--scratch {}", scratch.path().display()))
            && err.contains("no size limit of their own"),
        "{err}"
    );
    let out = done.transcript(1);
    let same_disk =
        std::fs::metadata(&out).unwrap().dev() == std::fs::metadata(scratch.path()).unwrap().dev();
    assert_eq!(
        err.contains("fills the disk the transcripts need"),
        same_disk,
        "{err}"
    );
}

/// Honest bots are not hurt by any of it: the Python and JavaScript sample
/// bots play two games under `--sandbox` (the competition policy) without a
/// fault, and say goodbye normally.
#[test]
fn the_sample_bots_play_normally_in_the_sandbox() {
    let done = play()
        .seed(3)
        .args(["--sandbox", "--games", "2"])
        .team("python3 sample-bots/python/bot.py")
        .team("node sample-bots/js/bot.js")
        .team("python3 sample-bots/python/my_bot.py")
        .ok();
    for game in [1, 2] {
        let lines = done.lines(game);
        let faults: Vec<_> = lines.iter().filter(|l| l["type"] == "fault").collect();
        assert!(faults.is_empty(), "game {game}: {faults:?}");
        assert!(
            done.text(game).contains("\"result\""),
            "game {game} finished"
        );
    }
    for slot in 0..6 {
        let log =
            std::fs::read_to_string(done.dir.join(format!("stderr/player{slot}.log"))).unwrap();
        assert!(
            !log.contains("Error") && !log.contains("Traceback"),
            "player{slot}: {log}"
        );
    }
}

/// A bubblewrap without `--size` (the bounded `/tmp`) is refused, saying so,
/// rather than run bots with an unbounded one: simulated by a fake `bwrap`
/// that answers as an old one does.
#[test]
fn a_bubblewrap_without_size_limits_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let fake = tempfile::tempdir().unwrap();
    let bwrap = fake.path().join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\necho 'bwrap: Unknown option --size' >&2\nexit 1\n",
    )
    .unwrap();
    for p in [fake.path(), bwrap.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let done = play()
        .seed(3)
        .arg("--sandbox")
        .env("PATH", fake.path().to_str().unwrap())
        .run();
    let err = String::from_utf8_lossy(&done.output.stderr);
    assert_eq!(done.output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bubblewrap is too old") && err.contains("Unknown option --size"),
        "{err}"
    );
    assert!(!done.dir.exists(), "nothing was started or written");
}
