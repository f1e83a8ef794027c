//! `referee season`'s subcommands and their flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::settings::TableArgs;
use crate::tournament::format::FormatName;

/// Sets a new version plays first, by default.
pub const MIN_SETS: u32 = 3;
/// The most sets two versions play together, by default.
pub const PAIR_CAP: u32 = 50;

#[derive(Args, Debug)]
pub struct SeasonArgs {
    #[command(subcommand)]
    pub command: SeasonCommand,
}

#[derive(Subcommand, Debug)]
pub enum SeasonCommand {
    /// Open a season in DIR: its settings (time control, fault policy,
    /// sandbox, limits, matchmaking) fixed and recorded in DIR/season.db (or
    /// the PostgreSQL database --db names), its seed secret drawn, and its
    /// first entrants submitted.
    #[command(allow_negative_numbers = true)]
    Init(Box<InitArgs>),
    /// Play the season's sets until --sets N are finished (or Ctrl-C): up to
    /// --jobs sets at once, each of three versions on one deal, chosen by the
    /// matchmaking policy; a run killed at any moment is resumed by running it
    /// again. With --listen it serves the remote versions' seats (`submit
    /// NAME -- remote`): each is planned only while its owner's `referee
    /// connect` is connected.
    Run(RunArgs),
    /// Submit a new version of an entrant (a new entrant if NAME is new): it
    /// is checked with check-bot under the season's time limits (in the
    /// season's sandbox if it has one) and, if it passes, replaces the
    /// entrant's current version from the next set on, also while `season
    /// run` runs. With --archive and --token, an upload by its owner: a
    /// .tar.gz unpacked safely into DIR/uploads/NAME/vN.
    Submit(SubmitArgs),
    /// Create the entrant NAME with a token and no version yet (its owner
    /// uploads the first), or give an existing one a new token; printed once,
    /// and the old one stops working.
    Token {
        /// The season's folder.
        dir: PathBuf,
        /// The entrant.
        name: String,
    },
    /// Create the worker NAME with a token (for `season worker
    /// --token-file`), or give an existing one a new token; printed once,
    /// and the old one stops working. A worker's token leases sets and
    /// reads the versions' files; it submits nothing and reads no logs.
    WorkerToken {
        /// The season's folder.
        dir: PathBuf,
        /// The worker (a name for the organiser: the server's console and
        /// the leases say it).
        name: String,
    },
    /// Play sets of a season served by `season run --serve ADDR --workers`
    /// on another machine (or this one): lease a set, play its games here
    /// under the season's recorded settings (in the sandbox if the season
    /// has one; a worker whose sandbox self-check fails plays no sandboxed
    /// season's set), heartbeat while playing, and hand back each game's
    /// transcript, which the server checks before it counts (with the end
    /// of its bots' stderr logs, for the entrants' logs pages). Runs until
    /// Ctrl-C or SIGTERM, or until the run says its --sets are finished;
    /// while the server cannot be reached it asks again every few seconds,
    /// for up to ten minutes (then it stops with exit status 1), keeping
    /// each game it has finished until the server takes it or refuses it.
    Worker(WorkerArgs),
    /// Print the standings: each entrant's current version ranked by rating,
    /// with its earlier versions below it.
    Standings(StandingsArgs),
    /// Serve the season's live site: standings (updated as sets land, without
    /// a reload), a page per entrant (versions, rating chart, cross-table,
    /// recent games with replay pages, faults), a JSON API, and each
    /// entrant's stderr logs to a request with its token. Reads the season's
    /// database only, so it runs beside `season run`. Stops on Ctrl-C or
    /// SIGTERM.
    Serve(ServeArgs),
    /// The season's end: freeze submissions, take the first --top N entrants
    /// of the standings and play a tournament among their current versions in
    /// DIR/final (under the season's settings, dealt from its secret). Run it
    /// again to resume it; once it is complete the season is closed.
    Final(FinalArgs),
    /// Close the season: nothing more is played, and its seed secret is
    /// revealed (printed and kept in the season's database), so anyone can deal its games
    /// again.
    Close {
        /// The season's folder.
        dir: PathBuf,
    },
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The season's folder (new, or empty).
    pub dir: PathBuf,
    /// A first entrant, `NAME=CMD` (repeat): submitted as by `season submit`.
    #[arg(long = "entrant", value_name = "NAME=CMD")]
    pub entrants: Vec<String>,
    /// The season's seed; every deal mixes it with a secret drawn now and
    /// revealed when the season is closed. Random if absent.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Sets each new version plays before others are anchored again.
    #[arg(long, value_name = "N", default_value_t = MIN_SETS)]
    pub min_sets: u32,
    /// The most sets two versions play together.
    #[arg(long, value_name = "N", default_value_t = PAIR_CAP)]
    pub pair_cap: u32,
    /// Admit the --entrant bots without running check-bot on them.
    #[arg(long)]
    pub unchecked: bool,
    /// Take entrants' uploads (`submit --archive`, the site's upload) even
    /// though the season has no --sandbox. Unsafe: an uploaded bot then runs
    /// as your user and can read every other entrant's files, season.db and
    /// the seed secret. Without it (the default) such a season refuses
    /// uploads; macOS and Windows have no sandbox, so there uploads need it.
    /// Recorded in the season's settings.
    #[arg(long)]
    pub allow_unsandboxed_uploads: bool,
    /// Keep the season's state in this PostgreSQL database instead of
    /// DIR/season.db (SQLite): postgres://USER@HOST[:PORT]/DATABASE, an empty
    /// database of the season's own, reached without TLS. The URL (never a
    /// password) is recorded in DIR/season.postgres; the password comes from
    /// --db-password-file, PGPASSWORD or ~/.pgpass.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// A file whose first line is the PostgreSQL password (its path, not the
    /// password, is recorded, and read by every later command).
    #[arg(long, value_name = "FILE", requires = "db")]
    pub db_password_file: Option<PathBuf>,
    #[command(flatten)]
    pub table: TableArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// Sets played at once. [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Stop once the season has N finished sets in all (the sets under way
    /// when it is reached are finished first). Without it, the run goes on
    /// until Ctrl-C or SIGTERM, waiting for submissions when nothing can be
    /// played.
    #[arg(long, value_name = "N")]
    pub sets: Option<u64>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
    /// Also serve the season's live site on ADDR (as `season serve` does),
    /// in this process, for as long as the run runs.
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<std::net::SocketAddr>,
    /// Also lease sets to workers (`season worker`) over the site at
    /// --serve; `--jobs 0` then plays nothing here, only leases.
    #[arg(long, requires = "serve")]
    pub workers: bool,
    /// How long a worker's lease lasts from its last heartbeat, in seconds
    /// (workers heartbeat three times a lease); a lease run out puts its set
    /// back in the queue. [default: 60]
    #[arg(long, value_name = "SECS", requires = "workers")]
    pub lease: Option<f64>,
    // `--listen` serves the seats of the season's remote versions (`season
    // submit DIR NAME -- remote`), each with its season token
    // (DIR/tokens/NAME.token); see docs/organisers.md, "Remote versions".
    #[command(flatten)]
    pub remote: crate::remote::RemoteArgs,
    #[command(flatten)]
    pub site: SiteArgs,
}

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The season's server: `http://HOST:PORT` of `season run --serve
    /// ADDR --workers`.
    #[arg(long, value_name = "URL")]
    pub server: String,
    /// A file holding the worker's token (from `season worker-token`).
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,
    /// Sets played at once (the capacity declared to the server).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub tables: usize,
    /// Where the versions' files are kept, by hash, and the sets are played.
    #[arg(long, value_name = "DIR", default_value = "referee-worker")]
    pub cache: PathBuf,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// Where the site listens, IP:PORT (port 0: any free port, said on
    /// stderr). Loopback by default; another address serves the network.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8046")]
    pub addr: std::net::SocketAddr,
    #[command(flatten)]
    pub site: SiteArgs,
}

