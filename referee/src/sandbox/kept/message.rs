//! What the referee and a kept sandbox's launcher say to each other over its
//! control socket: a [`Request`] to start one bot (JSON, with the bot's
//! stdio, report socket and view mounts passed beside it), a [`Reply`] to
//! it; and the Landlock wrapper's command line, carried as bytes.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStringExt;

use anyhow::anyhow;
use serde::{Deserialize, Serialize};

use crate::sandbox::landlock::{LandlockArgs, Rules};

/// Where a sandboxed bot sees its `--scratch` directory, whatever and wherever
/// it is on the host (and `SCHMIER_SCRATCH` names this): the host path names
/// the round, matchup, game and slot, which would tell a bot which game of a
/// duplicate set it plays.
pub const SCRATCH_INSIDE: &str = "/scratch";

/// The descriptor the launcher's control socket is passed in.
pub const CONTROL_FD: RawFd = 3;

/// The largest request (JSON) and reply the control socket carries.
pub(super) const MESSAGE_BYTES: usize = 1 << 16;

/// One bot to start, as the referee sends it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The Landlock wrapper's command line (`landlock.rs`), its subcommand
    /// first, the bot's program and arguments last; bytes, as paths are.
    pub wrapper: Vec<Vec<u8>>,
    /// The bot's whole environment.
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    /// Its working directory.
    pub dir: Vec<u8>,
    /// The size of its `/tmp` and `/dev/shm`.
    pub tmpfs_bytes: u64,
    /// The size of its `/scratch`, if it has one.
    pub scratch_bytes: Option<u64>,
    /// `(path under /proc, stand-in's file name)` pairs.
    pub masks: Vec<(String, String)>,
    /// What the sandbox shows beneath `/tmp` (put back over the bot's own).
    pub keep: Vec<Vec<u8>>,
    /// `RLIMIT_AS`, `RLIMIT_CPU`, `RLIMIT_NOFILE`.
    pub limits: [Option<u64>; 3],
    /// The init's nice value: 19 for a bot built ahead of its game, so that
    /// building it takes no CPU from the game being played (the referee
    /// gives its tree nice 0 before the bot runs: `BotProcess::release`).
    pub nice: i32,
    /// Fresh mounts of the view's images put over the sandbox's binds
    /// (`image.rs`): each names a mount passed with the request.
    #[serde(default)]
    pub views: Vec<ViewMount>,
    /// Large files of the view shown as the host's own, bound over their
    /// empty stand-ins in the images (`image.rs`, [`LARGE_FILE`]): cloned
    /// from the sandbox's binds before the images cover them.
    ///
    /// [`LARGE_FILE`]: crate::sandbox::view::image::LARGE_FILE
    #[serde(default)]
    pub host_files: Vec<Vec<u8>>,
}

/// One path of the bot's view shown from a mount of its own (`image.rs`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ViewMount {
    /// Where the bot sees it.
    pub target: Vec<u8>,
    /// Which of the request's mounts (0: the first after the four stdio and
    /// report descriptors).
    pub image: usize,
    /// The path inside that mount (empty: its root).
    pub within: Vec<u8>,
}

/// The launcher's answer to a request.
#[derive(Serialize, Deserialize, Debug)]
pub enum Reply {
    /// The init is cloned; its pid comes over the report socket.
    Started,
    /// Nothing was started, and the launcher exits.
    Refused(String),
}

/// The wrapper's arguments from its command line (`Rules::command_line`).
pub fn parse_wrapper(words: &[Vec<u8>]) -> anyhow::Result<LandlockArgs> {
    use clap::Parser;
    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: LandlockArgs,
    }
    let words = words.iter().skip(1).map(|w| OsString::from_vec(w.clone()));
    Wrapper::try_parse_from(std::iter::once(OsString::from("referee")).chain(words))
        .map(|w| w.args)
        .map_err(|e| anyhow!("a malformed wrapper command line: {e}"))
}

/// The wrapper's command line for `rules` and the bot's `command`, as bytes.
pub fn wrapper_line(rules: &Rules, command: Vec<OsString>, hold: bool) -> Vec<Vec<u8>> {
    (rules.command_line(command, None, hold).into_iter())
        .map(OsString::into_vec)
        .collect()
}
