//! An uploaded archive unpacked safely (`upload.rs`): a gzip-compressed tar
//! archive (`.tar.gz`, as `tar czf bot.tar.gz -C mybot .` makes one),
//! unpacked entry by entry into a fresh folder, each entry judged from its
//! header before a byte of it is written.
//!
//! Only regular files and folders are taken. Refused, naming the entry: a
//! path that climbs out (`..`) or is absolute; any link, symbolic or hard
//! (a link inside the folder would be harmless, but a link is never needed
//! by a bot that ships its files, and refusing all of them leaves nothing to
//! resolve: no check of where a link leads can be got wrong); a device, a
//! FIFO, a sparse file, anything else. Caps ([`Caps`]): the archive's size
//! as sent, the number of entries, each file's size and the total, each
//! checked against the header's size before the file is created, so a
//! header claiming 10 GB is refused at once and nothing of it is written;
//! the decompressed stream itself is capped too (a gzip bomb of headers
//! stops at the cap).
//!
//! What is written: folders `0755`, files `0644`, or `0755` where the
//! archive gives the owner the execute bit; never a set-user-ID, set-group-ID
//! or sticky bit, never the archive's owners or times. Readable by others on
//! purpose: a sandboxed bot of a root referee runs as an unprivileged user of
//! its own, which must read its files (SECURITY.md, "One user per bot").

use crate::os::files;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The limits of one upload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// The archive as sent (compressed), in bytes.
    pub archive: u64,
    /// Entries (files and folders).
    pub entries: u64,
    /// One file's size, unpacked.
    pub file: u64,
    /// All files' sizes together, unpacked.
    pub total: u64,
}

/// The caps every upload is held to.
pub const CAPS: Caps = Caps {
    archive: 32 << 20,
    entries: 4096,
    file: 64 << 20,
    total: 256 << 20,
};

/// What the tar stream may hold beyond the files' bytes: each entry's
/// headers (its own, a long name's, padding) take a few blocks.
const PER_ENTRY: u64 = 4 * 512 + 4096;

/// The most of an entry's name a message shows.
const SHOWN: usize = 200;

/// Why an archive was refused: the owner's to correct, said in words.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the archive is {size} bytes; an upload is at most {cap} bytes (compressed)")]
    ArchiveTooLarge { size: u64, cap: u64 },
    #[error("the archive holds more than {0} entries (files and folders)")]
    TooManyEntries(u64),
    #[error("entry {entry:?}: {why}")]
    Entry { entry: String, why: String },
    #[error("the archive holds no file")]
    Empty,
    #[error("not a readable .tar.gz archive: {0}")]
    Unreadable(String),
}

/// What was unpacked.
#[derive(Debug, PartialEq, Eq)]
pub struct Unpacked {
    pub files: u64,
    pub bytes: u64,
}

/// Unpacks `archive` into the folder `into` (which exists, empty), or says
/// why not. On a refusal `into` may hold part of the archive: the caller
/// removes it.
pub fn unpack(archive: &[u8], into: &Path, caps: &Caps) -> Result<Unpacked, Refusal> {
    if archive.len() as u64 > caps.archive {
        return Err(Refusal::ArchiveTooLarge {
            size: archive.len() as u64,
            cap: caps.archive,
        });
    }
    let stream_cap = caps.total + (caps.entries + 1) * PER_ENTRY;
    let stream = Capped {
        inner: flate2::read::GzDecoder::new(archive),
        left: stream_cap,
    };
    let mut tar = tar::Archive::new(stream);
    let entries = tar.entries().map_err(unreadable)?;
    let mut done = Unpacked { files: 0, bytes: 0 };
    for (i, entry) in entries.enumerate() {
        if i as u64 >= caps.entries {
            return Err(Refusal::TooManyEntries(caps.entries));
        }
        let mut entry = entry.map_err(|e| {
            let e = e.to_string();
            Refusal::Unreadable(format!(
                "after {i} entries: {}",
                crate::names::printable(&e)
            ))
        })?;
        let raw = entry.path_bytes().into_owned();
        let name = shown(&raw);
        let refuse = |why: String| Refusal::Entry {
            entry: name.clone(),
            why,
        };
        let rel = relative(&raw).map_err(|why| refuse(why.to_owned()))?;
        take(&mut entry, into, &rel, caps, &mut done).map_err(refuse)?;
    }
    if done.files == 0 {
        return Err(Refusal::Empty);
    }
    Ok(done)
}

