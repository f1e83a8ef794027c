//! `referee stage-view` (hidden): an image of the view built, as the
//! holder asks (`image.rs`, [`super::image::ensure`]), by `mkfs.erofs` from a
//! staging tree of bind mounts in a mount namespace of its own.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::Args;
use nix::libc;

use super::image::{Spec, CHUNK};

/// `referee stage-view` (hidden): what to build.
#[derive(Args, Debug)]
pub struct StageArgs {
    /// The image to write.
    #[arg(long, value_name = "FILE")]
    pub image: PathBuf,
    /// `mkfs.erofs`.
    #[arg(long, value_name = "PATH")]
    pub mkfs: PathBuf,
    /// The [`Spec`], as JSON.
    #[arg(long, value_name = "JSON")]
    pub spec: String,
}

/// `referee stage-view`: in a mount namespace of its own (gone when it
/// exits), binds each source into a tmpfs at its path, covers the covers,
/// and runs `mkfs.erofs` on that tree. Single-threaded.
pub fn stage(args: &StageArgs) -> anyhow::Result<()> {
    use nix::mount::{mount, MsFlags};
    let spec: Spec = serde_json::from_str(&args.spec).context("a malformed spec")?;
    // SAFETY: unshare(2) of the mount namespace; this process is
    // single-threaded (the subcommand starts no runtime).
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(std::io::Error::last_os_error()).context("failed to make a mount namespace");
    }
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)?;
    // Never a temporary folder removed recursively: the staging tree holds
    // binds of host directories, and a recursive removal would delete
    // through them. The two folders are made empty by the caller
    // ([`ensure`]), covered by tmpfs mounts in this namespace only, and
    // removed empty by the caller once this process (and its namespace) is
    // gone.
    let stage = args.image.with_extension("stage");
    let empty = args.image.with_extension("empty");
    let root = stage.as_path();
    for dir in [&stage, &empty] {
        if std::fs::read_dir(dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
        {
            return Err(anyhow!("{} is not an empty folder", dir.display()));
        }
    }
    let tmpfs = |at: &Path, data: &str| {
        mount(
            Some("tmpfs"),
            at,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(data),
        )
        .with_context(|| format!("failed to mount a tmpfs at {}", at.display()))
    };
    tmpfs(root, "mode=0755")?;
    tmpfs(&empty, "mode=0755,size=4k")?;
    let empty_file = empty.join("file");
    File::create(&empty_file)?;
    bind_tree(root, &spec, &empty_file)?;
    let status = std::process::Command::new(&args.mkfs)
        .args(["--quiet", "--preserve-mtime", CHUNK])
        .arg(&args.image)
        .arg(root)
        .stdin(std::process::Stdio::null())
        .status()
        .with_context(|| format!("failed to run {}", args.mkfs.display()))?;
    if !status.success() {
        return Err(anyhow!("{} failed ({status})", args.mkfs.display()));
    }
    std::fs::set_permissions(&args.image, std::fs::Permissions::from_mode(0o600))?;
    std::io::stdout().flush()?;
    Ok(())
}

/// Binds each source of `spec` at its path beneath `root` and covers each
/// cover (a folder with an empty tmpfs, a file with `empty_file`).
pub(super) fn bind_tree(root: &Path, spec: &Spec, empty_file: &Path) -> anyhow::Result<()> {
    use nix::mount::{mount, MsFlags};
    let none: Option<&str> = None;
    // A source inside another's bind would be made (or truncated) through
    // it, on the host: refused.
    for (a, _) in &spec.sources {
        if (spec.sources.iter()).any(|(b, _)| a != b && a.starts_with(b)) {
            return Err(anyhow!("{} lies inside another source", a.display()));
        }
    }
    for (inside, host) in &spec.sources {
        let at = root.join(inside);
        if host.is_dir() {
            std::fs::create_dir_all(&at)?;
        } else {
            std::fs::create_dir_all(at.parent().unwrap_or(root))?;
            File::create(&at)?;
        }
        mount(
            Some(host),
            &at,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .with_context(|| format!("failed to bind {}", host.display()))?;
    }
    for cover in &spec.covers {
        let at = root.join(cover);
        if at.is_dir() {
            mount(
                Some("tmpfs"),
                &at,
                Some("tmpfs"),
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                Some("mode=0755,size=4k"),
            )
            .with_context(|| format!("failed to cover {}", at.display()))?;
        } else if at.exists() {
            mount(Some(empty_file), &at, none, MsFlags::MS_BIND, none)
                .with_context(|| format!("failed to cover {}", at.display()))?;
        }
    }
    Ok(())
}
