//! `referee tournament`: its flags (stage one), its TOML file, and the validated
//! [`TournamentConfig`] (stage two). The settings a table needs are the groups of
//! `crate::settings`, shared with `play`: the file's keys are the long flags with
//! `_` for `-`, and a flag given on the command line wins over the file's value,
//! field by field. Errors name the flag or file field and the bad value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use serde::Deserialize;

use super::format::{Format, FormatName, Params, ROUNDS};
use super::schedule::Shard;
use crate::config::{BotSpec, Isolation, TableSpec};
use crate::settings::suggest;
use crate::settings::{
    choice_name, fresh_seed, parse_bot, sandbox_for, scratch_folder, warn_given_seed, with_default,
    ChannelArgs, IsolationArgs, LimitArgs, Merge, OutputArgs, PolicyArgs, PolicyName, RulesArgs,
    TableArgs, TimeArgs,
};

const FORMAT: FormatName = FormatName::RoundRobin;
const SETS: u32 = 1;

#[derive(Args, Debug, Default)]
pub struct TournamentArgs {
    /// Tournament file (TOML); see examples/sample-bracket.toml. Its keys are the
    /// long flags with `_` for `-`; a flag given here wins over the file's value.
    #[arg(value_name = "CONFIG")]
    pub config: Option<PathBuf>,

    /// An entrant, `NAME=CMD` (repeat). An entrant plays as a team: two processes
    /// of CMD in opposite seats. Names must differ from each other and from the
    /// file's entrants.
    #[arg(long = "entrant", value_name = "NAME=CMD")]
    pub entrants: Vec<String>,

    #[arg(long, value_enum, help = with_default("How entrants are brought together.", choice_name(&FORMAT)))]
    pub format: Option<FormatName>,

    #[arg(long, value_name = "N", help = with_default("Rounds of a Swiss tournament.", ROUNDS))]
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

    #[arg(long, value_name = "N", help = with_default("Duplicate sets per matchup; a set is six games on one deal seed, the three entrants rotated through every arrangement of the team positions.", SETS))]
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
    /// games it lacks. Given no tournament file and no --entrant, every setting
    /// is read from --out's tournament.json (a flag given must match it).
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

    /// An entrant's working directory, `NAME=DIR` (repeatable): its command is
    /// read as if typed in DIR (relative paths from there) and runs there.
    /// Overrides the file's `dir` of that entrant.
    #[arg(long = "entrant-dir", value_name = "NAME=DIR")]
    pub entrant_dirs: Vec<String>,

    /// An environment variable for one entrant's processes, `NAME=KEY=VALUE`
    /// (repeatable), over --bot-env. Added to the file's `env` of that entrant.
    #[arg(long = "entrant-env", value_name = "NAME=KEY=VALUE")]
    pub entrant_envs: Vec<String>,

    /// Keep a page of the tournament current while it runs: OUT/index.html
    /// (progress, standings, head to head, rounds) and a replay page for each
    /// finished game in OUT/index-games/, rewritten after every game; it
    /// reloads itself until the run ends.
    #[arg(long)]
    pub page: bool,

    #[command(flatten)]
    pub table: TableArgs,

    /// `--listen` for entrants written `NAME=remote` (`remote/`).
    #[command(flatten)]
    pub remote: crate::remote::RemoteArgs,
}

