//! The sandbox's view as erofs images, mounted afresh for each bot (issue 28):
//! no bot's lookups reach the host's dentry cache.
//!
//! Why: a sandboxed bot that looks up a name that does not exist under a
//! directory bound from the host (`stat /usr/bin/.x`) leaves a negative
//! dentry in the host's cache, and a bot of a later game of the set (or its
//! partner) can time a lookup of the same name: a store of some 30 kbit/s
//! (SECURITY.md, "The dentry cache"). Each mount of a file-backed erofs
//! image is a superblock of its own, with its own dentry, inode and page
//! caches; a bot whose view is such a mount, made for it alone and gone with
//! it, leaves nothing any later bot can look up.
//!
//! How: a root referee builds one image of the system view (`view.rs`) and
//! one of each bot's directory, with `mkfs.erofs` from a staging tree of
//! bind mounts in a mount namespace of its own ([`stage`], `referee
//! stage-view`), and keeps them in a cache ([`DEFAULT_CACHE`]) keyed by
//! everything the tree's metadata says ([`key`]): a view unchanged since the
//! last run is not built again. The holder (`holder.rs`) makes or finds the
//! images and holds every page of them in memory, as it held the view's files
//! before: the images' page cache is shared by every mount. For each bot the
//! referee mounts the images (`fsmount`, [`mount`]) and passes the mounts to
//! the bot's init, which puts them over the sandbox's binds of the same
//! paths (`launcher.rs`).
//!
//! The default for a root referee, with its cache at [`DEFAULT_CACHE`]
//! (`SCHMIER_VIEW_CACHE=DIR` puts it elsewhere; `=none` turns images off).
//! Where they are turned off or cannot be made (a referee that is not root, a
//! kernel without erofs, no `mkfs.erofs` on the host), bots see the binds and
//! the channel stays open; a root referee is told why, once. Where they were
//! to be used and one cannot be made or mounted, no bot is started without
//! it (the sandbox fails closed: `Sandbox::held`, `process.rs`).

use std::collections::HashSet;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use nix::libc;
use serde::{Deserialize, Serialize};

/// The hidden subcommand that builds one image.
pub const SUBCOMMAND: &str = "stage-view";

/// Where images are kept between runs, unless [`CACHE_ENV`] says otherwise.
pub const DEFAULT_CACHE: &str = "/var/cache/schmier-referee/views";

/// The environment variable naming the image cache (`none`: no images).
pub const CACHE_ENV: &str = "SCHMIER_VIEW_CACHE";

/// How images are built; part of every key, so that a change here builds
/// them again.
const FORMAT: &str =
    "schmier view image 2: mkfs.erofs --quiet --preserve-mtime --chunksize=4096, uncompressed";

/// The chunk size of every file in an image: one block, so that every hole
/// of a sparse file a block long or longer stays a hole (a chunk with no
/// block behind it) instead of being written out as zeros.
pub(super) const CHUNK: &str = "--chunksize=4096";

/// At most this many images stay in the cache (the least recently used go),
/// besides those used within [`IN_USE`].
const KEEP: usize = 16;

/// A regular file of the system view this large or larger is not copied
/// into its image but bound from the host over an empty stand-in
/// (`launcher.rs`): a file has no names beneath it for a bot to leave in a
/// cache, the holder keeps its pages resident, and every bot then maps the
/// host's one copy (node, the Python runtime, big libraries) instead of
/// reading its own from the image: some 20 ms a Node start here.
///
/// But for a sparse one (issue 43: a 2 GiB `model.bin` holding 8 KiB): it
/// stays in the image, where its holes are holes ([`CHUNK`]), so the image
/// and what the holder locks of it are what the file holds. A bot reading a
/// hole then fills the page cache of its own mount of the image, gone with
/// it, not the host's page cache of the file, which a later bot could time
/// (`resident.rs`).
pub const LARGE_FILE: u64 = 2 << 20;

/// The regular files at least [`LARGE_FILE`] long beneath `dirs` (not
/// following links), but for any in or under `skip` and sparse ones.
pub fn large_files(dirs: &[PathBuf], skip: &[PathBuf]) -> Vec<PathBuf> {
    // Each entry's type from the directory itself and its size from a stat
    // relative to the directory's descriptor, not a walk of its whole path.
    fn walk(dir: &Path, skip: &[PathBuf], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                _ if skip.iter().any(|s| path.starts_with(s)) => {}
                Ok(t) if t.is_dir() => walk(&path, skip, out),
                Ok(t) if t.is_file() && entry.metadata().is_ok_and(|m| bound(&m)) => out.push(path),
                _ => {}
            }
        }
    }
    let mut all = Vec::new();
    for dir in dirs
        .iter()
        .filter(|d| !skip.iter().any(|s| d.starts_with(s)))
    {
        let mut out = Vec::new();
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.is_file() && bound(&m) => out.push(dir.clone()),
            Ok(m) if m.is_dir() => walk(dir, skip, &mut out),
            _ => {}
        }
        // In the order of a walk by sorted names (a path sorts by its
        // components), as the key's walk goes.
        out.sort();
        all.extend(out);
    }
    all
}

