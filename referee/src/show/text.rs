//! `referee show FILE`: the game as a readable account in the terminal — hands
//! with suit symbols, the auction, trump, exchanges, each trick and its winner,
//! the six points and the scores. With a seat, only what that seat was told:
//! every event goes through `Event::seen_by` and the seat's hand comes from
//! `Game::view`, the engine's one place that decides what a seat sees.
//!
//! The text carries ANSI styles; the caller writes it through `anstream`, which
//! strips them unless stdout is a terminal that wants colour (`NO_COLOR` set
//! means plain).

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

use schmier_protocol::rules::{Call, EndReason, Event, HandScore, Played, SeatEvent};
use schmier_protocol::{Card, CardSet, Seat, Suit, Team};

use super::replay::{Replay, Step, What};
use crate::transcript::{FaultRecord, ResultRecord};

const BOLD: Style = Style::new().bold();
const RED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const WIN: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const WARN: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const DIM: Style = Style::new().dimmed();

fn styled(style: Style, text: impl std::fmt::Display) -> String {
    format!("{}{text}{}", style.render(), style.render_reset())
}

/// A card as people write it ([`Card::human`]: `10♥`, `Q♠`, `joker`), hearts
/// and diamonds in red.
pub fn card(c: Card) -> String {
    match c.suit() {
        Some(Suit::Hearts | Suit::Diamonds) => styled(RED, c.human()),
        _ => c.human(),
    }
}

/// [`card`] without colour.
pub fn plain_card(c: Card) -> String {
    c.human()
}

pub fn cards(set: CardSet) -> String {
    if set.is_empty() {
        return styled(DIM, "nothing");
    }
    set.iter().map(card).collect::<Vec<_>>().join(" ")
}

fn suit(s: Suit) -> String {
    let text = s.symbol().to_string();
    if matches!(s, Suit::Hearts | Suit::Diamonds) {
        styled(RED, text)
    } else {
        text
    }
}

fn team(t: Option<Team>) -> String {
    t.map_or("nobody".into(), |t| t.to_string())
}

fn scores(s: [i32; 3]) -> String {
    format!("team 0: {}, team 1: {}, team 2: {}", s[0], s[1], s[2])
}

/// What to show.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    /// Only what this seat saw.
    pub seat: Option<Seat>,
    /// Only this deal (1-based, thrown-in deals included).
    pub deal: Option<u32>,
}

pub fn render(replay: &Replay, opts: TextOptions) -> anyhow::Result<String> {
    if let Some(k) = opts.deal {
        let n = replay.deals();
        if k == 0 || k > n {
            anyhow::bail!("failed to show deal {k}: the game has deals 1 to {n}");
        }
    }
    let mut out = String::new();
    header(replay, opts, &mut out)?;
    for step in &replay.steps {
        // With --deal, only that deal's lines (not the game's end).
        if opts.deal.is_some() && opts.deal != Some(step.deal) {
            continue;
        }
        match &step.what {
            // Faults are announced to every seat.
            What::Fault(f) => fault(f, &mut out)?,
            What::Result(r) => result(r, &mut out)?,
            What::Event(e) => {
                // The omniscient account reads each event as the acting seat saw
                // it (which includes its own cards); a seat's account as that seat.
                let seen = match (opts.seat, e) {
                    (_, Event::Deal { .. }) | (None, _) => None,
                    (Some(s), e) => Some(e.seen_by(s)),
                };
                event(e, seen.as_ref(), opts.seat, step, &mut out)?;
            }
        }
    }
    unfinished_trick(replay, opts, &mut out)?;
    Ok(out)
}

fn fault(f: &FaultRecord, out: &mut String) -> anyhow::Result<()> {
    writeln!(
        out,
        "  {} {}: {} — {}{}",
        styled(WARN, "fault"),
        f.seat,
        f.fault,
        crate::names::printable(&f.detail),
        if f.replaced {
            "; the fallback plays this seat from now on"
        } else {
            ""
        }
    )?;
    Ok(())
}

fn result(r: &ResultRecord, out: &mut String) -> anyhow::Result<()> {
    writeln!(out, "\n{}", styled(BOLD, "Result"))?;
    writeln!(out, "  winner: {}", team(r.winner))?;
    writeln!(out, "  scores: {}", scores(r.scores))?;
    if !r.forfeited.is_empty() {
        let f: Vec<String> = r.forfeited.iter().map(|t| t.to_string()).collect();
        writeln!(out, "  forfeited: {}", f.join(", "))?;
    }
    let rank: Vec<String> = r.ranking.iter().map(|t| t.to_string()).collect();
    writeln!(out, "  ranking: {}", rank.join(", "))?;
    if r.faults.iter().any(|&n| n > 0) {
        writeln!(out, "  faults by seat: {:?}", r.faults)?;
    }
    Ok(())
}