/// One entry, judged and (a file or folder) written under `into`.
fn take<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    into: &Path,
    rel: &Path,
    caps: &Caps,
    done: &mut Unpacked,
) -> Result<(), String> {
    match entry.header().entry_type() {
        tar::EntryType::Directory => return folder(&into.join(rel)),
        tar::EntryType::Regular | tar::EntryType::Continuous => {}
        _ => return Err(not_taken(entry)),
    }
    let size = entry.size();
    if size > caps.file {
        return Err(format!(
            "a file of {size} bytes; a file is at most {} bytes",
            caps.file
        ));
    }
    if done.bytes + size > caps.total {
        return Err(format!(
            "the files come to more than {} bytes with this one (of {size} bytes)",
            caps.total
        ));
    }
    let exec = entry.header().mode().is_ok_and(|m| m & 0o100 != 0);
    let path = into.join(rel);
    if let Some(parent) = path.parent() {
        folder(parent)?;
    }
    let mode = if exec { 0o755 } else { 0o644 };
    let mut file = files::with_mode(
        std::fs::OpenOptions::new().write(true).create_new(true),
        mode,
    )
    .open(&path)
    .map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => "appears twice in the archive".to_owned(),
        _ => format!("cannot be written: {e}"),
    })?;
    let written = std::io::copy(&mut entry.take(size), &mut file)
        .map_err(|e| format!("cannot be read or written: {e}"))?;
    if written != size {
        return Err(format!(
            "the archive ends inside it ({written} of {size} bytes)"
        ));
    }
    // The mode as given, whatever the umask left of it.
    files::set_mode(&path, mode).map_err(|e| format!("cannot be written: {e}"))?;
    done.files += 1;
    done.bytes += size;
    Ok(())
}

/// Why an entry that is neither a file nor a folder is not taken.
fn not_taken<R: Read>(entry: &tar::Entry<'_, R>) -> String {
    use tar::EntryType as T;
    let link = || shown(&entry.link_name_bytes().unwrap_or_default());
    let plain = "an upload holds files and folders only";
    match entry.header().entry_type() {
        T::Symlink => format!(
            "a symbolic link (to {:?}); an upload holds no links: ship the file itself",
            link()
        ),
        T::Link => format!(
            "a hard link (to {:?}); an upload holds no links: ship the file itself",
            link()
        ),
        T::Char | T::Block => format!("a device; {plain}"),
        T::Fifo => format!("a FIFO; {plain}"),
        T::GNUSparse => {
            format!("a sparse file; {plain}, plain ones (make the archive without --sparse)")
        }
        other => format!("an entry of type {:?}; {plain}", other.as_byte() as char),
    }
}

/// A name from the archive as a message shows it: printable, and its first
/// [`SHOWN`] bytes at most.
fn shown(raw: &[u8]) -> String {
    let cut = &raw[..raw.len().min(SHOWN)];
    let text = crate::names::printable(&String::from_utf8_lossy(cut)).into_owned();
    match raw.len() > SHOWN {
        true => format!("{text}… ({} bytes)", raw.len()),
        false => text,
    }
}

/// An entry's path as a relative path with no `..`, or why not.
fn relative(raw: &[u8]) -> Result<PathBuf, &'static str> {
    let path =
        files::path_from_bytes(raw).ok_or("is not a name this system can hold (not UTF-8)")?;
    let mut rel = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => rel.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(
                    "climbs out of the bot's folder (`..`); paths in an upload stay inside it",
                )
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(
                    "is an absolute path; paths in an upload are relative to the bot's folder",
                )
            }
        }
    }
    Ok(rel)
}

/// Makes the folder `dir` (and its parents under the upload), mode 0755.
fn folder(dir: &Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    files::make_dirs(dir, 0o755).map_err(|e| format!("cannot be made a folder: {e}"))?;
    files::set_mode(dir, 0o755).map_err(|e| format!("cannot be made a folder: {e}"))
}

fn unreadable(e: std::io::Error) -> Refusal {
    let e = e.to_string();
    Refusal::Unreadable(crate::names::printable(&e).into_owned())
}

