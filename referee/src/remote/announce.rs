//! A run's remote seats made known: the hub started, each name's token
//! written to `OUT/tokens/NAME.token` (mode 0600, through the one atomic
//! writer), and the organiser told how to hand each one over and what its
//! owner runs.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use super::{Hub, RemoteSpec};

/// Starts serving `spec`, writes the token files into `dir` and prints the
/// instructions on stderr.
pub fn serve(spec: &RemoteSpec, dir: &Path) -> anyhow::Result<Arc<Hub>> {
    let hub = Hub::start(spec.clone())?;
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    eprint!("{}", write_tokens(&hub, dir)?);
    Ok(hub)
}

/// Writes each token file; returns the instructions.
fn write_tokens(hub: &Hub, dir: &Path) -> anyhow::Result<String> {
    let addr = hub.addr;
    let (how, pin) = match &hub.fingerprint {
        Some(fp) => (
            format!("TLS, certificate SHA-256 {fp}"),
            format!(" --fingerprint {fp}"),
        ),
        None => ("plain TCP: loopback only".to_owned(), String::new()),
    };
    let mut text = format!(
        "referee: serving remote seats on {addr} ({how}), run {}\n",
        hub.run
    );
    for token in hub.tokens.iter() {
        let file = crate::layout::token_file(dir, &token.name);
        let mut out = crate::safe_create::AtomicFile::create_private(&file)?;
        out.write_all(token.line().as_bytes())?;
        out.commit()?;
        text.push_str(&format!(
            "referee: remote:{name}: hand {file} to its owner privately (it is the seat's \
             password); the owner runs\n    referee connect {addr}{pin} --token-file {name}.token -- BOT-COMMAND\n",
            name = token.name,
            file = file.display(),
        ));
    }
    Ok(text)
}
