//! The spy suite: one cheating bot per attack (`tests/spy/spy.py MODE`), each run
//! without and with `--sandbox`. Without it the attack works on this host or at
//! least shows (a fault, a process left behind), which proves the check can see
//! a success; with it the attack fails: nothing learned, stolen, forged, written
//! or left behind, the partner never heard, the CPU charged in full.
//!
//! A spy reports on its stderr, which the referee keeps in the bot's log:
//! `SPY MODE ok|blocked DETAIL`.

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::hostile::processes_with;
use crate::support::{exclusive, play, root, Done, Run};

/// What a spied run left: its files, the spies' reports, the faults, and the
/// processes still alive afterwards with the spy's tag (killed once listed).
pub(crate) struct Spied {
    pub done: Done,
    pub reports: Vec<(bool, String)>,
    pub faults: Vec<serde_json::Value>,
    pub leftovers: Vec<String>,
}

pub(crate) fn tag(mode: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "spy-{}-{}-{mode}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs `mode` in seat 1 (and in seat 4, its partner's, for partner channels)
/// with the built-in bots elsewhere, generous limits and the lenient policy.
pub(crate) fn spy(mode: &str, sandbox: bool, run: Run) -> Spied {
    spy_at("tests/spy/spy.py", mode, sandbox, run)
}

/// [`spy`] with the spy's script at `script` (relative to the repository root,
/// or absolute).
pub(crate) fn spy_at(script: &str, mode: &str, sandbox: bool, run: Run) -> Spied {
    let token = tag(mode);
    let cmd = format!("python3 {script} {mode} --tag {token}");
    let mut run = run.args(["--policy", "lenient", "--startup-ms", "20000"]);
    run = if mode.starts_with("partner-") {
        run.team("builtin:heuristic").team(&cmd)
    } else {
        run.arg("--seat").arg(format!("1={cmd}"))
    };
    if sandbox {
        run = run.arg("--sandbox");
    }
    let done = if mode == "kill-referee" && !sandbox {
        run.run()
    } else {
        run.ok()
    };
    // A bot killed by its parent-death signal (after `kill-referee`) may take a
    // moment to go: wait for that, up to a bound, unless processes are expected
    // to stay (an unsandboxed daemon).
    let escapes = !sandbox && mode.ends_with("daemon");
    let start = std::time::Instant::now();
    let mut leftovers = processes_with(&token);
    while !escapes && !leftovers.is_empty() && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        leftovers = processes_with(&token);
    }
    for p in &leftovers {
        if let Some(pid) = p.split(':').next().and_then(|p| p.parse().ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    let mut reports = Vec::new();
    if let Ok(logs) = std::fs::read_dir(done.dir.join("stderr")) {
        let mut logs: Vec<_> = logs.flatten().map(|e| e.path()).collect();
        logs.sort();
        for log in logs {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            for line in text.lines().filter_map(|l| l.strip_prefix("SPY ")) {
                let (_, rest) = line.split_once(' ').unwrap();
                let (verdict, detail) = rest.split_once(' ').unwrap();
                reports.push((verdict == "ok", detail.to_owned()));
            }
        }
    }
    let faults = if done.transcript(1).exists() {
        done.lines(1)
            .into_iter()
            .filter(|l| l["type"] == "fault")
            .collect()
    } else {
        Vec::new()
    };
    Spied {
        done,
        reports,
        faults,
        leftovers,
    }
}

impl Spied {
    /// The one report of a single spy.
    pub fn report(&self) -> &(bool, String) {
        assert_eq!(self.reports.len(), 1, "one report: {:?}", self.reports);
        &self.reports[0]
    }

    pub fn worked(&self) -> bool {
        self.report().0
    }

    /// Faults against seats other than the spy's.
    pub fn others_faulted(&self) -> Vec<&serde_json::Value> {
        self.faults.iter().filter(|f| f["seat"] != 1).collect()
    }
}

/// Runs `mode` both ways: the attack works without the sandbox and fails with it.
pub(crate) fn works_only_unsandboxed(mode: &str) -> (Spied, Spied) {
    let open = spy(mode, false, play().seed(3));
    assert!(
        open.worked(),
        "{mode} should work unsandboxed: {:?}",
        open.report()
    );
    let boxed = spy(mode, true, play().seed(3));
    assert!(
        !boxed.worked(),
        "{mode} worked in the sandbox: {:?}",
        boxed.report()
    );
    assert!(boxed.others_faulted().is_empty(), "{:?}", boxed.faults);
    assert!(boxed.leftovers.is_empty(), "{:?}", boxed.leftovers);
    (open, boxed)
}

#[test]
fn stealing_or_forging_a_siblings_messages_through_proc_fd() {
    works_only_unsandboxed("proc-fd");
}

#[test]
fn reading_the_referees_memory() {
    works_only_unsandboxed("referee-mem");
}

#[test]
fn reading_the_transcript_in_progress() {
    works_only_unsandboxed("partial");
}

#[test]
fn attaching_a_debugger_to_a_sibling_and_the_seccomp_layer() {
    let (open, boxed) = works_only_unsandboxed("ptrace");
    assert!(
        open.report().1.contains("('sibling', True"),
        "{:?}",
        open.report()
    );
    // Nothing but seccomp forbids tracing one's own child: EPERM (1) is its answer.
    assert!(
        boxed.report().1.contains("('own child', False, 1)"),
        "{:?}",
        boxed.report()
    );
}

#[test]
fn killing_a_sibling() {
    let (open, _) = works_only_unsandboxed("kill-sibling");
    // Detected: the victim's death is a crash fault against its seat.
    assert!(
        open.others_faulted().iter().any(|f| f["fault"] == "crash"),
        "{:?}",
        open.faults
    );
}

#[test]
fn killing_the_referee() {
    let open = spy("kill-referee", false, play().seed(3));
    // Detected, bluntly: the run dies, and takes its bots with it.
    assert!(!open.done.output.status.success());
    assert!(open.leftovers.is_empty(), "{:?}", open.leftovers);
    let boxed = spy("kill-referee", true, play().seed(3));
    assert!(!boxed.worked(), "{:?}", boxed.report());
}

#[test]
fn learning_the_seed_from_the_referees_command_line() {
    works_only_unsandboxed("seed");
    // Without --seed the referee draws one and keeps it off its command line.
    for sandbox in [false, true] {
        let secret = spy("seed", sandbox, play());
        assert!(!secret.worked(), "{:?}", secret.report());
    }
}

#[test]
fn reading_the_referees_environment() {
    let secret = |sandbox| {
        spy(
            "environ",
            sandbox,
            play().seed(3).env("SPY_SECRET_TOKEN", "x"),
        )
    };
    let open = secret(false);
    // Detected only in the referee's own /proc entry: the bot's environment and
    // its pid 1's are clear even unsandboxed.
    assert!(open.worked(), "{:?}", open.report());
    assert!(
        open.report().1.contains("leaks=['/proc/") && !open.report().1.contains("/proc/1/"),
        "{:?}",
        open.report()
    );
    let boxed = secret(true);
    assert!(!boxed.worked(), "{:?}", boxed.report());
}

#[test]
fn a_planted_symlink_does_not_redirect_the_next_transcript() {
    for sandbox in [false, true] {
        let run = play().seed(3).args(["--games", "2"]);
        let victim = run.dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let spied = spy("symlink", sandbox, run);
        assert_eq!(spied.worked(), !sandbox, "{:?}", spied.report());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(spied.done.text(2).contains("\"result\""));
    }
}

/// A copy of the spy in `spy/` of a fresh folder in Cargo's scratch space
/// (`target/tmp`), for the attacks that write into the bot's own directory or
/// next to it: what an unsandboxed spy writes lands in that folder, removed on
/// drop, never among the sources. Readable by `nobody`, as whom a root referee
/// sandboxes bots. Not under /tmp unless the build is (see below).
fn spy_elsewhere() -> (tempfile::TempDir, String) {
    let place = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = place.path().join("spy");
    std::fs::create_dir(&dir).unwrap();
    for d in [place.path(), &dir] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::copy(root().join("tests/spy/spy.py"), dir.join("spy.py")).unwrap();
    let script = dir.join("spy.py").to_str().unwrap().to_owned();
    (place, script)
}

/// How many files an unsandboxed `write` spy left in `dir`.
fn spy_writes(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("spy-wrote-"))
        .count()
}

#[test]
fn writing_into_the_bots_own_directory() {
    let (place, script) = spy_elsewhere();
    let own = place.path().join("spy");
    let open = spy_at(&script, "write", false, play().seed(3));
    assert!(open.worked(), "{:?}", open.report());
    assert_eq!(spy_writes(&own), 1, "the file is on the host");
    let boxed = spy_at(&script, "write", true, play().seed(3));
    assert!(!boxed.worked(), "{:?}", boxed.report());
    assert_eq!(
        spy_writes(&own),
        1,
        "a sandboxed bot wrote into its directory"
    );
}

// The Landlock layer on its own. Each attack below gets past bubblewrap's view
// of the system: its root and the parents of the bot's directory are a tmpfs
// the bot may write, the network namespace has a working loopback, and the
// sandbox's pid 1 is the bot's parent, running as the same user. Only Landlock,
// applied inside the sandbox, refuses them: with EACCES for files and EPERM for
// signals, where the namespaces would answer otherwise (EROFS, ESRCH). (TCP is
// refused earlier now, by the inner seccomp filter: see below.)

#[test]
fn writing_next_to_its_own_directory() {
    let (place, script) = spy_elsewhere();
    let open = spy_at(&script, "write-parent", false, play().seed(3));
    assert_eq!(spy_writes(place.path()), 1, "the file is on the host");
    assert!(open.worked(), "{:?}", open.report());
    let boxed = spy_at(&script, "write-parent", true, play().seed(3));
    assert_eq!(
        spy_writes(place.path()),
        1,
        "a sandboxed bot wrote next to its directory on the host"
    );
    // Where the bot's directory lies under /tmp, the sandbox's parents of it
    // are inside its private /tmp, which it may write: the file then lands
    // there, never on the host (checked above). Elsewhere they are
    // bubblewrap's root, read-only once the sandbox is built (Landlock
    // would refuse the write too, with EACCES, if it were not).
    if place.path().canonicalize().unwrap().starts_with("/tmp") {
        crate::support::skip(
            "the build's scratch space is under /tmp: checked that nothing reached the \
             host, not that Landlock refused the write",
        );
    } else {
        assert!(!boxed.worked(), "{:?}", boxed.report());
        assert!(boxed.report().1.ends_with("EROFS"), "{:?}", boxed.report());
    }
}

/// Since the inner seccomp filter allows only Unix sockets, an IP socket is
/// refused (`EPERM`) before Landlock's TCP rule is reached; that rule stays,
/// a third layer under the filter and the network namespace.
#[test]
fn serving_tcp_even_on_the_sandboxs_own_loopback() {
    let (_, boxed) = works_only_unsandboxed("tcp-loopback");
    assert!(boxed.report().1.ends_with("EPERM"), "{:?}", boxed.report());
}

#[test]
fn signalling_a_process_outside_the_bots_own_tree() {
    let (open, boxed) = works_only_unsandboxed("signal-parent");
    assert!(
        open.report().1.contains("referee=yes"),
        "{:?}",
        open.report()
    );
    assert!(boxed.report().1.ends_with("EPERM"), "{:?}", boxed.report());
}

/// The referee's terminal is the operator's, where a human seat types its moves
/// and sees its hand. bubblewrap's `/dev` shows it as `/dev/tty` (and sandboxed
/// bots share the referee's session), so only Landlock keeps a bot from writing
/// to it or reading the keys typed there.
#[test]
fn reaching_the_operators_terminal() {
    for sandbox in [false, true] {
        let (report, screen) = spy_on_a_terminal(sandbox);
        let (worked, detail) = report;
        let shown = screen.contains("SPY-ON-THE-TERMINAL-");
        if sandbox {
            assert!(!worked && detail.ends_with("EACCES"), "{detail}");
            assert!(!shown, "{screen}");
        } else {
            assert!(worked && shown, "{detail}: {screen:?}");
        }
    }
}

/// Runs the `tty` spy in seat 1 under a referee whose controlling terminal is a
/// pseudo-terminal; returns its report and what reached the terminal.
fn spy_on_a_terminal(sandbox: bool) -> ((bool, String), String) {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let dir = tempfile::tempdir().unwrap();
    let token = tag("tty");
    let mut cmd = crate::support::referee();
    cmd.args([
        "play",
        "--seed",
        "3",
        "--policy",
        "lenient",
        "--decision-ms",
        "10000",
        "--startup-ms",
        "20000",
    ])
    .arg("--seat")
    .arg(format!("1=python3 tests/spy/spy.py tty --tag {token}"))
    .arg("--transcript")
    .arg(dir.path().join("out"))
    .args(sandbox.then_some("--sandbox"))
    .current_dir(root())
    .stdin(std::process::Stdio::from(pty.slave))
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    // SAFETY: setsid and ioctl only, in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            if nix::libc::ioctl(0, nix::libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().expect("the referee runs");
    drop(cmd); // closes our copy of the terminal's slave side
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut master = std::fs::File::from(pty.master);
    // Nothing holds the slave side any more: what was written is buffered, and
    // reading ends with EIO after it.
    let mut screen = Vec::new();
    let _ = master.read_to_end(&mut screen);
    let log = std::fs::read_to_string(dir.path().join("out/stderr/player1.log")).unwrap();
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix("SPY tty "))
        .unwrap_or_else(|| panic!("no report: {log}"));
    let (verdict, detail) = line.split_once(' ').unwrap();
    (
        (verdict == "ok", detail.to_owned()),
        String::from_utf8_lossy(&screen).into_owned(),
    )
}

