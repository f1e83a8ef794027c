//! The journal: `DIR/journal.jsonl`, one [`GameOutcome`] per finished game,
//! appended and fsynced before the game counts. A run killed mid-write leaves at
//! most a torn last line, which [`Journal::open`] detects, reports and cuts off;
//! `--resume` then plays exactly the games the journal does not hold.
//!
//! Lines are appended in the order games finish, which depends on `--jobs`; when
//! the tournament is complete, [`rewrite_sorted`] puts them in schedule order, so
//! a finished directory is the same whatever the parallelism or sharding.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::outcome::GameOutcome;
use super::schedule::GameKey;

use crate::layout::tournament::{JOURNAL, MANIFEST};

pub struct Journal {
    path: PathBuf,
    /// `None` once closed ([`Journal::close`]).
    file: Option<File>,
}

/// What an existing journal held.
pub struct Loaded {
    pub outcomes: BTreeMap<GameKey, GameOutcome>,
    /// Bytes of a torn last line that were cut off.
    pub torn: usize,
}

impl Journal {
    /// Opens `dir/journal.jsonl` for appending (creating it), after reading what
    /// it holds and cutting off a torn last line.
    pub fn open(dir: &Path) -> anyhow::Result<(Journal, Loaded)> {
        let path = dir.join(JOURNAL);
        let loaded = match std::fs::read(&path) {
            Ok(bytes) => {
                let (loaded, good) = parse(&bytes, &path)?;
                if good < bytes.len() {
                    let f = OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .with_context(|| format!("failed to open {}", path.display()))?;
                    f.set_len(good as u64)
                        .and_then(|()| f.sync_all())
                        .with_context(|| {
                            format!("failed to cut the torn last line off {}", path.display())
                        })?;
                }
                loaded
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loaded {
                outcomes: BTreeMap::new(),
                torn: 0,
            },
            Err(e) => bail!("failed to read {}: {e}", path.display()),
        };
        let created = !path.exists();
        // Never through a symlink planted in place of the journal.
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        let file = crate::os::files::no_follow(&mut options)
            .open(&path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        if created {
            // The new file's name is on disk before any line in it counts.
            crate::safe_create::sync_dir(&path)?;
        }
        let file = Some(file);
        Ok((Journal { path, file }, loaded))
    }

    /// Appends one finished game and waits until it is on disk.
    pub fn record(&mut self, outcome: &GameOutcome) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(outcome).expect("outcomes serialize");
        line.push(b'\n');
        let Some(file) = self.file.as_mut() else {
            bail!("failed to append to {}: it was closed", self.path.display());
        };
        file.write_all(&line)
            .and_then(|()| file.sync_data())
            .with_context(|| format!("failed to append to {}", self.path.display()))?;
        #[cfg(test)]
        if let Some(dir) = self.path.parent() {
            use crate::safe_create::faults;
            faults::note(faults::Step::Journaled, &dir.join(&outcome.transcript));
        }
        Ok(())
    }

    /// Closes the file, before the complete journal is rewritten in its
    /// place ([`rewrite_sorted`]): Windows refuses to rename a file over
    /// one that is open.
    pub fn close(&mut self) {
        self.file = None;
    }
}

/// Reads a journal without changing it.
pub fn read(dir: &Path) -> anyhow::Result<Loaded> {
    let path = dir.join(JOURNAL);
    let bytes =
        std::fs::read(&path).with_context(|| format!("failed to read {}", path.display()))?;
    Ok(parse(&bytes, &path)?.0)
}

/// The outcomes in `bytes` and the length of the part that holds whole lines.
fn parse(bytes: &[u8], path: &Path) -> anyhow::Result<(Loaded, usize)> {
    let mut outcomes = BTreeMap::new();
    let mut at = 0;
    let mut n = 0;
    while at < bytes.len() {
        n += 1;
        let end = bytes[at..].iter().position(|&b| b == b'\n').map(|i| at + i);
        let line = &bytes[at..end.unwrap_or(bytes.len())];
        let parsed = serde_json::from_slice::<GameOutcome>(line);
        match (parsed, end) {
            (Ok(o), Some(end)) => {
                if let Some(old) = outcomes.insert(o.key(), o) {
                    bail!(
                        "failed to read {}: line {n} records round {} matchup {} game {} a second time",
                        path.display(),
                        old.round,
                        old.matchup,
                        old.game
                    );
                }
                at = end + 1;
            }
            // The last line, torn by a crash mid-write (no newline, or not JSON).
            (_, None) | (Err(_), Some(_)) if is_last(bytes, end) => {
                return Ok((
                    Loaded {
                        outcomes,
                        torn: bytes.len() - at,
                    },
                    at,
                ));
            }
            (Err(e), _) => bail!(
                "failed to read {}: line {n} is damaged: {e}",
                path.display()
            ),
            (Ok(_), None) => unreachable!("a line without newline is the last"),
        }
    }
    Ok((Loaded { outcomes, torn: 0 }, at))
}

fn is_last(bytes: &[u8], end: Option<usize>) -> bool {
    end.is_none_or(|e| e + 1 == bytes.len())
}

/// After a run into the new folder `dir` failed before any game was journaled:
/// removes what it made — the manifest, its seed secret, the empty journal,
/// empty logs and the empty folders — so the folder does not hold a tournament a corrected rerun
/// would have to match. Anything else (a game's transcript, a log with content,
/// a stranger's file) stays, and with it the folders that hold it.
pub fn discard_unplayed(dir: &Path) {
    let journal = dir.join(JOURNAL);
    if std::fs::metadata(&journal).is_ok_and(|m| m.len() > 0) {
        return;
    }
    let _ = std::fs::remove_file(journal);
    let _ = std::fs::remove_file(dir.join(MANIFEST));
    let _ = std::fs::remove_file(dir.join(crate::layout::tournament::SEED_SECRET));
    remove_empty(dir);
}

/// Removes empty files and then empty folders under `dir`, and `dir` if empty.
fn remove_empty(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => remove_empty(&path),
            Ok(t) if t.is_file() && e.metadata().is_ok_and(|m| m.len() == 0) => {
                let _ = std::fs::remove_file(path);
            }
            _ => {}
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Replaces the journal with its lines in schedule order (atomically).
pub fn rewrite_sorted(dir: &Path, outcomes: &BTreeMap<GameKey, GameOutcome>) -> anyhow::Result<()> {
    let mut text = Vec::new();
    for o in outcomes.values() {
        serde_json::to_writer(&mut text, o).expect("outcomes serialize");
        text.push(b'\n');
    }
    Ok(crate::safe_create::write_atomic(&dir.join(JOURNAL), &text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(matchup: u32, game: u32) -> GameOutcome {
        GameOutcome {
            round: 0,
            matchup,
            game,
            seed: 1,
            teams: [0, 1, 2],
            transcript: format!("games/m{matchup:04}-g{game:03}.jsonl"),
            scores: [21, 5, -3],
            deals: 7,
            ranking: [0, 1, 2],
            winner: Some(0),
            forfeited: vec![],
            made: [2, 1, 0],
            set: [0, 1, 1],
            won: [14, 6, 3],
            hands: 7,
            faults: Default::default(),
        }
    }

    #[test]
    fn a_torn_last_line_is_cut_off_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut j, loaded) = Journal::open(dir.path()).unwrap();
            assert!(loaded.outcomes.is_empty());
            j.record(&outcome(0, 1)).unwrap();
            j.record(&outcome(0, 2)).unwrap();
        }
        let path = dir.path().join(JOURNAL);
        let whole = std::fs::read(&path).unwrap();
        let mut torn = whole.clone();
        let third = serde_json::to_vec(&outcome(1, 1)).unwrap();
        torn.extend_from_slice(&third[..third.len() / 2]);
        std::fs::write(&path, &torn).unwrap();

        let (mut j, loaded) = Journal::open(dir.path()).unwrap();
        assert_eq!(loaded.torn, third.len() / 2);
        let keys: Vec<GameKey> = loaded.outcomes.keys().copied().collect();
        assert_eq!(
            keys,
            [
                GameKey {
                    round: 0,
                    matchup: 0,
                    game: 1
                },
                GameKey {
                    round: 0,
                    matchup: 0,
                    game: 2
                }
            ]
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            whole,
            "the torn bytes are gone"
        );
        j.record(&outcome(1, 1)).unwrap();
        assert_eq!(read(dir.path()).unwrap().outcomes.len(), 3);
    }

    #[test]
    fn a_damaged_line_before_the_last_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = serde_json::to_vec(&outcome(0, 1)).unwrap();
        text.extend_from_slice(b"\n{\"matchup\": oops}\n");
        text.extend_from_slice(&serde_json::to_vec(&outcome(0, 2)).unwrap());
        text.push(b'\n');
        std::fs::write(dir.path().join(JOURNAL), &text).unwrap();
        let err = Journal::open(dir.path()).err().unwrap().to_string();
        assert!(err.contains("line 2 is damaged"), "{err}");
    }

