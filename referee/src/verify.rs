//! `referee verify`: replays a transcript through the rules engine and reports the
//! first line that does not match (an illegal card, a wrong trick winner, a wrong
//! score, a tampered hand, a missing or extra line).
//!
//! Beyond the rules it checks the referee's own bookkeeping from first principles:
//! the game's seed is the one derived from the match seed and game number; each
//! fault's `replaced` flag follows the header's policy; every decision the
//! fallback made (after a fault, or for a replaced seat) is exactly the documented
//! fallback's; fault counts, forfeits and the ranking follow from the fault lines.

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;

use schmier_protocol::rules::{first_legal, Event, Game};
use schmier_protocol::shuffle::derive_seed;
use schmier_protocol::{FaultKind, Team};

use crate::transcript::{credited_winner, FaultPolicy, Header, Line, ResultRecord, FORMAT};

/// A transcript that does not check out: where and why.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct Inconsistency {
    pub line: usize,
    pub message: String,
}

/// What a valid transcript contained.
#[derive(Debug)]
pub struct Verified {
    pub lines: usize,
    pub header: Header,
    pub result: ResultRecord,
}

pub fn verify_file(path: &Path) -> Result<Verified, Inconsistency> {
    let file = std::fs::File::open(path).map_err(|e| Inconsistency {
        line: 0,
        message: format!("failed to open {}: {e}", path.display()),
    })?;
    verify(std::io::BufReader::new(file))
}

pub fn verify(input: impl BufRead) -> Result<Verified, Inconsistency> {
    let mut game: Option<Game> = None;
    let mut header: Option<Header> = None;
    let mut policy: Option<FaultPolicy> = None;
    let mut expected: VecDeque<Event> = VecDeque::new();
    let mut faults = [0u32; 6];
    // Seats the fallback plays for, for the rest of the game.
    let mut replaced = [false; 6];
    // Seats whose next decision the fallback makes (a fault ended the request).
    let mut fallback_next = [false; 6];
    let mut result: Option<(usize, ResultRecord)> = None;
    let mut n = 0;
    for (i, raw) in input.lines().enumerate() {
        n = i + 1;
        let fail = |message: String| Inconsistency { line: n, message };
        let raw = raw.map_err(|e| fail(format!("failed to read: {e}")))?;
        if let Some((at, _)) = &result {
            return Err(fail(format!("a line after the result line (line {at})")));
        }
        let line: Line =
            serde_json::from_str(&raw).map_err(|e| fail(format!("not a transcript line: {e}")))?;
        match (line, game.as_mut()) {
            (Line::Header(h), None) => {
                if h.format != FORMAT {
                    return Err(fail(format!("format {:?} is not {FORMAT:?}", h.format)));
                }
                if h.seats.len() != 6 {
                    return Err(fail(format!("{} seats listed, not 6", h.seats.len())));
                }
                let want = derive_seed(h.match_seed, u64::from(h.game.saturating_sub(1)));
                if h.game == 0 || h.seed != want {
                    return Err(fail(format!(
                        "seed {} is not the one derived from match seed {} for game {} ({want})",
                        h.seed, h.match_seed, h.game
                    )));
                }
                policy = Some(h.fault_policy);
                let (g, events) = Game::new(h.seed, h.rules);
                game = Some(g);
                expected.extend(events);
                header = Some(h);
            }
            (_, None) => return Err(fail("the first line must be the header".into())),
            (Line::Header(_), Some(_)) => return Err(fail("a second header".into())),
            (Line::Fault(f), Some(_)) => {
                let i = f.seat.index();
                faults[i] += 1;
                let p = policy.expect("set with the game");
                // Replaced: already, or a pipe that is gone (crash, closed), or a
                // bot that never joined (a fault outside any request), or the
                // policy's fault limit reached.
                let want = replaced[i]
                    || f.fault.is_fatal()
                    || f.request.is_none()
                    || p.max_faults.is_some_and(|m| faults[i] >= m);
                if f.replaced != want {
                    return Err(fail(format!(
                        "fault says replaced: {}, but fault {} of {} under policy max_faults {:?} gives {want}",
                        f.replaced,
                        faults[i],
                        f.seat,
                        p.max_faults
                    )));
                }
                replaced[i] = want;
                // Every fault but `stale` ends its request: the fallback answers it.
                if f.request.is_some() && f.fault != FaultKind::Stale {
                    fallback_next[i] = true;
                }
            }
            (Line::Event(event), Some(g)) => {
                if let Some(want) = expected.pop_front() {
                    if event != want {
                        return Err(fail(format!(
                            "the transcript says {} but the rules give {}",
                            json(&event),
                            json(&want)
                        )));
                    }
                    continue;
                }
                let Some((seat, action)) = event.decision() else {
                    return Err(fail(format!(
                        "unexpected {}: a decision is due",
                        json(&event)
                    )));
                };
                match g.to_act() {
                    None => return Err(fail("an action after the game ended".into())),
                    Some(due) if due != seat => {
                        return Err(fail(format!("{seat} acts but it is {due}'s turn")));
                    }
                    Some(_) => {}
                }
                let i = seat.index();
                if replaced[i] || fallback_next[i] {
                    let want = first_legal(g);
                    if action != want {
                        return Err(fail(format!(
                            "{seat}'s decision was the fallback's, which is {want:?}, not {action:?}"
                        )));
                    }
                    fallback_next[i] = false;
                }
                let mut out = Vec::new();
                g.apply_into(action, &mut out)
                    .map_err(|e| fail(format!("illegal action by {seat}: {e}")))?;
                let mut out = VecDeque::from(out);
                let echo = out.pop_front().expect("an applied action yields its event");
                if echo != event {
                    return Err(fail(format!(
                        "the transcript says {} but the rules give {}",
                        json(&event),
                        json(&echo)
                    )));
                }
                expected = out;
            }
            (Line::Result(r), Some(g)) => {
                if let Some(missing) = expected.front() {
                    return Err(fail(format!("result before the rules' {}", json(missing))));
                }
                if !g.is_over() {
                    return Err(fail("result line but the game is not over".into()));
                }
                if r.scores != g.scores() || r.deals != g.deals() {
                    return Err(fail(format!(
                        "result says scores {:?} after {} deals; the rules give {:?} after {}",
                        r.scores,
                        r.deals,
                        g.scores(),
                        g.deals()
                    )));
                }
                if r.faults != faults {
                    return Err(fail(format!(
                        "result counts faults {:?} but the fault lines say {faults:?}",
                        r.faults
                    )));
                }
                let forfeit = policy.is_some_and(|p| p.forfeit);
                let forfeited: Vec<Team> = Team::all()
                    .filter(|t| forfeit && t.seats().iter().any(|s| faults[s.index()] > 0))
                    .collect();
                if r.forfeited != forfeited {
                    return Err(fail(format!(
                        "result says teams {:?} forfeited; the fault lines and policy give {forfeited:?}",
                        r.forfeited
                    )));
                }
                if let Some(why) = misranked(&r.ranking, g.winner(), r.scores, &forfeited) {
                    return Err(fail(format!("result ranks teams {:?}: {why}", r.ranking)));
                }
                let credited = credited_winner(g.winner(), &forfeited, r.ranking);
                if r.winner != credited {
                    return Err(fail(format!(
                        "result credits {:?} with the game; the rules and forfeits give {credited:?}",
                        r.winner
                    )));
                }
                result = Some((n, r));
            }
        }
    }
    match result {
        Some((_, result)) => Ok(Verified {
            lines: n,
            header: header.expect("a result follows a header"),
            result,
        }),
        None => Err(Inconsistency {
            line: n,
            message: "the transcript ends without a result line (an incomplete game?)".into(),
        }),
    }
}

