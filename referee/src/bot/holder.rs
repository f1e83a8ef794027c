//! The sandbox's resident view (`resident.rs`) held by a small process of its
//! own, not by the referee.
//!
//! Why: holding the view maps every file of it, 11,000 mappings here, and a
//! process with that many mappings forks slowly: the kernel copies each
//! mapping into the child, and the child's exec tears each down again. A
//! sandboxed bot was forked from the referee in 20 ms (p50; 50 ms p90)
//! against 0.5 ms unsandboxed, one bot after another, on every game's
//! critical path (BENCHMARKS.md, "Sandboxed competition: the start of a
//! game"). So the referee runs its own executable as `referee hold-view`
//! (hidden), which maps and locks the view, says how much it holds on its
//! stdout, and waits for its stdin to close: the pages stay held for as long
//! as the referee runs, and the referee stays small.
//!
//! The holder dies with the referee: its stdin is the referee's pipe, closed
//! when the referee exits however it exits, and its parent-death signal
//! (armed from the spawner thread, which lives as long as the referee) kills
//! it if the referee is killed.

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};

use clap::Args;

use super::resident::Resident;

/// The hidden subcommand that holds the view.
pub const SUBCOMMAND: &str = "hold-view";

/// `referee hold-view`: what to hold.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct HoldArgs {
    /// Hold every file beneath PATH (repeatable).
    #[arg(long, value_name = "PATH")]
    pub root: Vec<PathBuf>,
    /// Skip what lies beneath PATH (repeatable).
    #[arg(long, value_name = "PATH")]
    pub hidden: Vec<PathBuf>,
    /// Only files other users can read (a bot run as a user of its own could
    /// read no other).
    #[arg(long)]
    pub others_only: bool,
}

/// What the holder holds, as it reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub bytes: u64,
    pub locked: bool,
    /// Files of the view not held (past the budget), and their bytes.
    pub left_out: (u64, u64),
}

/// The running holder; the view is let go when it is dropped.
#[derive(Debug)]
pub struct Holder {
    /// Taken on drop, by the thread that reaps it.
    child: Option<Child>,
    /// Closed on drop: the holder's signal to exit.
    stdin: Option<ChildStdin>,
    pub held: Held,
}

impl Holder {
    /// Starts `referee` (the referee's own executable) holding `args`'
    /// view, without waiting: [`Holder::wait`] waits until it holds it, so
    /// that the referee prepares the rest of the sandbox meanwhile.
    pub fn start(referee: PathBuf, args: HoldArgs) -> std::io::Result<Starting> {
        let mut child = super::spawner::on_thread(move || {
            let mut cmd = Command::new(&referee);
            cmd.arg(SUBCOMMAND);
            for r in &args.root {
                cmd.arg("--root").arg(r);
            }
            for h in &args.hidden {
                cmd.arg("--hidden").arg(h);
            }
            if args.others_only {
                cmd.arg("--others-only");
            }
            cmd.env_clear()
                .current_dir("/")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
            super::unix::die_with_referee(&mut cmd);
            cmd.spawn()
        })?;
        let stdin = child.stdin.take();
        Ok(Starting { child, stdin })
    }
}

/// A holder started, not yet known to hold its view.
#[derive(Debug)]
pub struct Starting {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Starting {
    /// Waits until the holder holds the view, and says how much.
    pub fn wait(mut self) -> std::io::Result<Holder> {
        let mut line = String::new();
        let read =
            (self.child.stdout.take()).map(|out| std::io::BufReader::new(out).read_line(&mut line));
        let held = match (read, parse(&line)) {
            (Some(Ok(_)), Some(held)) => held,
            _ => {
                let _ = self.child.kill();
                let status = self.child.wait()?;
                return Err(std::io::Error::other(format!(
                    "the process holding the sandbox's view in memory failed ({status})"
                )));
            }
        };
        Ok(Holder {
            child: Some(self.child),
            stdin: self.stdin,
            held,
        })
    }
}

impl Drop for Holder {
    /// Tells the holder to let go, and does not wait for it: unmapping the
    /// view takes it 0.2–0.3 s, which used to hold up the referee's exit
    /// (BENCHMARKS.md, issue 27's quick wins). A thread reaps it; if the
    /// referee exits first, the host's init does. The holder runs no bot code
    /// and holds no bot's files open, so its few moments past the referee's
    /// exit leave nothing of any bot behind.
    fn drop(&mut self) {
        drop(self.stdin.take());
        if let Some(mut child) = self.child.take() {
            let _ = std::thread::Builder::new()
                .name("view-holder-reaper".into())
                .spawn(move || child.wait());
        }
    }
}

/// `referee hold-view`: holds the view, reports it, waits for stdin to close.
pub fn run(args: &HoldArgs) -> std::io::Result<()> {
    let held = Resident::hold(&args.root, &args.hidden, args.others_only);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} {} {} {}",
        held.bytes, held.locked as u8, held.left_out.0, held.left_out.1
    )?;
    out.flush()?;
    drop(out);
    // Whatever arrives is ignored; EOF (the referee closed the pipe, or is
    // gone) ends the hold.
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    while !matches!(stdin.read(&mut sink), Ok(0) | Err(_)) {}
    drop(held);
    Ok(())
}

fn parse(line: &str) -> Option<Held> {
    let mut w = line.split_whitespace().map(|w| w.parse::<u64>().ok());
    let (bytes, locked, files, left) = (w.next()??, w.next()??, w.next()??, w.next()??);
    Some(Held {
        bytes,
        locked: locked == 1,
        left_out: (files, left),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_line_is_read_back_and_a_bad_one_is_refused() {
        let held = parse("1234 1 2 99\n").unwrap();
        assert_eq!(
            held,
            Held {
                bytes: 1234,
                locked: true,
                left_out: (2, 99)
            }
        );
        assert_eq!(parse(""), None);
        assert_eq!(parse("12 x 0 0"), None);
    }
}
