//! The mounts a kept sandbox's init builds for its bot alone, in the bot's
//! fresh mount namespace: `/proc` with its stand-ins, `/tmp`, `/dev/shm`,
//! `/scratch`, and the view's own images over the sandbox's binds.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use nix::libc;

use super::message::{Request, SCRATCH_INSIDE};

pub(super) fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: nix::mount::MsFlags,
    data: Option<&str>,
) -> anyhow::Result<()> {
    nix::mount::mount(source, target, fstype, flags, data)
        .with_context(|| format!("failed to mount {}", target.display()))
}

/// The bot's own mounts (module doc).
pub(super) fn mounts(request: &Request, masks: &Path, images: &[OwnedFd]) -> anyhow::Result<()> {
    use nix::mount::MsFlags;
    let none: Option<&str> = None;
    mount(
        none,
        Path::new("/"),
        none,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        none,
    )?;
    own_proc(request, masks)?;
    let safe = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    // What the sandbox shows beneath /tmp, taken out before the fresh /tmp
    // covers it and put back on top.
    let kept: Vec<(PathBuf, OwnedFd)> = (request.keep.iter())
        .map(|p| {
            let path = PathBuf::from(OsString::from_vec(p.clone()));
            clone_tree(&path).map(|fd| (path, fd))
        })
        .collect::<anyhow::Result<_>>()?;
    let tmpfs = |at: &str, bytes: u64| {
        let data = format!("mode=0755,size={bytes}");
        mount(
            Some("tmpfs"),
            Path::new(at),
            Some("tmpfs"),
            safe,
            Some(&data),
        )
    };
    tmpfs("/tmp", request.tmpfs_bytes)?;
    tmpfs("/dev/shm", request.tmpfs_bytes)?;
    if let Some(bytes) = request.scratch_bytes {
        tmpfs(SCRATCH_INSIDE, bytes)?;
    }
    for (path, tree) in kept {
        put_back(&path, &tree)?;
    }
    show_views(request, images)?;
    // Last: every mount but the bot's own fresh ones read-only, so that no
    // metadata call leaves anything on what the next bot shares.
    let own = [
        Path::new("/tmp"),
        Path::new("/dev/shm"),
        Path::new(SCRATCH_INSIDE),
    ];
    super::state::seal(&own)
}

/// The bot's fresh `/proc`, with the constant stand-ins bound over its
/// host-wide files and its kernel knobs read-only, and the stand-ins'
/// folder out of sight.
pub(super) fn own_proc(request: &Request, masks: &Path) -> anyhow::Result<()> {
    use nix::mount::MsFlags;
    let none: Option<&str> = None;
    let proc = Path::new("/proc");
    let safe = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(
        Some("proc"),
        proc,
        Some("proc"),
        safe | MsFlags::MS_NOEXEC,
        none,
    )?;
    let read_only = |path: &Path, source: &Path| -> anyhow::Result<()> {
        nix::mount::mount(
            Some(source),
            path,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .with_context(|| format!("failed to bind {}", path.display()))?;
        let ro = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | safe;
        mount(none, path, none, ro, none)
    };
    for sub in ["sys", "sysrq-trigger", "irq", "bus"] {
        let path = proc.join(sub);
        if path.exists() {
            read_only(&path, &path)?;
        }
    }
    for (target, name) in &request.masks {
        read_only(Path::new(target), &masks.join(name))?;
    }
    // Out of sight: unmounted where the sandbox's mounts are its own, else
    // (bubblewrap run as root makes them locked) covered by an empty tmpfs.
    if nix::mount::umount2(masks, nix::mount::MntFlags::MNT_DETACH).is_err() {
        let ro = safe | MsFlags::MS_RDONLY | MsFlags::MS_NOEXEC;
        mount(
            Some("tmpfs"),
            masks,
            Some("tmpfs"),
            ro,
            Some("size=4k,mode=0555"),
        )?;
    }
    Ok(())
}

/// Last, over the binds (and what was put back beneath /tmp): the view
/// from mounts of its own, whose caches no other bot shares (`image.rs`).
pub(super) fn show_views(request: &Request, images: &[OwnedFd]) -> anyhow::Result<()> {
    // The large files, from the host's binds still seen here: a file has no
    // names beneath it to cache, and the holder keeps its pages resident.
    let files = (request.host_files.iter())
        .map(|file| {
            let path = PathBuf::from(OsString::from_vec(file.clone()));
            let tree = open_tree(libc::AT_FDCWD, file, 0)
                .with_context(|| format!("failed to keep {}", path.display()))?;
            Ok((path, tree))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    for view in &request.views {
        let image = (images.get(view.image))
            .ok_or_else(|| anyhow!("no mount {} was passed", view.image))?;
        let target = PathBuf::from(OsString::from_vec(view.target.clone()));
        let tree = clone_within(image, &view.within)
            .with_context(|| format!("failed to show {} from its image", target.display()))?;
        put_back(&target, &tree)?;
    }
    for (path, tree) in &files {
        attach(path, tree)?;
    }
    Ok(())
}

/// A detached copy of the tree at `within` (empty: the root) in the
/// detached mount `image`.
pub(super) fn clone_within(image: &OwnedFd, within: &[u8]) -> anyhow::Result<OwnedFd> {
    let empty = match within.is_empty() {
        true => libc::AT_EMPTY_PATH as libc::c_uint,
        false => 0,
    };
    Ok(open_tree(image.as_raw_fd(), within, empty)?)
}

/// `open_tree(2)` with `OPEN_TREE_CLONE`, close-on-exec, and `flags`.
pub(super) fn open_tree(dir: RawFd, path: &[u8], flags: libc::c_uint) -> std::io::Result<OwnedFd> {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    let c = CString::new(path)?;
    let flags = flags | OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint;
    // SAFETY: a directory (or mount) descriptor, a path and flags; returns
    // a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, dir, c.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A detached copy of the mount tree at `path` (`open_tree(2)`).
pub(super) fn clone_tree(path: &Path) -> anyhow::Result<OwnedFd> {
    let recursive = libc::AT_RECURSIVE as libc::c_uint;
    open_tree(libc::AT_FDCWD, path.as_os_str().as_bytes(), recursive)
        .map_err(|e| anyhow!("failed to keep {}: {e}", path.display()))
}

/// Attaches `tree` at `path`, making the directories (or file) it needs.
pub(super) fn put_back(path: &Path, tree: &OwnedFd) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("failed to make {}", parent.display()))?;
    }
    let is_dir = nix::sys::stat::fstat(tree.as_raw_fd())
        .map(|s| s.st_mode & libc::S_IFMT == libc::S_IFDIR)
        .unwrap_or(true);
    let made = match is_dir {
        true => std::fs::create_dir(path),
        false => std::fs::write(path, b""),
    };
    if let Err(e) = made.or_else(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Ok(()),
        _ => Err(e),
    }) {
        return Err(anyhow!("failed to make {}: {e}", path.display()));
    }
    attach(path, tree)
}

/// Attaches the detached `tree` at `path`, which exists.
pub(super) fn attach(path: &Path, tree: &OwnedFd) -> anyhow::Result<()> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
    let c = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a detached tree's descriptor and a path.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            c.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if r != 0 {
        return Err(anyhow!(
            "failed to show {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
