//! Every path the referee writes, named in one place: the folder of a `play`
//! run (or its one transcript file), the folder of a tournament, and the
//! temporary name a file has until it is whole. Code elsewhere asks this module
//! for a path; it never spells a file name itself, so renaming or adding an
//! output is a change to this file alone: its name, and the arm of
//! [`Output::kind`] or [`tournament::kind`] that knows it back (and, for a
//! tournament file `--overwrite` must remove, [`tournament::FILES`]).
//! `tests/integration/layout.rs` holds a real run's folders to those two: a
//! file no arm names fails it.
//!
//! How each file is written (the layout names them; these write them):
//! - whole files — transcripts, timings, standings, the manifest, the sorted
//!   journal, pages — go through the one atomic writer,
//!   [`crate::safe_create::AtomicFile`]: `NAME.partial`, fsync, rename, fsync
//!   of the folder;
//! - the journal is appended and fsynced line by line while a tournament runs
//!   (`tournament/journal.rs`): a line is the unit that counts, not the file;
//! - a bot's stderr log is streamed as the bot writes it (`bot/process.rs`), so
//!   a crash keeps what it said; it is created never following a symlink.
//!
//! What a run leaves, for a `play` folder `DIR`:
//!
//! ```text
//! DIR/game-0001.jsonl           transcript of game 1 (the deterministic record)
//! DIR/timings/game-0001.jsonl   its per-decision timings (wall clock)
//! DIR/stderr/player0.log        lineup slot 0's stderr; player0.restart1.log
//!                               after its first restart
//! DIR/referee.lock              while the run holds the folder (`lock.rs`)
//! ```
//!
//! (`--transcript FILE.jsonl` for one game: `FILE.jsonl`, `timings/FILE.jsonl`
//! beside it, and `FILE.stderr/player0.log`.) For a tournament folder, see
//! [`tournament`].

use std::path::{Path, PathBuf};

/// The suffix of a file being written: `NAME.partial` until it is whole.
pub const PARTIAL: &str = ".partial";

/// The temporary name `path` is written under: `NAME.partial`.
pub fn partial(path: &Path) -> PathBuf {
    let mut partial = path.as_os_str().to_owned();
    partial.push(PARTIAL);
    PathBuf::from(partial)
}

/// The lock file a run holds in its output folder while it runs (`lock.rs`):
/// the same name in a play folder and a tournament folder, so that neither
/// kind of run can write into a folder the other is using. Removed as the run
/// ends.
pub const LOCK: &str = "referee.lock";

/// The timings folder's name, beside the transcripts it belongs to.
const TIMINGS: &str = "timings";
/// The folder of a run's remote seat tokens (`NAME.token`, mode 0600).
pub const TOKENS: &str = "tokens";

/// The token file of remote bot `name` in `dir` (a run's [`TOKENS`] folder).
pub fn token_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.token"))
}
/// The stderr folder's name in a play folder and in a tournament folder.
const STDERR: &str = "stderr";

/// Where a `play` run's files go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// One game, one transcript file.
    File(PathBuf),
    /// A directory with `game-0001.jsonl`, ...
    Dir(PathBuf),
}

impl Output {
    /// The folder `play` writes into when no `--transcript` is given: named by
    /// the seed when one was given, else by the time and the process.
    pub fn default_dir(seed: Option<u64>) -> Output {
        let name = match seed {
            Some(seed) => format!("seed-{seed}"),
            None => format!(
                "match-{}-{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs(),
                std::process::id()
            ),
        };
        Output::Dir(Path::new("schmier-out").join(name))
    }

    /// The transcript path of game `g` (1-based).
    pub fn transcript(&self, g: u32) -> PathBuf {
        match self {
            Output::File(p) => p.clone(),
            Output::Dir(d) => d.join(format!("game-{g:04}.jsonl")),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Output::File(p) => p.display().to_string(),
            Output::Dir(d) => format!("{}/", d.display()),
        }
    }

