//! What a kept sandbox shares between the bots it serves, made read-only
//! to each of them and proved unchanged before the next (issue 43).
//!
//! A kept sandbox's root and `/dev` are tmpfs mounts bubblewrap made once,
//! owned by the sandbox's user — the bot's own — and the same superblock in
//! every later bot's fresh mount namespace. Landlock governs opening and
//! creating files, not their metadata, so a bot could leave a hand in an
//! extended attribute of `/`, the times or mode of an inode it owns, and the
//! next bot the sandbox served (the same entrant's later game of a
//! duplicate set) read it. Two defences:
//!
//! - [`seal`]: the bot's init remounts every mount of the bot's namespace
//!   read-only but the bot's own fresh ones (`/proc`, `/tmp`, `/dev/shm`,
//!   `/scratch`), keeping each mount's other flags, so device nodes stay
//!   usable: a metadata call anywhere shared fails with `EROFS`.
//! - [`Fingerprint`]: the launcher records, at its start, every inode of the
//!   sandbox's own tmpfs mounts (`/`, `/dev`) — mode, owner, size, link
//!   count, modification and change times, extended attributes — and
//!   before each bot proves them unchanged (a change time moves with every
//!   metadata change, and no user can set it), else it refuses the bot and
//!   the referee builds a new sandbox.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use nix::libc;

