//! The Landlock layer of `--sandbox`, applied inside the sandbox.
//!
//! Why inside: a process under Landlock may not mount anything, so a referee or a
//! bubblewrap restricted *before* the sandbox exists could not build it. Instead
//! bubblewrap runs, in place of the bot, the referee's own executable (shown
//! read-only in every sandbox): `referee landlock RULES -- BOT...` restricts
//! itself and then execs the bot. No extra process is left: the bot replaces the
//! wrapper and keeps its Landlock domain, which no descendant can leave.
//!
//! What the rules allow (everything else Landlock knows of is denied):
//! - files: read and execute beneath what the sandbox shows (`--read`: the system
//!   directories, the bot's own directory, its program); of `/proc`, only the
//!   allow-list of `procview.rs` (its own `stat`, `status`, `maps`..., the
//!   host's masked summaries; never `pagemap`, `smaps`, `mountinfo` or another
//!   process's files); read-write
//!   beneath its scratch (`--write`: the private `/tmp` and `/dev/shm`); read and
//!   write, but no ioctl, of the harmless devices (`--device`: `/dev/null`,
//!   `zero`, `full`, `random`, `urandom`); listing `/dev` (`--list`). So not the
//!   terminal (`/dev/tty`, shared with the operator and a human seat), not
//!   `/dev/pts`, and no write anywhere in bubblewrap's own root.
//! - network: no TCP bind or connect at all, even on the sandbox's own loopback.
//! - scopes (ABI 6): no signal to, and no abstract Unix socket of, any process
//!   outside the bot's own tree (bubblewrap's pid 1 included).
//!
//! These rights are a hard requirement, never a best effort: `--sandbox` promises
//! them, so [`probe`] refuses a kernel without Landlock ABI 6 (Linux 6.12) before
//! any bot starts, and the wrapper refuses to exec a bot it could not confine
//! fully. UDP is not covered: Landlock controls it only from ABI 10, and the
//! network namespace already leaves a bot no one to reach.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;
use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope, ABI,
};

/// The Landlock ABI all of whose rights are required: 6 adds the scopes.
const REQUIRED: ABI = ABI::V6;

/// The hidden subcommand bubblewrap runs in place of the bot.
pub const SUBCOMMAND: &str = "landlock";

/// Where a confined bot may go; each flag repeatable.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// Read and execute beneath PATH.
    #[arg(long, value_name = "PATH")]
    pub read: Vec<PathBuf>,
    /// Read, write, create and remove beneath PATH.
    #[arg(long, value_name = "PATH")]
    pub write: Vec<PathBuf>,
    /// Read and write the device file PATH (no ioctl).
    #[arg(long, value_name = "PATH")]
    pub device: Vec<PathBuf>,
    /// List the directory PATH (its entries stay closed).
    #[arg(long, value_name = "PATH")]
    pub list: Vec<PathBuf>,
    /// Run on CPU N only (with the other `--cpu`s; none: wherever), set
    /// before the seccomp filter refuses `sched_setaffinity`.
    #[arg(long, value_name = "N")]
    pub cpu: Vec<usize>,
}

impl Rules {
    /// The wrapper's command line for these rules and `command`, after the
    /// referee's executable; `stdout_fd`: the descriptor the bot's stdout is
    /// passed in (see [`LandlockArgs::stdout_fd`]); `hold`: wait for the
    /// referee's word before the exec (see [`LandlockArgs::hold`]).
    pub fn command_line(
        &self,
        command: impl IntoIterator<Item = OsString>,
        stdout_fd: Option<i32>,
        hold: bool,
    ) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec![SUBCOMMAND.into()];
        if hold {
            a.push("--hold".into());
        }
        if let Some(fd) = stdout_fd {
            a.push("--stdout-fd".into());
            a.push(fd.to_string().into());
        }
        for (flag, paths) in [
            ("--read", &self.read),
            ("--write", &self.write),
            ("--device", &self.device),
            ("--list", &self.list),
        ] {
            for p in paths {
                a.push(flag.into());
                a.push(p.into());
            }
        }
        for c in &self.cpu {
            a.push("--cpu".into());
            a.push(c.to_string().into());
        }
        a.push("--".into());
        a.extend(command);
        a
    }
}