/// The tournament file: the tournament's own fields, the table's settings (as
/// [`TableArgs`]) and its entrants. serde cannot deny unknown fields beside
/// flattened ones, so they are collected in `unknown` and refused by name.
#[derive(Debug, Default, Deserialize)]
struct FileConfig {
    seed: Option<u64>,
    format: Option<FormatName>,
    challengers: Option<Vec<String>>,
    rounds: Option<u32>,
    sets: Option<u32>,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    fill: Option<String>,
    /// N for `--shard auto` (SCHMIER_SHARDS wins).
    shards: Option<u32>,
    page: Option<bool>,
    #[serde(default, rename = "entrant")]
    entrants: Vec<FileEntrant>,
    // Each group flattened here, not through TableArgs: serde hands a nested
    // flatten every key, and `unknown` would then hold the groups' keys too.
    #[serde(flatten)]
    time: TimeArgs,
    #[serde(flatten)]
    channel: ChannelArgs,
    #[serde(flatten)]
    policy: PolicyArgs,
    #[serde(flatten)]
    rules: RulesArgs,
    #[serde(flatten)]
    isolation: IsolationArgs,
    #[serde(flatten)]
    limits: LimitArgs,
    #[serde(flatten)]
    output: OutputArgs,
    #[serde(flatten)]
    unknown: BTreeMap<String, toml::Value>,
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
    /// Replace the tournament already in `out` (else that is an error).
    pub overwrite: bool,
    /// Play even if an entrant fails the start check.
    pub keep_going: bool,
    pub shard: Option<Shard>,
    /// Knockout and Swiss: play only this round.
    pub round: Option<u32>,
    pub from: Option<PathBuf>,
    pub quiet: bool,
    /// Keep `out/index.html` current (`--page`).
    pub page: bool,
    /// `--listen` and the remote entrants (`remote/`).
    pub remote: Option<crate::remote::RemoteSpec>,
}

impl TournamentArgs {
    pub fn validate(&self) -> anyhow::Result<TournamentConfig> {
        let mut file = match &self.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let folder = self.folder(&file)?;
        let table = self
            .table
            .clone()
            .merge(self.lower(&mut file, folder.as_ref()));
        let recorded = match &folder {
            Some(m) => super::folder::entrants(m)?,
            None => Vec::new(),
        };
        let entrants = self.entrants(
            &file.entrants,
            recorded,
            self.fill.clone().or(file.fill.clone()),
        )?;
        let format = self.format(&file, folder.as_ref(), &entrants)?;
        self.check_round(&format)?;
        let sets = self.sets.or(file.sets).unwrap_or(SETS);
        if sets == 0 {
            bail!("--sets must be at least 1");
        }
        let quiet = table.output.quiet;
        let seed = self.seed(file.seed, table.policy.name())?;
        let jobs = self
            .jobs
            .or(file.jobs)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if jobs == 0 {
            bail!("--jobs must be at least 1");
        }
        let shard = self
            .shard(file.shards)?
            .or(folder.as_ref().and_then(|m| m.shard));
        let out = self
            .out
            .clone()
            .or(file.out)
            .unwrap_or_else(|| PathBuf::from(format!("schmier-out/tournament-{seed}")));
        if self.resume && table.output.overwrite() {
            bail!(
                "--resume and --overwrite: continue the tournament in {} or replace it, not both",
                out.display()
            );
        }
        // A resumed page stays a page.
        let page = self.page
            || file.page.unwrap_or(false)
            || (folder.is_some() && out.join(crate::layout::tournament::INDEX).is_file());
        let spec = table_spec(&table, &entrants, &out)?;
        let remote =
            (self.remote).validate(crate::cli::remote_names(entrants.iter().map(|e| &e.bot)))?;
        Ok(TournamentConfig {
            entrants,
            format,
            sets,
            seed,
            table: spec,
            out,
            jobs,
            resume: self.resume,
            overwrite: table.output.overwrite(),
            keep_going: table.policy.keep_going(),
            shard,
            round: self.round,
            from: self.from.clone(),
            quiet,
            page,
            remote,
        })
    }

    /// The table's settings below the flags: the file's, over the folder's
    /// when resumed from it (which also gives the file's seed and sets).
    fn lower(
        &self,
        file: &mut FileConfig,
        folder: Option<&super::manifest::Manifest>,
    ) -> TableArgs {
        let lower = TableArgs {
            time: std::mem::take(&mut file.time),
            channel: std::mem::take(&mut file.channel),
            policy: std::mem::take(&mut file.policy),
            rules: std::mem::take(&mut file.rules),
            isolation: std::mem::take(&mut file.isolation),
            limits: std::mem::take(&mut file.limits),
            output: std::mem::take(&mut file.output),
        };
        let Some(m) = folder else {
            return lower;
        };
        file.seed = file.seed.or(Some(m.seed));
        file.sets = file.sets.or(Some(m.sets));
        lower.merge(super::folder::table_args(m, self.table.time.time_scale))
    }

