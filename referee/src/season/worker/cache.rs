//! The worker's cache of the versions' files, by hash: `CACHE/blobs/HASH`
//! (the archive as fetched, kept only once its SHA-256 is HASH) and
//! `CACHE/bots/HASH/` (it unpacked, by the uploads' safe unpacker, under
//! the same caps: no link, no `..`, no device). A folder in `bots/` is
//! there only once whole: it is unpacked beside it and renamed.

use std::path::PathBuf;

use anyhow::{bail, Context};

use super::Worker;
use crate::season::blob;
use crate::season::unpack::{unpack, Refusal, CAPS};

/// The folder holding blob `hash`'s files, fetched, checked and unpacked
/// first if the cache does not have it.
pub async fn bot_dir(w: &Worker, hash: &str) -> anyhow::Result<PathBuf> {
    if !blob::is_hash(hash) {
        bail!("the server named a blob {hash:?}, which is no SHA-256");
    }
    let dir = w.cache.join("bots").join(hash);
    let _one = w.unpacking.lock().await;
    if dir.is_dir() {
        return Ok(dir);
    }
    let kept = w.cache.join("blobs").join(hash);
    let bytes = match std::fs::read(&kept) {
        Ok(b) if blob::hash(&b) == hash => b,
        _ => fetch(w, hash).await?,
    };
    let partial = w.cache.join("bots").join(format!("{hash}.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial)
        .with_context(|| format!("failed to create {}", partial.display()))?;
    match unpack(&bytes, &partial, &CAPS) {
        // A version's folder may be empty (a command that names what it
        // runs, submitted from an empty folder): an upload may not be, a
        // blob the server packed and the hash vouches for may.
        Ok(_) | Err(Refusal::Empty) => {}
        Err(e) => bail!("blob {hash} cannot be unpacked: {e}"),
    }
    std::fs::rename(&partial, &dir)
        .with_context(|| format!("failed to move {} into place", partial.display()))?;
    Ok(dir)
}

/// Blob `hash` from the server, checked against its hash and kept.
async fn fetch(w: &Worker, hash: &str) -> anyhow::Result<Vec<u8>> {
    let reply = w
        .server
        .send("GET", &format!("/api/worker/blobs/{hash}"), &[], false)
        .await?;
    if reply.status != 200 {
        bail!(
            "the server refused blob {hash} ({}): {}",
            reply.status,
            reply.why()
        );
    }
    let got = blob::hash(&reply.body);
    if got != hash {
        bail!("the server sent blob {hash} as bytes whose SHA-256 is {got}; nothing of it is run");
    }
    let kept = w.cache.join("blobs").join(hash);
    std::fs::create_dir_all(kept.parent().expect("blobs/"))?;
    crate::safe_create::write_atomic(&kept, &reply.body)
        .map_err(|e| anyhow::anyhow!("failed to keep {}: {e}", kept.display()))?;
    Ok(reply.body)
}
