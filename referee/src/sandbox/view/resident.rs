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
//! can still evict them. The view is kept small for this (`sandbox/mod.rs`,
//! `SYSTEM_DIRS`): about 1.2 GB here, against 6.4 GB for all of `/usr`.
//! Files past [`BUDGET_BYTES`] or [`MAX_MAPS`] are not held, and the referee
//! says so.
//!
//! A sparse file is held for what it holds, not its length (issue 43: a bot
//! folder's 2 GiB `model.bin`, 8 KiB on disk, locked 2 GiB of memory): past
//! [`HOLES_HELD`] of holes in all, its data (`extents.rs`) is locked and
//! counted against the budget, its holes are neither ([`Holes::LeftOut`]).
//! Its mapping is locked on fault (`MLOCK_ONFAULT`) and only the data is
//! faulted in, so the holes take no memory and the file still takes one
//! mapping (the process's `VmLck` counts the whole mapping; the pages locked
//! are the mapping's resident ones, `smaps`' `Rss`). A read
//! of a hole puts a page of zeros in the page cache, which a later bot can
//! time: where bots see such a file from an image (`image.rs`: a root
//! referee's default) a hole read fills the page cache of that bot's own
//! mount, gone with it, and the image itself is held whole
//! ([`Holes::Held`]); where they see it bound from the host, its holes are a
//! store between games, and the referee says so ([`Resident::holes`]).

use std::collections::BTreeSet;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::libc;

/// At most this much of the view is held (a bot directory holding a large
/// data file could otherwise take the host's memory).
pub const BUDGET_BYTES: u64 = 4 << 30;

/// Holes up to this much in all are held as zeros with their files' data
/// (a linker leaves small holes in what it writes: the referee's own debug
/// build has 472 KiB of them), counted against [`BUDGET_BYTES`]; a sparse
/// file past it is held for its data alone (`extents.rs`).
pub const HOLES_HELD: u64 = 64 << 20;

/// At most this many files are mapped: the kernel's default limit of mappings
/// per process is 65530, and the referee needs some of its own.
const MAX_MAPS: usize = 50_000;

/// What becomes of the holes of a sparse file (`extents.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holes {
    /// Held as zeros with the data: for the images, every block of which
    /// the kernel may read on a bot's behalf.
    Held,
    /// Not held: only the data is, and the holes are counted
    /// ([`Resident::holes`]).
    LeftOut,
}

/// The held mappings. Never read: they exist to keep the pages in memory.
#[derive(Debug)]
pub struct Resident {
    maps: Vec<(usize, usize)>,
    /// Bytes held: what the files hold, holes left out unless [`Holes::Held`].
    pub bytes: u64,
    /// Whether the pages are locked (`mlock`), not only read in.
    pub locked: bool,
    /// Files of the view not held (past the budget), and the bytes they hold.
    pub left_out: (u64, u64),
    /// Sparse files held without their holes ([`Holes::LeftOut`]), each
    /// with the bytes of its holes: zeros a bot may read, not held.
    pub holes: Vec<(PathBuf, u64)>,
}

/// A file to hold: its length, the bytes held of it, and (sparse, its
/// holes left out) its data.
struct Chosen {
    path: PathBuf,
    len: u64,
    held: u64,
    data: Option<Vec<(u64, u64)>>,
}

impl Resident {
    /// Holds every regular file beneath `roots` (or a root itself, if a file)
    /// that a bot could read (`others_only`: readable by other users, as a bot
    /// run as a user of its own must be), skipping what lies beneath `hidden`;
    /// `holes` says whether a sparse file's holes are held too.
    pub fn hold(
        roots: &[PathBuf],
        hidden: &[PathBuf],
        others_only: bool,
        holes: Holes,
    ) -> Resident {
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
            holes: Vec::new(),
        };
        let mut chosen = Vec::new();
        let mut holes_held = 0;
        for (path, len, sparse) in files {
            let mut data = None;
            let opened = (sparse && holes == Holes::LeftOut)
                .then(|| std::fs::File::open(&path).ok())
                .flatten();
            if let Some(file) = opened {
                let found = super::extents::data(&file, len);
                let hole = len - found.iter().map(|r| r.1).sum::<u64>();
                if holes_held + hole <= HOLES_HELD {
                    holes_held += hole;
                } else {
                    data = Some(found);
                }
            }
            let bytes = data.as_ref().map_or(len, |d| d.iter().map(|r| r.1).sum());
            if held.bytes + bytes > BUDGET_BYTES || chosen.len() >= MAX_MAPS {
                held.left_out.0 += 1;
                held.left_out.1 += bytes;
                continue;
            }
            held.bytes += bytes;
            if bytes < len {
                held.holes.push((path.clone(), len - bytes));
            }
            chosen.push(Chosen {
                path,
                len,
                held: bytes,
                data,
            });
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
fn fault_in(files: &[Chosen], next: &std::sync::atomic::AtomicUsize) -> FaultedIn {
    let mut done = FaultedIn {
        locked: true,
        ..FaultedIn::default()
    };
    loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(file) = files.get(i) else {
            return done;
        };
        match map(file, &mut done.locked) {
            Some(addr) => done.maps.push((addr, file.len as usize)),
            None => done.unmapped += file.held,
        }
    }
}

/// Maps `file` and locks its pages while `locked` (else, or if that fails,
/// reads them in and clears `locked`); `None` if it cannot be opened or mapped
/// (a file the referee cannot read, no bot can either). Of a file with
/// `data`, only that is locked or read in.
fn map(file: &Chosen, locked: &mut bool) -> Option<usize> {
    let len = file.len as usize;
    let opened = std::fs::File::open(&file.path).ok()?;
    // SAFETY: a fresh read-only shared mapping of a file we opened; nothing
    // ever reads through it, and it is unmapped only on drop.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            opened.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return None;
    }
    let Some(data) = &file.data else {
        // SAFETY: the range is the mapping just made.
        *locked = *locked && unsafe { libc::mlock(addr, len) } == 0;
        if !*locked {
            // SAFETY: as above; reads the pages in, errors ignored (a best effort).
            unsafe { libc::madvise(addr, len, libc::MADV_POPULATE_READ) };
        }
        return Some(addr as usize);
    };
    // A page faulted in is locked from now on, and no other is: the data is
    // faulted in, range by range, and nothing read around it (a fault's
    // read-around would put pages of the holes in the page cache).
    // SAFETY: advice and locking on the mapping just made.
    unsafe { libc::madvise(addr, len, libc::MADV_RANDOM) };
    // SAFETY: as above.
    *locked = *locked && unsafe { libc::mlock2(addr, len, libc::MLOCK_ONFAULT) } == 0;
    let page = page_size();
    for &(offset, bytes) in data {
        let start = offset / page * page;
        let end = (offset + bytes).div_ceil(page) * page;
        // SAFETY: a range of pages within the mapping just made; reads
        // them in, errors ignored (a best effort, as `mlock`'s: a page of
        // data not read in now is not held).
        unsafe {
            libc::madvise(
                addr.cast::<u8>().add(start as usize).cast(),
                (end - start) as usize,
                libc::MADV_POPULATE_READ,
            )
        };
    }
    Some(addr as usize)
}

