//! What `referee replay` found, for a person (text) or a script (`--json`).

use serde::Serialize;

use schmier_protocol::rules::Action;
use schmier_protocol::rules::SeatView;
use schmier_protocol::wire::{action_json, LegalWire};

use super::live::{Compared, Run};
use super::script::{Answer, Script};
use super::ReplayConfig;

/// The outcome of a replay.
#[derive(Debug, Serialize)]
pub struct Report {
    pub file: String,
    pub seat: usize,
    /// The seat's requests in the recorded game.
    pub requests: u32,
    /// Requests sent to the live bot.
    pub compared: u32,
    /// The requests (numbers, from 1) where the live bot answered otherwise.
    pub differed: Vec<u32>,
    /// `--at K`: the request it stopped at.
    pub at: Option<u32>,
    /// The decision shown: request `at`, else the first difference.
    pub shown: Option<Decision>,
    /// What the transcript does not record and was assumed.
    pub notes: Vec<String>,
    /// The live bot left (a crash or closed pipe) before the end of the game.
    pub bot_left: bool,
}

/// One request and both answers.
#[derive(Debug, Serialize)]
pub struct Decision {
    /// The seat's K-th request in the game, from 1.
    pub number: u32,
    /// Its id as the bot saw it.
    pub id: u64,
    /// The transcript line of the decision it led to.
    pub line: usize,
    pub deal: u32,
    pub legal: LegalWire,
    pub view: SeatView,
    pub recorded: AnswerJson,
    /// The action the table applied (the fallback's after a recorded fault).
    pub played: Option<serde_json::Value>,
    pub live: AnswerJson,
    pub same: bool,
    /// The recorded bot sent a reply naming another request meanwhile (a
    /// `stale` fault).
    pub recorded_stale: bool,
    /// Replies naming other requests the live bot sent meanwhile.
    pub stale: u32,
}

/// An answer as JSON: the action as a bot writes it, or the fault.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnswerJson {
    Action {
        action: serde_json::Value,
    },
    Fault {
        fault: schmier_protocol::FaultKind,
        detail: String,
    },
}

impl From<&Answer> for AnswerJson {
    fn from(a: &Answer) -> AnswerJson {
        match a {
            Answer::Action(action) => AnswerJson::Action {
                action: action_json(*action),
            },
            Answer::Fault { kind, detail } => AnswerJson::Fault {
                fault: *kind,
                detail: crate::names::printable(detail).into_owned(),
            },
        }
    }
}

impl Report {
    pub(super) fn new(cfg: &ReplayConfig, script: &Script, run: &Run) -> Report {
        let shown = match cfg.at {
            Some(k) => run.compared.iter().find(|c| c.ask.number == k),
            None => run.compared.iter().find(|c| !c.same()),
        };
        let last = run.compared.last();
        Report {
            file: cfg.file.display().to_string(),
            seat: cfg.seat.index(),
            requests: run.requests,
            compared: run.compared.len() as u32,
            differed: (run.compared.iter())
                .filter(|c| !c.same())
                .map(|c| c.ask.number)
                .collect(),
            at: cfg.at,
            shown: shown.map(decision),
            notes: script.notes.clone(),
            bot_left: last
                .is_some_and(|c| matches!(&c.live, Answer::Fault { kind, .. } if kind.is_fatal())),
        }
    }

    /// Whether the live bot answered as recorded: at request `--at K`, or at
    /// every request.
    pub fn same(&self) -> bool {
        match (&self.shown, self.at) {
            (Some(d), _) => d.same,
            // The live bot left before request K.
            (None, Some(_)) => false,
            (None, None) => self.differed.is_empty(),
        }
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            out += &format!("note: {note}\n");
        }
        let seat = format!("seat {}", self.seat);
        match (&self.shown, self.at) {
            (None, _) if self.requests == 0 => {
                out += &format!("{seat} was sent no request in {}\n", self.file);
            }
            (None, Some(k)) => {
                out += &format!(
                    "{seat}: the live bot left the game at request {} of {}, before request {k} \
                     (it answered otherwise at request(s) {:?})\n",
                    self.compared, self.requests, self.differed
                );
            }
            (None, None) => {
                out += &format!(
                    "{seat}: the live bot answered all {} of {} request(s) as recorded in {}\n",
                    self.compared, self.requests, self.file
                )
            }
            (Some(d), None) => {
                out += &format!(
                    "{seat}: the live bot differs at request {} of {} (id {}, {} line {}, deal {})\n",
                    d.number, self.requests, d.id, self.file, d.line, d.deal
                );
                out += &d.text();
            }
            (Some(d), Some(_)) => {
                out += &format!(
                    "{seat}: request {} of {} (id {}, {} line {}, deal {}): {}\n",
                    d.number,
                    self.requests,
                    d.id,
                    self.file,
                    d.line,
                    d.deal,
                    match d.same {
                        true => "the live bot answers as recorded",
                        false => "the live bot answers otherwise",
                    }
                );
                out += &d.text();
                let before: Vec<String> = (self.differed.iter())
                    .filter(|&&n| n < d.number)
                    .map(|n| n.to_string())
                    .collect();
                if !before.is_empty() {
                    out += &format!(
                        "earlier, the live bot answered otherwise at request(s) {}; it was \
                         told the recorded game regardless\n",
                        before.join(", ")
                    );
                }
            }
        }
        if self.bot_left {
            out += "the live bot left the game there (its pipe closed)\n";
        }
        out
    }
}

impl Decision {
    fn text(&self) -> String {
        let mut out = crate::human::describe(&self.view);
        out += "\n";
        out += &format!("  legal:    {}\n", json(&self.legal));
        let played = match (&self.recorded, &self.played) {
            (AnswerJson::Fault { .. }, Some(p)) => format!("; the fallback played {p}"),
            _ => String::new(),
        };
        let stale = |yes: bool| match yes {
            true => " (after a reply naming another request: a stale fault)",
            false => "",
        };
        out += &format!(
            "  recorded: {}{played}{}\n",
            answer_text(&self.recorded),
            stale(self.recorded_stale)
        );
        out += &format!(
            "  live:     {}{}\n",
            answer_text(&self.live),
            stale(self.stale > 0)
        );
        out
    }
}

fn decision(c: &Compared) -> Decision {
    let ask = c.ask;
    Decision {
        number: ask.number,
        id: ask.request.id,
        line: ask.line,
        deal: ask.deal,
        legal: ask.request.legal.clone(),
        view: ask.request.view.clone(),
        recorded: (&ask.recorded).into(),
        played: ask.played.map(|a: Action| action_json(a)),
        live: (&c.live).into(),
        same: c.same(),
        recorded_stale: ask.stale,
        stale: c.stale,
    }
}

fn answer_text(a: &AnswerJson) -> String {
    match a {
        AnswerJson::Action { action } => action.to_string(),
        AnswerJson::Fault { fault, detail } => format!("{fault} fault — {detail}"),
    }
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