#[test]
fn a_daemon_outlives_only_an_unsandboxed_referee() {
    let open = spy("daemon", false, play().seed(3));
    assert!(!open.leftovers.is_empty(), "the daemon should have escaped");
    let boxed = spy("daemon", true, play().seed(3));
    assert!(boxed.worked(), "the daemon started: {:?}", boxed.report());
    assert!(boxed.leftovers.is_empty(), "{:?}", boxed.leftovers);
}

#[test]
fn work_done_by_a_daemon_is_charged_to_a_sandboxed_bot() {
    let _machine = exclusive();
    let cpu = |sandbox| {
        let run = play()
            .seed(3)
            .args(["--clock", "cpu", "--decision-ms", "500"]);
        spy("cpu-daemon", sandbox, run)
    };
    let timed_out = |s: &Spied| {
        let first = s.faults.first().expect("a fault");
        assert_eq!(
            (first["seat"].as_u64(), first["fault"].as_str()),
            (Some(1), Some("timeout"))
        );
    };
    // Unsandboxed the daemon leaves the bot's process tree but not its cgroup:
    // where the referee can make one (root here), the daemon's CPU is charged
    // and the daemon killed at the end. Without one, the CPU clock cannot see
    // it, and it outlives the referee (whether the reply was late then depends
    // on the wall-clock backstop and the host's load, so it is not asserted).
    let open = cpu(false);
    if root_referee() {
        timed_out(&open);
        assert!(open.leftovers.is_empty(), "{:?}", open.leftovers);
    } else {
        assert!(!open.leftovers.is_empty(), "the daemon should have escaped");
    }
    // Sandboxed it stays under the sandbox's pid 1, in the tree (and in its
    // cgroup): 2 s of CPU against a 500 ms limit is a timeout.
    let boxed = cpu(true);
    timed_out(&boxed);
    assert!(boxed.leftovers.is_empty(), "{:?}", boxed.leftovers);
}