/// `referee landlock RULES -- PROGRAM ARGS...` (hidden): what bubblewrap runs
/// inside a sandbox in place of the bot.
#[derive(Args, Debug)]
pub struct LandlockArgs {
    #[command(flatten)]
    pub rules: Rules,
    /// The descriptor that holds the bot's stdout, moved to descriptor 1
    /// before the exec. The referee passes it so, not as bubblewrap's own
    /// stdout: bubblewrap and its pid 1 keep their stdio open for the whole
    /// sandbox's life but close every other descriptor they were handed, so
    /// the bot is then the pipe's only writer, and a bot that closes its
    /// stdout is seen to close it.
    #[arg(long, value_name = "FD")]
    pub stdout_fd: Option<i32>,
    /// Once confined, wait for one byte on stdin, a newline (the referee's
    /// word that the bot's game begins), before the exec; exit at EOF without
    /// running the bot. So a game's sandboxes are built while the game before
    /// it is played, and no bot runs before its game (`session.rs`,
    /// `Prepared`).
    #[arg(long)]
    pub hold: bool,
    /// The bot's program (an absolute path) and its arguments.
    #[arg(last = true, required = true, value_name = "BOT")]
    pub command: Vec<OsString>,
}

/// Confines this process with `args.rules` and execs the bot; returns only
/// if either fails.
pub fn exec(args: &LandlockArgs) -> anyhow::Error {
    if let Some(fd) = args.stdout_fd {
        if let Err(e) = nix::unistd::dup2(fd, 1).and_then(|_| nix::unistd::close(fd)) {
            return anyhow!("failed to move the bot's stdout from descriptor {fd}: {e}");
        }
    }
    if let Err(e) = (pin(&args.rules.cpu))
        .and_then(|()| confine(&args.rules))
        .and_then(|()| harden())
    {
        return e;
    }
    let Some((program, rest)) = args.command.split_first() else {
        return anyhow!("failed to start the bot: no command after `--`");
    };
    if args.hold {
        if let Err(e) = wait_for_word() {
            return e;
        }
    }
    if let Some(name) = builtin_name(program, rest) {
        run_builtin(name);
    }
    // The environment is inherited as is (the bot's, set by the referee).
    let e = std::process::Command::new(program).args(rest).exec();
    anyhow!(
        "failed to start the bot {}: {e}",
        PathBuf::from(program).display()
    )
}

/// The built-in bot `program rest` runs, if it is one: `program` is this
/// very executable (the referee's, which runs the built-in bots) and `rest`
/// is `bot NAME`.
fn builtin_name<'a>(program: &OsString, rest: &'a [OsString]) -> Option<&'a str> {
    let [word, name] = rest else { return None };
    let own = std::env::current_exe().ok()?;
    (word == "bot" && Path::new(program) == own).then_some(name.to_str()?)
}

/// Runs the built-in bot `name` in this process, now confined exactly as
/// the exec'd bot would be (same pid, descriptors, rules and filters): the
/// exec would start this executable again only to run the same code, and
/// that second start of a large executable was a fifth of a sandboxed
/// built-in bot's start (BENCHMARKS.md, issue 27). Exits as `referee bot
/// NAME` would.
fn run_builtin(name: &str) -> ! {
    let result = crate::builtin::run(name);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    match result {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("referee: {e:#}");
            std::process::exit(2)
        }
    }
}

/// Reads exactly one byte of stdin, the referee's word to run the bot (the
/// rest, its `hello` on, is the bot's to read). EOF: the game the sandbox
/// was built for will not be played; exit without running the bot.
fn wait_for_word() -> anyhow::Result<()> {
    let mut byte = [0u8; 1];
    loop {
        match nix::unistd::read(0, &mut byte) {
            Ok(0) => std::process::exit(0),
            Ok(_) if byte[0] == b'\n' => return Ok(()),
            Ok(_) => {
                return Err(anyhow!(
                    "failed to start the bot: the referee's word was not a newline"
                ))
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(anyhow!("failed to start the bot: cannot read stdin: {e}")),
        }
    }
}

/// Pins this process (and so the bot and all it starts) to `cpus`, if any.
fn pin(cpus: &[usize]) -> anyhow::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    crate::os::process::pin_task(0, cpus)
        .map_err(|e| anyhow!("failed to pin the bot to CPUs {cpus:?}: {e}"))?;
    Ok(())
}

/// What the wrapper sets last, once nothing more needs building: no locked
/// memory (`RLIMIT_MEMLOCK` 0, so the host-wide `nr_mlock` count cannot carry
/// anything and no bot pins the host's RAM), and the inner seccomp filter
/// (`seccomp.rs`), which bubblewrap could not have run under.
fn harden() -> anyhow::Result<()> {
    use nix::sys::resource::{setrlimit, Resource};
    setrlimit(Resource::RLIMIT_MEMLOCK, 0, 0)
        .map_err(|e| anyhow!("failed to set the bot's RLIMIT_MEMLOCK to 0: {e}"))?;
    for program in super::seccomp::inner()? {
        seccompiler::apply_filter(&program)
            .map_err(|e| anyhow!("failed to install the bot's seccomp filter: {e}"))?;
    }
    Ok(())
}

