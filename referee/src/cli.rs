//! Command-line flags (stage one: raw, as clap parses them) and their validation
//! into [`PlayConfig`] (stage two). Errors name the flag and the bad value.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};

use crate::config::{BotSpec, Isolation, Output, PlayConfig, TableSpec};
use crate::settings::{
    fresh_seed, parse_bot, sandbox_for, warn_given_seed, DeliveryName, TableArgs,
};

#[derive(Parser, Debug)]
#[command(
    name = "referee",
    version,
    about = "Headless referee for Schmier bot competitions",
    long_about = "Headless referee for Schmier bot competitions.\n\n\
        Runs six bot processes that speak the line-delimited JSON protocol schmier/1 \
        (see PROTOCOL.md), enforces every rule and time limit, and writes a \
        deterministic JSONL transcript of each game.\n\n\
        With no subcommand, `referee` is `referee play`: a game among the built-in bots, \
        and `referee --seed 5` is `referee play --seed 5`.",
    args_conflicts_with_subcommands = true,
    // `--games -1` is refused as a bad value of --games, not as an unknown flag `-1`.
    allow_negative_numbers = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `play`'s flags, for `referee` without a subcommand.
    #[command(flatten)]
    pub play: PlayArgs,
}

impl Cli {
    /// The command to run: `play` with the top-level flags when none is named.
    pub fn command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Play(Box::new(self.play)))
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Play one game or a match between six bot processes.
    #[command(allow_negative_numbers = true)]
    Play(Box<PlayArgs>),
    /// Serve this machine's bot in the remote seats of a referee elsewhere:
    /// `referee connect ADDR:PORT --token-file NAME.token [--fingerprint SHA256]
    /// -- CMD` starts CMD once per seat and bridges its stdin and stdout to the
    /// seat (docs/remote.md).
    Connect(crate::remote::connect::ConnectArgs),
    /// Replay transcripts through the rules engine; exit 0 only if all are valid
    /// (1: one is not; 2: a path is not a transcript or a folder of them).
    Verify {
        /// Transcript files (*.jsonl), or folders: every *.jsonl file directly in
        /// a `play` folder is checked (the timings/ and stderr/ folders are not);
        /// a tournament folder's games/ are, and each line of its journal.jsonl
        /// against its transcript; a season folder's games/ are, and every
        /// game its season.db counts against its transcript, with the latest
        /// ratings recomputed. The conditions it prints ("played under")
        /// are what the referee that wrote the file declared: verify replays
        /// the games, it cannot check how the bots were run. What it prints
        /// from a file is escaped (a control character as \u{1b}).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check a bot against the protocol, as a checklist (exit 1 if a check fails).
    ///
    /// Every kind of request and the situations bots get wrong, a game with
    /// unknown messages and fields, whole games in every seat, and the bot's
    /// decision times. A failed check shows the end of the bot's stderr and
    /// keeps the whole log ($TMPDIR/schmier-check-bot-*/). Example: referee
    /// check-bot -- python3 my_bot.py
    #[command(allow_negative_numbers = true)]
    CheckBot(CheckBotArgs),
    /// Run a bracket: many tables of three entrants, duplicate sets, standings.
    #[command(allow_negative_numbers = true)]
    Tournament(Box<crate::tournament::TournamentArgs>),
    /// Is the new bot better than the base? A sequential test (GSPRT) on
    /// duplicate sets that stops as soon as H0 or H1 is accepted.
    ///
    /// Example: referee sprt --new "python3 bot_v2.py" --base "python3 bot_v1.py"
    #[command(allow_negative_numbers = true)]
    Sprt(Box<crate::sprt::SprtArgs>),
    /// A season: entrants submit and replace bots while duplicate sets are
    /// played continuously and a leaderboard follows (`season init`, `run`,
    /// `submit`, `standings`, `serve`, `close`; docs/organisers.md, "Run a
    /// season").
    Season(crate::season::args::SeasonArgs),
    /// Combine the directories of a sharded tournament (--shard K/N) into one.
    Merge {
        /// The shard directories (each a tournament's --out).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged tournament goes (must be empty or absent).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Print a fresh seed secret (64 hex digits) for --seed-secret-file: give
    /// every shard of a tournament the same one, e.g. `referee secret >
    /// results/seed-secret`, kept where no bot can read it.
    Secret,
    /// Run a built-in sample bot on stdin/stdout (what `builtin:NAME` starts).
    Bot {
        /// `random` or `heuristic`.
        name: String,
    },
    /// Measure the referee's cost per decision against a raw pipe round trip.
    #[command(allow_negative_numbers = true)]
    Bench(BenchArgs),
    /// The trivial child `referee bench` measures a pipe round trip with.
    #[command(hide = true)]
    BenchEcho,
    /// Inside a `--sandbox` sandbox: confine this process with Landlock, then
    /// exec the bot (what bubblewrap runs in place of each bot).
    #[command(hide = true)]
    Landlock(crate::sandbox::LandlockArgs),
    /// Inside a `--sandbox` sandbox kept across games: start each bot the
    /// referee sends in fresh namespaces of its own.
    #[command(hide = true)]
    Launcher(crate::sandbox::LauncherArgs),
    /// Under `--sandbox`: hold every page bots can read in memory until stdin
    /// closes (a process of its own, so that the referee forks fast).
    #[command(hide = true)]
    HoldView(crate::sandbox::HoldArgs),
    /// Under `--sandbox` (root): build one erofs image of the bots' view.
    #[command(hide = true)]
    StageView(crate::sandbox::StageArgs),
    /// With a cgroup v1 freezer: once stdin closes (the referee is gone,
    /// however it went), thaw, kill and remove the referee's bots' cgroups.
    #[command(hide = true)]
    FreezeGuard(crate::cgroup::freeze_guard::GuardArgs),
    /// Compare two transcripts (or two folders of them, paired by file name) in
    /// game terms: the first divergence, then how the outcomes differ. Exit 0 when
    /// the games are the same move for move, 1 when they differ.
    Diff(DiffArgs),
    /// Show a transcript as a readable account (hands with suit symbols, the
    /// auction, trump, exchanges, tricks, points, scores), whole or as one seat saw
    /// it; or write a self-contained HTML page that replays it.
    #[command(allow_negative_numbers = true)]
    Show(ShowArgs),
    /// Write the JSON Schema of every protocol message and transcript line
    /// (to-bot.json, from-bot.json, transcript-line.json, timings-line.json).
    Schema(SchemaArgs),
    /// Replay one seat of a recorded game to a live bot and compare its answers
    /// with the recorded ones.
    ///
    /// The bot is started as `play` starts a seat's bot (its working directory,
    /// an empty environment but PATH and --bot-env, the recorded startup and
    /// decision limits) and is sent exactly what seat N was sent in that game:
    /// hello, game_start, every event as the seat saw it, its requests, the fault
    /// notices. At each request the live answer is compared with the recorded
    /// one. By default it stops at the first request where they differ and shows
    /// the seat's view, the legal actions and both answers; --at K stops at the
    /// seat's K-th request instead. Works on a `play` transcript and on a
    /// tournament's games/*.jsonl.
    ///
    /// Exit status: 0 the live bot answers as recorded (at every request, or at
    /// request K with --at), 1 it does not, 2 bad input or a bot that does not
    /// start. Example: referee replay runs/game-0001.jsonl --seat 2 -- python3
    /// my_bot.py
    #[command(allow_negative_numbers = true)]
    Replay(ReplayArgs),
}

/// `referee replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The transcript: a `play` game-NNNN.jsonl or a tournament's games/*.jsonl.
    pub file: PathBuf,
    /// The seat (0-5) whose bot to replay.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..6))]
    pub seat: u8,
    /// Stop at the seat's K-th request of the game (from 1) and show it, whether
    /// the answers differ there or not; earlier differences are listed.
    #[arg(long, value_name = "K")]
    pub at: Option<u32>,
    /// Print the outcome as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Hold the bot to no time limit (for a bot under a debugger).
    #[arg(long)]
    pub no_timeouts: bool,
    /// An environment variable for the bot, as for `play` (repeatable).
    #[arg(long = "bot-env", value_name = "KEY=VALUE")]
    pub bot_env: Vec<String>,
    /// The bot's command and its arguments, after `--` (one word with spaces is
    /// split like a shell would; `builtin:NAME` names a built-in bot).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl ReplayArgs {
    pub fn validate(&self) -> anyhow::Result<crate::rerun::ReplayConfig> {
        let text = match self.command.as_slice() {
            [one] => one.clone(),
            many => shlex::try_join(many.iter().map(String::as_str))
                .context("replay: the command holds a NUL byte")?,
        };
        let bot = parse_bot(&text, "replay")?;
        if matches!(bot, BotSpec::InProcess(_) | BotSpec::Human) {
            bail!("replay: {text:?} is played inside the referee; replay starts a bot process (builtin:NAME or a command)");
        }
        if self.at == Some(0) {
            bail!("--at counts the seat's requests from 1");
        }
        Ok(crate::rerun::ReplayConfig {
            file: self.file.clone(),
            seat: schmier_protocol::Seat::new(usize::from(self.seat)),
            at: self.at,
            bot,
            env: Isolation::env(&crate::settings::parse_env(&self.bot_env)?),
            no_timeouts: self.no_timeouts,
        })
    }
}