/// The decompressed stream, ended with an error past `left` bytes.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(
                    "it unpacks to more than an upload may hold",
                )),
            };
        }
        let max = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// Small caps, so a test reaches them with little data.
    const SMALL: Caps = Caps {
        archive: 1 << 20,
        entries: 8,
        file: 600 << 10,
        total: 1 << 20,
    };

    /// A .tar.gz of (name, type, mode, data) entries, written as given.
    fn tgz(entries: &[(&str, tar::EntryType, u32, &[u8])]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for (name, kind, mode, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(*mode);
            h.set_cksum();
            gz.write_all(h.as_bytes()).unwrap();
            gz.write_all(data).unwrap();
            gz.write_all(&vec![0; (512 - data.len() % 512) % 512])
                .unwrap();
        }
        gz.write_all(&[0; 1024]).unwrap();
        gz.finish().unwrap()
    }

    // Permission bits are Unix's (Windows has none to check).
    #[cfg(unix)]
    fn mode(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[cfg(unix)]
    #[test]
    fn files_and_folders_are_written_with_the_referees_modes() {
        use tar::EntryType as T;
        let dir = tempfile::tempdir().unwrap();
        let archive = tgz(&[
            ("./", T::Directory, 0o700, b""),
            ("lib/", T::Directory, 0o777, b""),
            ("lib/kit.py", T::Regular, 0o4777, b"kit"),
            ("run", T::Regular, 0o700, b"#!/bin/sh\n"),
            ("deep/er/data.txt", T::Regular, 0o666, b"x"),
        ]);
        let done = unpack(&archive, dir.path(), &SMALL).unwrap();
        assert_eq!(
            done,
            Unpacked {
                files: 3,
                bytes: 14
            }
        );
        let p = dir.path();
        assert_eq!(std::fs::read(p.join("lib/kit.py")).unwrap(), b"kit");
        assert_eq!(mode(&p.join("lib/kit.py")), 0o755, "no set-user-ID bit");
        assert_eq!(mode(&p.join("run")), 0o755);
        assert_eq!(mode(&p.join("deep/er/data.txt")), 0o644);
        assert_eq!(mode(&p.join("lib")), 0o755);
        assert_eq!(mode(&p.join("deep/er")), 0o755);
    }

    #[test]
    fn the_total_a_name_twice_and_an_empty_archive_are_refused() {
        use tar::EntryType as T;
        let big = vec![7u8; 550 << 10];
        let dir = tempfile::tempdir().unwrap();
        let two = tgz(&[
            ("a", T::Regular, 0o644, &big),
            ("b", T::Regular, 0o644, &big),
        ]);
        let err = unpack(&two, dir.path(), &SMALL).unwrap_err().to_string();
        assert!(
            err.starts_with("entry \"b\": the files come to more than 1048576 bytes"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let twice = tgz(&[
            ("a", T::Regular, 0o644, b"1"),
            ("./a", T::Regular, 0o644, b"2"),
        ]);
        let err = unpack(&twice, dir.path(), &SMALL).unwrap_err().to_string();
        assert_eq!(err, "entry \"./a\": appears twice in the archive");
        let dir = tempfile::tempdir().unwrap();
        let empty = tgz(&[("sub/", T::Directory, 0o755, b"")]);
        assert_eq!(unpack(&empty, dir.path(), &SMALL), Err(Refusal::Empty));
        let err = unpack(b"not gzip", dir.path(), &SMALL).unwrap_err();
        assert!(matches!(err, Refusal::Unreadable(_)), "{err}");
    }

    #[test]
    fn a_long_name_larger_than_the_stream_cap_stops_at_the_cap() {
        // A GNU long name is read whole by the tar reader: the stream's cap
        // is what bounds it.
        let name = vec![b'a'; 2 << 20];
        let archive = tgz(&[
            ("././@LongLink", tar::EntryType::GNULongName, 0o644, &name),
            ("x", tar::EntryType::Regular, 0o644, b"x"),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let err = unpack(&archive, dir.path(), &SMALL)
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than an upload may hold"), "{err}");
        // A long name is shown cut.
        let long = [b"../".as_slice(), &[b'c'; 300]].concat();
        let archive = tgz(&[
            ("././@LongLink", tar::EntryType::GNULongName, 0o644, &long),
            ("x", tar::EntryType::Regular, 0o644, b"x"),
        ]);
        let err = unpack(&archive, dir.path(), &SMALL)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ccc… (303 bytes)\": climbs out"), "{err}");
        assert!(err.len() < 400, "{err}");
        let too_big = vec![0u8; (SMALL.archive + 1) as usize];
        assert_eq!(
            unpack(&too_big, dir.path(), &SMALL),
            Err(Refusal::ArchiveTooLarge {
                size: SMALL.archive + 1,
                cap: SMALL.archive
            })
        );
    }
}
