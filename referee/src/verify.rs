//! `referee verify`: replays a transcript through the rules engine and reports the
//! first line that does not match (an illegal card, a wrong trick winner, a wrong
//! score, a tampered hand, a missing or extra line).
//!
//! Beyond the rules it checks the referee's own bookkeeping from first principles:
//! the game's seed is the one derived from the match seed and game number; each
//! fault's `replaced` flag follows the header's policy; every decision the
//! fallback made (after a fault, or for a replaced seat) is exactly the documented
//! fallback's; fault counts, forfeits and the ranking follow from the fault lines.
//!
//! [`replay`] is the referee's one replay loop: `show` draws each step from it and
//! the tournament reads a game's figures through it, so all three agree on what a
//! transcript says. `audit.rs` is the `referee verify` command around it.

use std::collections::VecDeque;
use std::path::Path;

use schmier_protocol::rules::{first_legal, Event, Game};
use schmier_protocol::shuffle::derive_seed;
use schmier_protocol::{FaultKind, Team};

use crate::load::Transcript;
use crate::transcript::{
    credited_winner, FaultPolicy, FaultRecord, Header, Line, ResultRecord, FORMAT, FORMATS_READ,
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

/// What a replay got through: the header, and the result line if the
/// transcript has one (a `.partial` game in progress has none).
#[derive(Debug)]
pub struct Replayed {
    pub lines: usize,
    pub header: Header,
    pub result: Option<ResultRecord>,
}

/// Why `verify` gives up on a file.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Not a transcript at all (unreadable, or no transcript header first): the
    /// user pointed at the wrong file.
    #[error("{0}")]
    NotTranscript(crate::load::LoadError),
    /// A transcript that does not check out.
    #[error("{0}")]
    Invalid(Inconsistency),
}

/// Verifies the transcript at `path`.
pub fn verify_file(path: &Path) -> Result<Verified, Failure> {
    let t = Transcript::load(path).map_err(Failure::NotTranscript)?;
    match t.lines.first() {
        Some((_, Line::Header(_))) => {}
        _ => {
            let (line, mut reason) = match (&t.damaged, t.lines.first()) {
                (_, Some((n, _))) => (*n, "not a transcript: its first line is no header".into()),
                (Some((n, why)), None) => (*n, why.clone()),
                (None, None) => (0, "not a transcript: the file is empty".to_owned()),
            };
            if crate::layout::tournament::is_journal(path) {
                reason += " (a tournament's journal: verify the tournament's folder)";
            }
            return Err(Failure::NotTranscript(crate::load::LoadError {
                path: path.to_owned(),
                line,
                reason,
            }));
        }
    }
    verify(&t, |_, _, _| {}).map_err(Failure::Invalid)
}

/// Replays `t` and requires it to be a whole game (a result line). `visit` sees
/// each line with the game after it, as [`replay`] gives it.
pub fn verify(
    t: &Transcript,
    visit: impl FnMut(usize, &Line, &Game),
) -> Result<Verified, Inconsistency> {
    let r = replay(t, visit)?;
    match r.result {
        Some(result) => Ok(Verified {
            lines: r.lines,
            header: r.header,
            result,
        }),
        None => Err(Inconsistency {
            line: r.lines,
            message: "the transcript ends without a result line (an incomplete game?)".into(),
        }),
    }
}

/// The one replay loop, shared by `verify`, `show` and the tournament's outcome
/// reader: replays `t` through the rules engine with every check above, and
/// calls `visit` with each line (its number, the line, the game after it — for
/// an event the engine derived, the state after the whole batch). Stops at the
/// first inconsistency. A transcript that simply ends (a game in progress) is
/// not one: the result is then `None`.
pub fn replay(
    t: &Transcript,
    mut visit: impl FnMut(usize, &Line, &Game),
) -> Result<Replayed, Inconsistency> {
    let mut state = Replaying::default();
    let mut n = 0;
    for (at, line) in &t.lines {
        n = *at;
        state
            .take(n, line)
            .map_err(|message| Inconsistency { line: n, message })?;
        visit(n, line, state.game.as_ref().expect("set by the header"));
    }
    if let Some((line, why)) = &t.damaged {
        return Err(Inconsistency {
            line: *line,
            message: why.clone(),
        });
    }
    match state.header {
        Some(header) => Ok(Replayed {
            lines: n,
            header,
            result: state.result.map(|(_, r)| r),
        }),
        None => Err(Inconsistency {
            line: 0,
            message: "the file holds no line".into(),
        }),
    }
}