/// `referee bench`.
#[derive(Args, Debug)]
#[command(
    long_about = "Measure the referee's cost per decision against a raw pipe round trip.\n\n\
    In one run: the median and p99 round trip of a request-sized line through a pipe \
    to a trivial child (before and after the games); the built-in bot's own handling \
    of a game's lines, in process; then, for each --jobs value, complete games among \
    six built-in bot processes per table, with games/s, decisions/s, bytes/s, the \
    wall time per decision (median, p99), its ratio to the pipe round trip, where \
    each decision's time went (measured by the table's own timers), and the \
    referee's peak memory. Transcripts go to a scratch directory that is removed."
)]
pub struct BenchArgs {
    /// Games per --jobs value, shared out among the tables (games among six
    /// random bots are long: about 6,800 decisions each).
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub games: u32,

    /// Tables playing at once (each with six bot processes, on its own thread);
    /// a comma-separated list runs one games phase per value, e.g. `1,2`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1",
        value_name = "N[,N...]"
    )]
    pub jobs: Vec<usize>,

    /// Event delivery, as for `play` (`batched` is one write per decision).
    #[arg(long, value_enum, default_value_t = DeliveryName::Batched)]
    pub events: DeliveryName,

    /// The built-in bot in every seat.
    #[arg(long, default_value = "random", value_name = "NAME")]
    pub bot: String,

    /// Match seed of the first table (the others' are derived from it).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,

    /// Time per decision, in milliseconds, as for `play` (a fault fails the
    /// benchmark, so give slow builds room).
    #[arg(long, default_value_t = crate::settings::DECISION_MS, value_name = "MS", allow_negative_numbers = true, value_parser = crate::settings::millis::limit_flag)]
    pub decision_ms: u64,

    /// Round trips in each pipe baseline.
    #[arg(long, default_value_t = 5000, value_name = "N")]
    pub trips: usize,

    /// Print the figures as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