    #[test]
    fn a_game_recorded_twice_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = Vec::new();
        for _ in 0..2 {
            text.extend_from_slice(&serde_json::to_vec(&outcome(3, 4)).unwrap());
            text.push(b'\n');
        }
        std::fs::write(dir.path().join(JOURNAL), &text).unwrap();
        let err = read(dir.path()).err().unwrap().to_string();
        assert!(
            err.contains("round 0 matchup 3 game 4 a second time"),
            "{err}"
        );
    }

    #[test]
    fn rewriting_sorts_by_schedule_order() {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, _) = Journal::open(dir.path()).unwrap();
        for (m, g) in [(1, 2), (0, 3), (1, 1), (0, 1)] {
            j.record(&outcome(m, g)).unwrap();
        }
        drop(j);
        let loaded = read(dir.path()).unwrap();
        rewrite_sorted(dir.path(), &loaded.outcomes).unwrap();
        let text = std::fs::read_to_string(dir.path().join(JOURNAL)).unwrap();
        let order: Vec<(u32, u32)> = text
            .lines()
            .map(|l| {
                let o: GameOutcome = serde_json::from_str(l).unwrap();
                (o.matchup, o.game)
            })
            .collect();
        assert_eq!(order, [(0, 1), (0, 3), (1, 1), (1, 2)]);
    }

    /// Closed before the rewrite (which Windows refuses over an open file),
    /// a journal records nothing more, and says so.
    #[test]
    fn a_closed_journal_refuses_a_record_and_lets_the_rewrite_replace_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, _) = Journal::open(dir.path()).unwrap();
        j.record(&outcome(0, 2)).unwrap();
        j.record(&outcome(0, 1)).unwrap();
        j.close();
        let e = j.record(&outcome(0, 3)).unwrap_err().to_string();
        assert!(e.contains("it was closed"), "{e}");
        let loaded = read(dir.path()).unwrap();
        assert_eq!(loaded.outcomes.len(), 2);
        rewrite_sorted(dir.path(), &loaded.outcomes).unwrap();
        assert_eq!(read(dir.path()).unwrap().outcomes, loaded.outcomes);
    }

    /// A small tournament of in-process bots (six games, one table).
    fn small_tournament(out: &Path) -> crate::tournament::TournamentConfig {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from([
            "referee",
            "tournament",
            "--entrant",
            "a=inproc:random",
            "--entrant",
            "b=inproc:heuristic",
            "--entrant",
            "c=inproc:random",
            "--seed",
            "77",
            "--jobs",
            "1",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap();
        match cli.command() {
            crate::cli::Command::Tournament(args) => args.validate().unwrap(),
            _ => unreachable!("a tournament command line"),
        }
    }

    fn run(cfg: &crate::tournament::TournamentConfig) -> anyhow::Result<crate::tournament::Ended> {
        let cancel = tokio_util::sync::CancellationToken::new();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(crate::tournament::run(
                cfg,
                &cancel,
                std::sync::Arc::new(crate::tournament::events::Silent),
            ))
    }

    #[test]
    fn a_game_is_journaled_only_after_its_transcript_is_durable_and_a_lost_one_never() {
        use crate::safe_create::faults::{fill_disk_at, steps_under, Step};
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("t");
        let cfg = small_tournament(&out);
        // Game 3's transcript meets a full disk after its first kilobyte.
        let lost = out.join("games/r00-m0000-g003.jsonl");
        fill_disk_at(&lost, 1024);
        let err = match run(&cfg) {
            Err(e) => format!("{e:#}"),
            Ok(_) => panic!("a tournament with a lost game cannot be complete"),
        };
        assert!(err.contains("game 3 was not played"), "{err}");
        let steps = steps_under(&out);
        let journaled: Vec<&PathBuf> = steps
            .iter()
            .filter(|(s, _)| *s == Step::Journaled)
            .map(|(_, p)| p)
            .collect();
        assert_eq!(journaled.len(), 5, "every game but the lost one: {steps:?}");
        assert!(!journaled.contains(&&lost));
        for game in journaled {
            let at = |step| steps.iter().position(|(s, p)| *s == step && p == game);
            let (durable, counted) = (at(Step::Durable), at(Step::Journaled));
            assert!(
                durable.is_some() && durable < counted,
                "{} journaled before its transcript was durable: {steps:?}",
                game.display()
            );
        }
        // What the journal holds is exactly the five durable games, and no
        // temporary file is left of the lost one.
        let loaded = read(&out).unwrap();
        assert_eq!(loaded.outcomes.len(), 5);
        assert!(!crate::layout::partial(&lost).exists());
        assert!(!lost.exists());

        // --resume plays the lost game (the disk has room again) and completes.
        let resumed = crate::tournament::TournamentConfig {
            resume: true,
            ..cfg
        };
        assert!(matches!(
            run(&resumed).unwrap(),
            crate::tournament::Ended::Complete(_)
        ));
        assert_eq!(read(&out).unwrap().outcomes.len(), 6);
    }
}