/// What [`replay`] knows between lines.
#[derive(Default)]
struct Replaying {
    game: Option<Game>,
    header: Option<Header>,
    policy: Option<FaultPolicy>,
    /// Events the rules derived that the transcript must list next.
    expected: VecDeque<Event>,
    faults: [u32; 6],
    /// Seats the fallback plays for, for the rest of the game.
    replaced: [bool; 6],
    /// Seats whose next decision the fallback makes (a fault ended the request).
    fallback_next: [bool; 6],
    /// The result line and its number, once read.
    result: Option<(usize, ResultRecord)>,
}

impl Replaying {
    /// Takes line `n`, or says why it cannot follow what came before.
    fn take(&mut self, n: usize, line: &Line) -> Result<(), String> {
        if let Some((at, _)) = &self.result {
            return Err(format!("a line after the result line (line {at})"));
        }
        match line {
            Line::Header(h) if self.game.is_none() => self.start(h),
            _ if self.game.is_none() => Err("the first line must be the header".into()),
            Line::Header(_) => Err("a second header".into()),
            Line::Fault(f) => self.fault(f),
            Line::Event(event) => self.event(event),
            Line::Result(r) => self.result(n, r),
        }
    }

    fn start(&mut self, h: &Header) -> Result<(), String> {
        check_header(h)?;
        self.policy = Some(h.fault_policy);
        let (g, events) = Game::new(h.seed, h.rules);
        self.game = Some(g);
        self.expected.extend(events);
        self.header = Some(h.clone());
        Ok(())
    }

    fn fault(&mut self, f: &FaultRecord) -> Result<(), String> {
        let i = f.seat.index();
        self.faults[i] += 1;
        let p = self.policy.expect("set with the game");
        // Replaced: already, or a pipe that is gone (crash, closed), or a
        // bot that never joined (a fault outside any request), or the
        // policy's fault limit reached.
        let want = self.replaced[i]
            || f.fault.is_fatal()
            || f.request.is_none()
            || p.max_faults.is_some_and(|m| self.faults[i] >= m);
        if f.replaced != want {
            return Err(format!(
                "fault says replaced: {}, but fault {} of {} under policy max_faults {:?} gives {want}",
                f.replaced,
                self.faults[i],
                f.seat,
                p.max_faults
            ));
        }
        self.replaced[i] = want;
        // Every fault but `stale` ends its request: the fallback answers it.
        if f.request.is_some() && f.fault != FaultKind::Stale {
            self.fallback_next[i] = true;
        }
        Ok(())
    }

    /// An event: the next one the rules derived, or a decision to apply.
    fn event(&mut self, event: &Event) -> Result<(), String> {
        if let Some(want) = self.expected.pop_front() {
            if *event != want {
                return Err(format!(
                    "the transcript says {} but the rules give {}",
                    json(event),
                    json(&want)
                ));
            }
            return Ok(());
        }
        let g = self.game.as_mut().expect("set by the header");
        self.expected = decide(g, event, &mut self.replaced, &mut self.fallback_next)?;
        Ok(())
    }

    fn result(&mut self, n: usize, r: &ResultRecord) -> Result<(), String> {
        if let Some(missing) = self.expected.front() {
            return Err(format!("result before the rules' {}", json(missing)));
        }
        let g = self.game.as_ref().expect("set by the header");
        check_result(r, g, self.faults, self.policy)?;
        self.result = Some((n, r.clone()));
        Ok(())
    }
}

