//! `referee tournament`: its flags (stage one), its TOML file, and the validated
//! [`TournamentConfig`] (stage two). Every field of the file can be given as a
//! flag; flags win. Errors name the flag or file field and the bad value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use serde::Deserialize;

use schmier_protocol::rules::RulesConfig;

use super::schedule::{Format, Shard};
use crate::cli::{fresh_seed, parse_bot, ClockName, DeliveryName, PolicyName};
use crate::config::{BotSpec, Clock, FaultPolicy, TableSpec, TimeControl};

#[derive(Args, Debug, Default)]
pub struct TournamentArgs {
    /// Tournament file (TOML); see examples/sample-bracket.toml. Flags override it.
    #[arg(value_name = "CONFIG")]
    pub config: Option<PathBuf>,

    /// An entrant, `NAME=CMD` (repeat). An entrant plays as a team: two processes
    /// of CMD in opposite seats. Replaces the file's entrant of the same name.
    #[arg(long = "entrant", value_name = "NAME=CMD")]
    pub entrants: Vec<String>,

    /// `round-robin` (every three entrants meet), `balanced` (a subset of the round
    /// robin in which every pair meets exactly once), `gauntlet` (each --challenger
    /// against every pair of the others), `knockout` (table winners advance) or
    /// `swiss` (--rounds rounds of tables of similar standing). [default: round-robin]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,

    /// Rounds of a Swiss tournament. [default: 3]
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,

    /// Knockout and Swiss: play only round R (from 1). The rounds before it must
    /// be complete in --out, or be taken from --from.
    #[arg(long, value_name = "R")]
    pub round: Option<u32>,

    /// With --round R: take rounds 1..R-1 from this finished or merged directory
    /// of the same tournament (how a sharded round starts).
    #[arg(long, value_name = "DIR", requires = "round")]
    pub from: Option<PathBuf>,

    /// A gauntlet's challenger, by entrant name (repeat).
    #[arg(long = "challenger", value_name = "NAME")]
    pub challengers: Vec<String>,

    /// Duplicate sets per matchup; a set is six games on one deal seed, the three
    /// entrants rotated through every arrangement of the team positions. [default: 1]
    #[arg(long, value_name = "N")]
    pub sets: Option<u32>,

    /// Tournament seed; every game's seed derives from it and the schedule.
    /// Random, and printed, if absent.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Output directory. [default: schmier-out/tournament-SEED]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Tables played at once. [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Continue the tournament in --out: replay its journal and play only the
    /// games it lacks.
    #[arg(long)]
    pub resume: bool,

    /// Play only slice K of N of the schedule (K from 0), e.g. `--shard 2/8`, into
    /// its own --out; combine the shards with `referee merge`. `auto` reads K and N
    /// from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with N from
    /// SCHMIER_SHARDS or the file's `shards`) or a Slurm array (K is
    /// SLURM_ARRAY_TASK_ID when N is set so, and a task re-submitted alone plays
    /// its own shard; otherwise K and N follow from the array's range and step).
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<String>,

    /// Who takes the empty team positions when there are fewer than three
    /// entrants, e.g. `builtin:random`.
    #[arg(long, value_name = "CMD")]
    pub fill: Option<String>,

    /// Time a bot has for each decision, in milliseconds. [default: 1000]
    #[arg(long, value_name = "MS")]
    pub decision_ms: Option<u64>,

    /// Time a bot has to answer hello, in milliseconds. [default: 10000]
    #[arg(long, value_name = "MS")]
    pub startup_ms: Option<u64>,

    /// Per-game time bank per seat, in milliseconds, as for `referee play`: a
    /// decision that takes longer than --decision-ms draws the excess from it.
    /// [default: 0]
    #[arg(long, value_name = "MS")]
    pub time_bank_ms: Option<u64>,

    /// The clock decisions are timed on, as for `referee play`: `wall` or `cpu`
    /// (CPU time of the bot's processes, so a busy host cannot make a bot lose on
    /// time; Linux only). [default: wall]
    #[arg(long, value_enum)]
    pub clock: Option<ClockName>,

    /// Multiply every time limit by this factor. [default: 1.0]
    #[arg(long, value_name = "F")]
    pub time_scale: Option<f64>,