    /// The folder that holds the transcripts (empty: the current folder).
    pub fn folder(&self) -> PathBuf {
        match self {
            Output::File(p) => p.parent().unwrap_or(Path::new("")).to_path_buf(),
            Output::Dir(d) => d.clone(),
        }
    }

    /// The sidecar with a transcript's per-decision timings: `timings/` beside
    /// the transcript, same file name. A folder of its own, so that a glob for
    /// transcripts (`DIR/*.jsonl`) never matches it.
    pub fn timings(transcript: &Path) -> PathBuf {
        let dir = transcript.parent().unwrap_or(Path::new(""));
        dir.join(TIMINGS)
            .join(transcript.file_name().unwrap_or_default())
    }

    /// The lock file of this output ([`LOCK`]): in the folder, or for one
    /// transcript file beside it (`FILE.jsonl.lock`, so two one-game runs in
    /// one folder do not exclude each other).
    pub fn lock(&self) -> PathBuf {
        match self {
            Output::File(p) => {
                let mut name = p.as_os_str().to_owned();
                name.push(".lock");
                PathBuf::from(name)
            }
            Output::Dir(d) => d.join(LOCK),
        }
    }

    /// The directory holding the timings sidecars.
    pub fn timings_dir(&self) -> PathBuf {
        self.folder().join(TIMINGS)
    }

    /// The directory holding the seat tokens of a run's remote bots
    /// (`referee/src/remote/token.rs`): `tokens/` in the folder.
    pub fn tokens_dir(&self) -> PathBuf {
        self.folder().join(TOKENS)
    }

    /// The directory holding each bot process's stderr log.
    pub fn stderr_dir(&self) -> PathBuf {
        match self {
            Output::File(p) => p.with_extension("stderr"),
            Output::Dir(d) => d.join(STDERR),
        }
    }

    /// What the file at `path` is to this run, if it is one of its files
    /// (a `.partial` is not: a run that ends leaves none behind).
    pub fn kind(&self, path: &Path) -> Option<Kind> {
        let name = path.file_name()?.to_str()?;
        let dir = path.parent()?;
        if path == self.lock() {
            return Some(Kind::Lock);
        }
        match self {
            Output::File(p) if p == path => return Some(Kind::Transcript),
            Output::Dir(d) if d == dir => return is_transcript(name).then_some(Kind::Transcript),
            _ => {}
        }
        if dir == self.timings_dir() {
            let of = self.folder().join(name);
            return self.kind(&of).map(|_| Kind::Timings);
        }
        if dir == self.stderr_dir() {
            return is_stderr_log(name).then_some(Kind::StderrLog);
        }
        if dir == self.tokens_dir() {
            return name.ends_with(".token").then_some(Kind::Token);
        }
        None
    }
}

/// What a file the referee leaves in a play or tournament folder is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Transcript,
    Timings,
    StderrLog,
    /// A remote bot's seat token, `tokens/NAME.token`.
    Token,
    /// `tournament.json`.
    Manifest,
    /// `seed-secret`: what the deals are mixed with (mode 0600).
    SeedSecret,
    /// `journal.jsonl`.
    Journal,
    /// `standings.json` and `standings.csv`.
    Standings,
    /// `standings.partial.json`: the standings so far of an interrupted run.
    PartialStandings,
    /// A tournament's page (`--page`), its replay pages and their script and style.
    Page,
    /// `sprt.json` and `sprt.html`: a sequential test's verdict and its chart.
    SprtReport,
    /// `referee.lock`, while a run holds the folder.
    Lock,
}

/// Whether `dir` holds anything but a run's lock file and its remote seat
/// tokens: a folder in use by nothing else is empty, whether or not this run
/// holds its lock already (and has written its tokens).
pub fn holds_anything(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|d| {
        d.flatten()
            .any(|e| e.file_name() != LOCK && e.file_name() != TOKENS)
    })
}