/// Remounts read-only every mount of this process's mount namespace but
/// those at `writable` and `/proc` with everything beneath it (each of them
/// made for this one bot), keeping every other flag of each mount.
pub fn seal(writable: &[&Path]) -> anyhow::Result<()> {
    use nix::mount::MsFlags;
    use nix::sys::statvfs::FsFlags;
    let table = std::fs::read_to_string("/proc/self/mountinfo")
        .context("failed to read the bot's mount table")?;
    for point in mount_points(&table) {
        if point.starts_with("/proc") || writable.iter().any(|w| *w == point) {
            continue;
        }
        let flags = match nix::sys::statvfs::statvfs(&point) {
            Ok(s) => s.flags(),
            // Covered by a later mount, or a file bound where nothing is
            // reachable any more: nothing a bot can reach.
            Err(nix::errno::Errno::ENOENT) => continue,
            Err(e) => return Err(anyhow!("failed to read {}'s flags: {e}", point.display())),
        };
        if flags.contains(FsFlags::ST_RDONLY) {
            continue;
        }
        let mut keep = MsFlags::empty();
        for (has, set) in [
            (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
            (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
            (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
            (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
            (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
            (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
        ] {
            if flags.contains(has) {
                keep |= set;
            }
        }
        let ro = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | keep;
        nix::mount::mount(None::<&str>, &point, None::<&str>, ro, None::<&str>)
            .with_context(|| format!("failed to make {} read-only", point.display()))?;
    }
    Ok(())
}

/// The mount points of a `mountinfo` table, in its order (parents first),
/// unescaped.
fn mount_points(table: &str) -> Vec<PathBuf> {
    (table.lines())
        .filter_map(|l| l.split(' ').nth(4))
        .map(|p| PathBuf::from(OsString::from_vec(unescape(p))))
        .collect()
}

/// A `mountinfo` field with its octal escapes (`\040` for a space, …)
/// decoded.
fn unescape(field: &str) -> Vec<u8> {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Every inode of the filesystems at some roots, as far as that filesystem
/// goes (mounts on it are left out: they are the view's, read-only, or the
/// host's), with what a bot could change of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(Vec<Inode>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inode {
    path: PathBuf,
    ino: u64,
    mode: u32,
    owner: (u32, u32),
    nlink: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    xattrs: Vec<(Vec<u8>, Vec<u8>)>,
}

/// More inodes than a sandbox's own tmpfs mounts hold (a few dozen): past
/// it, something is filling them.
const MAX_INODES: usize = 4096;

impl Fingerprint {
    /// Reads the inodes of the filesystems at `roots`.
    pub fn take(roots: &[&Path]) -> anyhow::Result<Fingerprint> {
        let mut found = Vec::new();
        for root in roots {
            let dev = std::fs::symlink_metadata(root)
                .with_context(|| format!("failed to read {}", root.display()))?
                .dev();
            walk(root, dev, &mut found)?;
        }
        Ok(Fingerprint(found))
    }

    /// What differs from `earlier`, in words; `None` if nothing does.
    pub fn changed_since(&self, earlier: &Fingerprint) -> Option<String> {
        if let Some(was) = (earlier.0.iter()).find(|e| !self.0.iter().any(|n| n.path == e.path)) {
            return Some(format!("{} is gone", was.path.display()));
        }
        if let Some(new) = (self.0.iter()).find(|n| !earlier.0.iter().any(|e| e.path == n.path)) {
            return Some(format!("{} is new", new.path.display()));
        }
        (self.0.iter()).find_map(|now| {
            let was = earlier.0.iter().find(|e| e.path == now.path)?;
            (was != now).then(|| format!("{} changed: {}", now.path.display(), what(was, now)))
        })
    }
}

/// Which of an inode's fields changed.
fn what(was: &Inode, now: &Inode) -> String {
    let fields = [
        ("inode", was.ino != now.ino),
        ("mode", was.mode != now.mode),
        ("owner", was.owner != now.owner),
        ("links", was.nlink != now.nlink),
        ("size", was.size != now.size),
        ("modification time", was.mtime != now.mtime),
        ("change time", was.ctime != now.ctime),
        ("extended attributes", was.xattrs != now.xattrs),
    ];
    let changed: Vec<&str> = (fields.iter()).filter(|f| f.1).map(|f| f.0).collect();
    changed.join(", ")
}

fn walk(path: &Path, dev: u64, found: &mut Vec<Inode>) -> anyhow::Result<()> {
    let m = std::fs::symlink_metadata(path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    if m.dev() != dev {
        return Ok(());
    }
    if found.len() >= MAX_INODES {
        return Err(anyhow!("more than {MAX_INODES} inodes"));
    }
    found.push(Inode {
        path: path.to_path_buf(),
        ino: m.ino(),
        mode: m.mode(),
        owner: (m.uid(), m.gid()),
        nlink: m.nlink(),
        size: m.size(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
        xattrs: xattrs(path)?,
    });
    if m.is_dir() {
        let mut names: Vec<OsString> = std::fs::read_dir(path)
            .with_context(|| format!("failed to list {}", path.display()))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .with_context(|| format!("failed to list {}", path.display()))?;
        names.sort();
        for name in names {
            walk(&path.join(name), dev, found)?;
        }
    }
    Ok(())
}

/// The extended attributes of `path` itself (not a link's target), names
/// and values, sorted.
fn xattrs(path: &Path) -> anyhow::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    let names = read_sized(|buf: &mut [u8]| {
        // SAFETY: llistxattr(2) into a buffer of the length given.
        unsafe { libc::llistxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) }
    })
    .with_context(|| format!("failed to list {}'s extended attributes", path.display()))?;
    let mut all = Vec::new();
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let n = CString::new(name)?;
        let value = read_sized(|buf: &mut [u8]| {
            // SAFETY: lgetxattr(2) into a buffer of the length given.
            unsafe { libc::lgetxattr(c.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) }
        })
        .with_context(|| {
            let name = OsStr::from_bytes(name).to_string_lossy();
            format!("failed to read {}'s attribute {name}", path.display())
        })?;
        all.push((name.to_vec(), value));
    }
    all.sort();
    Ok(all)
}

/// The bytes a `*xattr` call fills: asked for their size first, then read
/// (again if they grew meanwhile). No attributes support: none.
fn read_sized(call: impl Fn(&mut [u8]) -> libc::ssize_t) -> std::io::Result<Vec<u8>> {
    loop {
        let size = call(&mut []);
        if size < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOTSUP) | Some(libc::ENODATA) => Ok(Vec::new()),
                _ => Err(e),
            };
        }
        let mut buf = vec![0u8; size as usize];
        let got = call(&mut buf);
        if got >= 0 {
            buf.truncate(got as usize);
            return Ok(buf);
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::ERANGE) {
            return Err(std::io::Error::last_os_error());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_read_unescaped_in_order() {
        let table = "22 1 0:20 / / rw - tmpfs tmpfs rw\n\
                     23 22 0:21 / /a\\040b rw,nosuid - tmpfs tmpfs rw\n\
                     24 22 0:5 /null /dev/null rw - devtmpfs udev rw\n";
        assert_eq!(
            mount_points(table),
            [
                PathBuf::from("/"),
                PathBuf::from("/a b"),
                PathBuf::from("/dev/null")
            ]
        );
        assert_eq!(unescape("x\\134y\\011"), b"x\\y\t");
        assert_eq!(unescape("a\\04"), b"a\\04", "a short escape is kept");
    }

    /// A folder with a folder and a file in it: on tmpfs where the host
    /// has `/dev/shm` (user attributes since Linux 6.6), as a kept root is.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("f"), b"x").unwrap();
        (dir, sub)
    }

    fn changed(dir: &Path, change: impl FnOnce()) -> Option<String> {
        let before = Fingerprint::take(&[dir]).unwrap();
        assert_eq!(
            Fingerprint::take(&[dir]).unwrap().changed_since(&before),
            None
        );
        change();
        Fingerprint::take(&[dir]).unwrap().changed_since(&before)
    }

    #[test]
    fn every_metadata_change_a_bot_could_store_a_hand_in_is_seen() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, sub) = tree();
        let f = sub.join("f");
        let mode = changed(dir.path(), || {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o741)).unwrap()
        });
        assert!(mode.unwrap().contains("mode"));
        let times = changed(dir.path(), || {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
            std::fs::File::options()
                .write(true)
                .open(&f)
                .unwrap()
                .set_modified(t)
                .unwrap()
        });
        assert!(times.unwrap().contains("modification time"));
        let owner = changed(dir.path(), || {
            let m = std::fs::metadata(&sub).unwrap();
            // The same owner: only the change time moves, and is seen.
            std::os::unix::fs::chown(&sub, Some(m.uid()), Some(m.gid())).unwrap()
        });
        assert!(owner.unwrap().contains("change time"));
        let new = changed(dir.path(), || std::fs::write(sub.join("g"), b"").unwrap());
        assert!(new.unwrap().contains("g is new"));
        let gone = changed(dir.path(), || std::fs::remove_file(sub.join("g")).unwrap());
        assert!(gone.unwrap().contains("g is gone"));
    }

    #[test]
    fn an_extended_attribute_is_seen() {
        let (dir, sub) = tree();
        let c = CString::new(sub.as_os_str().as_bytes()).unwrap();
        let set = || {
            // SAFETY: setxattr(2) with a NUL-terminated path and name.
            unsafe { libc::setxattr(c.as_ptr(), c"user.k".as_ptr(), b"7S".as_ptr().cast(), 2, 0) }
        };
        let before = Fingerprint::take(&[dir.path()]).unwrap();
        if set() != 0 {
            let e = std::io::Error::last_os_error();
            assert_eq!(e.raw_os_error(), Some(libc::ENOTSUP), "{e}");
            // tmpfs before Linux 6.6 takes none: nothing to show here.
            eprintln!("SKIPPED: {} takes no user attributes", dir.path().display());
            return;
        }
        let now = Fingerprint::take(&[dir.path()]).unwrap();
        let said = now.changed_since(&before).unwrap();
        assert!(said.contains("extended attributes"), "{said}");
        let attrs = &now.0.iter().find(|i| i.path == sub).unwrap().xattrs;
        assert_eq!(attrs, &[(b"user.k".to_vec(), b"7S".to_vec())]);
    }

    #[test]
    fn mounts_on_the_tree_are_left_out() {
        let (dir, _) = tree();
        let all = Fingerprint::take(&[dir.path()]).unwrap();
        assert_eq!(all.0.len(), 3, "{all:?}");
        // /dev/pts is a filesystem of its own on /dev: never walked from it.
        let dev = Fingerprint::take(&[Path::new("/dev")]).unwrap();
        assert!(dev.0.iter().any(|i| i.path == Path::new("/dev")));
        assert!(
            !dev.0.iter().any(|i| i.path.starts_with("/dev/pts")),
            "{dev:?}"
        );
    }
}