/// The page size (what a mapping's offsets are rounded to).
fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096).max(1)
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
/// (by device and inode), symbolic links not followed; with their length
/// and whether they may be sparse.
fn walk(
    path: &Path,
    hidden: &[PathBuf],
    others_only: bool,
    seen: &mut BTreeSet<(u64, u64)>,
    files: &mut Vec<(PathBuf, u64, bool)>,
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
        let sparse = super::extents::may_be_sparse(&meta);
        files.push((path.to_path_buf(), meta.len(), sparse));
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
        let held = Resident::hold(
            &[dir.path().to_path_buf()],
            &[hidden],
            false,
            Holes::LeftOut,
        );
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

    /// The pages of `held`'s one mapping in the page cache (`mincore`).
    fn cached(held: &Resident) -> usize {
        let (addr, len) = held.maps[0];
        let mut vec = vec![0u8; len.div_ceil(4096)];
        // SAFETY: the held mapping, queried only.
        let rc = unsafe { libc::mincore(addr as *mut libc::c_void, len, vec.as_mut_ptr()) };
        assert_eq!(rc, 0);
        vec.iter().filter(|v| *v & 1 == 1).count()
    }

    /// A sparse file (96 MiB long, past [`HOLES_HELD`]; a page of data at
    /// its start and one 1 MiB in) is held for its two pages of data, its
    /// holes counted and not in the page cache; held with its holes
    /// ([`Holes::Held`], as the images are) every page of it is.
    #[test]
    fn a_sparse_file_is_held_for_its_data_and_its_holes_are_counted() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        let file = std::fs::File::create(&path).unwrap();
        const LEN: u64 = 96 << 20;
        const { assert!(LEN > HOLES_HELD) };
        file.set_len(LEN).unwrap();
        file.write_all_at(&[1u8; 4096], 0).unwrap();
        file.write_all_at(&[2u8; 4096], 1 << 20).unwrap();
        file.sync_all().unwrap();
        // SAFETY: an advice on our own descriptor: nothing of it cached.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        let roots = [dir.path().to_path_buf()];
        let held = Resident::hold(&roots, &[], false, Holes::LeftOut);
        assert_eq!(held.bytes, 2 * 4096, "{held:?}");
        assert_eq!(held.holes, [(path.clone(), LEN - 2 * 4096)]);
        assert_eq!(cached(&held), 2, "only the data is read in");
        if held.locked {
            // SAFETY: as above.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            assert_eq!(cached(&held), 2, "a locked page of data was pushed out");
        }
        drop(held);
        // A few holes (a linker's) are held as zeros: within HOLES_HELD.
        let small = dir.path().join("small");
        let file = std::fs::File::create(&small).unwrap();
        file.set_len(4 << 20).unwrap();
        file.write_all_at(&[3u8; 4096], 0).unwrap();
        let both = [small.clone(), path.clone()];
        let held = Resident::hold(&both, &[], false, Holes::LeftOut);
        assert_eq!(held.bytes, (4 << 20) + 2 * 4096, "{held:?}");
        assert_eq!(held.holes, [(path.clone(), LEN - 2 * 4096)]);
        drop(held);
        std::fs::remove_file(&small).unwrap();
        let whole = Resident::hold(&roots, &[], false, Holes::Held);
        assert_eq!((whole.bytes, whole.holes.len()), (LEN, 0));
        assert_eq!(cached(&whole), (LEN / 4096) as usize);
    }
}
