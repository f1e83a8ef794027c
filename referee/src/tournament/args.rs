//! `referee tournament`'s flags (stage one, [`TournamentArgs`]) and their
//! validation into a [`TournamentConfig`] (stage two): the flags laid over the
//! tournament file (`config_file.rs`) and, on `--resume`, over the folder's own
//! record (`folder.rs`), field by field. The settings a table needs are the
//! groups of `crate::settings`, shared with `play`. Errors name the flag or file
//! field and the bad value.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use super::auto_shard::auto_shard;
use super::config::{Entrant, TournamentConfig};
use super::config_file::{read_file, FileConfig};
use super::entrants::{gather, EntrantFlags};
use super::format::{Format, FormatName, Params, ROUNDS};
use super::schedule::Shard;
use crate::config::{BotSpec, Isolation, TableSpec};
use crate::settings::{choice_name, fresh_seed, sandbox_for, with_default, Merge, TableArgs};

const FORMAT: FormatName = FormatName::RoundRobin;
const SETS: u32 = 1;
/// The most sets a matchup may have: 600,000 games, days of play at the
/// fastest; a larger count is a typo, and its schedule would not fit in memory.
const MAX_SETS: u32 = 100_000;

#[derive(Args, Debug, Default)]
pub struct TournamentArgs {
    /// Tournament file (TOML); see examples/sample-bracket.toml. Its keys are the
    /// long flags with `_` for `-`; a flag given here wins over the file's value.
    #[arg(value_name = "CONFIG")]
    pub config: Option<PathBuf>,

    /// An entrant, `NAME=CMD` (repeat). An entrant plays as a team: two processes
    /// of CMD in opposite seats. Names must differ from each other and from the
    /// file's entrants. It runs in the folder its command names, as written: a
    /// path argument through a link out of that folder (`ALICE/weights ->
    /// ../bob`) is refused, naming the link.
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

    #[arg(long, value_name = "N", help = with_default("Duplicate sets per matchup; a set is six games on one deal seed, the three entrants rotated through every arrangement of the team positions; from 1 to 100000.", SETS))]
    pub sets: Option<u32>,

    /// Tournament seed; every game's seed derives from it, a secret drawn
    /// at the start (see --seed-secret) and the schedule, so no bot can find
    /// the deals from its hand whatever N is. Random if absent.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub secret: super::secret_args::SecretArgs,

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

impl TournamentArgs {
    pub fn validate(&self) -> anyhow::Result<TournamentConfig> {
        let mut file = match &self.config {
            Some(path) => read_file(path, long_flags)?,
            None => FileConfig::default(),
        };
        let folder = self.folder(&file)?;
        let table = self
            .table
            .clone()
            .merge(self.lower(&mut file, folder.as_ref()));
        let entrants = self.entrants(&file, folder.as_ref())?;
        let format = self.format(&file, folder.as_ref(), &entrants)?;
        self.check_round(&format)?;
        let sets = self.sets.or(file.sets).unwrap_or(SETS);
        if !(1..=MAX_SETS).contains(&sets) {
            bail!("--sets must be from 1 to {MAX_SETS}, got {sets}");
        }
        let quiet = table.output.quiet;
        let seed = self.seed(file.seed)?;
        let jobs = self.jobs(file.jobs)?;
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
        let from = self.from.as_deref();
        let secret = (self.secret).choose(&out, self.resume, from, shard.is_some())?;
        let spec = table_spec(&table, &entrants, &out, self.secret.file())?;
        let remote = (self.remote).validate(
            crate::cli::remote_names(entrants.iter().map(|e| &e.bot)),
            crate::remote::args::seats_at_once(jobs),
        )?;
        Ok(TournamentConfig {
            entrants,
            format,
            sets,
            seed,
            secret,
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

    /// The entrants: the file's and the flags', or the folder's when resumed
    /// from it.
    fn entrants(
        &self,
        file: &FileConfig,
        folder: Option<&super::manifest::Manifest>,
    ) -> anyhow::Result<Vec<Entrant>> {
        let recorded = match folder {
            Some(m) => super::folder::entrants(m)?,
            None => Vec::new(),
        };
        let flags = EntrantFlags {
            entrants: &self.entrants,
            dirs: &self.entrant_dirs,
            envs: &self.entrant_envs,
        };
        let fill = self.fill.clone().or(file.fill.clone());
        gather(&file.entrants, &flags, recorded, fill)
    }

    /// `--jobs` (flag, then file), by default the number of cores.
    fn jobs(&self, in_file: Option<usize>) -> anyhow::Result<usize> {
        let jobs = (self.jobs.or(in_file))
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if jobs == 0 {
            bail!("--jobs must be at least 1");
        }
        Ok(jobs)
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
        super::folder::settings(&out, false)
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
    /// needs no warning: the seed secret keeps it from being enough.
    fn seed(&self, in_file: Option<u64>) -> anyhow::Result<u64> {
        match self.seed.or(in_file) {
            Some(seed) => Ok(seed),
            None => fresh_seed(),
        }
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
}

/// `referee tournament`'s long flags: the tournament file's keys are these
/// with `_` for `-`.
fn long_flags() -> Vec<String> {
    let flags = <TournamentArgs as Args>::augment_args(clap::Command::new("tournament"));
    flags
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(str::to_owned)
        .collect()
}

/// What every table shares, from the merged settings; the lineup is a
/// placeholder, filled in per matchup. Sandboxing is checked for every entrant
/// before anything is started or written.
pub(crate) fn table_spec(
    table: &TableArgs,
    entrants: &[Entrant],
    out: &Path,
    secret_file: Option<&Path>,
) -> anyhow::Result<TableSpec> {
    super::out_folder::refuse_nested(out)?;
    let time = table.time.resolve(table.limits.max_line()?)?;
    let limits = table.resource_limits(time.clock)?;
    let env = table.isolation.env()?;
    let scratch = table.isolation.scratch_folder(&[out])?;
    let sandbox = if table.isolation.sandbox() {
        let bots = (entrants.iter()).map(|e| (format!("entrant {:?}", e.name), &e.bot));
        let mut hidden = vec![out];
        hidden.extend(scratch.as_deref());
        hidden.extend(secret_file);
        Some(std::sync::Arc::new(sandbox_for(
            bots,
            &hidden,
            &env,
            table.isolation.scratch_bytes()?,
        )?))
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
    fn sets_out_of_range_are_refused_from_the_flag_and_the_file() {
        let (_dir, path) = file(&format!("seed = 5\nsets = 100001\n{THREE}"));
        for (flag, got) in [(Some(0), 0), (Some(u32::MAX), u32::MAX), (None, 100_001)] {
            let a = TournamentArgs {
                config: Some(path.clone()),
                sets: flag,
                ..TournamentArgs::default()
            };
            let e = a.validate().map(|_| ()).unwrap_err().to_string();
            assert_eq!(e, format!("--sets must be from 1 to 100000, got {got}"));
        }
        let a = TournamentArgs {
            config: Some(path),
            sets: Some(MAX_SETS),
            ..TournamentArgs::default()
        };
        assert_eq!(a.validate().unwrap().sets, MAX_SETS);
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
}
