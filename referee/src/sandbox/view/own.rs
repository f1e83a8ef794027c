//! What a sandboxed built-in bot sees: the referee's own executable and the
//! shared libraries it runs on, not the whole system view.
//!
//! Why: a built-in bot (`builtin:NAME`) is the referee's executable run as
//! `referee bot NAME`; it needs no interpreter, no `/etc`, no `/usr/bin`. Each
//! directory a sandbox shows is a bind mount, a remount read-only and a read
//! of `mountinfo` in bubblewrap, so the system view's 15 or so cost a
//! built-in bot most of its start (BENCHMARKS.md, "Sandboxed competition:
//! issue 27, the quick wins"). Showing less also leaves such a bot less to
//! look at.
//!
//! Which files: those the referee itself has mapped (`/proc/self/maps`: the
//! C library, the loader, whatever else it links), and the loader as its
//! executable names it (`PT_INTERP`, e.g. `/lib64/ld-linux-x86-64.so.2`, a
//! link the kernel follows through the merged-usr links the sandbox keeps).
//! Each is shown alone, not its directory: a directory of libraries is most
//! of the system view's size (823 MiB here), all of which the sandbox would
//! otherwise hold in memory for the run (`resident.rs`), and a bot could
//! read. Only files of the system view are shown this way; if one lies
//! elsewhere, or the executable cannot be read, [`files`] gives `None` and
//! the bot gets the system view.

use std::path::{Path, PathBuf};

use super::{link_dirs, system_paths};

/// The files (sorted) a built-in bot of executable `referee` needs beside
/// it: the libraries the referee has mapped, at their canonical paths, and
/// the loader at the path its executable names (its directory canonical,
/// e.g. `/usr/lib64/ld-linux-x86-64.so.2`, which the sandbox shows as the
/// file that name leads to); `None`: show it the whole system view.
pub fn files(referee: &Path) -> Option<Vec<PathBuf>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut mapped: Vec<PathBuf> = (libraries_mapped(&maps).into_iter())
        // Not a memfd's or a deleted file's name.
        .filter(|p| p != referee && p.is_file())
        .collect();
    // The running executable's header, whatever its path names now.
    mapped.push(interpreter(&head(Path::new("/proc/self/exe")).ok()?)?);
    let shown: Vec<PathBuf> = system_paths().into_iter().chain(link_dirs()).collect();
    let mut files = Vec::new();
    for file in mapped {
        let path = std::fs::canonicalize(file.parent()?)
            .ok()?
            .join(file.file_name()?);
        if !shown.iter().any(|s| path.starts_with(s)) || !path.is_file() {
            return None;
        }
        files.push(path);
    }
    files.sort();
    files.dedup();
    Some(files)
}

/// The files of `maps` (a `/proc/self/maps`) mapped privately, as the
/// loader maps a library. A shared mapping is data the referee works on, not
/// code a built-in bot runs: SQLite's `season.db-shm` during a season (its
/// WAL index), which lies in the season's folder, outside the system view.
fn libraries_mapped(maps: &str) -> Vec<PathBuf> {
    (maps.lines())
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let private = fields.nth(1)?.ends_with('p');
            let path = fields.nth(3)?;
            (private && path.starts_with('/')).then(|| PathBuf::from(path))
        })
        .collect()
}

/// The first [`HEAD`] bytes of `path`: enough for an executable's ELF header,
/// program headers and interpreter name, which a linker puts at its start (the
/// referee's executable is tens of megabytes; reading it all would be waste).
fn head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(HEAD as usize);
    std::fs::File::open(path)?
        .take(HEAD)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

const HEAD: u64 = 64 * 1024;

/// The program interpreter a 64-bit little-endian ELF executable names
/// (`PT_INTERP`); `None` for anything else, a static executable included
/// (which then needs no library; the caller falls back to the system view
/// all the same, the cautious choice).
fn interpreter(elf: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let (phoff, phentsize, phnum) = (u64_at(0x20)? as usize, u16_at(0x36)?, u16_at(0x38)?);
    (0..phnum as usize).find_map(|i| {
        let ph = phoff + i * phentsize as usize;
        // p_type 3 is PT_INTERP: p_offset at +8, p_filesz at +32.
        if elf.get(ph..ph + 4)? != 3u32.to_le_bytes() {
            return None;
        }
        let (off, len) = (u64_at(ph + 8)? as usize, u64_at(ph + 32)? as usize);
        let name = elf.get(off..off + len)?;
        let name = name.strip_suffix(b"\0").unwrap_or(name);
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(name)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test binary, linked as the referee is, needs the loader (at
    /// the path it names) and the C library, all in the system view, each a
    /// file, and no more than a few.
    #[test]
    fn a_built_in_bot_needs_the_loader_and_the_c_library_only() {
        let exe = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        let interp = interpreter(&head(&exe).unwrap());
        let Some(interp) = interp else {
            // A static build: the caller shows the system view.
            return;
        };
        assert!(interp.is_absolute(), "{interp:?}");
        let files = files(&exe).expect("the libraries lie in the system view");
        let loader = std::fs::canonicalize(interp.parent().unwrap())
            .unwrap()
            .join(interp.file_name().unwrap());
        assert!(files.contains(&loader), "{files:?}");
        assert!(
            files.iter().any(|f| f
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libc.so"))),
            "{files:?}"
        );
        assert!(files.len() <= 8, "{files:?}");
        assert!(files.iter().all(|f| f.is_file()), "{files:?}");
        assert!(!files
            .iter()
            .any(|f| f.starts_with("/etc") || f.starts_with("/usr/bin")));
    }

    #[test]
    fn a_shared_mapping_is_not_a_library() {
        let maps = "7f00-7f01 r-xp 00000000 08:01 12 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                    7f02-7f03 rw-s 00000000 08:01 13 /home/o/runs/s1/season.db-shm\n\
                    7f04-7f05 rw-p 00000000 00:00 0 \n\
                    7f06-7f07 r--p 00000000 00:00 0 [vdso]\n";
        assert_eq!(
            libraries_mapped(maps),
            [PathBuf::from("/usr/lib/x86_64-linux-gnu/libc.so.6")]
        );
    }

    #[test]
    fn what_is_not_an_elf_executable_names_no_interpreter() {
        assert_eq!(interpreter(b"#!/bin/sh\n"), None);
        assert_eq!(interpreter(b"\x7fELF\x02\x01"), None);
    }
}