/// A game cut short (a `.partial` transcript) may stop inside a trick: its
/// cards so far, after the last step shown.
fn unfinished_trick(replay: &Replay, opts: TextOptions, out: &mut String) -> anyhow::Result<()> {
    let last = replay
        .steps
        .iter()
        .rev()
        .find(|s| opts.deal.is_none() || opts.deal == Some(s.deal));
    let Some(step) = last else {
        return Ok(());
    };
    if let Some(trick) = step
        .game
        .view(Seat::new(0))
        .trick
        .filter(|t| !t.cards.is_empty())
    {
        let list: Vec<String> = trick
            .cards
            .iter()
            .map(|p| format!("s{} {}", p.seat.index(), card(p.card)))
            .collect();
        writeln!(
            out,
            "  unfinished trick (seat {} leads): {}",
            trick.leader.index(),
            list.join("  ")
        )?;
    }
    Ok(())
}

fn header(replay: &Replay, opts: TextOptions, out: &mut String) -> anyhow::Result<()> {
    let h = &replay.header;
    writeln!(
        out,
        "{} (match seed {}, game seed {}), first to {}{}{}",
        styled(BOLD, format!("Game {}", h.game)),
        h.match_seed,
        h.seed,
        h.rules.target,
        if h.rules.stick_the_dealer {
            ", stick the dealer"
        } else {
            ""
        },
        if h.rules.trump_anytime {
            ", trump anytime"
        } else {
            ""
        },
    )?;
    for t in Team::all() {
        let [a, b] = t.seats();
        let name = |s: Seat| {
            h.seats.get(s.index()).map_or("?".to_string(), |i| {
                crate::names::printable(&i.name).into_owned()
            })
        };
        writeln!(out, "  {t}: {a} {}, {b} {}", name(a), name(b))?;
    }
    if let Some(s) = opts.seat {
        writeln!(
            out,
            "  {}",
            styled(
                BOLD,
                format!(
                    "As seen by {s} ({}, partner {}): only what it was told",
                    s.team(),
                    s.partner()
                )
            )
        )?;
    }
    Ok(())
}

/// One event's lines: the full account (`me` none) or what seat `me` was told
/// (`seen`).
fn event(
    e: &Event,
    seen: Option<&SeatEvent>,
    me: Option<Seat>,
    step: &Step,
    out: &mut String,
) -> anyhow::Result<()> {
    match e {
        Event::Deal {
            deal,
            dealer,
            hands,
            stock,
        } => {
            writeln!(
                out,
                "\n{}",
                styled(BOLD, format!("── Deal {deal}, dealer {dealer} ──"))
            )?;
            deal_hands(e, hands, stock, me, out)?;
        }
        Event::Bid { seat, bid } => {
            let text = match bid {
                Call::Pass => "passes".into(),
                Call::Bid(n) => format!("bids {n}"),
            };
            writeln!(out, "  {seat} {text}")?;
        }
        Event::ThrownIn { deal, streak, .. } => {
            writeln!(
                out,
                "  everyone passed: deal {deal} is thrown in ({streak} in a row)"
            )?;
        }
        Event::Trump { seat, bid, suit: s } => {
            writeln!(
                out,
                "  {} {} by {seat}, who bid {bid}",
                styled(BOLD, "trump"),
                suit(*s)
            )?;
        }
        Event::Exchange { seat, .. } => exchange(e, *seat, seen, out)?,
        Event::DealerDiscard { seat, .. } => {
            dealer_discard(e, *seat, seen, out)?;
            hands_for_play(step, me, out)?;
        }
        // Each trick is shown whole when it completes.
        Event::Play { .. } => {}
        Event::Trick {
            number,
            leader,
            cards: played,
            winner,
        } => trick(*number, *leader, played, *winner, out)?,
        Event::HandEnd(h) => hand_end(h, out)?,
        Event::GameEnd {
            winner,
            scores: s,
            deals,
            reason,
        } => {
            let why = match reason {
                EndReason::Target => "a team reached the target",
                EndReason::HandCap => "the hand cap was reached",
            };
            writeln!(
                out,
                "\n{} after {deals} deal(s) ({why}): {} wins; {}",
                styled(BOLD, "Game over"),
                team(*winner),
                scores(*s)
            )?;
        }
    }
    Ok(())
}

