//! `referee diff A B`: compares two transcripts in game terms. It reports the first
//! place where the games diverge ("deal 3, trick 2: seat 4 played QH in A, KH in
//! B"), then how the outcomes differ. Two folders are compared transcript by
//! transcript, paired by file name (`game-0001.jsonl` with `game-0001.jsonl`).
//!
//! What counts is the game: the seed and rules, every event and fault, the result.
//! The rest of the header (bot names and commands, referee version, time control)
//! is reported as a note but does not make two games differ, so a snapshot taken
//! with `python3 bot.py` still matches one taken with `./bot.py`.
//!
//! With `--update`, B is accepted as the new A: A's differing transcripts are
//! replaced by B's (the snapshot-testing workflow: A is the checked-in snapshot).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;

use schmier_protocol::rules::{Call, Event};
use schmier_protocol::CardSet;

use crate::load::{transcripts_in, Transcript};
use crate::transcript::{Header, Line, ResultRecord};

/// How two transcripts compare.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Differences that do not change the game (names, commands, versions).
    pub notes: Vec<String>,
    /// The first place where the games diverge, in game terms.
    pub divergence: Option<String>,
    /// The outcomes: the same result once, or A's and B's.
    pub outcome: String,
}

impl Comparison {
    pub fn equivalent(&self) -> bool {
        self.divergence.is_none()
    }
}

/// Compares `a` and `b` in game terms.
pub fn compare(a: &Transcript, b: &Transcript) -> anyhow::Result<Comparison> {
    let (ha, hb) = (a.header()?, b.header()?);
    let mut cmp = Comparison {
        notes: header_notes(ha, hb)?,
        ..Comparison::default()
    };
    if ha.seed != hb.seed {
        cmp.divergence = Some(format!(
            "the header: game seed {} in A, {} in B (different cards from the first deal)",
            ha.seed, hb.seed
        ));
    } else if ha.rules != hb.rules {
        cmp.divergence = Some(format!(
            "the header: rules {} in A, {} in B",
            json(&ha.rules),
            json(&hb.rules)
        ));
    }
    let mut place = Place::default();
    let (la, lb) = (&a.lines[1..], &b.lines[1..]);
    for i in 0..la.len().max(lb.len()) {
        if cmp.divergence.is_some() {
            break;
        }
        match (la.get(i), lb.get(i)) {
            (Some((_, x)), Some((_, y))) if x == y => place.advance(x),
            (Some((n, x)), Some((m, y))) => {
                cmp.divergence = Some(format!(
                    "{}: {} (A line {n}, B line {m})",
                    place,
                    describe_pair(x, y)
                ));
            }
            (Some((n, x)), None) => {
                cmp.divergence = Some(format!(
                    "{}: B ends after line {} where A goes on with {} (A line {n})",
                    place,
                    b.lines.last().map_or(0, |l| l.0),
                    describe(x)
                ));
            }
            (None, Some((m, y))) => {
                cmp.divergence = Some(format!(
                    "{}: A ends after line {} where B goes on with {} (B line {m})",
                    place,
                    a.lines.last().map_or(0, |l| l.0),
                    describe(y)
                ));
            }
            (None, None) => unreachable!("i is below the longer length"),
        }
    }
    cmp.outcome = match (result_of(a), result_of(b)) {
        (Some(x), Some(y)) if x == y => format!("the same: {}", describe_result(x)),
        (x, y) => format!(
            "A: {}; B: {}",
            x.map_or(
                "no result line (an incomplete game)".into(),
                describe_result
            ),
            y.map_or(
                "no result line (an incomplete game)".into(),
                describe_result
            )
        ),
    };
    Ok(cmp)
}