/// A sparse file up to this long is imaged ([`LARGE_FILE`]); a longer one is
/// bound from the host, held for its data alone (`resident.rs`, which warns
/// of its holes). `mkfs.erofs` (1.5) reads every byte of a file, holes too
/// (a 2 GiB file holding 8 KiB: 15 s here, once per image), and the image
/// keeps 4 bytes of index for each 4 KiB chunk of it.
pub const SPARSE_IMAGED: u64 = super::resident::BUDGET_BYTES;

/// Whether a regular file is bound from the host rather than imaged: large,
/// and not a sparse one short enough to image ([`LARGE_FILE`]).
fn bound(meta: &std::fs::Metadata) -> bool {
    meta.len() >= LARGE_FILE && (meta.len() > SPARSE_IMAGED || !super::extents::may_be_sparse(meta))
}

/// An image used this recently is never pruned.
const IN_USE: std::time::Duration = std::time::Duration::from_secs(600);

/// What one image holds: host paths at paths inside it, and paths inside
/// it shown empty (the referee's outputs, other bots' directories).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// `(path inside the image, host path)`; an empty path is the image's root.
    pub sources: Vec<(PathBuf, PathBuf)>,
    /// Paths inside the image shown as an empty directory or file.
    pub covers: Vec<PathBuf>,
}

/// Where images can be made: the cache and `mkfs.erofs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Maker {
    pub cache: PathBuf,
    pub mkfs: PathBuf,
}

/// Whether this host can give bots views of their own: a root referee, a
/// kernel with erofs, `mkfs.erofs`, and [`CACHE_ENV`] not `none`; `Err`
/// says why not.
pub fn maker(root: bool) -> Result<Maker, String> {
    let cache = match std::env::var_os(CACHE_ENV) {
        Some(v) if v == "none" => return Err(format!("{CACHE_ENV}=none")),
        Some(v) if v.is_empty() || v == "default" => PathBuf::from(DEFAULT_CACHE),
        // Relative to where the referee was started (the holder that
        // builds the images runs elsewhere).
        Some(v) => {
            std::path::absolute(PathBuf::from(v)).map_err(|e| format!("{CACHE_ENV}: {e}"))?
        }
        None => PathBuf::from(DEFAULT_CACHE),
    };
    if !root {
        return Err("the referee is not root (only root may mount an erofs image)".into());
    }
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !filesystems
        .lines()
        .any(|l| l.split_whitespace().last() == Some("erofs"))
    {
        return Err("this kernel has no erofs".into());
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let mkfs = crate::os::find_on_path("mkfs.erofs", &path)
        .or_else(|| crate::os::find_on_path("mkfs.erofs", crate::os::DEFAULT_PATH))
        .ok_or("no mkfs.erofs on this host (Debian: apt-get install erofs-utils)")?;
    Ok(Maker { cache, mkfs })
}

/// The image's name in the cache: a digest of [`FORMAT`], the spec and
/// everything `lstat` says of each file beneath each source (size, times,
/// inode, owner, mode, a link's target), so that any change to the tree
/// gives another key.
pub fn key(spec: &Spec) -> String {
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    let mut put = |bytes: &[u8]| {
        digest.update(&(bytes.len() as u64).to_le_bytes());
        digest.update(bytes);
    };
    put(FORMAT.as_bytes());
    // Looked up by their bytes for every file walked (a `Path`'s `==`
    // compares component by component: most of the walk's time with a
    // hundred covers).
    // Normalised as `==` would (`a/b/` is `a/b`).
    let covers: HashSet<Vec<u8>> = (spec.covers.iter())
        .map(|c| {
            c.components()
                .collect::<PathBuf>()
                .into_os_string()
                .into_vec()
        })
        .collect();
    for cover in &spec.covers {
        put(b"cover");
        put(cover.as_os_str().as_bytes());
    }
    for (inside, host) in &spec.sources {
        put(b"source");
        put(inside.as_os_str().as_bytes());
        put(host.as_os_str().as_bytes());
        // The source itself is followed, as a bind follows it.
        let top = std::fs::canonicalize(host).unwrap_or_else(|_| host.clone());
        walk(&top, inside, &covers, &mut put);
    }
    let hex: String = (digest.finish().as_ref().iter())
        .map(|b| format!("{b:02x}"))
        .collect();
    hex[..32].to_owned()
}

fn walk(host: &Path, inside: &Path, covers: &HashSet<Vec<u8>>, put: &mut impl FnMut(&[u8])) {
    put(inside.as_os_str().as_bytes());
    if covers.contains(inside.as_os_str().as_bytes()) {
        put(b"covered");
        return;
    }
    let meta = match std::fs::symlink_metadata(host) {
        Ok(m) => m,
        Err(e) => return put(e.to_string().as_bytes()),
    };
    let words = [
        meta.mode() as i64,
        meta.uid() as i64,
        meta.gid() as i64,
        meta.size() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.ino() as i64,
        meta.dev() as i64,
        meta.rdev() as i64,
    ];
    for w in words {
        put(&w.to_le_bytes());
    }
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::read_link(host) {
            put(target.as_os_str().as_bytes());
        }
    } else if meta.is_dir() {
        let names = match sorted_names(host) {
            Ok(names) => names,
            Err(e) => return put(e.to_string().as_bytes()),
        };
        for name in names {
            walk(&host.join(&name), &inside.join(&name), covers, put);
        }
    }
}