impl BenchArgs {
    /// Stage two: the benchmark's configuration, with `play`'s defaults for
    /// everything a table needs.
    pub fn validate(&self) -> anyhow::Result<crate::bench::BenchConfig> {
        if self.games == 0 {
            bail!("--games must be at least 1");
        }
        if self.jobs.is_empty() || self.jobs.contains(&0) {
            bail!(
                "--jobs: every value must be at least 1, got {:?}",
                self.jobs
            );
        }
        if !schmier_sample_bots::NAMES.contains(&self.bot.as_str()) {
            bail!("--bot: {}", crate::settings::unknown_builtin(&self.bot));
        }
        if self.trips == 0 {
            bail!("--trips must be at least 1");
        }
        let decision_ms = self.decision_ms.to_string();
        let play = Cli::parse_from([
            "referee",
            "play",
            "--quiet",
            "--transcript",
            "unused",
            "--decision-ms",
            &decision_ms,
        ]);
        let Some(Command::Play(args)) = play.command else {
            unreachable!("play parses");
        };
        Ok(crate::bench::BenchConfig {
            games: self.games,
            jobs: self.jobs.clone(),
            events: self.events.into(),
            bot: self.bot.clone(),
            seed: self.seed,
            trips: self.trips,
            play: args.validate()?,
        })
    }
}

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// Folder to write the schema files into.
    #[arg(default_value = "schema")]
    pub dir: PathBuf,
    /// Write nothing: exit 1 if the files in the folder differ from the code's.
    #[arg(long)]
    pub check: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The transcript (*.jsonl), or with --html a finished tournament folder (its
    /// page, as `tournament --page` keeps it: standings with interval bars, head
    /// to head, rounds, and a replay page for every game in OUT-games/).
    pub file: PathBuf,
    /// Only what this seat (0-5) was told: its own cards, everyone's public moves.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..6))]
    pub seat: Option<u8>,
    /// Only deal K (deals count from 1, thrown-in deals included).
    #[arg(long, value_name = "K")]
    pub deal: Option<u32>,
    /// Write a replay page to this file instead (one HTML file, no network): step
    /// through the game, jump to a deal, switch to one seat's view.
    #[arg(long, value_name = "OUT.html", conflicts_with_all = ["seat", "deal"])]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The expected transcript or folder (e.g. a checked-in snapshot).
    pub a: PathBuf,
    /// The actual transcript or folder (e.g. a fresh run).
    pub b: PathBuf,
    /// Accept B: replace A's differing transcripts with B's (create A if it does
    /// not exist yet), then exit 0; refused (exit 2, A unchanged) if one of them
    /// does not verify.
    #[arg(long)]
    pub update: bool,
}