/// Both partners are spies; each reports at the game's end whether it heard the
/// other.
pub(crate) fn partners_talk_only_unsandboxed(mode: &str) {
    let open = spy(mode, false, play().seed(3));
    assert_eq!(open.reports.len(), 2, "{:?}", open.reports);
    assert!(
        open.reports.iter().all(|r| r.0),
        "{mode} unsandboxed: {:?}",
        open.reports
    );
    let boxed = spy(mode, true, play().seed(3));
    assert_eq!(boxed.reports.len(), 2, "{:?}", boxed.reports);
    assert!(
        boxed.reports.iter().all(|r| !r.0),
        "{mode} sandboxed: {:?}",
        boxed.reports
    );
}

#[test]
fn partners_talking_through_tmp_or_dev_shm() {
    partners_talk_only_unsandboxed("partner-files");
}

#[test]
fn each_bot_writes_to_its_own_scratch_and_sees_its_partners_only_unsandboxed() {
    for sandbox in [false, true] {
        let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        // Searchable by others, so that a root referee's sandboxes run as nobody,
        // who is handed each bot's directory.
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = play()
            .seed(3)
            .arg("--scratch")
            .arg(scratch.path().to_str().unwrap());
        let spied = spy("partner-scratch", sandbox, run);
        assert_eq!(spied.reports.len(), 2, "{:?}", spied.reports);
        for (heard, detail) in &spied.reports {
            assert!(detail.ends_with("(wrote to its scratch: yes)"), "{detail}");
            assert_eq!(*heard, !sandbox, "sandbox {sandbox}: {detail}");
        }
        // Seats 1 and 4 are lineup slots 1 and 4 in the first game: each wrote
        // its message into its own directory; sandboxed, into a tmpfs of its
        // own, so nothing reached the host's folder.
        for slot in [1, 4] {
            let files: Vec<String> =
                std::fs::read_dir(scratch.path().join(format!("player{slot}")))
                    .map(|d| {
                        d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
            match sandbox {
                false => assert!(
                    files.len() == 1 && files[0].ends_with(&format!("-{slot}")),
                    "player{slot}: {files:?}"
                ),
                true => assert!(files.is_empty(), "player{slot}: {files:?}"),
            }
        }
        // Sandboxed, not even an empty folder is made for a bot (issue 45).
        if sandbox {
            let made: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
            assert!(made.is_empty(), "{made:?}");
        }
    }
}

#[test]
fn the_scratch_may_not_hold_the_transcripts() {
    let run = play();
    let scratch = run.dir.path().join("out").join("scratch");
    let done = run.arg("--scratch").arg(scratch.to_str().unwrap()).run();
    let err = String::from_utf8_lossy(&done.output.stderr);
    assert!(!done.output.status.success());
    assert!(err.contains("must not hold one another"), "{err}");
    assert!(!done.transcript(1).exists(), "nothing played");
}

#[test]
fn partners_talking_through_an_abstract_unix_socket() {
    partners_talk_only_unsandboxed("partner-unix");
}

#[test]
fn partners_talking_over_localhost_tcp_or_udp() {
    partners_talk_only_unsandboxed("partner-net");
}

#[test]
fn partners_talking_through_proc_comm() {
    partners_talk_only_unsandboxed("partner-comm");
}

#[test]
fn a_bot_runs_in_its_own_directory_with_only_the_environment_it_is_given() {
    for sandbox in [false, true] {
        let run = play()
            .seed(3)
            .env("SPY_SECRET_TOKEN", "x")
            .args(["--bot-env", "SPY_GIVEN=yes"]);
        let spied = spy("whoami", sandbox, run);
        let seen: serde_json::Value = serde_json::from_str(&spied.report().1).unwrap();
        let spy_dir = std::fs::canonicalize(root().join("tests/spy")).unwrap();
        assert_eq!(seen["cwd"], spy_dir.to_str().unwrap(), "sandbox {sandbox}");
        assert_eq!(seen["env"]["PATH"], "/usr/local/bin:/usr/bin:/bin");
        assert_eq!(seen["env"]["SPY_GIVEN"], "yes");
        for leaked in ["SPY_SECRET_TOKEN", "HOME", "CARGO", "RUST_LOG"] {
            assert!(seen["env"].get(leaked).is_none(), "{leaked}: {seen}");
        }
    }
}

/// `--sandbox` never falls back to running bots unsandboxed.
#[test]
fn the_sandbox_fails_closed_with_a_clear_reason() {
    let refused = |path: &str| {
        let done = play().seed(3).arg("--sandbox").env("PATH", path).run();
        assert_eq!(done.output.status.code(), Some(2));
        assert!(!done.dir.exists(), "nothing was started or written");
        String::from_utf8_lossy(&done.output.stderr).into_owned()
    };
    let missing = refused("/nonexistent");
    assert!(
        missing.contains("failed to start the sandbox")
            && missing.contains("apt-get install bubblewrap"),
        "{missing}"
    );
    // A host that forbids user namespaces: bubblewrap fails as it does there.
    let fake = tempfile::tempdir().unwrap();
    let bwrap = fake.path().join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [fake.path(), bwrap.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let blocked = refused(fake.path().to_str().unwrap());
    assert!(
        blocked.contains("does not let bubblewrap create the namespaces")
            && blocked.contains("No permissions to creating new namespace")
            && blocked.contains("run without --sandbox"),
        "{blocked}"
    );
}

/// A kernel without Landlock (simulated: a seccomp filter makes its system calls
/// fail with ENOSYS for the referee and everything it starts) makes `--sandbox`
/// refuse to start, saying so, rather than run bots with two layers of three.
#[test]
fn the_sandbox_refuses_a_kernel_without_landlock() {
    use std::os::unix::process::CommandExt;
    let filter: seccompiler::BpfProgram = seccompiler::SeccompFilter::new(
        [
            (nix::libc::SYS_landlock_create_ruleset, vec![]),
            (nix::libc::SYS_landlock_add_rule, vec![]),
            (nix::libc::SYS_landlock_restrict_self, vec![]),
        ]
        .into_iter()
        .collect(),
        seccompiler::SeccompAction::Allow,
        seccompiler::SeccompAction::Errno(nix::libc::ENOSYS as u32),
        std::env::consts::ARCH.try_into().unwrap(),
    )
    .unwrap()
    .try_into()
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut cmd = crate::support::referee();
    cmd.args(["play", "--seed", "3", "--sandbox", "--transcript"])
        .arg(&out)
        .current_dir(root());
    // SAFETY: prctl and seccomp only, on a program compiled before the fork.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_no_new_privs()?;
            seccompiler::apply_filter(&filter).map_err(std::io::Error::other)
        });
    }
    let done = cmd.output().expect("the referee runs");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{stderr}");
    assert!(!out.exists(), "nothing was started or written");
    assert!(
        stderr.contains("failed to start the sandbox: --sandbox needs Landlock ABI 6")
            && stderr.contains("this kernel has no Landlock enabled")
            && stderr.contains("run without --sandbox"),
        "{stderr}"
    );
}