/// The names in directory `dir`, sorted (so that every walk of a tree goes
/// in one order).
fn sorted_names(dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
    let mut names: Vec<_> = (std::fs::read_dir(dir)?.flatten())
        .map(|e| e.file_name())
        .collect();
    names.sort();
    Ok(names)
}

/// How many times an image is built for a view that changes while it is
/// built, before the referee gives up.
const BUILDS: usize = 3;

/// The image of `spec`, from the cache or built now (by `referee`, the
/// referee's executable, as `referee stage-view`); one builder at a time per
/// image across every referee of the host (a lock file), the others wait.
///
/// The tree is live while `mkfs.erofs` reads it: a file replaced meanwhile
/// (`dpkg`, `pip`, Python writing a `.pyc`: a new file renamed over the
/// old) makes `mkfs.erofs` fail on a name it listed and cannot open ("No
/// such file or directory"). So a build that fails is not the end: the
/// tree is keyed again, and if it changed the image is built again for the
/// new key (up to [`BUILDS`] times). A host that installs a package while a
/// run starts no longer stops the run (it failed closed: no sandboxed bot
/// starts without its image). A build that succeeds is kept, as the
/// snapshot of the tree bots are shown (PROTOCOL.md), even if the tree
/// moved on meanwhile: a later run keys the tree as it is then.
pub fn ensure(maker: &Maker, referee: &Path, spec: &Spec) -> anyhow::Result<PathBuf> {
    let cache = &maker.cache;
    std::fs::create_dir_all(cache).with_context(|| {
        format!(
            "failed to make the image cache {} ({CACHE_ENV})",
            cache.display()
        )
    })?;
    std::fs::set_permissions(cache, std::fs::Permissions::from_mode(0o700)).with_context(|| {
        format!(
            "failed to close the image cache {} ({CACHE_ENV})",
            cache.display()
        )
    })?;
    let mut key = key(spec);
    for _ in 0..BUILDS {
        match ensure_keyed(maker, referee, spec, &key)? {
            Built::Image(image) => return Ok(image),
            Built::Changed(now) => {
                tracing::debug!("the view changed while its image {key} failed to build: again");
                key = now;
            }
        }
    }
    Err(anyhow!(
        "building the image failed while the view changed, {BUILDS} times over"
    ))
}

/// What one build of an image came to.
enum Built {
    /// The image, in the cache.
    Image(PathBuf),
    /// None: the build failed, and the tree changed meanwhile; its key now.
    Changed(String),
}