/// The site's limits, against clients that hold connections without using
/// them (`season serve`, `season run --serve`).
#[derive(Args, Debug, Clone)]
pub struct SiteArgs {
    /// Connections the site keeps open at once (event streams aside); more
    /// wait until one closes.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub site_connections: usize,
    /// Live-update streams (`/events`) the site keeps open at once; more are
    /// answered 503 (their pages still work, without live updates).
    #[arg(long, value_name = "N", default_value_t = 128)]
    pub site_event_streams: usize,
    /// Seconds a request's head may take to arrive, and an idle kept-alive
    /// connection may wait for its next request; then it is closed.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub site_header_timeout: u64,
    /// Seconds a request may take to send its body and be answered (but for
    /// an upload and the live-update stream); then it is answered 408.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub site_request_timeout: u64,
    /// Seconds an upload's archive may take to arrive; then it is answered
    /// 408 (its check-bot run is not cut short).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub site_upload_timeout: u64,
}

#[derive(Args, Debug)]
pub struct SubmitArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// The entrant (or --name).
    #[arg(required_unless_present = "name_flag")]
    pub name: Option<String>,
    /// The entrant, instead of NAME.
    #[arg(
        long = "name",
        id = "name_flag",
        value_name = "NAME",
        conflicts_with = "name"
    )]
    pub name_flag: Option<String>,
    /// The version's folder: its command is read and run there, recorded
    /// with it. [default: the working directory]
    #[arg(long = "bot-dir", value_name = "DIR", conflicts_with = "archive")]
    pub bot_dir: Option<PathBuf>,
    /// An upload: the bot's files as a .tar.gz (regular files and folders
    /// only; no links, no `..`; at most 32 MiB compressed, 4096 entries,
    /// 64 MiB a file, 256 MiB in all), unpacked into DIR/uploads/NAME/vN;
    /// its command runs there. Needs the entrant's --token.
    #[arg(long, value_name = "FILE", requires = "token")]
    pub archive: Option<PathBuf>,
    /// The entrant's token (printed when it was created, or by `season
    /// token`), for an --archive.
    #[arg(long, value_name = "TOKEN", requires = "archive")]
    pub token: Option<String>,
    /// Admit it without running check-bot (recorded as such; not for an
    /// --archive).
    #[arg(long, conflicts_with = "archive")]
    pub unchecked: bool,
    /// The bot's command, after `--` (one word with spaces is split like a
    /// shell would), `builtin:NAME`, or `remote`: a remote seat played
    /// through its owner's `referee connect` (its seat token is written to
    /// DIR/tokens/NAME.token).
    #[arg(
        last = true,
        required_unless_present = "command_flag",
        value_name = "CMD"
    )]
    pub command: Vec<String>,
    /// The bot's command as one word, instead of `-- CMD` (split like a
    /// shell would).
    #[arg(
        long = "command",
        id = "command_flag",
        value_name = "CMD",
        conflicts_with = "command"
    )]
    pub command_flag: Option<String>,
}

impl SubmitArgs {
    /// The entrant, given as NAME or --name.
    pub fn entrant(&self) -> &str {
        (self.name.as_deref())
            .or(self.name_flag.as_deref())
            .unwrap_or_default()
    }
}

#[derive(Args, Debug)]
pub struct StandingsArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// JSON instead of the table: every version, with its rating history.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct FinalArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// How many entrants play the final: the first N of the standings (at
    /// least 3), each with its current version. Needed the first time; a
    /// rerun resumes the final as it was called.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// How the finalists are brought together (as `tournament --format`;
    /// their standings order is a knockout's seeding). [default: round-robin]
    #[arg(long, value_enum)]
    pub format: Option<FormatName>,
    /// Duplicate sets per matchup of the final. [default: 1]
    #[arg(long, value_name = "N")]
    pub sets: Option<u32>,
    /// Rounds of a Swiss final.
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,
    /// Tables played at once. [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}
