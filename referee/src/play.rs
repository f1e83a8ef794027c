//! `referee play`: one [`Session`] playing the games of a match, each game's
//! outcome told to the reporter as it finishes. Stopped early when `cancel`
//! fires: the game in flight is then abandoned (its transcript stays
//! `*.partial`), every finished one is kept.

use std::sync::Arc;

use schmier_protocol::shuffle::derive_seed;
use schmier_protocol::Team;
use tokio_util::sync::CancellationToken;

use crate::config::PlayConfig;
use crate::events::{Event, Reporter};
use crate::outdir::Prepared;
use crate::session::{Played, Session};
use crate::summary::{GameSummary, MatchSummary};
use crate::table::{GamePlan, GameRecord};

/// How a match ended; either way, the games finished before.
#[derive(Debug)]
pub enum Ended {
    /// Every game was played (or lost, see [`MatchSummary::lost`]).
    Complete(MatchSummary),
    /// Stopped by Ctrl-C / SIGTERM.
    Interrupted(MatchSummary),
}

impl Ended {
    pub fn summary(&self) -> &MatchSummary {
        match self {
            Ended::Complete(s) | Ended::Interrupted(s) => s,
        }
    }
}

/// Plays `cfg.games` games at one table. `Err` is the referee failing (or the
/// bots failing to start without `--keep-going`), never a bot's fault.
pub async fn run(
    cfg: &PlayConfig,
    cancel: &CancellationToken,
    reporter: Arc<dyn Reporter>,
) -> anyhow::Result<Ended> {
    reporter.report(&Event::MatchStarting);
    let out = crate::outdir::prepare(&cfg.output, cfg.overwrite)?;
    if let Some(hub) = &cfg.table.isolation.remote {
        // Every remote seat's connector first, up to `--remote-wait`.
        let Some(missing) = crate::remote::wait::connectors(hub, cancel).await else {
            out.tidy_unplayed();
            return Ok(interrupted_before_any_game(cfg, &*reporter));
        };
        if !missing.is_empty() && !cfg.keep_going {
            out.tidy_unplayed();
            let why: Vec<String> = (missing.iter())
                .map(|name| crate::remote::wait::not_connected(hub, name))
                .collect();
            anyhow::bail!(
                "failed to start: {}; nothing was played. Pass --keep-going to play with the \
                 referee's fallback in its seats",
                why.join("; ")
            );
        }
    }
    let seats = std::array::from_fn(|s| cfg.slot_at(s, 0));
    let stderr_dir = cfg.output.stderr_dir();
    let started = Session::start(
        cfg.table.clone(),
        stderr_dir,
        seats,
        cancel,
        reporter.clone(),
    );
    let Some(mut session) = started.await.inspect_err(|_| out.tidy_unplayed())? else {
        out.tidy_unplayed();
        return Ok(interrupted_before_any_game(cfg, &*reporter));
    };
    let failed = session.failed_to_start();
    if !failed.is_empty() && !cfg.keep_going {
        session.shutdown(cancel).await;
        out.tidy_unplayed();
        return Err(refuse_unstarted(cfg, &failed));
    }
    let mut summary = MatchSummary::new(cfg.seed, crate::names::team_names(&session.names()));
    let played = play_games(cfg, &mut session, &mut summary, cancel, &*reporter).await;
    session.shutdown(cancel).await;
    end(&out, summary, played, &*reporter)
}

/// Interrupted before any bot said its name: no game, so no team is named
/// either.
fn interrupted_before_any_game(cfg: &PlayConfig, reporter: &dyn Reporter) -> Ended {
    let summary = MatchSummary::new(cfg.seed, Default::default());
    reporter.report(&Event::MatchInterrupted(&summary));
    Ended::Interrupted(summary)
}

/// The error that stops a match whose bots did not all start (without
/// `--keep-going`). Written once the bots are gone and their stderr is
/// drained, so it names only the logs that hold something (and so were kept).
fn refuse_unstarted(cfg: &PlayConfig, failed: &[usize]) -> anyhow::Error {
    let logs: Vec<String> = failed
        .iter()
        .map(|&i| crate::layout::stderr_log(&cfg.output.stderr_dir(), i, 0))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
        .map(|p| p.display().to_string())
        .collect();
    anyhow::anyhow!(
        "failed to start {} of the six bots (see above{}); fix the command, or pass \
         --keep-going to play with the referee's fallback in their seats",
        failed.len(),
        match logs.is_empty() {
            true => String::new(),
            false => format!("; what they wrote to stderr is in {}", logs.join(", ")),
        }
    )
}