/// Is `name` a play transcript's file name (`game-NNNN.jsonl`)?
pub fn is_transcript(name: &str) -> bool {
    name.starts_with("game-") && name.ends_with(".jsonl")
}

/// Is `name` a transcript or timings file of a game, finished or `.partial`?
pub fn is_game(name: &str) -> bool {
    is_transcript(name.strip_suffix(PARTIAL).unwrap_or(name))
}

/// The stderr log of lineup slot `slot`'s `start`-th start (0: the first),
/// in `dir`. A restarted bot's stderr goes to a new file, so nothing is
/// overwritten.
pub fn stderr_log(dir: &Path, slot: usize, start: u32) -> PathBuf {
    dir.join(match start {
        0 => format!("player{slot}.log"),
        n => format!("player{slot}.restart{n}.log"),
    })
}

/// Is `name` a bot's stderr log ([`stderr_log`])?
pub fn is_stderr_log(name: &str) -> bool {
    name.starts_with("player") && name.ends_with(".log")
}

/// Lineup slot `slot`'s writable folder under a `--scratch` base.
pub fn scratch(base: &Path, slot: usize) -> PathBuf {
    base.join(format!("player{slot}"))
}

/// The stderr log of entrant `i` during the tournament's start check (in a
/// temporary folder: a bot that cannot start leaves nothing in the run's).
pub fn startcheck_log(dir: &Path, entrant: usize) -> PathBuf {
    dir.join(format!("entrant{entrant}.log"))
}

/// A tournament folder `DIR`:
///
/// ```text
/// DIR/tournament.json                  the manifest: what this tournament is
/// DIR/journal.jsonl                    one line per finished game
/// DIR/games/r00-m0000-g001.jsonl       round 0, matchup 0, game 1's transcript
/// DIR/games/timings/r00-m0000-g001.jsonl  its timings
/// DIR/stderr/r00-m0000-g001/player0.log   a table's bot logs, named by its
///                                         first game (`…-from-g004` on --resume)
/// DIR/standings.json, standings.csv    when complete
/// DIR/standings.partial.json           when interrupted (gone once complete)
/// DIR/referee.lock                     while a run holds the folder
/// ```
pub mod tournament {
    use std::path::{Component, Path, PathBuf};

    use super::{is_stderr_log, Kind};

    pub const MANIFEST: &str = "tournament.json";
    pub const JOURNAL: &str = "journal.jsonl";
    pub const STANDINGS: &str = "standings.json";
    pub const STANDINGS_CSV: &str = "standings.csv";
    /// The standings so far of an interrupted run, beside the journal.
    pub const PARTIAL_STANDINGS: &str = "standings.partial.json";
    /// The secret mixed into the seed (`tournament/seed_secret.rs`), mode
    /// 0600, written before the first game; `tournament.json` reveals it
    /// once the tournament is over.
    pub const SEED_SECRET: &str = "seed-secret";
    /// The folder of transcripts (and, in `timings/`, their timings).
    pub const GAMES: &str = "games";
    /// The folder of each table's bot logs.
    pub const STDERR: &str = super::STDERR;
    /// With `--page`: the tournament's page, and the folder of its replay
    /// pages and their shared script and style (`tournament/page.rs`).
    pub const INDEX: &str = "index.html";
    pub const PAGES: &str = "index-games";
    /// The replay pages' shared script and style, in [`PAGES`] beside them
    /// (`show/html.rs` writes them).
    pub const SCRIPT_FILE: &str = "replay.js";
    pub const STYLE_FILE: &str = "replay.css";

    /// The files directly in the folder a tournament writes, which
    /// `--overwrite` removes (with [`FOLDERS`]).
    pub const FILES: [&str; 7] = [
        MANIFEST,
        SEED_SECRET,
        JOURNAL,
        STANDINGS,
        STANDINGS_CSV,
        PARTIAL_STANDINGS,
        INDEX,
    ];
    /// The folders a tournament writes.
    pub const FOLDERS: [&str; 3] = [GAMES, STDERR, PAGES];