    /// With `--resume` and no tournament named here (no file, no `--entrant`):
    /// the folder's manifest, whose settings are then the lowest layer
    /// (`folder.rs`).
    fn folder(&self, file: &FileConfig) -> anyhow::Result<Option<super::manifest::Manifest>> {
        if !self.resume || self.config.is_some() || !self.entrants.is_empty() {
            return Ok(None);
        }
        let out = match (&self.out, &file.out, self.seed) {
            (Some(out), _, _) | (None, Some(out), _) => out.clone(),
            (None, None, Some(seed)) => PathBuf::from(format!("schmier-out/tournament-{seed}")),
            (None, None, None) => bail!(
                "--resume: give --out DIR, the folder of the tournament to continue \
                 (its settings are read from DIR/tournament.json)"
            ),
        };
        super::folder::settings(&out)
    }

    /// The format: the folder's when resumed from it and none is given here,
    /// else built from `--format`, `--challenger` and `--rounds` (or the file's).
    fn format(
        &self,
        file: &FileConfig,
        folder: Option<&super::manifest::Manifest>,
        entrants: &[Entrant],
    ) -> anyhow::Result<Format> {
        let given = self.format.is_some() || !self.challengers.is_empty() || self.rounds.is_some();
        if let (Some(m), false) = (folder, given) {
            return Ok(m.format.clone());
        }
        let challengers = match self.challengers.is_empty() {
            true => file.challengers.clone().unwrap_or_default(),
            false => self.challengers.clone(),
        };
        let names: Vec<String> = entrants.iter().map(|e| e.name.clone()).collect();
        (self.format.or(file.format).unwrap_or(FORMAT)).build(&Params {
            entrants: &names,
            challengers: &challengers,
            rounds: self.rounds.or(file.rounds),
        })
    }

    /// --round against the format (and --shard, which needs it there).
    fn check_round(&self, format: &Format) -> anyhow::Result<()> {
        if !format.by_rounds() && self.round.is_some() {
            bail!("--round: only knockout and Swiss tournaments are played round by round");
        }
        if self.round == Some(0) {
            bail!("--round: rounds count from 1");
        }
        if format.by_rounds() && self.shard.is_some() && self.round.is_none() {
            bail!("--shard: knockout and Swiss tournaments are sharded one round at a time; add --round R");
        }
        Ok(())
    }

    /// The seed given (flag, then file), or 64 fresh random bits. A given one
    /// is warned about in a competition, `--quiet` or not.
    fn seed(&self, in_file: Option<u64>, policy: PolicyName) -> anyhow::Result<u64> {
        let Some(seed) = self.seed.or(in_file) else {
            return fresh_seed();
        };
        let what = if self.seed.is_some() {
            "--seed"
        } else {
            "the file's seed"
        };
        warn_given_seed(what, seed, policy);
        Ok(seed)
    }

    fn shard(&self, file_shards: Option<u32>) -> anyhow::Result<Option<Shard>> {
        Ok(match self.shard.as_deref() {
            None => None,
            Some("auto") => Some(auto_shard(file_shards, |k| std::env::var(k).ok())?),
            Some(text) => Some(
                text.parse::<Shard>()
                    .map_err(|e| anyhow::anyhow!("--shard {e}"))?,
            ),
        })
    }