/// Plays the match's games in order. `Ok(true)`: interrupted.
async fn play_games(
    cfg: &PlayConfig,
    session: &mut Session,
    summary: &mut MatchSummary,
    cancel: &CancellationToken,
    reporter: &dyn Reporter,
) -> anyhow::Result<bool> {
    for g in 0..cfg.games {
        let played = session.play(&game_plan(cfg, g), cancel).await;
        match played.map_err(|e| e.context(format!("failed to play game {}", g + 1)))? {
            Played::Finished(record) => {
                summary.add(game_summary(cfg, g, *record));
                reporter.report(&Event::GameFinished {
                    game: summary.games.last().expect("just added"),
                    of: cfg.games,
                    teams: &summary.teams,
                });
            }
            // Only this game is lost: the table played it out, so the bots are
            // ready for the next one, and every finished transcript stays.
            Played::Lost(error) => {
                reporter.report(&Event::GameLost {
                    game: g + 1,
                    of: cfg.games,
                    error: &error,
                });
                summary.lost.push(g + 1);
            }
            Played::Interrupted => return Ok(true),
        }
    }
    Ok(false)
}

/// Game `g` (from 0) of the match.
fn game_plan(cfg: &PlayConfig, g: u32) -> GamePlan {
    GamePlan {
        match_seed: cfg.seed,
        game: g + 1,
        // Every game of a match has a seed of its own: a bot that remembers
        // the cards of earlier games learns nothing about this one's.
        announced: g + 1,
        record_announced: true,
        seed: derive_seed(cfg.seed, u64::from(g)),
        seat_slot: std::array::from_fn(|s| cfg.slot_at(s, g)),
        transcript: cfg.output.transcript(g + 1),
    }
}

/// Game `g`'s record in the terms of the match: by lineup team, not seat team
/// (seats rotate).
fn game_summary(cfg: &PlayConfig, g: u32, record: GameRecord) -> GameSummary {
    let GameRecord {
        seed,
        transcript,
        result,
        hands,
        stats,
        ..
    } = record;
    // Seat team t holds lineup team slot_at(t, g) % 3 this game.
    let lineup = |t: Team| cfg.slot_at(t.index(), g) % 3;
    let mut scores = [0; 3];
    for t in Team::all() {
        scores[lineup(t)] = result.scores[t.index()];
    }
    GameSummary {
        game: g + 1,
        seed,
        transcript: transcript.display().to_string(),
        winner: result.winner.map(lineup),
        scores,
        forfeited: result.forfeited.iter().map(|&t| lineup(t)).collect(),
        deals: result.deals,
        reason: result.reason,
        faults: result.faults.iter().sum(),
        hands,
        stats,
    }
}

/// After the bots are gone: an output folder with no game is tidied, and the
/// end is reported.
fn end(
    out: &Prepared,
    summary: MatchSummary,
    played: anyhow::Result<bool>,
    reporter: &dyn Reporter,
) -> anyhow::Result<Ended> {
    if summary.games.is_empty() {
        out.tidy_unplayed();
    }
    Ok(match played? {
        true => {
            reporter.report(&Event::MatchInterrupted(&summary));
            Ended::Interrupted(summary)
        }
        false => {
            reporter.report(&Event::MatchFinished(&summary));
            Ended::Complete(summary)
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::{run, Ended};
    use crate::events::{Event, Reporter};

    /// What a reporter saw, in order, checked when each event arrived.
    #[derive(Default)]
    struct Recorder {
        seen: Mutex<Vec<String>>,
        wins: Mutex<[u32; 4]>,
    }

    impl Reporter for Recorder {
        fn report(&self, event: &Event<'_>) {
            let line = match event {
                Event::MatchStarting => "starting".to_owned(),
                Event::GameFinished { game, of, .. } => {
                    // A reporter (a page) may read the transcript at once.
                    let on_disk = std::path::Path::new(&game.transcript).is_file();
                    self.wins.lock().unwrap()[game.winner.unwrap_or(3)] += 1;
                    format!("game {}/{of} on disk {on_disk}", game.game)
                }
                Event::MatchFinished(s) => format!("finished {}", s.games.len()),
                other => format!("unexpected {other:?}"),
            };
            self.seen.lock().unwrap().push(line);
        }
    }

    #[test]
    fn a_match_tells_each_game_once_in_order_after_its_transcript_is_written() {
        use clap::Parser;
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("m");
        let cli = crate::cli::Cli::try_parse_from([
            "referee",
            "play",
            "--team",
            "inproc:random",
            "--team",
            "inproc:heuristic",
            "--team",
            "inproc:random",
            "--games",
            "3",
            "--seed",
            "5",
            "--quiet",
            "--transcript",
            out.to_str().unwrap(),
        ])
        .unwrap();
        let crate::cli::Command::Play(args) = cli.command() else {
            unreachable!("a play command line")
        };
        let cfg = args.validate().unwrap();
        let recorder = Arc::new(Recorder::default());
        let ended = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(run(
                &cfg,
                &tokio_util::sync::CancellationToken::new(),
                recorder.clone(),
            ))
            .unwrap();
        let seen = recorder.seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                "starting",
                "game 1/3 on disk true",
                "game 2/3 on disk true",
                "game 3/3 on disk true",
                "finished 3"
            ]
        );
        let Ended::Complete(summary) = ended else {
            panic!("an uncancelled match completes")
        };
        // The tally the match returns is the one its events add up to.
        let wins = *recorder.wins.lock().unwrap();
        assert_eq!(summary.wins, [wins[0], wins[1], wins[2]]);
        assert_eq!(summary.no_winner, wins[3]);
    }
}