/// Compares two files or two folders and writes the report to `out`. Returns
/// whether everything was equivalent. With `update`, accepts B as the new A.
pub fn run(a: &Path, b: &Path, update: bool, out: &mut String) -> anyhow::Result<bool> {
    for p in [a, b] {
        let to_create = update && p == a && b.is_dir();
        if !p.exists() && !to_create {
            anyhow::bail!("failed to read {}: no such file or folder", p.display());
        }
    }
    let created = update && !a.exists();
    if created {
        // The first snapshot: an empty folder that B's transcripts will fill.
        std::fs::create_dir_all(a).with_context(|| format!("failed to create {}", a.display()))?;
    }
    let pairs = pairs(a, b)?;
    let mut differing = Vec::new();
    let single = pairs.len() == 1 && !a.is_dir();
    for pair in &pairs {
        if !report_pair(pair, single, out)? {
            differing.push(pair);
        }
    }
    if update {
        if let Err(e) = all_verify(&differing, a) {
            if created {
                let _ = std::fs::remove_dir(a);
            }
            return Err(e);
        }
        for pair in &differing {
            accept(pair, a)?;
        }
    }
    let differing = differing.len();
    if differing == 0 {
        writeln!(out, "equivalent: {} transcript(s)", pairs.len())?;
    } else if update {
        writeln!(
            out,
            "updated {} of {} transcript(s) in {} from {}",
            differing,
            pairs.len(),
            a.display(),
            b.display()
        )?;
    } else {
        writeln!(out, "{} of {} transcript(s) differ", differing, pairs.len())?;
    }
    Ok(differing == 0)
}

/// Writes what `pair` compares to; whether it is equivalent.
fn report_pair(pair: &Pair, single: bool, out: &mut String) -> anyhow::Result<bool> {
    let name = pair.name.display();
    Ok(match (&pair.a, &pair.b) {
        (Some(pa), Some(pb)) => {
            let (ta, tb) = (Transcript::read(pa)?, Transcript::read(pb)?);
            let cmp = compare(&ta, &tb)?;
            if single {
                writeln!(out, "A: {}\nB: {}", pa.display(), pb.display())?;
            } else {
                let verdict = if cmp.equivalent() {
                    "equivalent"
                } else {
                    "DIFFERENT"
                };
                writeln!(out, "{name}: {verdict}")?;
            }
            for note in &cmp.notes {
                writeln!(out, "  note: {note}")?;
            }
            match &cmp.divergence {
                Some(d) => writeln!(out, "  first divergence: {d}")?,
                None => writeln!(out, "  no divergence: the same game move for move")?,
            }
            writeln!(out, "  outcome: {}", cmp.outcome)?;
            cmp.equivalent()
        }
        (Some(_), None) => {
            writeln!(out, "{name}: only in A")?;
            false
        }
        (None, Some(_)) => {
            writeln!(out, "{name}: only in B")?;
            false
        }
        (None, None) => unreachable!("a pair has at least one side"),
    })
}

/// A snapshot pins games as they should be: each of B's transcripts that
/// `--update` would take into `a` must be a whole game by the rules.
fn all_verify(differing: &[&Pair], a: &Path) -> anyhow::Result<()> {
    for pb in differing.iter().filter_map(|p| p.b.as_deref()) {
        if let Err(e) = crate::verify::verify_file(pb) {
            anyhow::bail!(
                "--update: {} does not verify, so it is not taken as the snapshot \
                 (nothing in {} was changed): {e}",
                pb.display(),
                a.display()
            );
        }
    }
    Ok(())
}

/// One transcript on each side (or only one side).
struct Pair {
    name: PathBuf,
    a: Option<PathBuf>,
    b: Option<PathBuf>,
}

fn pairs(a: &Path, b: &Path) -> anyhow::Result<Vec<Pair>> {
    match (a.is_dir(), b.is_dir()) {
        (false, false) => Ok(vec![Pair {
            name: a.to_owned(),
            a: Some(a.to_owned()),
            b: Some(b.to_owned()),
        }]),
        (true, true) => {
            let (na, nb) = (transcripts_in(a)?, transcripts_in(b)?);
            if na.is_empty() && nb.is_empty() {
                anyhow::bail!(
                    "failed to compare {} and {}: neither folder holds a transcript (*.jsonl)",
                    a.display(),
                    b.display()
                );
            }
            let mut names: Vec<&PathBuf> = na.iter().chain(&nb).collect();
            names.sort();
            names.dedup();
            Ok(names
                .into_iter()
                .map(|n| Pair {
                    name: n.clone(),
                    a: na.contains(n).then(|| a.join(n)),
                    b: nb.contains(n).then(|| b.join(n)),
                })
                .collect())
        }
        _ => anyhow::bail!(
            "failed to compare {} with {}: give two transcript files or two folders",
            a.display(),
            b.display()
        ),
    }
}