/// Checks a ranking against the rule, stated pairwise (independently of
/// [`crate::transcript::ranking`], which builds it): every team once; a team that
/// did not forfeit before one that did; then the rules' winner first; then the
/// higher score; equal scores by the lower team number.
fn misranked(
    ranking: &[Team; 3],
    winner: Option<Team>,
    scores: [i32; 3],
    forfeited: &[Team],
) -> Option<String> {
    for t in Team::all() {
        if !ranking.contains(&t) {
            return Some(format!("{t} is missing"));
        }
    }
    for w in ranking.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (fa, fb) = (forfeited.contains(&a), forfeited.contains(&b));
        let why = if fa != fb {
            fa.then(|| format!("{a} forfeited but is ranked above {b}"))
        } else if winner == Some(b) {
            Some(format!("{b} won but is ranked below {a}"))
        } else if winner == Some(a) {
            None
        } else if scores[a.index()] != scores[b.index()] {
            (scores[a.index()] < scores[b.index()])
                .then(|| format!("{a} scored less than {b} but is ranked above it"))
        } else {
            (a.index() > b.index())
                .then(|| format!("{a} and {b} tie on score; the lower team number ranks first"))
        };
        if why.is_some() {
            return why;
        }
    }
    None
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The transcripts named by `paths`: a file stands for itself, a directory for
/// every `*.jsonl` file directly in it, in name order (its `timings/` and
/// `stderr/` folders are not transcripts and are not looked at).
pub fn transcripts(paths: &[std::path::PathBuf]) -> anyhow::Result<Vec<std::path::PathBuf>> {
    use anyhow::Context;
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut found: Vec<_> = std::fs::read_dir(p)
            .with_context(|| format!("failed to list {}", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.is_file() && f.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        if found.is_empty() {
            anyhow::bail!(
                "failed to find transcripts: {} holds no *.jsonl file",
                p.display()
            );
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::ranking;

    fn t(i: usize) -> Team {
        Team::new(i)
    }

    #[test]
    fn equal_scores_rank_by_team_number_and_the_builder_agrees() {
        // No winner (a capped game), teams 1 and 2 tie on 15, team 0 has 9.
        let scores = [9, 15, 15];
        assert_eq!(misranked(&[t(1), t(2), t(0)], None, scores, &[]), None);
        let why = misranked(&[t(2), t(1), t(0)], None, scores, &[]).unwrap();
        assert!(why.contains("tie on score"), "{why}");
        // The rules' winner ranks first even when another team has as many points
        // (a Game-tie decided by the tie-breaks).
        assert_eq!(
            misranked(&[t(2), t(1), t(0)], Some(t(2)), scores, &[]),
            None
        );
        assert!(misranked(&[t(1), t(2), t(0)], Some(t(2)), scores, &[]).is_some());
        // A forfeited winner goes below every team that did not forfeit.
        assert_eq!(
            misranked(&[t(0), t(1), t(2)], Some(t(2)), [21, 21, 22], &[t(2)]),
            None
        );
        assert!(misranked(&[t(2), t(0), t(1)], Some(t(2)), [21, 21, 22], &[t(2)]).is_some());
        // A team listed twice.
        assert!(misranked(&[t(0), t(0), t(1)], None, scores, &[]).is_some());
        // The ranking the referee writes satisfies the rule in every case.
        for winner in [None, Some(t(0)), Some(t(1)), Some(t(2))] {
            for scores in [[0, 0, 0], [21, 21, 5], [3, 21, 21], [10, 4, 10]] {
                for forfeited in [vec![], vec![t(0)], vec![t(1), t(2)]] {
                    let r = ranking(winner, scores, &forfeited);
                    assert_eq!(misranked(&r, winner, scores, &forfeited), None, "{r:?}");
                }
            }
        }
    }
}