    /// Whether `dir` is a tournament's folder (it has the manifest).
    pub fn is_tournament(dir: &Path) -> bool {
        dir.join(MANIFEST).is_file()
    }

    /// The tournament folder `path` lies in, if any: `path` itself or the
    /// nearest of its ancestors with a manifest. A relative `path` is taken
    /// from the working directory; `path` need not exist.
    pub fn enclosing(path: &Path) -> Option<PathBuf> {
        let path = match path.as_os_str().is_empty() {
            true => Path::new("."),
            false => path,
        };
        let path = std::path::absolute(path).ok()?;
        path.ancestors()
            .find(|d| is_tournament(d))
            .map(|d| d.components().collect())
    }

    /// `path` in words if it lies in a tournament folder: "DIR is a
    /// tournament's folder" or "DIR is inside the tournament folder T".
    pub fn inside_one(path: &Path) -> Option<String> {
        let holder = enclosing(path)?;
        let here = match path.as_os_str().is_empty() {
            true => Path::new("."),
            false => path,
        };
        let same = std::path::absolute(here).is_ok_and(|p| p.components().eq(holder.components()));
        Some(match same {
            true => format!("{} is a tournament's folder", here.display()),
            false => format!(
                "{} is inside the tournament folder {}",
                here.display(),
                holder.display()
            ),
        })
    }

