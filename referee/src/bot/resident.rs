//! Every page a sandboxed bot can read, held in memory by the referee for the
//! whole run: the page cache is then no store between games.
//!
//! Why: a bot cannot evict a page (`fadvise`, `MADV_PAGEOUT` and the probes are
//! refused, `seccomp.rs`), but it can *load* one by reading it, and a bot of a
//! later game can tell by timing a read whether a page was cached: a cold read
//! takes 0.1–6 ms here, a cached one 1–12 µs. So the bot of game 1 of a
//! duplicate set could leave bits (the hands it saw) in which pages of a shared
//! file are cached, and the bot of game 2 read them back. With every readable
//! page already cached, and locked so that nothing evicts it, loading a page
//! changes nothing and every read times alike: there is nothing to write.
//!
//! How: before any bot of a game runs (`Sandbox::held`), the referee maps
//! every regular file of the sandbox's view (the system directories it
//! shows, the bots' own directories, its own executable) read-only and
//! `mlock`s it, which reads in whatever was not cached and keeps it there
//! until the referee exits (on up to four threads: a view of 11,000 files is
//! read in faster so). A
//! referee that may not lock (not root: `RLIMIT_MEMLOCK`) reads the pages in
//! (`MADV_POPULATE_READ`) and keeps them mapped: resident, but memory pressure
//! can still evict them. The view is kept small for this (`sandbox.rs`,
//! `SYSTEM_DIRS`): about 1.2 GB here, against 6.4 GB for all of `/usr`.
//! Files past [`BUDGET_BYTES`] or [`MAX_MAPS`] are not held, and the referee
//! says so.

use std::collections::BTreeSet;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::libc;

/// At most this much of the view is held (a bot directory holding a large
/// data file could otherwise take the host's memory).
pub const BUDGET_BYTES: u64 = 4 << 30;

/// At most this many files are mapped: the kernel's default limit of mappings
/// per process is 65530, and the referee needs some of its own.
const MAX_MAPS: usize = 50_000;

/// The held mappings. Never read: they exist to keep the pages in memory.
#[derive(Debug)]
pub struct Resident {
    maps: Vec<(usize, usize)>,
    /// Bytes held.
    pub bytes: u64,
    /// Whether the pages are locked (`mlock`), not only read in.
    pub locked: bool,
    /// Files of the view not held (past the budget), and their bytes.
    pub left_out: (u64, u64),
}

impl Resident {
    /// Holds every regular file beneath `roots` (or a root itself, if a file)
    /// that a bot could read (`others_only`: readable by other users, as a bot
    /// run as a user of its own must be), skipping what lies beneath `hidden`.
    pub fn hold(roots: &[PathBuf], hidden: &[PathBuf], others_only: bool) -> Resident {
        let mut files = Vec::new();
        let mut seen = BTreeSet::new();
        for root in roots {
            walk(root, hidden, others_only, &mut seen, &mut files);
        }
        let mut held = Resident {
            maps: Vec::new(),
            bytes: 0,
            locked: true,
            left_out: (0, 0),
        };
        let mut chosen = Vec::new();
        for (path, len) in files {
            if held.bytes + len > BUDGET_BYTES || chosen.len() >= MAX_MAPS {
                held.left_out.0 += 1;
                held.left_out.1 += len;
                continue;
            }
            held.bytes += len;
            chosen.push((path, len));
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(THREADS));
        let done: Vec<FaultedIn> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| scope.spawn(|| fault_in(&chosen, &next)))
                .collect();
            (workers.into_iter())
                .map(|w| w.join().unwrap_or_default())
                .collect()
        });
        for one in done {
            held.maps.extend(one.maps);
            held.bytes -= one.unmapped;
            held.locked &= one.locked;
        }
        held
    }
}

/// How many threads fault the view in: reading it in is mostly waiting for
/// the disk and for the kernel's page-table work, which several do at once
/// (BENCHMARKS.md, issue 27's quick wins).
const THREADS: usize = 4;