/// [`ensure`] for the tree as `key` names it.
fn ensure_keyed(maker: &Maker, referee: &Path, spec: &Spec, key: &str) -> anyhow::Result<Built> {
    let cache = &maker.cache;
    let image = cache.join(format!("{key}.erofs"));
    if touch(&image) {
        return Ok(Built::Image(image));
    }
    let lock_path = cache.join(format!("{key}.lock"));
    let lock = File::create(&lock_path)
        .with_context(|| format!("failed to make {}", lock_path.display()))?;
    let _lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| anyhow!("failed to lock {}: {e}", lock_path.display()))?;
    if touch(&image) {
        return Ok(Built::Image(image));
    }
    let part = cache.join(format!("{key}.{}.part", std::process::id()));
    let (stage, empty) = (part.with_extension("stage"), part.with_extension("empty"));
    for dir in [&stage, &empty] {
        std::fs::create_dir(dir).with_context(|| format!("failed to make {}", dir.display()))?;
    }
    let began = std::time::Instant::now();
    let status = crate::os::own_exe::command(referee)
        .arg(SUBCOMMAND)
        .arg("--image")
        .arg(&part)
        .arg("--mkfs")
        .arg(&maker.mkfs)
        .arg("--spec")
        .arg(serde_json::to_string(spec)?)
        .env_clear()
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .status();
    // Empty folders here (the builder's mounts were its own): removed as
    // such, never recursively.
    for dir in [&stage, &empty] {
        let _ = std::fs::remove_dir(dir);
    }
    let status = status.context("failed to run the image builder")?;
    if !status.success() {
        let _ = std::fs::remove_file(&part);
        let now = self::key(spec);
        if now != key {
            let _ = std::fs::remove_file(&lock_path);
            return Ok(Built::Changed(now));
        }
        return Err(anyhow!("building the image failed ({status})"));
    }
    std::fs::rename(&part, &image)
        .with_context(|| format!("failed to keep {}", image.display()))?;
    let _ = std::fs::remove_file(&lock_path);
    tracing::debug!("image {} built in {:?}", image.display(), began.elapsed());
    prune(cache, KEEP);
    Ok(Built::Image(image))
}

/// Marks `image` used now; whether it exists.
fn touch(image: &Path) -> bool {
    match File::options().append(true).open(image) {
        Ok(f) => {
            let _ = f.set_modified(std::time::SystemTime::now());
            true
        }
        Err(_) => false,
    }
}