/// `--limit-procs` is a pids cgroup per bot process: both partners fork as much
/// as they can and each gets its own allowance, and every other bot still plays
/// (a per-user `RLIMIT_NPROC` would be shared by all of them).
#[test]
fn one_bots_forks_do_not_use_up_another_bots_process_limit() {
    for sandbox in [false, true] {
        let run = play().seed(3).args(["--limit-procs", "10"]);
        let token = tag("fork-hog");
        let cmd = format!("python3 tests/spy/spy.py fork-hog --tag {token}");
        let mut run = run
            .args(["--policy", "lenient"])
            .team("builtin:heuristic")
            .team(&cmd);
        if sandbox {
            run = run.arg("--sandbox");
        }
        let done = run.ok();
        for seat in [1, 4] {
            let log =
                std::fs::read_to_string(done.dir.join(format!("stderr/player{seat}.log"))).unwrap();
            // The bot itself is the tenth process.
            assert!(
                log.contains("SPY fork-hog ok children=9 then EAGAIN"),
                "seat {seat}, sandbox {sandbox}: {log}"
            );
        }
        let faults: Vec<_> = done
            .lines(1)
            .into_iter()
            .filter(|l| l["type"] == "fault")
            .collect();
        assert!(faults.is_empty(), "{faults:?}");
        assert!(processes_with(&token).is_empty());
    }
}

