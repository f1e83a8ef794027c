//! What a file holds: its data, as the file system lists it
//! (`SEEK_DATA`/`SEEK_HOLE`), not its apparent size.
//!
//! Why: a sparse file (`truncate -s 2G model.bin`: 2 GiB long, nothing on
//! disk) reads as zeros wherever it has no data, and a read of such a hole
//! still puts a page of zeros in the page cache. Holding every page of a
//! view (`resident.rs`) would then lock 2 GiB of memory for a file that
//! costs 8 KiB on disk (issue 43). The holder locks what a file holds,
//! found here; where its holes go is `image.rs`'s and `resident.rs`'s
//! business.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

use nix::libc;

/// Whether the file `meta` describes may have holes worth finding: fewer
/// bytes allocated than it is long. A cheap test on metadata alone; a file
/// that passes it may still hold no hole (a compressed file system) and one
/// that fails it may hold holes no larger than its own metadata blocks,
/// which are then held as zeros (a few pages at most).
pub fn may_be_sparse(meta: &std::fs::Metadata) -> bool {
    meta.blocks().saturating_mul(512) < meta.len()
}

/// The data of `file` (`len` bytes long), as `(offset, length)` ranges in
/// order; the rest is holes. A file system that cannot tell says all of it
/// is data, as does a file that cannot be asked.
pub fn data(file: &File, len: u64) -> Vec<(u64, u64)> {
    let fd = file.as_raw_fd();
    let seek = |offset: u64, whence: libc::c_int| -> Option<u64> {
        // SAFETY: lseek on a descriptor we hold; it moves only this open
        // file's offset, which nothing else reads.
        let at = unsafe { libc::lseek(fd, offset as libc::off_t, whence) };
        u64::try_from(at).ok()
    };
    let mut ranges = Vec::new();
    let mut at = 0;
    while at < len {
        let Some(start) = seek(at, libc::SEEK_DATA) else {
            // ENXIO: no data past `at`; anything else, a file system that
            // cannot tell: the rest counts as data.
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::ENXIO) {
                ranges.push((at, len - at));
            }
            break;
        };
        let end = seek(start, libc::SEEK_HOLE).unwrap_or(len).min(len);
        if end <= start {
            // A file system answering nonsense: the rest counts as data.
            ranges.push((start.min(at), len - start.min(at)));
            break;
        }
        ranges.push((start, end - start));
        at = end;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// A file with data at its start and 1 MiB in, 64 MiB long: two
    /// ranges of data, the rest holes; a dense file is one range.
    #[test]
    fn the_data_of_a_sparse_file_is_found_and_a_dense_file_is_all_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        let file = File::create(&path).unwrap();
        file.set_len(64 << 20).unwrap();
        file.write_all_at(b"head", 0).unwrap();
        file.write_all_at(b"tail", 1 << 20).unwrap();
        file.sync_all().unwrap();
        let file = File::open(&path).unwrap();
        let meta = file.metadata().unwrap();
        assert!(may_be_sparse(&meta), "{} blocks", meta.blocks());
        let found = data(&file, meta.len());
        let held: u64 = found.iter().map(|r| r.1).sum();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, 0);
        assert!(found[1].0 <= 1 << 20 && found[1].0 + found[1].1 > 1 << 20);
        assert!(held < 1 << 20, "{found:?}");

        let dense = dir.path().join("dense");
        std::fs::write(&dense, vec![1u8; 3 << 20]).unwrap();
        let dense = File::open(&dense).unwrap();
        dense.sync_all().unwrap();
        assert!(!may_be_sparse(&dense.metadata().unwrap()));
        assert_eq!(data(&dense, 3 << 20), [(0, 3 << 20)]);

        let empty = File::create(dir.path().join("hole")).unwrap();
        empty.set_len(1 << 20).unwrap();
        assert_eq!(data(&empty, 1 << 20), []);
    }
}
