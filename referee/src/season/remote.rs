//! A season's remote versions: a version that is a remote seat
//! (`season submit DIR NAME -- remote`), played by its owner's `referee
//! connect` while it is connected (docs/organisers.md, "Remote versions").
//!
//! Its seat token is the season's, not a run's: made when the first remote
//! version of the entrant is submitted, written to `DIR/tokens/NAME.token`
//! (mode 0600) for the organiser to hand over, good for any run of the
//! season (`RUN` is `*`) for [`SEASON_TTL`]. `season run --listen` serves it
//! (an organiser's `--tokens` line for the name takes its place), and a
//! remote version submitted while the run runs is served from then on.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};

use super::db::Version;
use crate::remote::token::Token;
use crate::remote::{Hub, RemoteSpec, PREFIX};

/// How long a season's seat token is good for.
pub const SEASON_TTL: Duration = Duration::from_secs(90 * 24 * 3600);

/// How a remote version was checked, in its record: check-bot cannot run a
/// bot on its owner's machine.
pub const CHECKED: &str = "a remote seat: not checked here (its bot runs on its owner's machine); \
                           each seat's bot must say hello by the startup limit when the seat opens";

/// The command a submission `command` of entrant `entrant` is recorded
/// with when it is a remote seat (`remote` or `remote:NAME`, NAME the
/// entrant's own), `None` when it is not one.
pub fn command(entrant: &str, command: &str) -> anyhow::Result<Option<String>> {
    let command = command.trim();
    let named = match command.strip_prefix(PREFIX) {
        Some(name) => name,
        None if command == "remote" => entrant,
        None => return Ok(None),
    };
    crate::remote::check_name(entrant).with_context(|| {
        format!("{entrant:?} cannot be a remote seat: its name is the seat's remote name")
    })?;
    if named != entrant {
        bail!(
            "the command of {entrant:?}: a season's remote seat is named after its entrant: \
             give `remote` or `remote:{entrant}`, not {command:?}"
        );
    }
    Ok(Some(format!("{PREFIX}{entrant}")))
}

/// The remote name of version `v`, if it is a remote seat.
pub fn name(v: &Version) -> Option<&str> {
    v.command.strip_prefix(PREFIX)
}

/// The seat token file of entrant `name` in the season at `dir`.
pub fn token_file(dir: &Path, name: &str) -> PathBuf {
    crate::layout::token_file(&dir.join(crate::layout::TOKENS), name)
}

/// The season's seat token of `name`: the one in its file if that reads
/// and has not expired, else a fresh one, written there (mode 0600).
pub fn seat_token(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let file = token_file(dir, name);
    if Token::read(&file).is_ok_and(|t| !t.expired() && t.name == name) {
        return Ok(file);
    }
    let token = Token::fresh(name, "*", SEASON_TTL)?;
    let tokens = dir.join(crate::layout::TOKENS);
    std::fs::create_dir_all(&tokens)
        .with_context(|| format!("failed to create {}", tokens.display()))?;
    let mut out = crate::safe_create::AtomicFile::create_private(&file)?;
    out.write_all(token.line().as_bytes())?;
    out.commit()?;
    Ok(file)
}

/// Starts the run's listener for `spec` (the coordinator serves each
/// remote version's name with [`register`] as it reads it); tells stderr
/// where.
pub fn serve(spec: &RemoteSpec) -> anyhow::Result<Arc<Hub>> {
    let hub = Hub::start(spec.clone())?;
    let how = match &hub.fingerprint {
        Some(fp) => format!("TLS, certificate SHA-256 {fp}"),
        None => "plain TCP: loopback only".to_owned(),
    };
    eprintln!(
        "referee: serving remote seats on {} ({how}), run {}",
        hub.addr, hub.run
    );
    Ok(hub)
}

/// Serves remote name `name` with its season token from now on (unless
/// the organiser's `--tokens` gave it one), and says what its owner runs.
pub fn register(hub: &Hub, dir: &Path, name: &str) -> anyhow::Result<()> {
    let file = token_file(dir, name);
    let given = hub.tokens.get(name).is_some_and(|t| t.run == "*");
    let held = match given {
        true => "the token of --tokens".to_owned(),
        false => {
            let token = Token::read(&file).with_context(|| {
                format!("remote:{name}: its seat token is missing; `season submit` it again")
            })?;
            hub.tokens.add(token, hub.spec.seats);
            file.display().to_string()
        }
    };
    let pin = (hub.fingerprint.as_ref()).map_or(String::new(), |fp| format!(" --fingerprint {fp}"));
    eprintln!(
        "referee: season: remote:{name} plays while its owner runs, with {held} (hand it over \
         privately; it is the seat's password)\n    referee connect {}{pin} --token-file \
         {name}.token -- BOT-COMMAND",
        hub.addr
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_command_is_named_after_its_entrant() {
        assert_eq!(command("alice", "remote").unwrap().unwrap(), "remote:alice");
        assert_eq!(
            command("alice", "remote:alice").unwrap().unwrap(),
            "remote:alice"
        );
        assert!(command("alice", "python3 bot.py").unwrap().is_none());
        assert!(command("alice", "builtin:random").unwrap().is_none());
        let e = command("alice", "remote:bob").unwrap_err().to_string();
        assert!(e.contains("named after its entrant"), "{e}");
        let e = format!("{:#}", command("a.b", "remote").unwrap_err());
        assert!(e.contains("cannot be a remote seat"), "{e}");
    }

    #[test]
    fn a_seat_token_is_kept_for_the_season_and_made_anew_only_when_unusable() {
        let dir = tempfile::tempdir().unwrap();
        let file = seat_token(dir.path(), "alice").unwrap();
        let first = std::fs::read_to_string(&file).unwrap();
        let t = Token::parse(first.trim(), "t").unwrap();
        assert_eq!((t.name.as_str(), t.run.as_str()), ("alice", "*"));
        assert!(!t.expired());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        seat_token(dir.path(), "alice").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), first, "kept");
        std::fs::write(&file, "garbage").unwrap();
        seat_token(dir.path(), "alice").unwrap();
        let again = std::fs::read_to_string(&file).unwrap();
        assert!(again != first && Token::parse(again.trim(), "t").is_ok());
    }
}