/// `--limit-cpus` is a cpu cgroup per bot process: the bot itself (not only the
/// sandbox's helpers) runs in a cgroup of its own with that bandwidth, read back
/// from the kernel's cgroup files while it plays, and the cgroup is gone after.
/// With the process and memory limits too, which on cgroup v1 makes the cpu
/// cgroup the third hierarchy the bot enters.
#[test]
fn each_bot_runs_in_a_cpu_cgroup_of_its_own_with_the_bandwidth_asked() {
    let refused = play().seed(3).args(["--limit-cpus", "0.5"]).run();
    let stderr = String::from_utf8_lossy(&refused.output.stderr).into_owned();
    if !refused.output.status.success() {
        // A host without a cpu controller to delegate: a clear refusal.
        assert!(
            stderr.contains("--limit-cpus 0.5: failed to limit CPU per bot")
                && stderr.contains("cpu controller"),
            "{stderr}"
        );
        crate::support::skip(&format!(
            "this host cannot limit CPU per bot; checked the refusal only: {stderr}"
        ));
        return;
    }
    // The spy waits at its first request until it is sent SIGWINCH; it is a
    // copy that `nobody` can read (a root referee sandboxes bots as nobody).
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::copy(root().join("tests/spy/spy.py"), dir.path().join("spy.py")).unwrap();
    for sandbox in [false, true] {
        let token = tag("hold");
        let cmd = format!("python3 {}/spy.py hold --tag {token}", dir.path().display());
        let mut run = play()
            .seed(3)
            .args([
                "--policy",
                "lenient",
                "--no-timeouts",
                "--limit-cpus",
                "0.5",
            ])
            .args(["--limit-procs", "50", "--limit-memory-mb", "4096"])
            .arg("--seat")
            .arg(format!("1={cmd}"));
        if sandbox {
            run = run.arg("--sandbox");
        }
        let referee = std::thread::spawn(move || run.ok());
        // The bot is the process running spy.py, not bubblewrap around it.
        let start = std::time::Instant::now();
        let bot = loop {
            let found = processes_with(&token).into_iter().find_map(|p| {
                let (pid, cmd) = p.split_once(": ")?;
                let program = cmd.split(' ').next()?;
                program
                    .contains("python3")
                    .then(|| pid.parse::<u32>().ok())?
            });
            if found.is_some() || start.elapsed().as_secs() >= 60 {
                break found;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let seen = bot.map(cpu_bandwidth);
        // Released before any assertion, so a failure leaves nothing running.
        crate::support::release_held(&Vec::from_iter(bot), &referee);
        let (cgroup, bandwidth) = seen.expect("the spy started within 60 s");
        let done = referee.join().unwrap();
        assert_eq!(
            bandwidth.as_deref(),
            Some("50000 100000"),
            "sandbox {sandbox}: {cgroup:?}"
        );
        let name = cgroup.file_name().unwrap().to_string_lossy();
        assert!(
            name.starts_with("schmier-"),
            "sandbox {sandbox}: {cgroup:?}"
        );
        assert!(!cgroup.exists(), "left behind: {cgroup:?}");
        let log = std::fs::read_to_string(done.dir.join("stderr/player1.log")).unwrap();
        assert!(log.contains("SPY hold ok released"), "{log}");
    }
}

/// The cpu cgroup of process `pid` and its bandwidth as "QUOTA PERIOD" in µs
/// (`None`: unlimited), from cgroup v1's cpu hierarchy or else cgroup v2.
fn cpu_bandwidth(pid: u32) -> (std::path::PathBuf, Option<String>) {
    let table = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    let mut v2 = None;
    for line in table.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "cpu") {
            let dir = std::path::Path::new("/sys/fs/cgroup/cpu").join(path);
            let quota = read(dir.join("cpu.cfs_quota_us")).unwrap();
            let period = read(dir.join("cpu.cfs_period_us")).unwrap();
            let limited = quota != "-1";
            return (dir, limited.then(|| format!("{quota} {period}")));
        }
        if controllers.is_empty() {
            v2 = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
                .iter()
                .map(|r| std::path::Path::new(r).join(path))
                .find(|d| d.join("cpu.max").exists());
        }
    }
    let dir = v2.expect("a cpu cgroup, v1 or v2");
    let max = read(dir.join("cpu.max")).unwrap();
    let limited = !max.starts_with("max");
    (dir, limited.then_some(max))
}

