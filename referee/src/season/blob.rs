//! A version's files as workers get them: content-addressed. The version's
//! folder is packed once into a `.tar.gz` made the same way every time
//! (entries in name order, no owners, no times, modes `0755`/`0644` as
//! an upload's are unpacked), kept as `DIR/blobs/HASH` where HASH is the
//! SHA-256 of the archive, and its hash recorded for the version
//! (`db/lease.rs`), so the files a worker runs are the ones packed the
//! first time, whatever the folder holds later. A worker fetches a blob by
//! its hash, checks the bytes against it, and unpacks it with the uploads'
//! safe unpacker (`unpack.rs`) into its cache (`worker/`).
//!
//! Only regular files and folders are packed, within the uploads' caps: a
//! folder with a link, a device or more than the caps cannot be shipped,
//! and its sets are played by the server's own tables.

use std::path::Path;

use anyhow::{bail, Context};

use super::db::{Db, Version};
use super::unpack::CAPS;
use crate::config::BotSpec;

/// The SHA-256 of `bytes`, as 64 lowercase hex digits.
pub fn hash(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    super::db::hex(digest.as_ref())
}

/// Whether `text` is a hash as [`hash`] writes one (nothing else names a
/// blob's file).
pub fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The hash of version `v`'s files, packed and kept on first use; `None`
/// for a version with no folder of its own (a built-in bot, or a command
/// that names what it runs).
pub fn of_version(dir: &Path, db: &Db, v: &Version) -> anyhow::Result<Option<String>> {
    let Some(folder) = &v.dir else {
        return Ok(None);
    };
    if matches!(super::settings::bot(v)?, BotSpec::Builtin(_)) {
        return Ok(None);
    }
    if let Some(known) = db.blob_of(v.id)? {
        return Ok(Some(known));
    }
    let bytes = pack(Path::new(folder))
        .with_context(|| format!("{} v{}'s folder {folder}", v.name, v.number))?;
    let h = hash(&bytes);
    let path = crate::layout::season::blob(dir, &h);
    if !path.is_file() {
        let parent = path.parent().expect("blobs/ is a folder");
        std::fs::create_dir_all(parent)
            .with_context(|| format!("failed to create {}", parent.display()))?;
        crate::safe_create::write_atomic(&path, &bytes)
            .with_context(|| format!("failed to write {}", path.display()))?;
    }
    db.set_blob(v.id, &h)?;
    Ok(Some(h))
}

/// Whether the folder `root` can be shipped to workers (what [`pack`]
/// refuses but for the archive's size, found without packing it): its
/// fault, if it cannot.
pub fn shippable(root: &Path) -> anyhow::Result<()> {
    within_caps(root).map(|_| ())
}

/// The folder `root` as a `.tar.gz`, the same bytes for the same files.
pub fn pack(root: &Path) -> anyhow::Result<Vec<u8>> {
    let entries = within_caps(root)?;
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (rel, meta) in &entries {
        let mut header = tar::Header::new_ustar();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        let name = rel.to_str().context("a name that is not UTF-8")?;
        if meta.is_dir() {
            header.set_entry_type(tar::EntryType::Directory);
            header.set_mode(0o755);
            header.set_size(0);
            tar.append_data(&mut header, format!("{name}/"), std::io::empty())?;
            continue;
        }
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(match executable(meta) {
            true => 0o755,
            false => 0o644,
        });
        header.set_size(meta.len());
        let file =
            std::fs::File::open(root.join(rel)).with_context(|| format!("cannot read {name}"))?;
        tar.append_data(&mut header, name, file)?;
    }
    let bytes = tar.into_inner()?.finish()?;
    if bytes.len() as u64 > CAPS.archive {
        bail!("its archive comes to more than {} bytes", CAPS.archive);
    }
    Ok(bytes)
}

/// The files and folders under `root`, in the order they are packed, each
/// with its metadata; refused if one is a link or special file, or if they
/// pass the uploads' caps (entries, a file's size, the total).
fn within_caps(root: &Path) -> anyhow::Result<Vec<(std::path::PathBuf, std::fs::Metadata)>> {
    let mut names = Vec::new();
    walk(root, Path::new(""), &mut names)?;
    let mut entries = Vec::with_capacity(names.len());
    let mut total = 0u64;
    for rel in names {
        let meta = std::fs::symlink_metadata(root.join(&rel))?;
        if !meta.is_dir() {
            total += meta.len();
            if meta.len() > CAPS.file || total > CAPS.total {
                bail!(
                    "{}: over the caps of a shipped folder (as an upload's)",
                    rel.display()
                );
            }
        }
        entries.push((rel, meta));
    }
    Ok(entries)
}

/// The names under `root/rel`, folders before what they hold, in name order;
/// a link or anything but a file or folder is refused.
fn walk(root: &Path, rel: &Path, out: &mut Vec<std::path::PathBuf>) -> anyhow::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(root.join(rel))
        .with_context(|| format!("cannot list {}", root.join(rel).display()))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    for name in names {
        let child = rel.join(&name);
        let meta = std::fs::symlink_metadata(root.join(&child))?;
        if out.len() as u64 >= CAPS.entries {
            // Stopped here: a home folder is not walked to its end.
            bail!("more than {} files and folders to ship", CAPS.entries);
        }
        if meta.is_dir() {
            out.push(child.clone());
            walk(root, &child, out)?;
        } else if meta.is_file() {
            out.push(child);
        } else {
            bail!(
                "{}: a link or special file; a shipped folder holds files and folders only",
                child.display()
            );
        }
    }
    Ok(())
}

#[cfg(unix)]
fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o100 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_packs_to_the_same_bytes_and_unpacks_to_the_same_files() {
        let a = tempfile::tempdir().unwrap();
        std::fs::create_dir(a.path().join("lib")).unwrap();
        std::fs::write(a.path().join("bot.py"), b"print(1)\n").unwrap();
        std::fs::write(a.path().join("lib/x.txt"), b"x").unwrap();
        let one = pack(a.path()).unwrap();
        let two = pack(a.path()).unwrap();
        assert_eq!(one, two);
        assert!(is_hash(&hash(&one)));
        let into = tempfile::tempdir().unwrap();
        let done = super::super::unpack::unpack(&one, into.path(), &CAPS).unwrap();
        assert_eq!(done.files, 2);
        assert_eq!(std::fs::read(into.path().join("lib/x.txt")).unwrap(), b"x");
        std::fs::write(a.path().join("bot.py"), b"print(2)\n").unwrap();
        assert_ne!(hash(&pack(a.path()).unwrap()), hash(&one));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", a.path().join("out")).unwrap();
            let err = pack(a.path()).unwrap_err().to_string();
            assert!(err.contains("out: a link"), "{err}");
        }
    }
}