#[derive(Args, Debug)]
pub struct CheckBotArgs {
    /// Time the bot has for each decision, in milliseconds.
    #[arg(long, default_value_t = crate::settings::DECISION_MS, value_name = "MS", allow_negative_numbers = true, value_parser = crate::settings::millis::limit_flag)]
    pub decision_ms: u64,
    /// Time the bot has to answer hello, in milliseconds.
    #[arg(long, default_value_t = crate::settings::STARTUP_MS, value_name = "MS", allow_negative_numbers = true, value_parser = crate::settings::millis::limit_flag)]
    pub startup_ms: u64,
    /// The bot's command and its arguments, after `--` (one word with spaces is
    /// split like a shell would; `builtin:NAME` checks a built-in bot).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl CheckBotArgs {
    /// The bot's argv and the limits to check it under.
    pub fn validate(&self) -> anyhow::Result<(Vec<String>, crate::checkbot::CheckLimits)> {
        let argv = match self.command.as_slice() {
            [one] => shlex::split(one).with_context(|| {
                format!("check-bot: cannot split {one:?} into words (unbalanced quotes?)")
            })?,
            many => many.to_vec(),
        };
        if argv.is_empty() {
            bail!("check-bot: the command is empty");
        }
        let limits = crate::checkbot::CheckLimits {
            startup: Duration::from_millis(self.startup_ms),
            decision: Duration::from_millis(self.decision_ms),
            max_line: crate::settings::MAX_LINE_BYTES,
        };
        Ok((argv, limits))
    }
}

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// A team's bot command; the first --team sits in seats 0 and 3, the second in
    /// 1 and 4, the third in 2 and 5, each seat its own process. The command is
    /// split like a shell would but not run by one. `builtin:random` and
    /// `builtin:heuristic` name the built-in bots (each its own process);
    /// `inproc:random` and `inproc:heuristic` play them inside the referee (no
    /// process, no clock: for fast tests). Unassigned seats get the built-in
    /// bots: heuristic for team 0, random for teams 1 and 2.
    #[arg(long = "team", value_name = "CMD")]
    pub teams: Vec<String>,

    /// One seat's bot, e.g. `--seat 4="python3 bot.py"`; overrides --team for that
    /// seat. `--seat N=human` plays the seat yourself from the terminal (no time
    /// limit): the hand and the legal actions are shown, you type a number.
    #[arg(long = "seat", value_name = "N=CMD")]
    pub seats: Vec<String>,

    /// Number of games in the match (the bot processes persist across games).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub games: u32,

    /// Match seed, a whole number from 0 to 2^64-1 (game k's seed is derived from
    /// it). If absent, 64 secret random bits: out of every command line and path,
    /// printed when the run ends.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_seed)]
    pub seed: Option<u64>,

    /// Transcript file (one game, ending in .jsonl) or directory (game-0001.jsonl,
    /// ...). Default: schmier-out/seed-<SEED>/ with --seed, else
    /// schmier-out/match-<UNIX TIME>-<PID>/. Per-decision timings go to a timings/
    /// folder beside the transcripts; each bot's stderr to <transcript>.stderr/ or
    /// <dir>/stderr/.
    #[arg(long, value_name = "PATH")]
    pub transcript: Option<PathBuf>,

    /// Keep every bot in the same seat for all games (by default the lineup moves
    /// one seat left after each game, partners staying together).
    #[arg(long)]
    pub no_rotate: bool,

    #[command(flatten)]
    pub table: TableArgs,

    #[command(flatten)]
    pub remote: crate::remote::RemoteArgs,
}

fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| {
        format!(
            "the seed must be a whole number from 0 to {}, got {text:?}",
            u64::MAX
        )
    })
}