/// Removes all but the `keep` images used last (sparing any used within
/// [`IN_USE`]), and builds left unfinished for more than an hour.
fn prune(cache: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return;
    };
    let mut images = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let modified = e.metadata().and_then(|m| m.modified()).ok();
        match path.extension().and_then(|x| x.to_str()) {
            Some("erofs") => images.push((modified, path)),
            Some("part") => {
                let old = modified
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 3600);
                if old {
                    let _ = std::fs::remove_file(&path);
                }
            }
            _ => {}
        }
    }
    images.sort();
    images.reverse();
    for (modified, path) in images.into_iter().skip(keep) {
        // One used in the last minutes may be about to be opened by a
        // referee whose holder found it (a referee that has it open loses
        // nothing when its name goes).
        let recent = modified
            .and_then(|m| m.elapsed().ok())
            .is_none_or(|age| age < IN_USE);
        if !recent {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A fresh mount of `image` (open: its path may be gone from the cache),
/// read-only, no devices, no set-uid: a superblock of its own, detached,
/// for a bot's init to attach (`launcher.rs`).
pub fn mount(image: &File) -> std::io::Result<OwnedFd> {
    const FSOPEN_CLOEXEC: libc::c_uint = 1;
    const FSCONFIG_SET_STRING: libc::c_uint = 1;
    const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
    const FSMOUNT_CLOEXEC: libc::c_uint = 1;
    const MOUNT_ATTR_RDONLY: libc::c_uint = 1;
    const MOUNT_ATTR_NOSUID: libc::c_uint = 2;
    const MOUNT_ATTR_NODEV: libc::c_uint = 4;
    let fail = || Err(std::io::Error::last_os_error());
    // SAFETY: fsopen takes a file system name and flags.
    let fs = unsafe { libc::syscall(libc::SYS_fsopen, c"erofs".as_ptr(), FSOPEN_CLOEXEC) };
    if fs < 0 {
        return fail();
    }
    // SAFETY: a descriptor just returned to us.
    let fs = unsafe { OwnedFd::from_raw_fd(fs as RawFd) };
    let source = std::ffi::CString::new(format!("/proc/self/fd/{}", image.as_raw_fd()))
        .expect("no NUL in a number");
    // SAFETY: fsconfig with a key and a string value, both NUL-terminated.
    let set = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.as_raw_fd(),
            FSCONFIG_SET_STRING,
            c"source".as_ptr(),
            source.as_ptr(),
            0,
        )
    };
    // SAFETY: fsconfig's create command takes no key or value.
    if set < 0
        || unsafe {
            libc::syscall(
                libc::SYS_fsconfig,
                fs.as_raw_fd(),
                FSCONFIG_CMD_CREATE,
                std::ptr::null::<libc::c_char>(),
                std::ptr::null::<libc::c_char>(),
                0,
            )
        } < 0
    {
        return fail();
    }
    let attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    // SAFETY: fsmount of a created file system context.
    let m = unsafe { libc::syscall(libc::SYS_fsmount, fs.as_raw_fd(), FSMOUNT_CLOEXEC, attrs) };
    if m < 0 {
        return fail();
    }
    // SAFETY: a descriptor just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(m as RawFd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key follows the tree: the same tree gives the same key; a file
    /// changed, added or renamed gives another; what lies under a cover
    /// changes nothing.
    #[test]
    fn the_key_changes_with_the_tree_and_not_with_what_is_covered() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("bot");
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::write(root.join("bot.py"), b"print(1)").unwrap();
        let spec = Spec {
            sources: vec![(PathBuf::new(), root.clone())],
            covers: vec![PathBuf::from("out")],
        };
        let first = key(&spec);
        assert_eq!(first.len(), 32);
        assert_eq!(key(&spec), first);
        std::fs::write(root.join("out/transcript.jsonl"), b"{}").unwrap();
        assert_eq!(key(&spec), first, "a change under a cover changed the key");
        std::fs::write(root.join("bot.py"), b"print(2)").unwrap();
        let changed = key(&spec);
        assert_ne!(changed, first);
        std::fs::rename(root.join("bot.py"), root.join("bot2.py")).unwrap();
        assert_ne!(key(&spec), changed);
        let uncovered = Spec {
            covers: vec![],
            ..spec.clone()
        };
        assert_ne!(key(&uncovered), key(&spec));
    }

    /// Large regular files are found beneath the directories, not small
    /// ones, sparse ones, links to large ones, or any under a skipped path.
    #[test]
    fn large_files_are_the_regular_files_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("lib/sub")).unwrap();
        std::fs::create_dir_all(root.join("out")).unwrap();
        let large = |p: &Path, extra: u64| {
            std::fs::write(p, vec![7u8; (LARGE_FILE + extra) as usize]).unwrap();
        };
        large(&root.join("lib/sub/big.so"), 0);
        large(&root.join("out/hidden.bin"), 1);
        std::fs::write(root.join("lib/small.so"), b"elf").unwrap();
        std::fs::write(root.join("lib/almost"), vec![7u8; LARGE_FILE as usize - 1]).unwrap();
        // 2 GiB long, one block of data: imaged, its holes holes; but
        // past SPARSE_IMAGED it is bound.
        let sparse = |p: &Path, len: u64| {
            let file = File::create(p).unwrap();
            file.set_len(len).unwrap();
            std::os::unix::fs::FileExt::write_all_at(&file, b"weights", 0).unwrap();
        };
        sparse(&root.join("lib/model.bin"), 2 << 30);
        sparse(&root.join("lib/vast.bin"), SPARSE_IMAGED + 1);
        std::os::unix::fs::symlink(root.join("lib/sub/big.so"), root.join("lib/link.so")).unwrap();
        let found = large_files(&[root.to_path_buf()], &[root.join("out")]);
        assert_eq!(
            found,
            [root.join("lib/sub/big.so"), root.join("lib/vast.bin")]
        );
    }

    /// Only the least recently used images beyond the limit are removed
    /// (never one used within [`IN_USE`]), and unfinished builds only when
    /// old.
    #[test]
    fn pruning_keeps_the_images_used_last() {
        let now = std::time::SystemTime::now();
        let hour = std::time::Duration::from_secs(3600);
        let made = |dir: &Path, name: &str, age: std::time::Duration| {
            let f = File::create(dir.join(name)).unwrap();
            f.set_modified(now - age).unwrap();
        };
        let left = |dir: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            names.sort();
            names
        };
        let old = tempfile::tempdir().unwrap();
        for i in 0..5u32 {
            made(old.path(), &format!("{i}.erofs"), hour * (5 - i));
        }
        made(old.path(), "fresh.part", std::time::Duration::ZERO);
        made(old.path(), "old.part", hour * 2);
        prune(old.path(), 2);
        assert_eq!(left(old.path()), ["3.erofs", "4.erofs", "fresh.part"]);
        // Three used a minute ago, one an hour ago: the three stay, past
        // the limit of two; the old one goes.
        let busy = tempfile::tempdir().unwrap();
        for name in ["a.erofs", "b.erofs", "c.erofs"] {
            made(busy.path(), name, std::time::Duration::from_secs(60));
        }
        made(busy.path(), "d.erofs", hour);
        prune(busy.path(), 2);
        assert_eq!(left(busy.path()), ["a.erofs", "b.erofs", "c.erofs"]);
    }
}
