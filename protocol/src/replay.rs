//! Rebuilding a game from a referee transcript (`schmier-transcript/1` to `/3`):
//! the header's seed and rules start the engine, and each decision event (a bid,
//! trump, exchange, discard or play — the fallback's decisions after a fault
//! included, as they are recorded like any other) is applied in turn. Every
//! event the engine derives must be the transcript's next event, so a transcript
//! this accepts is one the engine would have written.
//!
//! The referee's `verify` checks more (fault bookkeeping, the result line,
//! seed derivation); this is the small, dependency-free part a library needs to
//! load a recorded game (the Python library's `Game.from_transcript`).

use serde_json::Value;

use crate::rules::{Event, Game, RulesConfig};

/// The transcript formats read.
pub const FORMATS: [&str; 3] = [
    "schmier-transcript/1",
    "schmier-transcript/2",
    "schmier-transcript/3",
];

/// A transcript that cannot be replayed: the line (1-based) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ReplayError {
    pub line: usize,
    pub message: String,
}

/// A replayed transcript.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The game after the last event.
    pub game: Game,
    /// The header line, as JSON.
    pub header: Value,
    /// Decisions applied (the `Deal` and other derived events not counted).
    pub decisions: usize,
    /// Whether the transcript has its `result` line (a whole game).
    pub complete: bool,
}

/// Replays the transcript text `text` (JSON lines).
pub fn replay(text: &str) -> Result<Replayed, ReplayError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty());
    let err = |line: usize, message: String| ReplayError { line, message };
    let (n, first) = lines
        .next()
        .ok_or_else(|| err(1, "the transcript is empty".into()))?;
    let header: Value = serde_json::from_str(first).map_err(|e| {
        err(
            n,
            format!("not a transcript: its first line is no JSON ({e})"),
        )
    })?;
    let (seed, rules) = read_header(&header).map_err(|m| err(n, m))?;
    let (game, start) = Game::new(seed, rules);
    let mut state = State {
        game,
        expected: start.into(),
        decisions: 0,
    };
    let mut complete = false;
    for (n, text) in lines {
        let value: Value =
            serde_json::from_str(text).map_err(|e| err(n, format!("not JSON: {e}")))?;
        match value.get("type").and_then(Value::as_str) {
            Some("fault") => continue,
            Some("result") => {
                complete = true;
                continue;
            }
            Some("header") => return Err(err(n, "a second header".into())),
            _ => {}
        }
        let event: Event =
            serde_json::from_value(value).map_err(|e| err(n, format!("not an event: {e}")))?;
        state.take(event).map_err(|m| err(n, m))?;
    }
    if let Some(e) = state.expected.front() {
        return Err(err(
            text.lines().count(),
            format!("the transcript ends before the engine's event {e:?}"),
        ));
    }
    Ok(Replayed {
        game: state.game,
        header,
        decisions: state.decisions,
        complete,
    })
}

/// The seed and rules of a header line, or why not.
fn read_header(header: &Value) -> Result<(u64, RulesConfig), String> {
    if header.get("type").and_then(Value::as_str) != Some("header") {
        return Err("not a transcript: its first line is no header".into());
    }
    let format = header.get("format").and_then(Value::as_str).unwrap_or("");
    if !FORMATS.contains(&format) {
        return Err(format!(
            "transcript format {format:?} is not one of {}",
            FORMATS.join(", ")
        ));
    }
    let seed = header
        .get("seed")
        .and_then(Value::as_u64)
        .ok_or("the header has no seed")?;
    let rules = match header.get("rules") {
        Some(r) => serde_json::from_value(r.clone()).map_err(|e| format!("header rules: {e}"))?,
        None => RulesConfig::default(),
    };
    Ok((seed, rules))
}

struct State {
    game: Game,
    /// Events the engine derived that the transcript has still to show.
    expected: std::collections::VecDeque<Event>,
    decisions: usize,
}

impl State {
    fn take(&mut self, event: Event) -> Result<(), String> {
        if let Some(want) = self.expected.pop_front() {
            if want != event {
                return Err(format!(
                    "the engine derived {want:?}, the transcript has {event:?}"
                ));
            }
            return Ok(());
        }
        let Some((seat, action)) = event.decision() else {
            return Err(format!(
                "{event:?} is no decision, and the engine derived nothing here"
            ));
        };
        match self.game.to_act() {
            Some(due) if due == seat => {}
            Some(due) => return Err(format!("seat {seat} acts, but seat {due} is due")),
            None => return Err("an event after the game's end".into()),
        }
        let mut out = self
            .game
            .apply(action)
            .map_err(|e| format!("illegal for the engine: {e}"))?
            .into_iter();
        // The first event is the decision itself; compare it, queue the rest.
        let own = out.next();
        if own.as_ref() != Some(&event) {
            return Err(format!(
                "the engine records the decision as {own:?}, the transcript as {event:?}"
            ));
        }
        self.expected.extend(out);
        self.decisions += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::first_legal;

    fn transcript(seed: u64) -> (String, Game) {
        let rules = RulesConfig::default();
        let (mut game, mut events) = Game::new(seed, rules);
        while !game.is_over() {
            let a = first_legal(&game);
            events.extend(game.apply(a).unwrap());
        }
        let header = serde_json::json!({
            "type": "header", "format": "schmier-transcript/3", "seed": seed, "rules": rules,
        });
        let mut text = header.to_string() + "\n";
        for e in &events {
            text += &serde_json::to_string(e).unwrap();
            text.push('\n');
        }
        (text, game)
    }

    #[test]
    fn a_whole_game_replays_to_its_final_state() {
        let (text, game) = transcript(11);
        let r = replay(&text).unwrap();
        assert!(r.game.is_over());
        assert_eq!(r.game.scores(), game.scores());
        assert_eq!(r.game.winner(), game.winner());
        assert!(!r.complete);
    }

    #[test]
    fn a_changed_seat_is_refused_with_its_line() {
        let (text, _) = transcript(12);
        // Give the first play to another seat: the line must be named.
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let at = lines.iter().position(|l| l.contains("\"play\"")).unwrap();
        let mut v: Value = serde_json::from_str(&lines[at]).unwrap();
        let seat = v["seat"].as_u64().unwrap();
        v["seat"] = ((seat + 1) % 6).into();
        lines[at] = v.to_string();
        let e = replay(&lines.join("\n")).unwrap_err();
        assert_eq!(e.line, at + 1, "{e}");
        assert!(e.message.contains("is due"), "{e}");
    }

    #[test]
    fn a_truncated_transcript_is_a_game_in_progress() {
        let (text, _) = transcript(13);
        let lines: Vec<&str> = text.lines().collect();
        // Cut right after a decision whose derived events are complete: a bid.
        let at = lines
            .iter()
            .rposition(|l| l.contains("\"bid\",\"seat\""))
            .unwrap();
        let r = replay(&lines[..=at].join("\n")).unwrap();
        assert!(!r.game.is_over());
    }
}