/// Makes A's side of `pair` what B's is.
fn accept(pair: &Pair, a_root: &Path) -> anyhow::Result<()> {
    let target = match &pair.a {
        Some(p) => p.clone(),
        None if a_root.is_dir() => a_root.join(&pair.name),
        None => a_root.to_owned(),
    };
    match &pair.b {
        Some(src) => {
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("failed to create {}", dir.display()))?;
            }
            std::fs::copy(src, &target).with_context(|| {
                format!("failed to copy {} to {}", src.display(), target.display())
            })?;
        }
        None => std::fs::remove_file(&target)
            .with_context(|| format!("failed to remove {}", target.display()))?,
    }
    Ok(())
}

/// Where in the game a line falls, for messages.
#[derive(Default)]
struct Place {
    deal: u32,
    tricks_done: u8,
    playing: bool,
    over: bool,
}

impl Place {
    fn advance(&mut self, line: &Line) {
        match line {
            Line::Event(Event::Deal { deal, .. }) => {
                *self = Place {
                    deal: *deal,
                    ..Place::default()
                }
            }
            Line::Event(Event::DealerDiscard { .. }) => self.playing = true,
            Line::Event(Event::Trick { .. }) => self.tricks_done += 1,
            Line::Event(Event::HandEnd(_)) => self.playing = false,
            Line::Event(Event::GameEnd { .. }) => self.over = true,
            _ => {}
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.over {
            f.write_str("after the game")
        } else if self.deal == 0 {
            f.write_str("before the first deal")
        } else if self.playing && self.tricks_done < 6 {
            write!(f, "deal {}, trick {}", self.deal, self.tricks_done + 1)
        } else if self.playing {
            write!(f, "deal {}, scoring", self.deal)
        } else {
            write!(f, "deal {}", self.deal)
        }
    }
}

fn cards(set: CardSet) -> String {
    if set.is_empty() {
        return "nothing".into();
    }
    set.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn call(c: Call) -> String {
    match c {
        Call::Pass => "passed".into(),
        Call::Bid(n) => format!("bid {n}"),
    }
}

/// Two lines at the same place that differ, said as compactly as the pair allows.
fn describe_pair(x: &Line, y: &Line) -> String {
    let compact = match (x, y) {
        (Line::Event(a), Line::Event(b)) => describe_events(a, b),
        (Line::Fault(a), Line::Fault(b)) if a.seat == b.seat => Some(format!(
            "{}: {} fault in A ({}), {} fault in B ({})",
            a.seat, a.fault, a.detail, b.fault, b.detail
        )),
        _ => None,
    };
    compact.unwrap_or_else(|| format!("in A {}; in B {}", describe(x), describe(y)))
}

/// Two events of the same kind by the same seat (or two deals): what differs
/// between them. `None` for any other pair.
fn describe_events(x: &Event, y: &Event) -> Option<String> {
    use Event as E;
    Some(match (x, y) {
        (E::Bid { seat: s, bid: a }, E::Bid { seat: t, bid: b }) if s == t => {
            format!("{s} {} in A, {} in B", call(*a), call(*b))
        }
        (E::Play { seat: s, card: a }, E::Play { seat: t, card: b }) if s == t => {
            format!("{s} played {a} in A, {b} in B")
        }
        (
            E::Trump {
                seat: s, suit: a, ..
            },
            E::Trump {
                seat: t, suit: b, ..
            },
        ) if s == t => format!("{s} named trump {a} in A, {b} in B"),
        (
            E::Exchange {
                seat: s,
                discarded: a,
                ..
            },
            E::Exchange {
                seat: t,
                discarded: b,
                ..
            },
        ) if s == t => format!("{s} discarded {} in A, {} in B", cards(*a), cards(*b)),
        (
            E::DealerDiscard {
                seat: s,
                discarded: a,
                ..
            },
            E::DealerDiscard {
                seat: t,
                discarded: b,
                ..
            },
        ) if s == t => format!(
            "the dealer, {s}, discarded {} in A, {} in B",
            cards(*a),
            cards(*b)
        ),
        (E::Deal { .. }, E::Deal { .. }) => describe_deals(x, y),
        _ => return None,
    })
}

/// Two deals that differ: the dealer, else the first seat dealt other cards,
/// else the stock.
fn describe_deals(x: &Event, y: &Event) -> String {
    let (
        Event::Deal {
            dealer: da,
            hands: ha,
            stock: sa,
            ..
        },
        Event::Deal {
            dealer: db,
            hands: hb,
            stock: sb,
            ..
        },
    ) = (x, y)
    else {
        unreachable!("called for two deals")
    };
    if da != db {
        format!("the dealer is {da} in A, {db} in B")
    } else if let Some(s) = (0..6).find(|&s| ha[s] != hb[s]) {
        format!(
            "seat {s} was dealt {} in A, {} in B",
            cards(ha[s]),
            cards(hb[s])
        )
    } else {
        format!("the stock is {sa:?} in A, {sb:?} in B")
    }
}

/// One line in words.
fn describe(line: &Line) -> String {
    match line {
        Line::Header(_) => "a header".into(),
        Line::Fault(f) => format!(
            "a {} fault by {} ({}){}",
            f.fault,
            f.seat,
            f.detail,
            if f.replaced {
                ", replaced by the fallback"
            } else {
                ""
            }
        ),
        Line::Result(r) => format!("the result line ({})", describe_result(r)),
        Line::Event(e) => match e {
            Event::Deal { deal, dealer, .. } => format!("deal {deal} by {dealer}"),
            Event::Bid { seat, bid } => format!("{seat} {}", call(*bid)),
            Event::ThrownIn { deal, .. } => format!("deal {deal} thrown in"),
            Event::Trump { seat, suit, .. } => format!("{seat} named trump {suit}"),
            Event::Exchange {
                seat,
                discarded,
                drawn,
            } => format!(
                "{seat} discarded {} and drew {}",
                cards(*discarded),
                cards(*drawn)
            ),
            Event::DealerDiscard {
                seat, discarded, ..
            } => format!("the dealer, {seat}, discarded {}", cards(*discarded)),
            Event::Play { seat, card } => format!("{seat} played {card}"),
            Event::Trick { number, winner, .. } => format!("{winner} won trick {number}"),
            Event::HandEnd(h) => format!(
                "the hand's score (changes {:?}, scores {:?})",
                h.delta, h.scores
            ),
            Event::GameEnd { winner, scores, .. } => format!(
                "the end of the game ({}, scores {scores:?})",
                winner.map_or("no winner".to_string(), |t| format!("{t} won"))
            ),
        },
    }
}

fn result_of(t: &Transcript) -> Option<&ResultRecord> {
    t.lines.iter().rev().find_map(|(_, l)| match l {
        Line::Result(r) => Some(r),
        _ => None,
    })
}

fn describe_result(r: &ResultRecord) -> String {
    let mut s = match r.winner {
        Some(t) => format!("{t} won"),
        None => "no winner".into(),
    };
    write!(
        s,
        ", scores {:?} after {} deal(s), ranking {}",
        r.scores,
        r.deals,
        r.ranking
            .iter()
            .map(|t| t.index().to_string())
            .collect::<Vec<_>>()
            .join(" > ")
    )
    .expect("writing to a String");
    if !r.forfeited.is_empty() {
        write!(s, ", forfeited {:?}", r.forfeited).expect("writing to a String");
    }
    if r.faults.iter().any(|&f| f > 0) {
        write!(s, ", faults by seat {:?}", r.faults).expect("writing to a String");
    }
    s
}

/// Header differences that do not change the game.
fn header_notes(a: &Header, b: &Header) -> anyhow::Result<Vec<String>> {
    let (va, vb) = (serde_json::to_value(a)?, serde_json::to_value(b)?);
    let mut notes = Vec::new();
    if a.seats != b.seats {
        for (x, y) in a.seats.iter().zip(&b.seats) {
            if x != y {
                notes.push(format!(
                    "{} is {:?} ({}) in A, {:?} ({}) in B",
                    x.seat, x.name, x.command, y.name, y.command
                ));
            }
        }
    }
    let (Some(oa), Some(ob)) = (va.as_object(), vb.as_object()) else {
        return Ok(notes);
    };
    for (key, x) in oa {
        if matches!(key.as_str(), "seats" | "seed" | "rules") {
            continue;
        }
        let y = ob.get(key).unwrap_or(&serde_json::Value::Null);
        if x != y {
            notes.push(format!("header {key}: {x} in A, {y} in B"));
        }
    }
    Ok(notes)
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