    /// The folder's entrants (`recorded`, when resumed from it), the file's,
    /// then the flags', with their own places; filled up to three with `fill`.
    fn entrants(
        &self,
        listed: &[FileEntrant],
        recorded: Vec<Entrant>,
        fill: Option<String>,
    ) -> anyhow::Result<Vec<Entrant>> {
        let mut entrants: Vec<Entrant> = recorded;
        for e in listed {
            let what = format!("entrant {:?}", e.name);
            let env = e.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let bot = own_place(parse_bot(&e.command, &what)?, e.dir.clone(), env, &what)?;
            add(
                &mut entrants,
                &e.name,
                bot,
                &format!("entrant {:?} in the tournament file", e.name),
            )?;
        }
        for text in &self.entrants {
            let (name, cmd) = text.split_once('=').with_context(|| {
                format!(
                    "--entrant {text:?}: expected NAME=CMD, e.g. --entrant mine=\"python3 bot.py\""
                )
            })?;
            let name = name.trim();
            let bot = parse_bot(cmd, &format!("--entrant {name}"))?;
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
        if entrants.len() < 3 {
            let Some(cmd) = &fill else {
                bail!(
                    "a tournament needs at least three entrants (a table seats three teams), got {}; \
                     add --entrant NAME=CMD, or name who fills the empty team positions with --fill builtin:random",
                    entrants.len()
                )
            };
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
        Ok(entrants)
    }
}

/// What every table shares, from the merged settings; the lineup is a
/// placeholder, filled in per matchup. Sandboxing is checked for every entrant
/// before anything is started or written.
pub(crate) fn table_spec(
    table: &TableArgs,
    entrants: &[Entrant],
    out: &Path,
) -> anyhow::Result<TableSpec> {
    let time = table.time.resolve(table.limits.max_line()?)?;
    let limits = table
        .limits
        .resolve(time.clock, table.isolation.sandbox())?;
    let env = table.isolation.env()?;
    let scratch = (table.isolation.scratch.as_deref())
        .map(|s| scratch_folder(s, &[out]))
        .transpose()?;
    let sandbox = if table.isolation.sandbox() {
        let bots = (entrants.iter()).map(|e| (format!("entrant {:?}", e.name), &e.bot));
        let mut hidden = vec![out];
        hidden.extend(scratch.as_deref());
        Some(std::sync::Arc::new(sandbox_for(bots, &hidden, &env)?))
    } else {
        None
    };
    let placeholder = BotSpec::Builtin("random".into());
    Ok(TableSpec {
        lineup: std::array::from_fn(|_| placeholder.clone()),
        rules: table.rules.resolve(),
        time,
        policy: table.policy.resolve(),
        limits,
        events: table.channel.delivery(),
        isolation: Isolation {
            env,
            sandbox,
            scratch,
            remote: None,
        },
        stderr_cap: table.limits.stderr_cap(),
        pace: table.channel.pace(),
    })
}

fn add(entrants: &mut Vec<Entrant>, name: &str, bot: BotSpec, what: &str) -> anyhow::Result<()> {
    // `NAME=remote`: the entrant plays from another machine, as remote:NAME.
    let bot = match bot {
        BotSpec::Command { argv, .. } if argv == ["remote"] => {
            crate::remote::check_name(name).with_context(|| what.to_owned())?;
            BotSpec::Remote(name.to_owned())
        }
        other => other,
    };
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
    let failed = || format!("failed to read the tournament file {}", path.display());
    let text = std::fs::read_to_string(path).with_context(failed)?;
    // Syntax errors come with their line from the parser.
    let table: toml::Table = toml::from_str(&text).with_context(failed)?;
    let file: FileConfig = match toml::from_str(&text) {
        Ok(file) => file,
        Err(e) if e.span().is_some_and(|s| s.start > 0) => {
            // E.g. a mistyped key of an [[entrant]]: serde lists the known ones.
            let e = suggest::unknown_field(&e.to_string());
            return Err(anyhow::anyhow!(e).context(failed()));
        }
        Err(e) => {
            // An error inside a flattened group is reported against the whole
            // document; the key that holds it is found by reading keys one by one.
            let culprit = table.iter().find_map(|(key, value)| {
                let one = toml::Table::from_iter([(key.clone(), value.clone())]);
                let err = toml::Value::Table(one).try_into::<FileConfig>().err()?;
                Some((key.clone(), err.message().to_owned()))
            });
            let Some((key, message)) = culprit else {
                return Err(anyhow::Error::new(e).context(failed()));
            };
            bail!("{}{}: `{key}`: {message}", failed(), line_of(&text, &key));
        }
    };
    if let Some((key, value)) = file.unknown.iter().next() {
        bail!(
            "{}{}: unknown field `{key}`{} (the fields are the long flags of \
             `referee tournament --help` with _ for -, and [[entrant]] tables)",
            failed(),
            line_of(&text, key),
            suggest::did_you_mean(key, file_keys(value).iter().map(String::as_str))
        );
    }
    Ok(file)
}

/// The keys the tournament file knows, found by trying each long flag (with _
/// for -, and plural, as `challengers`) with the value given: a key the file
/// does not know lands in `unknown`, so nothing is suggested that it refuses.
fn file_keys(value: &toml::Value) -> Vec<String> {
    let flags = <TournamentArgs as Args>::augment_args(clap::Command::new("tournament"));
    let longs = flags.get_arguments().filter_map(|a| a.get_long());
    let names = longs.flat_map(|l| {
        let key = l.replace('-', "_");
        [format!("{key}s"), key]
    });
    let known = |key: &String| {
        let one = toml::Table::from_iter([(key.clone(), value.clone())]);
        toml::Value::Table(one)
            .try_into::<FileConfig>()
            .map_or(true, |f| f.unknown.is_empty())
    };
    names.filter(known).collect()
}

/// ", line N" of the line that sets top-level `key` (or its table), if found.
fn line_of(text: &str, key: &str) -> String {
    let sets = |l: &str| {
        let l = l.trim_start().trim_start_matches('[');
        l.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(['=', '.', ']']))
    };
    (text.lines().position(sets)).map_or(String::new(), |n| format!(", line {}", n + 1))
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

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const THREE: &str = "[[entrant]]\nname = \"a\"\ncommand = \"builtin:random\"\n\
        [[entrant]]\nname = \"b\"\ncommand = \"builtin:random\"\n\
        [[entrant]]\nname = \"c\"\ncommand = \"builtin:random\"\n";

    #[test]
    fn flags_override_the_file() {
        let (_dir, path) = file(&format!("seed = 5\nsets = 2\njobs = 4\n{THREE}"));
        let a = TournamentArgs {
            config: Some(path),
            sets: Some(3),
            ..TournamentArgs::default()
        };
        let cfg = a.validate().unwrap();
        assert_eq!((cfg.seed, cfg.sets, cfg.jobs), (5, 3, 4));
        assert_eq!(cfg.entrants.len(), 3);
    }

    #[test]
    fn a_flag_overrides_a_file_boolean_both_ways() {
        let parse = |file_value: bool, flags: &[&str]| {
            let (_dir, path) = file(&format!(
                "seed = 5\nno_restart = {file_value}\nstick_the_dealer = {file_value}\n{THREE}"
            ));
            let mut argv = vec!["tournament".to_owned(), path.display().to_string()];
            argv.extend(flags.iter().map(|f| f.to_string()));
            let cfg = <TournamentArgs as clap::FromArgMatches>::from_arg_matches(
                &<TournamentArgs as clap::Args>::augment_args(clap::Command::new("t"))
                    .try_get_matches_from(argv)
                    .unwrap(),
            )
            .unwrap()
            .validate()
            .unwrap();
            (cfg.table.policy.restart, cfg.table.rules.stick_the_dealer)
        };
        assert_eq!(parse(true, &[]), (false, true), "the file's values");
        assert_eq!(
            parse(true, &["--restart", "--no-stick-the-dealer"]),
            (true, false)
        );
        assert_eq!(
            parse(false, &["--no-restart", "--stick-the-dealer"]),
            (false, true)
        );
        // The last of a pair wins.
        assert_eq!(parse(false, &["--no-restart", "--restart"]), (true, false));
    }

    #[test]
    fn duplicate_entrant_names_are_refused() {
        let err = args(&[
            "a=builtin:random",
            "b=builtin:random",
            "a=builtin:heuristic",
        ])
        .validate()
        .unwrap_err()
        .to_string();
        assert!(err.contains("two entrants are named \"a\""), "{err}");
        let (_dir, path) = file(THREE);
        let mut a = args(&["b=builtin:heuristic"]);
        a.config = Some(path);
        let err = a.validate().unwrap_err().to_string();
        assert!(err.contains("two entrants are named \"b\""), "{err}");
        let (_dir, path) = file(&format!(
            "{THREE}[[entrant]]\nname = \"c\"\ncommand = \"builtin:random\"\n"
        ));
        let mut a = args(&[]);
        a.config = Some(path);
        let err = a.validate().unwrap_err().to_string();
        assert!(err.contains("two entrants are named \"c\""), "{err}");
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
        assert!(
            err.contains("sometimes") && err.contains("batched"),
            "{err}"
        );
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