    /// Fault policy, as for `referee play`; under `competition` every game also
    /// gets bot processes of its own (README: "A game's processes are its own").
    /// [default: competition]
    #[arg(long, value_enum)]
    pub policy: Option<PolicyName>,

    /// Rules variant: stick the dealer.
    #[arg(long)]
    pub stick_the_dealer: bool,

    /// Rules variant: trump may be played at any time.
    #[arg(long)]
    pub trump_anytime: bool,

    /// An environment variable for every bot, KEY=VALUE (repeatable), as for
    /// `referee play`: bots get nothing of the referee's environment but these and
    /// PATH. Not part of what identifies the tournament (a resumed run may differ).
    #[arg(long = "bot-env", value_name = "KEY=VALUE")]
    pub bot_env: Vec<String>,

    /// An entrant's working directory, `NAME=DIR` (repeatable): its command is
    /// read as if typed in DIR (relative paths from there) and runs there.
    /// Overrides the file's `dir` of that entrant.
    #[arg(long = "entrant-dir", value_name = "NAME=DIR")]
    pub entrant_dirs: Vec<String>,

    /// An environment variable for one entrant's processes, `NAME=KEY=VALUE`
    /// (repeatable), over --bot-env. Added to the file's `env` of that entrant.
    #[arg(long = "entrant-env", value_name = "NAME=KEY=VALUE")]
    pub entrant_envs: Vec<String>,

    /// Run every bot process in a sandbox of its own, as `referee play --sandbox`
    /// does (README, "Sandbox"). The referee checks every entrant can be sandboxed
    /// before the first game, and refuses to start where the host cannot sandbox.
    #[arg(long)]
    pub sandbox: bool,

    /// Event delivery, as for `referee play`: `live` (each event to every seat as
    /// it happens) or `batched` (with the seat's next request: fewer system calls,
    /// faster among fast bots). Results and transcripts are the same either way.
    /// [default: live]
    #[arg(long, value_enum)]
    pub events: Option<DeliveryName>,

    #[command(flatten)]
    pub limits: crate::cli::LimitArgs,

    #[command(flatten)]
    pub pace: crate::cli::PaceArgs,

    /// A folder in which each bot process gets a writable directory of its own,
    /// DIR/rRR-mMMMM/player<N> (its matchup and lineup slot), named in its
    /// environment as SCHMIER_SCRATCH; sandboxed, a bot sees only its own. Kept
    /// after the run; not inside --out.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,