/// What one thread of [`fault_in`] held.
#[derive(Default)]
struct FaultedIn {
    /// The mappings made.
    maps: Vec<(usize, usize)>,
    /// Bytes of the files that could not be mapped.
    unmapped: u64,
    /// Whether every mapping was locked.
    locked: bool,
}

/// Maps and locks (else reads in) the files of `files` whose turn `next`
/// gives this thread.
fn fault_in(files: &[(PathBuf, u64)], next: &std::sync::atomic::AtomicUsize) -> FaultedIn {
    let mut done = FaultedIn {
        locked: true,
        ..FaultedIn::default()
    };
    loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some((path, len)) = files.get(i) else {
            return done;
        };
        match map(path, *len, &mut done.locked) {
            Some(addr) => done.maps.push((addr, *len as usize)),
            None => done.unmapped += len,
        }
    }
}

/// Maps `path` and locks its pages while `locked` (else, or if that fails,
/// reads them in and clears `locked`); `None` if it cannot be opened or mapped
/// (a file the referee cannot read, no bot can either).
fn map(path: &Path, len: u64, locked: &mut bool) -> Option<usize> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: a fresh read-only shared mapping of a file we opened; nothing
    // ever reads through it, and it is unmapped only on drop.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the range is the mapping just made.
    *locked = *locked && unsafe { libc::mlock(addr, len as usize) } == 0;
    if !*locked {
        // SAFETY: as above; reads the pages in, errors ignored (a best effort).
        unsafe { libc::madvise(addr, len as usize, libc::MADV_POPULATE_READ) };
    }
    Some(addr as usize)
}

impl Drop for Resident {
    fn drop(&mut self) {
        for &(addr, len) in &self.maps {
            // SAFETY: each pair is a mapping made in `map`, unmapped once.
            unsafe { libc::munmap(addr as *mut libc::c_void, len) };
        }
    }
}

/// The regular, non-empty files beneath `path` a bot could read, once each
/// (by device and inode), symbolic links not followed.
fn walk(
    path: &Path,
    hidden: &[PathBuf],
    others_only: bool,
    seen: &mut BTreeSet<(u64, u64)>,
    files: &mut Vec<(PathBuf, u64)>,
) {
    if hidden.iter().any(|h| path.starts_with(h)) {
        return;
    }
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if !seen.insert((meta.dev(), meta.ino())) {
        return;
    }
    let mode = meta.permissions().mode();
    if meta.is_dir() && (!others_only || mode & 0o001 != 0) {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        children.sort();
        for child in children {
            walk(&child, hidden, others_only, seen, files);
        }
    } else if meta.is_file() && meta.len() > 0 && (!others_only || mode & 0o004 != 0) {
        files.push((path.to_path_buf(), meta.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every page of a held file is resident (the kernel's own count,
    /// `mincore` on the held mapping) even after it was pushed out of the
    /// page cache first, and stays so when pushed out again if locked;
    /// hidden and empty files are left out.
    #[test]
    fn every_page_of_the_view_is_held_and_hidden_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, vec![7u8; 64 * 4096 + 1]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        file.sync_all().unwrap();
        let evict = || {
            // SAFETY: an advice on our own descriptor.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) }
        };
        evict();
        let hidden = dir.path().join("out");
        std::fs::create_dir(&hidden).unwrap();
        std::fs::write(hidden.join("secret"), b"x").unwrap();
        std::fs::write(dir.path().join("empty"), b"").unwrap();
        let held = Resident::hold(&[dir.path().to_path_buf()], &[hidden], false);
        assert_eq!(held.maps.len(), 1, "{held:?}");
        assert_eq!(held.bytes, 64 * 4096 + 1);
        let resident = || {
            let (addr, len) = held.maps[0];
            let mut vec = vec![0u8; len.div_ceil(4096)];
            // SAFETY: the held mapping, queried only.
            let rc = unsafe { libc::mincore(addr as *mut libc::c_void, len, vec.as_mut_ptr()) };
            assert_eq!(rc, 0);
            vec.iter().filter(|v| *v & 1 == 1).count()
        };
        assert_eq!(resident(), 65);
        if held.locked {
            evict();
            assert_eq!(resident(), 65, "a locked page was pushed out");
        }
    }
}
