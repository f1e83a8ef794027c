//! `referee verify`: replays a transcript through the rules engine and reports the
//! first line that does not match (an illegal card, a wrong trick winner, a wrong
//! score, a tampered hand, a missing or extra line).

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;

use schmier_protocol::rules::{Event, Game};

use schmier_protocol::Team;

use crate::transcript::{
    credited_winner, ranking, FaultPolicy, Header, Line, ResultRecord, FORMAT,
};

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
                policy = Some(h.fault_policy);
                let (g, events) = Game::new(h.seed, h.rules);
                game = Some(g);
                expected.extend(events);
                header = Some(h);
            }
            (_, None) => return Err(fail("the first line must be the header".into())),
            (Line::Header(_), Some(_)) => return Err(fail("a second header".into())),
            (Line::Fault(f), Some(_)) => faults[f.seat.index()] += 1,
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
                let want = ranking(g.winner(), r.scores, &forfeited);
                if r.ranking != want {
                    return Err(fail(format!(
                        "result ranks teams {:?}; the ranking rule gives {want:?}",
                        r.ranking
                    )));
                }
                let credited = credited_winner(g.winner(), &forfeited, want);
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