    /// Whether `path` is the journal of a tournament folder.
    pub fn is_journal(path: &Path) -> bool {
        path.file_name().is_some_and(|n| n == JOURNAL)
            && path.parent().is_some_and(|d| {
                is_tournament(if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                })
            })
    }
    /// `referee sprt`'s verdict (JSON) and its LLR chart, beside the
    /// tournament files of the games it played.
    pub const SPRT_REPORT: &str = "sprt.json";
    pub const SPRT_PAGE: &str = "sprt.html";

    /// The folders holding a file or folder per game: transcripts, their
    /// timings, and the tables' bot logs (see [`game_of`]).
    pub fn per_game_folders(dir: &Path) -> [PathBuf; 3] {
        [
            games(dir),
            games(dir).join(super::TIMINGS),
            dir.join(STDERR),
        ]
    }

    /// The game number a per-game file or folder is named after
    /// (`…-g013.jsonl`, `…-g013`, or `…-from-g013`: a table's logs from its
    /// first game).
    pub fn game_of(name: &str) -> Option<u32> {
        let stem = name.strip_suffix(".jsonl").unwrap_or(name);
        stem.rsplit_once("-g")?.1.parse().ok()
    }

    /// The transcript of a game, relative to the tournament directory.
    pub fn transcript(round: u32, matchup: u32, game: u32) -> String {
        format!("{GAMES}/{}.jsonl", game_name(round, matchup, game))
    }

    /// The games folder of the tournament in `dir`.
    pub fn games(dir: &Path) -> PathBuf {
        dir.join(GAMES)
    }

    fn game_name(round: u32, matchup: u32, game: u32) -> String {
        format!("r{round:02}-m{matchup:04}-g{game:03}")
    }

    /// The folder of the bot logs of a table whose first game is `first`, and
    /// the name of its bots' scratch folders. A table resumed (not `fresh`) logs
    /// to a folder of its own, so no log is overwritten; its bots keep the
    /// matchup's scratch folder.
    pub fn table(dir: &Path, round: u32, matchup: u32, first: u32, fresh: bool) -> Table {
        let game = game_name(round, matchup, first);
        let (logs, scratch) = match fresh {
            true => (game.clone(), game),
            false => (
                format!("r{round:02}-m{matchup:04}-from-g{first:03}"),
                format!("r{round:02}-m{matchup:04}"),
            ),
        };
        Table {
            logs: dir.join(STDERR).join(logs),
            scratch,
        }
    }

    /// Where a table's bots write: see [`table`].
    pub struct Table {
        pub logs: PathBuf,
        /// A folder name under the `--scratch` base.
        pub scratch: String,
    }

    /// What the file at `rel` (relative to the tournament folder) is, if it is
    /// one the tournament writes (a `.partial` is not: none is left behind).
    pub fn kind(rel: &Path) -> Option<Kind> {
        let parts: Vec<&str> = rel
            .components()
            .map(|c| match c {
                Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect::<Option<_>>()?;
        match parts[..] {
            [MANIFEST] => Some(Kind::Manifest),
            [SEED_SECRET] => Some(Kind::SeedSecret),
            [JOURNAL] => Some(Kind::Journal),
            [STANDINGS] | [STANDINGS_CSV] => Some(Kind::Standings),
            [PARTIAL_STANDINGS] => Some(Kind::PartialStandings),
            [INDEX] => Some(Kind::Page),
            [PAGES, name] => is_page_name(name).then_some(Kind::Page),
            [SPRT_REPORT] | [SPRT_PAGE] => Some(Kind::SprtReport),
            [super::LOCK] => Some(Kind::Lock),
            [super::TOKENS, name] => name.ends_with(".token").then_some(Kind::Token),
            [GAMES, name] => is_game_name(name).then_some(Kind::Transcript),
            [GAMES, super::TIMINGS, name] => is_game_name(name).then_some(Kind::Timings),
            [STDERR, table, log] => {
                (table.starts_with('r') && is_stderr_log(log)).then_some(Kind::StderrLog)
            }
            _ => None,
        }
    }

    /// Is `name` one of the files in [`PAGES`]: a game's replay page
    /// (`rRR-mMMMM-gGGG.html`), or their script or style?
    fn is_page_name(name: &str) -> bool {
        let shared = [SCRIPT_FILE, STYLE_FILE];
        shared.contains(&name)
            || name
                .strip_suffix(".html")
                .is_some_and(|stem| is_game_name(&format!("{stem}.jsonl")))
    }

    /// Is `name` a tournament transcript's file name (`rRR-mMMMM-gGGG.jsonl`)?
    fn is_game_name(name: &str) -> bool {
        let Some(stem) = name.strip_suffix(".jsonl") else {
            return false;
        };
        let fields: Vec<&str> = stem.split('-').collect();
        let numbered = |field: &str, tag: char, digits: usize| {
            field
                .strip_prefix(tag)
                .is_some_and(|n| n.len() >= digits && n.bytes().all(|b| b.is_ascii_digit()))
        };
        matches!(fields[..], [r, m, g] if numbered(r, 'r', 2) && numbered(m, 'm', 4) && numbered(g, 'g', 3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tournament_names_its_games_and_knows_them_back() {
        let rel = tournament::transcript(1, 12, 3);
        assert_eq!(rel, "games/r01-m0012-g003.jsonl");
        assert_eq!(tournament::kind(Path::new(&rel)), Some(Kind::Transcript));
        let timings = Output::timings(Path::new(&rel));
        assert_eq!(tournament::kind(&timings), Some(Kind::Timings));
        let t = tournament::table(Path::new("T"), 1, 12, 4, false);
        let log = stderr_log(&t.logs, 2, 1);
        assert_eq!(
            log,
            Path::new("T/stderr/r01-m0012-from-g004/player2.restart1.log")
        );
        assert_eq!(
            tournament::kind(log.strip_prefix("T").unwrap()),
            Some(Kind::StderrLog)
        );
        for name in tournament::FILES {
            assert!(tournament::kind(Path::new(name)).is_some(), "{name}");
        }
    }

    #[test]
    fn a_partial_or_a_stranger_is_not_a_finished_file() {
        let rel = tournament::transcript(0, 0, 1);
        assert_eq!(tournament::kind(&partial(Path::new(&rel))), None);
        assert_eq!(tournament::kind(Path::new("games/notes.jsonl")), None);
        assert_eq!(tournament::kind(Path::new("../journal.jsonl")), None);
        let out = Output::Dir(PathBuf::from("D"));
        assert_eq!(out.kind(&partial(&out.transcript(1))), None);
        assert_eq!(out.kind(Path::new("D/notes.txt")), None);
        assert!(is_game("game-0001.jsonl.partial"));
    }

    #[test]
    fn a_play_folder_names_its_files_and_knows_them_back() {
        for out in [
            Output::Dir(PathBuf::from("D")),
            Output::File(PathBuf::from("D/one.jsonl")),
        ] {
            let t = out.transcript(2);
            assert_eq!(out.kind(&t), Some(Kind::Transcript), "{out:?}");
            assert_eq!(out.kind(&Output::timings(&t)), Some(Kind::Timings));
            let log = stderr_log(&out.stderr_dir(), 5, 0);
            assert_eq!(out.kind(&log), Some(Kind::StderrLog), "{log:?}");
        }
        assert_eq!(
            Output::Dir(PathBuf::from("D")).transcript(2),
            Path::new("D/game-0002.jsonl")
        );
        assert_eq!(
            Output::File(PathBuf::from("D/one.jsonl")).stderr_dir(),
            Path::new("D/one.stderr")
        );
        // One game to a file: other games' names are not its.
        let file = Output::File(PathBuf::from("D/one.jsonl"));
        assert_eq!(file.kind(Path::new("D/game-0001.jsonl")), None);
    }

    #[test]
    fn per_game_files_and_logs_are_told_apart_by_their_game() {
        use super::tournament::game_of;
        assert_eq!(game_of("r00-m0000-g013.jsonl"), Some(13));
        assert_eq!(game_of("r00-m0000-g007"), Some(7));
        assert_eq!(game_of("r00-m0000-from-g019"), Some(19));
        assert_eq!(game_of("timings"), None);
    }
}

/// A season's folder (`season/`): its state in `DIR/season.db` (SQLite) or
/// in the PostgreSQL database `DIR/season.postgres` names, its
/// seed secret in `DIR/seed-secret` and, named as a tournament's (round 0,
/// the set as the matchup), its transcripts in `DIR/games/` and its tables'
/// bot logs in `DIR/stderr/`.
pub mod season {
    use std::path::Path;

    pub const DB: &str = "season.db";

    /// The file that names a season's PostgreSQL database, instead of `DB`.
    pub const POSTGRES: &str = "season.postgres";

    /// The folder of a season's final, a tournament's (`season final`).
    pub const FINAL: &str = "final";

    /// Whether `dir` holds a season.
    pub fn is_season(dir: &Path) -> bool {
        dir.join(DB).is_file() || dir.join(POSTGRES).is_file()
    }

    /// The file that holds, or names, the state of the season in `dir`.
    pub fn store(dir: &Path) -> std::path::PathBuf {
        match dir.join(POSTGRES).is_file() {
            true => dir.join(POSTGRES),
            false => dir.join(DB),
        }
    }

    /// The final's folder of the season in `dir`.
    pub fn final_dir(dir: &Path) -> std::path::PathBuf {
        dir.join(FINAL)
    }

    /// A version's files as shipped to workers, by the SHA-256 of the
    /// archive (`season/blob.rs`): `DIR/blobs/HASH`.
    pub fn blob(dir: &Path, hash: &str) -> std::path::PathBuf {
        dir.join("blobs").join(hash)
    }

    /// Where the season's server keeps a worker's transcript while it is
    /// checked, before it counts (`season/lease.rs`): `DIR/incoming/`.
    pub fn incoming(dir: &Path) -> std::path::PathBuf {
        dir.join("incoming")
    }
}
