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
use std::process::{Child, ChildStdin, Stdio};

use clap::Args;

use super::resident::{Holes, Resident};

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
    /// Make (or find in the cache) an erofs image of this view (`image.rs`,
    /// a JSON `Spec`; repeatable) and hold it.
    #[arg(long, value_name = "JSON")]
    pub image: Vec<String>,
    /// The image cache.
    #[arg(long, value_name = "DIR")]
    pub image_cache: Option<PathBuf>,
    /// `mkfs.erofs`.
    #[arg(long, value_name = "PATH")]
    pub mkfs: Option<PathBuf>,
    /// Hold every file beneath PATH only if an image could not be made
    /// (repeatable): bots then see these paths as they are on the host.
    #[arg(long, value_name = "PATH")]
    pub imaged: Vec<PathBuf>,
}

/// What the holder holds, as it reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub bytes: u64,
    pub locked: bool,
    /// Files of the view not held (past the budget), and their bytes.
    pub left_out: (u64, u64),
}

/// Each image asked for: its path in the cache, or why it could not be made.
pub type Images = Vec<Result<PathBuf, String>>;

/// The running holder; the view is let go when it is dropped.
#[derive(Debug)]
pub struct Holder {
    /// Taken on drop, by the thread that reaps it.
    child: Option<Child>,
    /// Closed on drop: the holder's signal to exit.
    stdin: Option<ChildStdin>,
    pub held: Held,
    pub images: Images,
}

impl Holder {
    /// Starts `referee` (the referee's own executable) holding `args`'
    /// view, without waiting: [`Holder::wait`] waits until it holds it, so
    /// that the referee prepares the rest of the sandbox meanwhile.
    pub fn start(referee: PathBuf, args: HoldArgs) -> std::io::Result<Starting> {
        let images = args.image.len();
        let mut child = crate::os::spawner::on_thread(move || {
            let mut cmd = crate::os::own_exe::command(&referee);
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
            for i in &args.image {
                cmd.arg("--image").arg(i);
            }
            for i in &args.imaged {
                cmd.arg("--imaged").arg(i);
            }
            if let (Some(cache), Some(mkfs)) = (&args.image_cache, &args.mkfs) {
                cmd.arg("--image-cache").arg(cache).arg("--mkfs").arg(mkfs);
            }
            cmd.env_clear()
                .current_dir("/")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
            crate::os::process::die_with_referee(&mut cmd);
            cmd.spawn()
        })?;
        let stdin = child.stdin.take();
        Ok(Starting {
            child,
            stdin,
            images,
        })
    }
}

/// A holder started, not yet known to hold its view.
#[derive(Debug)]
pub struct Starting {
    child: Child,
    stdin: Option<ChildStdin>,
    /// How many images were asked for: a line each follows the report.
    images: usize,
}

impl Starting {
    /// Waits until the holder holds the view, and says how much.
    pub fn wait(mut self) -> std::io::Result<Holder> {
        let mut line = String::new();
        let mut out = self.child.stdout.take().map(std::io::BufReader::new);
        let read = out.as_mut().map(|o| o.read_line(&mut line));
        let mut images = Vec::new();
        for _ in 0..self.images {
            let mut line = String::new();
            let image = out
                .as_mut()
                .map(|o| o.read_line(&mut line))
                .and_then(|r| r.ok());
            images.push(parse_image(image.map(|_| line.as_str())));
        }
        let held = match (read, parse(&line)) {
            (Some(Ok(_)), Some(held)) if images.iter().all(Option::is_some) => held,
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
            images: images.into_iter().flatten().collect(),
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
    // The images are found (a walk of the view for each key) while the
    // roots, which need none, are held; then the images themselves, and the
    // host's paths for the view if an image could not be made.
    let (images, mut held) = std::thread::scope(|scope| {
        let images = scope.spawn(|| make_images(args));
        let held = Resident::hold(&args.root, &args.hidden, args.others_only, Holes::LeftOut);
        (images.join().unwrap_or_default(), held)
    });
    if images.iter().any(Result::is_err) {
        // Held again with the view's paths in one walk, each file once.
        let roots: Vec<PathBuf> = args.root.iter().chain(&args.imaged).cloned().collect();
        held = Resident::hold(&roots, &args.hidden, args.others_only, Holes::LeftOut);
    }
    // The images are the referee's (mode 0600), read by the kernel for
    // every bot: held whoever may read them, holes and all (a sparse file
    // of the view is a hole in its image, not in the image file).
    let made: Vec<PathBuf> = images.iter().flatten().cloned().collect();
    let held_images = Resident::hold(&made, &[], false, Holes::Held);
    warn_holes(&held.holes);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} {} {} {}",
        held.bytes + held_images.bytes,
        (held.locked && held_images.locked) as u8,
        held.left_out.0 + held_images.left_out.0,
        held.left_out.1 + held_images.left_out.1
    )?;
    for image in &images {
        match image {
            Ok(path) => writeln!(out, "image {}", path.display())?,
            Err(why) => writeln!(out, "unmade {}", why.replace('\n', " "))?,
        }
    }
    out.flush()?;
    drop(out);
    // Whatever arrives is ignored; EOF (the referee closed the pipe, or is
    // gone) ends the hold.
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    while !matches!(stdin.read(&mut sink), Ok(0) | Err(_)) {}
    drop(held);
    drop(held_images);
    Ok(())
}