    /// No progress bar or progress lines; only the final standings.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The tournament file. Field names are the long flags with `_` for `-`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    seed: Option<u64>,
    format: Option<String>,
    challengers: Option<Vec<String>>,
    rounds: Option<u32>,
    sets: Option<u32>,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    fill: Option<String>,
    /// N for `--shard auto` (SCHMIER_SHARDS wins).
    shards: Option<u32>,
    decision_ms: Option<u64>,
    startup_ms: Option<u64>,
    time_bank_ms: Option<u64>,
    clock: Option<String>,
    time_scale: Option<f64>,
    policy: Option<String>,
    stick_the_dealer: Option<bool>,
    trump_anytime: Option<bool>,
    /// Every bot's environment, as --bot-env.
    env: Option<BTreeMap<String, String>>,
    sandbox: Option<bool>,
    events: Option<String>,
    limit_memory_mb: Option<u64>,
    limit_cpu_s: Option<u64>,
    limit_files: Option<u64>,
    limit_procs: Option<u64>,
    limit_cpus: Option<f64>,
    scratch: Option<PathBuf>,
    #[serde(default, rename = "entrant")]
    entrants: Vec<FileEntrant>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntrant {
    name: String,
    command: String,
    /// Its working directory (relative to where the referee is started).
    dir: Option<PathBuf>,
    /// Variables of its own, over the tournament's `env`.
    #[serde(default)]
    env: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entrant {
    pub name: String,
    pub bot: BotSpec,
}

/// A validated tournament.
#[derive(Clone, Debug)]
pub struct TournamentConfig {
    pub entrants: Vec<Entrant>,
    pub format: Format,
    pub sets: u32,
    pub seed: u64,
    /// What every table shares; the lineup is filled in per matchup.
    pub table: TableSpec,
    pub out: PathBuf,
    pub jobs: usize,
    pub resume: bool,
    pub shard: Option<Shard>,
    /// Knockout and Swiss: play only this round.
    pub round: Option<u32>,
    pub from: Option<PathBuf>,
    pub quiet: bool,
}

impl TournamentArgs {
    pub fn validate(&self) -> anyhow::Result<TournamentConfig> {
        let file = match &self.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let mut entrants: Vec<Entrant> = Vec::new();
        for e in &file.entrants {
            let what = format!("entrant {:?}", e.name);
            let env = e.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let bot = own_place(parse_bot(&e.command, &what)?, e.dir.clone(), env, &what)?;
            add(&mut entrants, &e.name, bot, &what)?;
        }
        for text in &self.entrants {
            let (name, cmd) = text.split_once('=').with_context(|| {
                format!(
                    "--entrant {text:?}: expected NAME=CMD, e.g. --entrant mine=\"python3 bot.py\""
                )
            })?;
            let name = name.trim();
            let bot = parse_bot(cmd, &format!("--entrant {name}"))?;
            entrants.retain(|e| e.name != name);
            add(&mut entrants, name, bot, &format!("--entrant {text:?}"))?;
        }
        for text in &self.entrant_dirs {
            let (name, dir) = entrant_value(&entrants, text, "--entrant-dir", "NAME=DIR")?;
            let e = &mut entrants[name];
            e.bot = own_place(
                e.bot.clone(),
                Some(PathBuf::from(dir)),
                Vec::new(),
                &format!("--entrant-dir {text:?}"),
            )?;
        }
        for text in &self.entrant_envs {
            let what = format!("--entrant-env {text:?}");
            let (name, pair) = entrant_value(&entrants, text, "--entrant-env", "NAME=KEY=VALUE")?;
            let pair = match pair.split_once('=') {
                Some((k, v)) => (k.to_owned(), v.to_owned()),
                None => bail!("{what}: expected NAME=KEY=VALUE, e.g. --entrant-env mine=DEPTH=3"),
            };
            let e = &mut entrants[name];
            e.bot = own_place(e.bot.clone(), None, vec![pair], &what)?;
        }
        let fill = self.fill.clone().or(file.fill);
        if entrants.len() < 3 {
            match &fill {
                Some(cmd) => {
                    let bot = parse_bot(cmd, "--fill")?;
                    let mut k = 1;
                    while entrants.len() < 3 {
                        let name = format!("fill-{k}");
                        k += 1;
                        if entrants.iter().all(|e| e.name != name) {
                            entrants.push(Entrant {
                                name,
                                bot: bot.clone(),
                            });
                        }
                    }
                }
                None => bail!(
                    "a tournament needs at least three entrants (a table seats three teams), got {}; \
                     add --entrant NAME=CMD, or name who fills the empty team positions with --fill builtin:random",
                    entrants.len()
                ),
            }
        }
        let format_name = self
            .format
            .clone()
            .or(file.format)
            .unwrap_or_else(|| "round-robin".into());
        let challenger_names = if self.challengers.is_empty() {
            file.challengers.unwrap_or_default()
        } else {
            self.challengers.clone()
        };
        let format = match format_name.as_str() {
            "round-robin" => {
                if !challenger_names.is_empty() {
                    bail!("--challenger: only a gauntlet has challengers (--format gauntlet)");
                }
                Format::RoundRobin
            }
            "gauntlet" => {
                if challenger_names.is_empty() {
                    bail!("--format gauntlet: name at least one --challenger");
                }
                let mut challengers = Vec::new();
                for name in &challenger_names {
                    let i = entrants
                        .iter()
                        .position(|e| &e.name == name)
                        .with_context(|| {
                            format!("--challenger {name:?}: no entrant has that name")
                        })?;
                    if !challengers.contains(&i) {
                        challengers.push(i);
                    }
                }
                if entrants.len() - challengers.len() < 2 {
                    bail!("--format gauntlet: a challenger needs at least two other entrants to play against");
                }
                Format::Gauntlet { challengers }
            }
            "balanced" => {
                let n = entrants.len();
                if super::schedule::steiner_triples(n).is_none() {
                    let next = (n + 1..)
                        .find(|m| m % 6 == 1 || m % 6 == 3)
                        .expect("a size");
                    bail!(
                        "--format balanced: every pair can meet exactly once only with a number of \
                         entrants that is 1 or 3 more than a multiple of 6 (7, 9, 13, 15, 19, …); \
                         there are {n}; add entrants to make {next}, or use round-robin"
                    );
                }
                Format::Balanced
            }
            "knockout" => Format::Knockout,
            "swiss" => {
                let rounds = self.rounds.or(file.rounds).unwrap_or(3);
                if rounds == 0 {
                    bail!("--rounds must be at least 1");
                }
                Format::Swiss { rounds }
            }
            other => bail!("--format {other:?}: expected round-robin, gauntlet, knockout or swiss"),
        };
        if !matches!(format, Format::Swiss { .. })
            && (self.rounds.is_some() || file.rounds.is_some())
        {
            bail!("--rounds: only a Swiss tournament has a number of rounds");
        }
        if !format.by_rounds() && self.round.is_some() {
            bail!("--round: only knockout and Swiss tournaments are played round by round");
        }
        if self.round == Some(0) {
            bail!("--round: rounds count from 1");
        }
        if format.by_rounds() && self.shard.is_some() && self.round.is_none() {
            bail!("--shard: knockout and Swiss tournaments are sharded one round at a time; add --round R");
        }
        let sets = self.sets.or(file.sets).unwrap_or(1);
        if sets == 0 {
            bail!("--sets must be at least 1");
        }
        let seed = match self.seed.or(file.seed) {
            Some(seed) => seed,
            None => fresh_seed()?,
        };
        let jobs = self
            .jobs
            .or(file.jobs)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if jobs == 0 {
            bail!("--jobs must be at least 1");
        }
        let time_scale = self.time_scale.or(file.time_scale).unwrap_or(1.0);
        if !(time_scale.is_finite() && time_scale > 0.0) {
            bail!("--time-scale must be a positive number, got {time_scale}");
        }
        let policy_name = (self.policy).map_or_else(
            || file_choice("policy", file.policy.as_deref(), PolicyName::Competition),
            Ok,
        )?;
        let given = self.seed.or(file.seed);
        if policy_name == PolicyName::Competition
            && given.is_some_and(|s| s < crate::cli::SMALL_SEED)
            && !self.quiet
        {
            eprintln!(
                "referee: warning: seed {seed} is small enough to be found from a bot's own \
                 hand; for a competition give no seed (the referee then draws 64 random bits, \
                 printed and kept in --out, which sandboxed bots cannot see)"
            );
        }
        let scale = |ms: u64| Duration::from_secs_f64(ms as f64 * time_scale / 1000.0);
        let decision_ms = self.decision_ms.or(file.decision_ms).unwrap_or(1000);
        let clock: Clock = (self.clock)
            .map_or_else(
                || file_choice("clock", file.clock.as_deref(), ClockName::Wall),
                Ok,
            )?
            .into();
        let time = TimeControl {
            clock,
            bank: scale(self.time_bank_ms.or(file.time_bank_ms).unwrap_or(0)),
            startup: Some(scale(self.startup_ms.or(file.startup_ms).unwrap_or(10_000))),
            decision: Some(scale(decision_ms)),
            grace: scale(50),
            max_line: 64 * 1024,
            write: scale(decision_ms.max(1000)),
            shutdown: scale(1000),
        };
        let shard = match self.shard.as_deref() {
            None => None,
            Some("auto") => Some(auto_shard(file.shards, |k| std::env::var(k).ok())?),
            Some(text) => Some(
                text.parse::<Shard>()
                    .map_err(|e| anyhow::anyhow!("--shard {e}"))?,
            ),
        };
        let out = self
            .out
            .clone()
            .or(file.out)
            .unwrap_or_else(|| PathBuf::from(format!("schmier-out/tournament-{seed}")));
        let events: crate::config::Delivery = (self.events)
            .map_or_else(
                || file_choice("events", file.events.as_deref(), DeliveryName::Live),
                Ok,
            )?
            .into();
        let limits = self.limits.resolve(&crate::cli::LimitArgs {
            limit_memory_mb: file.limit_memory_mb,
            limit_cpu_s: file.limit_cpu_s,
            limit_files: file.limit_files,
            limit_procs: file.limit_procs,
            limit_cpus: file.limit_cpus,
        })?;
        let mut env_words: Vec<String> = (file.env.iter().flatten())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        env_words.extend(self.bot_env.iter().cloned());
        let env = crate::config::Isolation::env(&crate::cli::parse_env(&env_words)?);
        let scratch = (self.scratch.clone().or(file.scratch))
            .map(|s| crate::cli::scratch_folder(&s, &[&out]))
            .transpose()?;
        let sandbox = if self.sandbox || file.sandbox == Some(true) {
            let bots = (entrants.iter()).map(|e| (format!("entrant {:?}", e.name), &e.bot));
            let mut hidden = vec![out.as_path()];
            hidden.extend(scratch.as_deref());
            let sandbox = crate::cli::sandbox_for(bots, &hidden, &env)?;
            Some(std::sync::Arc::new(sandbox))
        } else {
            None
        };
        let placeholder = BotSpec::Builtin("random".into());
        Ok(TournamentConfig {
            entrants,
            format,
            sets,
            seed,
            table: TableSpec {
                lineup: std::array::from_fn(|_| placeholder.clone()),
                rules: RulesConfig {
                    stick_the_dealer: self.stick_the_dealer || file.stick_the_dealer == Some(true),
                    trump_anytime: self.trump_anytime || file.trump_anytime == Some(true),
                    ..RulesConfig::default()
                },
                time,
                policy: match policy_name {
                    PolicyName::Competition => FaultPolicy::COMPETITION,
                    PolicyName::Lenient => FaultPolicy::LENIENT,
                },
                limits,
                events,
                isolation: crate::config::Isolation {
                    env,
                    sandbox,
                    scratch,
                },
                stderr_cap: 1 << 20,
                pace: self.pace.pace(),
            },
            out,
            jobs,
            resume: self.resume,
            shard,
            round: self.round,
            from: self.from.clone(),
            quiet: self.quiet,
        })
    }
}

fn add(entrants: &mut Vec<Entrant>, name: &str, bot: BotSpec, what: &str) -> anyhow::Result<()> {
    if name.is_empty() {
        bail!("{what}: the name is empty");
    }
    if crate::names::printable(name) != name {
        bail!("{what}: the name {name:?} holds a control character; names are printed on consoles and pages");
    }
    if entrants.iter().any(|e| e.name == name) {
        bail!("{what}: two entrants are named {name:?}");
    }
    entrants.push(Entrant {
        name: name.to_owned(),
        bot,
    });
    Ok(())
}

/// A file field that takes one of a flag's values (`field` names it in errors);
/// `default` when absent.
fn file_choice<T: clap::ValueEnum>(
    field: &str,
    text: Option<&str>,
    default: T,
) -> anyhow::Result<T> {
    let Some(text) = text else { return Ok(default) };
    T::from_str(text, false).map_err(|_| {
        let names: Vec<String> = (T::value_variants().iter())
            .filter_map(|v| v.to_possible_value())
            .map(|v| v.get_name().to_owned())
            .collect();
        anyhow::anyhow!(
            "{field} {text:?} in the tournament file: expected {}",
            names.join(" or ")
        )
    })
}

/// `bot` given a working directory and variables of its own (a tournament
/// entrant's `dir` and `env`); only a command has them.
fn own_place(
    bot: BotSpec,
    dir: Option<PathBuf>,
    vars: Vec<(String, String)>,
    what: &str,
) -> anyhow::Result<BotSpec> {
    if dir.is_none() && vars.is_empty() {
        return Ok(bot);
    }
    for (k, v) in &vars {
        if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
            bail!(
                "{what}: {k:?} is not an environment variable name (or its value holds a NUL byte)"
            );
        }
    }
    match bot {
        BotSpec::Command {
            argv,
            text,
            dir: old_dir,
            mut env,
        } => {
            if let Some(d) = &dir {
                if !d.is_dir() {
                    bail!("{what}: the directory {} does not exist", d.display());
                }
            }
            env.extend(vars);
            Ok(BotSpec::Command {
                argv,
                text,
                dir: dir.or(old_dir),
                env,
            })
        }
        other => bail!(
            "{what}: only a command has a directory and environment of its own, not {}",
            other.display()
        ),
    }
}

/// `NAME=REST` of an entrant flag: the entrant's index and REST.
fn entrant_value<'t>(
    entrants: &[Entrant],
    text: &'t str,
    flag: &str,
    shape: &str,
) -> anyhow::Result<(usize, &'t str)> {
    let (name, rest) = text
        .split_once('=')
        .with_context(|| format!("{flag} {text:?}: expected {shape}"))?;
    let i = entrants
        .iter()
        .position(|e| e.name == name.trim())
        .with_context(|| format!("{flag} {text:?}: no entrant is named {:?}", name.trim()))?;
    Ok((i, rest))
}