/// `path_beneath_rules` skips a path that cannot be opened: a missing path
/// grants less, never more.
/// `/proc` is not among `rules`: what of it the bot may read is the
/// allow-list of `procview.rs`, for this process's own pid.
fn confine(rules: &Rules) -> anyhow::Result<()> {
    let proc = super::procview::ProcView::of(std::process::id());
    proc.hold();
    let all = AccessFs::from_all(REQUIRED);
    let fail = |e: RulesetError| anyhow!("failed to confine the bot with Landlock: {e}");
    let status = ruleset()
        .and_then(|r| {
            r.add_rules(path_beneath_rules(
                &rules.read,
                AccessFs::from_read(REQUIRED),
            ))
        })
        .and_then(|r| r.add_rules(path_beneath_rules(&rules.write, all)))
        .and_then(|r| {
            r.add_rules(path_beneath_rules(
                &rules.device,
                AccessFs::ReadFile | AccessFs::WriteFile,
            ))
        })
        .and_then(|r| r.add_rules(path_beneath_rules(&rules.list, AccessFs::ReadDir)))
        .and_then(|r| r.add_rules(path_beneath_rules(&proc.files, AccessFs::ReadFile)))
        .and_then(|r| r.add_rules(path_beneath_rules(&proc.dirs, AccessFs::ReadDir)))
        .and_then(RulesetCreated::restrict_self)
        .map_err(fail)?;
    // A hard requirement fails above rather than enforcing less; checked anyway,
    // as the crate's documentation asks of a sandbox that must hold.
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(anyhow!(
            "failed to confine the bot with Landlock: only {:?} (no_new_privs {})",
            status.ruleset,
            status.no_new_privs
        ));
    }
    Ok(())
}

/// Every right of [`REQUIRED`] handled: files, TCP, signal and socket scopes.
fn ruleset() -> Result<RulesetCreated, RulesetError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(REQUIRED))?
        .handle_access(AccessNet::from_all(REQUIRED))?
        .scope(Scope::from_all(REQUIRED))?
        .create()
}

/// Checks, in the referee, that this kernel enforces every rule the wrapper
/// will set (creating a ruleset restricts nothing); fails closed, saying why and
/// what to do.
pub fn probe() -> anyhow::Result<()> {
    ruleset().map(drop).map_err(|e| {
        anyhow!(
            "failed to start the sandbox: --sandbox needs Landlock ABI 6 or later (Linux 6.12, \
             with `landlock` in the kernel's `lsm=` list) for its second layer; this kernel {} \
             ({e}). Boot a kernel with Landlock ABI 6 or later, or run without --sandbox; the \
             referee does not run bots with less than --sandbox promises",
            match kernel_abi() {
                Some(v) => format!("has Landlock ABI {v}"),
                None => "has no Landlock enabled".to_owned(),
            }
        )
    })
}

/// The kernel's Landlock ABI version, `None` if Landlock is off or absent.
fn kernel_abi() -> Option<i64> {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // reads nothing and returns the ABI version or -1.
    let v = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    (v > 0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: LandlockArgs,
    }

    /// The command line the sandbox writes is the one the wrapper parses back,
    /// paths with spaces and a bot argument that looks like a flag included.
    #[test]
    fn the_wrappers_command_line_parses_back_to_the_same_rules() {
        let rules = Rules {
            read: vec!["/usr".into(), "/bots/my bot".into()],
            write: vec!["/tmp".into()],
            device: vec!["/dev/null".into()],
            list: vec!["/dev".into()],
            cpu: vec![1, 3],
        };
        let bot: Vec<OsString> = vec!["/usr/bin/python3".into(), "--read".into(), "x".into()];
        let line = rules.command_line(bot.clone(), Some(7), true);
        assert_eq!(line[0], SUBCOMMAND);
        let parsed = Wrapper::try_parse_from(
            std::iter::once(OsString::from("referee")).chain(line.into_iter().skip(1)),
        )
        .unwrap()
        .args;
        assert_eq!(parsed.rules, rules);
        assert_eq!(parsed.stdout_fd, Some(7));
        assert!(parsed.hold);
        assert_eq!(parsed.command, bot);
    }
}