/// Warns, naming them, of the sparse files held without their holes: bots
/// see them from the host, so a hole one bot reads is cached for the next
/// (`resident.rs`). Said here, where the files are known, on the stderr the
/// holder shares with the referee.
fn warn_holes(holes: &[(PathBuf, u64)]) {
    const NAMED: usize = 3;
    if holes.is_empty() {
        return;
    }
    let bytes: u64 = holes.iter().map(|h| h.1).sum();
    let mut names: Vec<String> = (holes.iter().take(NAMED))
        .map(|(path, _)| path.display().to_string())
        .collect();
    if holes.len() > NAMED {
        names.push(format!("{} more", holes.len() - NAMED));
    }
    eprintln!(
        "referee: warning: {} sparse file(s) bots can read from the host ({}) are held in \
         memory without their holes ({} MiB of zeros, not held), so a bot could leave bits for \
         a later game in which pages of those holes are cached (SECURITY.md, \"Duplicate-set \
         memory\"). A root referee with images shows them to each bot from an image of its \
         own, where no hole is shared; or store them dense (cp --sparse=never), held whole",
        holes.len(),
        names.join(", "),
        bytes >> 20
    );
}

/// The images `args` asks for, made or found (`image.rs`).
fn make_images(args: &HoldArgs) -> Images {
    let referee = crate::os::own_exe::path();
    (args.image.iter())
        .map(|json| {
            let (Some(cache), Some(mkfs), Ok(referee)) = (&args.image_cache, &args.mkfs, &referee)
            else {
                return Err("no image cache".to_owned());
            };
            let maker = super::image::Maker {
                cache: cache.clone(),
                mkfs: mkfs.clone(),
            };
            let spec: super::image::Spec =
                serde_json::from_str(json).map_err(|e| format!("a malformed spec: {e}"))?;
            super::image::ensure(&maker, referee, &spec).map_err(|e| format!("{e:#}"))
        })
        .collect()
}

/// An image line of the report: `image PATH` or `unmade WHY`; `None` if
/// there is none, or it is neither.
fn parse_image(line: Option<&str>) -> Option<Result<PathBuf, String>> {
    let line = line?.strip_suffix('\n')?;
    if let Some(path) = line.strip_prefix("image ") {
        return Some(Ok(PathBuf::from(path)));
    }
    line.strip_prefix("unmade ").map(|why| Err(why.to_owned()))
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
        assert_eq!(
            parse_image(Some("image /var/cache/x.erofs\n")),
            Some(Ok(PathBuf::from("/var/cache/x.erofs")))
        );
        assert_eq!(
            parse_image(Some("unmade no space\n")),
            Some(Err("no space".to_owned()))
        );
        assert_eq!(parse_image(Some("image /x")), None, "a line cut short");
        assert_eq!(parse_image(None), None);
    }
}