fn read_file(path: &Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read the tournament file {}", path.display()))?;
    toml::from_str(&text)
        .with_context(|| format!("failed to read the tournament file {}", path.display()))
}

/// `--shard auto`: the slice from a Kubernetes Indexed Job or a Slurm array.
///
/// N given explicitly (SCHMIER_SHARDS, else the file's `shards`) wins, and then
/// the task id is the shard number: a Slurm task re-submitted alone
/// (`sbatch --array=2`) still plays shard 2 of N. Without it a Slurm array's
/// range gives N and the shard (id minus the minimum, over the step); a one-task
/// array cannot, and is refused rather than taken for a whole tournament.
fn auto_shard(
    file_shards: Option<u32>,
    env: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<Shard> {
    let number = |key: &str| -> anyhow::Result<Option<u32>> {
        env(key)
            .map(|v| {
                v.trim()
                    .parse::<u32>()
                    .with_context(|| format!("--shard auto: {key}={v:?} is not a number"))
            })
            .transpose()
    };
    let explicit = match number("SCHMIER_SHARDS")? {
        Some(n) => Some((n, "SCHMIER_SHARDS")),
        None => file_shards.map(|n| (n, "`shards` in the tournament file")),
    };
    let (index, count, source) = if let Some(k) = number("JOB_COMPLETION_INDEX")? {
        let (n, _) = explicit.context(
            "--shard auto: JOB_COMPLETION_INDEX is set but not the shard count; \
             set `shards` in the tournament file or SCHMIER_SHARDS (the Job's completions)",
        )?;
        (k, n, "JOB_COMPLETION_INDEX")
    } else if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        if let Some((n, from)) = explicit {
            if step > 1 {
                bail!(
                    "--shard auto: with the shard count from {from} the array's task ids \
                     are the shard numbers 0..{}, but this array steps by {step}; \
                     use --array=0-{} or leave the count unset",
                    n.saturating_sub(1),
                    n.saturating_sub(1)
                );
            }
            if id >= n {
                bail!(
                    "--shard auto: SLURM_ARRAY_TASK_ID={id} is past the last shard: \
                     {n} shards (from {from}) are task ids 0..{}",
                    n.saturating_sub(1)
                );
            }
            (id, n, "SLURM_ARRAY_TASK_ID")
        } else {
            let need = |key: &str| {
                number(key)?.with_context(|| {
                    format!("--shard auto: SLURM_ARRAY_TASK_ID is set but not {key}")
                })
            };
            let (min, max, tasks) = (
                need("SLURM_ARRAY_TASK_MIN")?,
                need("SLURM_ARRAY_TASK_MAX")?,
                need("SLURM_ARRAY_TASK_COUNT")?,
            );
            if tasks <= 1 {
                bail!(
                    "--shard auto: a one-task array (task {id}) does not tell how many shards \
                     there are; set SCHMIER_SHARDS (or `shards` in the tournament file), \
                     or give --shard {id}/N"
                );
            }
            // An evenly stepped range (0-7, 1-8, 0-14:2) numbers the shards; a
            // list (0,3,5) does not.
            let n = (max - min) / step + 1;
            if (max - min) % step != 0 || n != tasks || id < min || (id - min) % step != 0 {
                bail!(
                    "--shard auto: the array (tasks {min}..{max} step {step}, {tasks} tasks) \
                     is not an evenly stepped range; set SCHMIER_SHARDS and number the \
                     tasks 0..N-1, or give --shard K/N"
                );
            }
            ((id - min) / step, n, "SLURM_ARRAY_TASK_ID")
        }
    } else {
        bail!("--shard auto: neither JOB_COMPLETION_INDEX (Kubernetes) nor SLURM_ARRAY_TASK_ID (Slurm) is set; give --shard K/N");
    };
    format!("{index}/{count}")
        .parse::<Shard>()
        .map_err(|e| anyhow::anyhow!("--shard auto (from {source}): {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(entrants: &[&str]) -> TournamentArgs {
        TournamentArgs {
            entrants: entrants.iter().map(|s| s.to_string()).collect(),
            seed: Some(1),
            ..TournamentArgs::default()
        }
    }

    #[test]
    fn fewer_than_three_entrants_is_an_error_unless_filled() {
        let err = args(&["a=builtin:random", "b=builtin:heuristic"])
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("at least three entrants") && err.contains("--fill"),
            "{err}"
        );
        let mut a = args(&["a=builtin:heuristic"]);
        a.fill = Some("builtin:random".into());
        let cfg = a.validate().unwrap();
        let names: Vec<&str> = cfg.entrants.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "fill-1", "fill-2"]);
    }

    #[test]
    fn flags_override_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(
            &path,
            "seed = 5\nsets = 2\njobs = 4\n\
             [[entrant]]\nname = \"a\"\ncommand = \"builtin:random\"\n\
             [[entrant]]\nname = \"b\"\ncommand = \"builtin:random\"\n\
             [[entrant]]\nname = \"c\"\ncommand = \"builtin:random\"\n",
        )
        .unwrap();
        let a = TournamentArgs {
            config: Some(path),
            entrants: vec!["b=builtin:heuristic".into()],
            sets: Some(3),
            ..TournamentArgs::default()
        };
        let cfg = a.validate().unwrap();
        assert_eq!((cfg.seed, cfg.sets, cfg.jobs), (5, 3, 4));
        let b = cfg.entrants.iter().find(|e| e.name == "b").unwrap();
        assert_eq!(b.bot, BotSpec::Builtin("heuristic".into()));
        assert_eq!(cfg.entrants.len(), 3);
    }

    #[test]
    fn the_file_sets_events_limits_and_entrant_places() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        let bot_dir = dir.path().display();
        std::fs::write(
            &path,
            format!(
                "seed = 5\nevents = \"batched\"\nlimit_files = 64\nenv = {{ A = \"1\" }}\n\
                 [[entrant]]\nname = \"a\"\ncommand = \"python3 bot.py\"\n\
                 dir = \"{bot_dir}\"\nenv = {{ B = \"2\" }}\n\
                 [[entrant]]\nname = \"b\"\ncommand = \"builtin:random\"\n\
                 [[entrant]]\nname = \"c\"\ncommand = \"builtin:random\"\n"
            ),
        )
        .unwrap();
        let a = TournamentArgs {
            config: Some(path.clone()),
            entrant_envs: vec!["a=B=3".into(), "a=C=4".into()],
            ..TournamentArgs::default()
        };
        let cfg = a.validate().unwrap();
        assert_eq!(cfg.table.events, crate::config::Delivery::Batched);
        assert_eq!(cfg.table.limits.open_files, Some(64));
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            cfg.table.isolation.env,
            env(&[("A", "1"), ("PATH", crate::bot::DEFAULT_PATH)])
        );
        let BotSpec::Command {
            dir: d, env: own, ..
        } = &cfg.entrants[0].bot
        else {
            panic!("a command: {:?}", cfg.entrants[0].bot)
        };
        assert_eq!(d.as_deref(), Some(dir.path()));
        // The flag's B comes after the file's, so it wins when they are merged.
        let merged = cfg.entrants[0].bot.env(&cfg.table.isolation.env);
        assert_eq!(
            merged,
            env(&[
                ("A", "1"),
                ("B", "3"),
                ("C", "4"),
                ("PATH", crate::bot::DEFAULT_PATH)
            ])
        );
        assert_eq!(own.len(), 3);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("batched", "sometimes")).unwrap();
        let err = format!(
            "{:#}",
            TournamentArgs {
                config: Some(path),
                ..TournamentArgs::default()
            }
            .validate()
            .unwrap_err()
        );
        assert!(err.contains("events \"sometimes\""), "{err}");
    }

    #[test]
    fn a_bad_file_field_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, "seed = 5\nsetz = 2\n").unwrap();
        let a = TournamentArgs {
            config: Some(path),
            ..TournamentArgs::default()
        };
        let err = format!("{:#}", a.validate().unwrap_err());
        assert!(err.contains("setz"), "{err}");
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    /// What Slurm 22.05 sets for task `id` of `sbatch --array=min-max:step`.
    fn slurm(id: u32, min: u32, max: u32, step: u32) -> impl Fn(&str) -> Option<String> {
        let count = (max - min) / step + 1;
        move |k: &str| match k {
            "SLURM_ARRAY_TASK_ID" => Some(id.to_string()),
            "SLURM_ARRAY_TASK_MIN" => Some(min.to_string()),
            "SLURM_ARRAY_TASK_MAX" => Some(max.to_string()),
            "SLURM_ARRAY_TASK_STEP" => Some(step.to_string()),
            "SLURM_ARRAY_TASK_COUNT" => Some(count.to_string()),
            _ => None,
        }
    }

    fn with_shards(
        n: &'static str,
        inner: impl Fn(&str) -> Option<String>,
    ) -> impl Fn(&str) -> Option<String> {
        move |k: &str| {
            (k == "SCHMIER_SHARDS")
                .then(|| n.to_owned())
                .or_else(|| inner(k))
        }
    }

    #[test]
    fn shard_auto_reads_kubernetes_and_slurm() {
        let k8s = auto_shard(Some(4), env(&[("JOB_COMPLETION_INDEX", "3")])).unwrap();
        assert_eq!(k8s, Shard { index: 3, count: 4 });
        let err = auto_shard(None, env(&[("JOB_COMPLETION_INDEX", "0")])).unwrap_err();
        assert!(err.to_string().contains("shard count"), "{err}");
        let err = auto_shard(None, env(&[])).unwrap_err();
        assert!(err.to_string().contains("give --shard K/N"), "{err}");
        // Arrays from 0, from 1, and stepped: the range gives K and N.
        let from0 = auto_shard(None, slurm(2, 0, 7, 1)).unwrap();
        assert_eq!(from0, Shard { index: 2, count: 8 });
        let from1 = auto_shard(None, slurm(2, 1, 2, 1)).unwrap();
        assert_eq!(from1, Shard { index: 1, count: 2 });
        let stepped = auto_shard(None, slurm(6, 0, 14, 2)).unwrap();
        assert_eq!(stepped, Shard { index: 3, count: 8 });
        // A list (--array=0,3,5: Slurm says min 0, max 5, step 1, 3 tasks).
        let list = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "5"),
            ("SLURM_ARRAY_TASK_STEP", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        let err = auto_shard(None, list).unwrap_err().to_string();
        assert!(err.contains("not an evenly stepped range"), "{err}");
    }

    #[test]
    fn shard_auto_resubmitted_slurm_task_plays_its_own_shard() {
        // `sbatch --array=2` alone: min = max = 2, one task. Without the count it
        // must not become shard 0/1 (a whole tournament).
        let err = auto_shard(None, slurm(2, 2, 2, 1)).unwrap_err().to_string();
        assert!(err.contains("one-task array (task 2)"), "{err}");
        assert!(err.contains("SCHMIER_SHARDS"), "{err}");
        // With the count, the task id is the shard: the same as in the full array.
        let alone = auto_shard(None, with_shards("8", slurm(2, 2, 2, 1))).unwrap();
        assert_eq!(alone, Shard { index: 2, count: 8 });
        let full = auto_shard(None, with_shards("8", slurm(2, 0, 7, 1))).unwrap();
        assert_eq!(full, alone);
        assert_eq!(auto_shard(Some(8), slurm(2, 2, 2, 1)).unwrap(), alone);
        // Ids past the count, and a stepped array with an explicit count: refused.
        let err = auto_shard(None, with_shards("8", slurm(8, 1, 8, 1)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("SLURM_ARRAY_TASK_ID=8 is past the last shard: 8 shards (from SCHMIER_SHARDS) are task ids 0..7"),
            "{err}"
        );
        let err = auto_shard(Some(8), slurm(2, 0, 14, 2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("steps by 2"), "{err}");
    }
}