/// The dealt hands: all six and the stock, or only the seat's own (exactly its
/// `deal` message).
fn deal_hands(
    e: &Event,
    hands: &[CardSet; 6],
    stock: &[Card],
    me: Option<Seat>,
    out: &mut String,
) -> anyhow::Result<()> {
    match me {
        None => {
            for s in Seat::all() {
                writeln!(out, "  {s}: {}", cards(hands[s.index()]))?;
            }
            let stock: Vec<String> = stock.iter().map(|c| card(*c)).collect();
            writeln!(out, "  stock: {}", stock.join(" "))?;
        }
        Some(s) => {
            if let SeatEvent::Deal { hand, .. } = e.seen_by(s) {
                writeln!(out, "  your hand ({s}): {}", cards(hand))?;
            }
        }
    }
    Ok(())
}

/// An exchange: its count for another seat, its cards otherwise.
fn exchange(
    e: &Event,
    seat: Seat,
    seen: Option<&SeatEvent>,
    out: &mut String,
) -> anyhow::Result<()> {
    if let Some(SeatEvent::Exchange {
        count,
        discarded: None,
        ..
    }) = seen
    {
        writeln!(out, "  {seat} exchanges {count} card(s)")?;
        return Ok(());
    }
    let Some(SeatEvent::Exchange {
        discarded: Some(d),
        drawn: Some(n),
        ..
    }) = seen.cloned().or_else(|| Some(e.seen_by(seat)))
    else {
        unreachable!("an exchange seen by its own seat has the cards")
    };
    writeln!(out, "  {seat} discards {}, draws {}", cards(d), cards(n))?;
    Ok(())
}

/// The dealer's pick-up and discard: counts for another seat, cards otherwise.
fn dealer_discard(
    e: &Event,
    seat: Seat,
    seen: Option<&SeatEvent>,
    out: &mut String,
) -> anyhow::Result<()> {
    if let Some(SeatEvent::DealerDiscard {
        picked_up,
        discarded,
        picked_up_cards: None,
        ..
    }) = seen
    {
        writeln!(
            out,
            "  the dealer, {seat}, picks up {picked_up} and discards {discarded}"
        )?;
        return Ok(());
    }
    let Some(SeatEvent::DealerDiscard {
        picked_up_cards: Some(p),
        discarded_cards: Some(d),
        ..
    }) = seen.cloned().or_else(|| Some(e.seen_by(seat)))
    else {
        unreachable!("a dealer's discard seen by the dealer has the cards")
    };
    writeln!(
        out,
        "  the dealer, {seat}, picks up {} and discards {}",
        cards(p),
        cards(d)
    )?;
    Ok(())
}

/// The hands the play starts from: all six, or the seat's own from its view.
fn hands_for_play(step: &Step, me: Option<Seat>, out: &mut String) -> anyhow::Result<()> {
    writeln!(out, "  hands for play:")?;
    let game = &step.game;
    match me {
        None => {
            for s in Seat::all() {
                writeln!(out, "    {s}: {}", cards(game.hand(s)))?;
            }
        }
        Some(s) => writeln!(out, "    your hand ({s}): {}", cards(game.view(s).hand))?,
    }
    Ok(())
}

/// A completed trick, its winner's card highlighted.
fn trick(
    number: u8,
    leader: Seat,
    played: &[Played],
    winner: Seat,
    out: &mut String,
) -> anyhow::Result<()> {
    let list: Vec<String> = played
        .iter()
        .map(|p| {
            let text = format!("s{} {}", p.seat.index(), card(p.card));
            if p.seat == winner {
                styled(WIN, text)
            } else {
                text
            }
        })
        .collect();
    writeln!(
        out,
        "  trick {number} (seat {} leads): {}  → {} wins",
        leader.index(),
        list.join("  "),
        styled(WIN, winner)
    )?;
    Ok(())
}

fn hand_end(h: &HandScore, out: &mut String) -> anyhow::Result<()> {
    let p = &h.points;
    writeln!(
        out,
        "  points: high {}, low {}, right {}, left {}, joker {}, game {} (counts {} / {} / {})",
        team(p.high),
        team(p.low),
        team(p.right),
        team(p.left),
        team(p.joker),
        team(p.game),
        h.game_counts[0],
        h.game_counts[1],
        h.game_counts[2]
    )?;
    let verdict = if h.made {
        styled(WIN, "made it")
    } else {
        styled(WARN, "was set")
    };
    writeln!(
        out,
        "  {} bid {} in {} and {verdict}: changes {:+} / {:+} / {:+}",
        h.bidder,
        h.bid,
        suit(h.trump),
        h.delta[0],
        h.delta[1],
        h.delta[2]
    )?;
    writeln!(out, "  {}: {}", styled(BOLD, "scores"), scores(h.scores))?;
    Ok(())
}