/// Sandboxed bots share the referee's session (a session each made decisions
/// slow on a loaded host), so the seccomp filter refuses `TIOCSTI`, with which a
/// bot could type into the operator's terminal.
#[test]
fn pushing_keystrokes_into_a_terminal() {
    let (open, boxed) = works_only_unsandboxed("tiocsti");
    assert!(open.report().1.contains("ENOTTY"), "{:?}", open.report());
    assert!(boxed.report().1.contains("EPERM"), "{:?}", boxed.report());
}

/// Without `--seed` the referee draws 64 bits and prints them only when the run
/// is over; a `--seed` given to sandboxed (untrusted) bots draws one warning,
/// `--quiet` or not; a bot author's own unsandboxed runs are not nagged
/// (`spy_seed.rs` shows the search the warning is about).
#[test]
fn the_drawn_seed_is_secret_until_the_end_and_a_given_seed_is_warned_about() {
    let stderr = |done: &Done| String::from_utf8_lossy(&done.output.stderr).into_owned();
    let drawn = play().arg("--no-rotate").ok();
    let text = stderr(&drawn);
    let header = &drawn.lines(1)[0];
    let seed = header["match_seed"].as_u64().unwrap();
    let (before, after) = text
        .split_once("the match seed was")
        .unwrap_or_else(|| panic!("the seed is printed at the end: {text}"));
    assert!(!before.contains(&seed.to_string()), "{text}");
    assert_eq!(after.trim(), seed.to_string());
    assert!(!text.contains("warning"), "{text}");
    // 64 bits: two draws differ, and both fall below 2^48 once in 2^32 runs.
    let again = play().ok().lines(1)[0]["match_seed"].as_u64().unwrap();
    assert_ne!(seed, again);
    assert!(seed.max(again) >= 1 << 48, "{seed} {again}");

    for seed in [3, 123456789123456789] {
        let given = play().seed(seed).args(["--quiet", "--sandbox"]).ok();
        let warning = format!("warning: --seed {seed}: every deal of this match follows");
        assert_eq!(
            stderr(&given).matches(&warning).count(),
            1,
            "{}",
            stderr(&given)
        );
    }
    let own = play().seed(3).ok();
    assert!(!stderr(&own).contains("warning"), "{}", stderr(&own));
}