/// A header the referee could have written: this format, six seats, and the
/// game's seed derived from the match seed and game number.
fn check_header(h: &Header) -> Result<(), String> {
    if !FORMATS_READ.contains(&h.format.as_str()) {
        return Err(format!(
            "format {:?} is not one this referee reads ({FORMATS_READ:?})",
            h.format
        ));
    }
    // Format 2 on records where the request ids start; 0 is never an id.
    if h.format != FORMATS_READ[0] && matches!(h.first_request, None | Some(0)) {
        return Err(format!(
            "first_request {:?}: format {} records the id of the game's first request (at least 1)",
            h.first_request, h.format
        ));
    }
    if h.format == FORMAT && h.isolation.is_none() {
        return Err(format!(
            "no isolation: format {FORMAT} records how the bots were run (sandbox, limits, pace)"
        ));
    }
    if h.seats.len() != 6 {
        return Err(format!("{} seats listed, not 6", h.seats.len()));
    }
    let want = derive_seed(h.match_seed, u64::from(h.game.saturating_sub(1)));
    if h.game == 0 || h.seed != want {
        return Err(format!(
            "seed {} is not the one derived from match seed {} for game {} ({want})",
            h.seed, h.match_seed, h.game
        ));
    }
    Ok(())
}

/// A decision line: the seat whose turn it is, the fallback's action where the
/// fallback decides, legal, and echoed by the rules as the transcript says.
/// Returns the events the rules derive from it, which the next lines must be.
fn decide(
    g: &mut Game,
    event: &Event,
    replaced: &mut [bool; 6],
    fallback_next: &mut [bool; 6],
) -> Result<VecDeque<Event>, String> {
    let Some((seat, action)) = event.decision() else {
        return Err(format!("unexpected {}: a decision is due", json(event)));
    };
    match g.to_act() {
        None => return Err("an action after the game ended".into()),
        Some(due) if due != seat => return Err(format!("{seat} acts but it is {due}'s turn")),
        Some(_) => {}
    }
    let i = seat.index();
    if replaced[i] || fallback_next[i] {
        let want = first_legal(g);
        if action != want {
            return Err(format!(
                "{seat}'s decision was the fallback's, which is {want:?}, not {action:?}"
            ));
        }
        fallback_next[i] = false;
    }
    let mut out = Vec::new();
    g.apply_into(action, &mut out)
        .map_err(|e| format!("illegal action by {seat}: {e}"))?;
    let mut out = VecDeque::from(out);
    let echo = out.pop_front().expect("an applied action yields its event");
    if echo != *event {
        return Err(format!(
            "the transcript says {} but the rules give {}",
            json(event),
            json(&echo)
        ));
    }
    Ok(out)
}

/// The result line against the finished game, the fault lines and the policy.
fn check_result(
    r: &ResultRecord,
    g: &Game,
    faults: [u32; 6],
    policy: Option<FaultPolicy>,
) -> Result<(), String> {
    if !g.is_over() {
        return Err("result line but the game is not over".into());
    }
    if r.scores != g.scores() || r.deals != g.deals() {
        return Err(format!(
            "result says scores {:?} after {} deals; the rules give {:?} after {}",
            r.scores,
            r.deals,
            g.scores(),
            g.deals()
        ));
    }
    if r.faults != faults {
        return Err(format!(
            "result counts faults {:?} but the fault lines say {faults:?}",
            r.faults
        ));
    }
    let forfeit = policy.is_some_and(|p| p.forfeit);
    let forfeited: Vec<Team> = Team::all()
        .filter(|t| forfeit && t.seats().iter().any(|s| faults[s.index()] > 0))
        .collect();
    if r.forfeited != forfeited {
        return Err(format!(
            "result says teams {:?} forfeited; the fault lines and policy give {forfeited:?}",
            r.forfeited
        ));
    }
    if let Some(why) = misranked(&r.ranking, g.winner(), r.scores, &forfeited) {
        return Err(format!("result ranks teams {:?}: {why}", r.ranking));
    }
    let credited = credited_winner(g.winner(), &forfeited, r.ranking);
    if r.winner != credited {
        return Err(format!(
            "result credits {:?} with the game; the rules and forfeits give {credited:?}",
            r.winner
        ));
    }
    Ok(())
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