impl PlayArgs {
    /// The lineup: --team, then --seat over it, then the built-in bots.
    fn lineup(&self) -> anyhow::Result<[BotSpec; 6]> {
        if self.teams.len() > 3 {
            bail!("--team: at most three teams, got {}", self.teams.len());
        }
        let mut lineup: [BotSpec; 6] = std::array::from_fn(|seat| {
            BotSpec::Builtin(if seat % 3 == 0 { "heuristic" } else { "random" }.to_owned())
        });
        for (k, text) in self.teams.iter().enumerate() {
            let spec = parse_bot(text, &format!("--team {}", k + 1))?;
            lineup[k] = spec.clone();
            lineup[k + 3] = spec;
        }
        let mut seen = [false; 6];
        for text in &self.seats {
            let (n, cmd) = text.split_once('=').with_context(|| {
                format!("--seat {text:?}: expected N=CMD, e.g. --seat 2=\"python3 bot.py\"")
            })?;
            let seat: usize = n.trim().parse().ok().filter(|s| *s < 6).with_context(|| {
                format!("--seat {text:?}: the seat must be a number from 0 to 5")
            })?;
            if std::mem::replace(&mut seen[seat], true) {
                bail!("--seat: seat {seat} is given twice");
            }
            lineup[seat] = parse_bot(cmd, &format!("--seat {seat}"))?;
        }
        Ok(lineup)
    }

    /// Where the transcripts go.
    fn output(&self, seed: u64) -> anyhow::Result<Output> {
        Ok(match &self.transcript {
            Some(p) if self.games == 1 && p.extension().is_some_and(|e| e == "jsonl") => {
                Output::File(p.clone())
            }
            Some(p) if p.extension().is_some_and(|e| e == "jsonl") => {
                bail!(
                    "--transcript {}: with --games {} give a directory, not a .jsonl file",
                    p.display(),
                    self.games
                )
            }
            Some(p) => Output::Dir(p.clone()),
            None => Output::default_dir(self.seed.map(|_| seed)),
        })
    }

    /// Stage two: validated configuration. `seed` is filled in when absent.
    pub fn validate(&self) -> anyhow::Result<PlayConfig> {
        let lineup = self.lineup()?;
        // One table: a name's seats in the lineup are all it opens at once.
        let most = (remote_names(&lineup).iter())
            .map(|n| {
                (lineup.iter())
                    .filter(|b| matches!(b, BotSpec::Remote(m) if m == n))
                    .count()
            })
            .max()
            .unwrap_or(0);
        let remote = self.remote.validate(remote_names(&lineup), most as u32)?;
        if self.games == 0 {
            bail!("--games must be at least 1");
        }
        let time = self.table.time.resolve(self.table.limits.max_line()?)?;
        let seed = match self.seed {
            Some(seed) => seed,
            None => fresh_seed()?,
        };
        if let Some(seed) = self.seed {
            warn_given_seed(seed, self.table.isolation.sandbox());
        }
        let output = self.output(seed)?;
        crate::outdir::refuse_tournament(&output)?;
        let limits = self.table.resource_limits(time.clock)?;
        let env = self.table.isolation.env()?;
        // Where transcripts, timings and logs go: never shown to a bot.
        let out_dir = output.folder();
        let scratch = (self.table.isolation).scratch_folder(&[&out_dir, &output.stderr_dir()])?;
        let sandbox = if self.table.isolation.sandbox() {
            let bots =
                (lineup.iter().enumerate()).map(|(seat, spec)| (format!("seat {seat}"), spec));
            let mut hidden = vec![out_dir.as_path()];
            let stderr_dir = output.stderr_dir();
            hidden.push(&stderr_dir);
            hidden.extend(scratch.as_deref());
            let sandbox = sandbox_for(bots, &hidden, &env, self.table.isolation.scratch_bytes()?)?;
            sandbox.held()?;
            Some(std::sync::Arc::new(sandbox))
        } else {
            None
        };
        Ok(PlayConfig {
            table: TableSpec {
                lineup,
                rules: self.table.rules.resolve(),
                time,
                policy: self.table.policy.resolve(),
                limits,
                events: self.table.channel.delivery(),
                isolation: Isolation {
                    env,
                    sandbox,
                    scratch,
                    remote: None,
                },
                stderr_cap: self.table.limits.stderr_cap(),
                pace: self.table.channel.pace(),
            },
            games: self.games,
            seed,
            secret_seed: self.seed.is_none(),
            rotate: !self.no_rotate,
            output,
            quiet: self.table.output.quiet,
            overwrite: self.table.output.overwrite(),
            keep_going: self.table.policy.keep_going(),
            remote,
        })
    }
}

/// The `remote:NAME`s among `bots`, sorted, each once.
pub fn remote_names<'a>(bots: impl IntoIterator<Item = &'a BotSpec>) -> Vec<String> {
    let names: std::collections::BTreeSet<String> = (bots.into_iter())
        .filter_map(|b| match b {
            BotSpec::Remote(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    names.into_iter().collect()
}