/// A root referee starts sandboxed bots as `nobody`; a bot whose files `nobody`
/// cannot reach (here a 0700 directory) still runs, with a warning, and is never
/// root inside nor holds a capability.
#[test]
fn a_sandboxed_bot_is_never_root_inside() {
    let private = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::copy(
        root().join("tests/spy/spy.py"),
        private.path().join("spy.py"),
    )
    .unwrap();
    let cmd = format!("python3 {}/spy.py whoami", private.path().display());
    for (seat, dir_of) in [
        (1, root().join("tests/spy")),
        (4, private.path().to_path_buf()),
    ] {
        let run = play().seed(3).args(["--policy", "lenient", "--sandbox"]);
        let run = if seat == 1 {
            run.arg("--seat").arg("1=python3 tests/spy/spy.py whoami")
        } else {
            run.arg("--seat").arg(format!("4={cmd}"))
        };
        let done = run.ok();
        let log =
            std::fs::read_to_string(done.dir.join(format!("stderr/player{seat}.log"))).unwrap();
        let seen: serde_json::Value =
            serde_json::from_str(log.split_once("SPY whoami ok ").unwrap().1.trim()).unwrap();
        assert_eq!(seen["uid"], if root_referee() { 65534 } else { uid() });
        assert_eq!(seen["caps"], "0000000000000000");
        assert_eq!(
            seen["cwd"],
            std::fs::canonicalize(&dir_of).unwrap().to_str().unwrap()
        );
        let warned = String::from_utf8_lossy(&done.output.stderr).contains("runs as root");
        assert_eq!(
            warned,
            root_referee() && seat == 4,
            "seat {seat}: {}",
            String::from_utf8_lossy(&done.output.stderr)
        );
    }
}

fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

fn root_referee() -> bool {
    uid() == 0
}
