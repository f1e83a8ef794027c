//! `referee show FILE --html OUT.html`: one self-contained page (no network, no
//! external assets) that replays the game at a table: the hands, the auction,
//! each card played, step forward and back, jump to a deal, a seat's-view toggle.
//!
//! Rust does the game logic: every transcript line becomes a *frame* — the
//! caption, everyone's holdings, the cards on the table, the auction and scores
//! after it — and the page's script (`replay.html`) only draws frames. A caption
//! that names hidden cards comes with each seat's version, made from
//! `Event::seen_by`, so the seat's-view toggle shows what that seat was told.
//!
//! The page reads its URL fragment (`#deal=3&seat=2&next=12`) on load, so a
//! headless browser can be driven without a script of its own.

use serde::Serialize;

use schmier_protocol::rules::{Call, Event, HandScore, Played, SeatCall, SeatEvent};
use schmier_protocol::{CardSet, Seat, Suit, Team};

use super::replay::{Replay, What};
use super::text::plain_card;
use crate::transcript::{FaultRecord, ResultRecord};

const TEMPLATE: &str = include_str!("replay.html");

#[derive(Serialize)]
struct Page {
    title: String,
    players: Vec<String>,
    result: String,
    frames: Vec<Frame>,
}

#[derive(Serialize, Clone)]
struct Frame {
    deal: u32,
    dealer: Option<Seat>,
    /// What happened, for someone who sees everything.
    text: String,
    /// What happened as each seat was told, when that differs from `text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    seat_text: Option<Vec<String>>,
    /// The seat that acted, if any.
    actor: Option<Seat>,
    /// Everyone's cards after this step.
    hands: [CardSet; 6],
    /// The cards on the table, in play order.
    trick: Vec<Played>,
    /// The trick's winner once it is complete.
    winner: Option<Seat>,
    trick_number: u8,
    bids: Vec<SeatCall>,
    bidder: Option<Seat>,
    bid: Option<u8>,
    trump: Option<Suit>,
    scores: [i32; 3],
    fault: bool,
}

impl Frame {
    /// The table before anything is dealt.
    fn before_the_first_deal() -> Frame {
        Frame {
            deal: 0,
            dealer: None,
            text: String::new(),
            seat_text: None,
            actor: None,
            hands: [CardSet::EMPTY; 6],
            trick: Vec::new(),
            winner: None,
            trick_number: 1,
            bids: Vec::new(),
            bidder: None,
            bid: None,
            trump: None,
            scores: [0; 3],
            fault: false,
        }
    }
}

fn fault_text(r: &FaultRecord) -> String {
    format!(
        "Fault: {} {} ({}){}",
        r.seat,
        r.fault,
        crate::names::printable(&r.detail),
        if r.replaced {
            "; the fallback plays this seat from now on"
        } else {
            ""
        }
    )
}

/// The game's result in one line: the winner, the scores, any forfeits.
fn result_text(r: &ResultRecord) -> String {
    let mut result = format!(
        "{}; scores {} / {} / {}",
        r.winner.map_or("no winner".into(), |t| format!("{t} wins")),
        r.scores[0],
        r.scores[1],
        r.scores[2]
    );
    if !r.forfeited.is_empty() {
        let list: Vec<String> = r.forfeited.iter().map(|t| t.to_string()).collect();
        result += &format!("; forfeited: {}", list.join(", "));
    }
    result
}

fn cards(set: CardSet) -> String {
    if set.is_empty() {
        return "nothing".into();
    }
    set.iter().map(plain_card).collect::<Vec<_>>().join(" ")
}

/// The page for `replay`.
pub fn render(replay: &Replay) -> anyhow::Result<String> {
    let h = &replay.header;
    let mut frames: Vec<Frame> = Vec::new();
    let mut f = Frame::before_the_first_deal();
    let mut result = String::new();
    for step in &replay.steps {
        f.seat_text = None;
        f.actor = None;
        f.fault = false;
        if f.winner.is_some() {
            // The last trick stays on the table until the next card.
            f.trick.clear();
            f.winner = None;
            f.trick_number += 1;
        }
        match &step.what {
            What::Fault(r) => {
                f.fault = true;
                f.actor = Some(r.seat);
                f.text = fault_text(r);
            }
            What::Result(r) => {
                result = result_text(r);
                f.text = format!("Result: {result}");
            }
            What::Event(e) => event(e, &mut f),
        }
        frames.push(f.clone());
    }
    let page = Page {
        title: format!(
            "Schmier game {} (match seed {}, game seed {})",
            h.game, h.match_seed, h.seed
        ),
        players: (h.seats.iter())
            .map(|s| crate::names::printable(&s.name).into_owned())
            .collect(),
        result,
        frames,
    };
    // Inside <script> only "</" could end the element early.
    let data = serde_json::to_string(&page)?.replace("</", "<\\/");
    Ok(TEMPLATE
        .replace("{{TITLE}}", &escape(&page.title))
        .replace("{{DATA}}", &data))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Moves frame `f` on by one event of the engine.
fn event(e: &Event, f: &mut Frame) {
    match e {
        Event::Deal {
            deal,
            dealer,
            hands,
            ..
        } => {
            f.deal = *deal;
            f.dealer = Some(*dealer);
            f.hands = *hands;
            f.trick.clear();
            f.winner = None;
            f.trick_number = 1;
            f.bids.clear();
            f.bidder = None;
            f.bid = None;
            f.trump = None;
            f.text = format!("Deal {deal}: {dealer} deals six cards to each seat");
        }
        Event::Bid { seat, bid } => {
            f.actor = Some(*seat);
            f.bids.push(SeatCall {
                seat: *seat,
                bid: *bid,
            });
            if let Call::Bid(n) = bid {
                f.bidder = Some(*seat);
                f.bid = Some(*n);
            }
            f.text = match bid {
                Call::Pass => format!("{seat} passes"),
                Call::Bid(n) => format!("{seat} bids {n}"),
            };
        }
        Event::ThrownIn { deal, .. } => {
            f.text = format!("Everyone passed: deal {deal} is thrown in");
        }
        Event::Trump { seat, bid, suit } => {
            f.actor = Some(*seat);
            f.trump = Some(*suit);
            f.text = format!("{seat} names {} trump (bid {bid})", suit.symbol());
        }
        Event::Exchange { .. } => exchange(e, f),
        Event::DealerDiscard { .. } => dealer_discard(e, f),
        Event::Play { seat, card } => {
            f.actor = Some(*seat);
            f.hands[seat.index()].remove(*card);
            f.trick.push(Played {
                seat: *seat,
                card: *card,
            });
            f.text = format!("{seat} plays {}", plain_card(*card));
        }
        Event::Trick { number, winner, .. } => {
            f.winner = Some(*winner);
            f.trick_number = *number;
            f.text = format!("{winner} wins trick {number}");
        }
        Event::HandEnd(h) => {
            f.scores = h.scores;
            f.text = hand_end_text(h);
        }
        Event::GameEnd {
            winner,
            scores,
            deals,
            ..
        } => {
            f.scores = *scores;
            f.text = format!(
                "Game over after {deals} deal(s): {}",
                winner.map_or("no winner".into(), |t| format!("{t} wins"))
            );
        }
    }
}

/// Each seat's version of a caption, made by `make`.
fn seat_texts(make: &dyn Fn(Seat) -> String) -> Option<Vec<String>> {
    Some(Seat::all().map(make).collect())
}

/// An exchange: the seat's new hand, its cards in the caption, and only the
/// count in the other seats' versions.
fn exchange(e: &Event, f: &mut Frame) {
    let Event::Exchange {
        seat,
        discarded,
        drawn,
    } = e
    else {
        unreachable!("called for an exchange")
    };
    f.actor = Some(*seat);
    let h = &mut f.hands[seat.index()];
    *h = h.difference(*discarded).union(*drawn);
    f.text = format!(
        "{seat} discards {}, draws {}",
        cards(*discarded),
        cards(*drawn)
    );
    f.seat_text = seat_texts(&|s| match e.seen_by(s) {
        SeatEvent::Exchange {
            count,
            discarded: None,
            ..
        } => format!("{seat} exchanges {count} card(s)"),
        SeatEvent::Exchange {
            discarded: Some(d),
            drawn: Some(n),
            ..
        } => format!("{seat} (you) discards {}, draws {}", cards(d), cards(n)),
        _ => unreachable!("an exchange is seen as an exchange"),
    });
}

/// The dealer's pick-up and discard: its new hand, the cards in the caption,
/// only the counts in the other seats' versions.
fn dealer_discard(e: &Event, f: &mut Frame) {
    let Event::DealerDiscard {
        seat,
        picked_up,
        discarded,
    } = e
    else {
        unreachable!("called for a dealer's discard")
    };
    f.actor = Some(*seat);
    let h = &mut f.hands[seat.index()];
    *h = h.union(*picked_up).difference(*discarded);
    f.text = format!(
        "The dealer, {seat}, picks up {} and discards {}",
        cards(*picked_up),
        cards(*discarded)
    );
    f.seat_text = seat_texts(&|s| match e.seen_by(s) {
        SeatEvent::DealerDiscard {
            picked_up,
            discarded,
            picked_up_cards: None,
            ..
        } => format!("The dealer, {seat}, picks up {picked_up} and discards {discarded}"),
        SeatEvent::DealerDiscard {
            picked_up_cards: Some(p),
            discarded_cards: Some(d),
            ..
        } => format!(
            "You, the dealer, pick up {} and discard {}",
            cards(p),
            cards(d)
        ),
        _ => unreachable!("a dealer's discard is seen as one"),
    });
}

/// A deal's score: who took each point, whether the bid was made, the scores.
fn hand_end_text(h: &HandScore) -> String {
    let p = &h.points;
    let t = |x: Option<Team>| x.map_or("nobody".to_string(), |t| t.to_string());
    format!(
        "Deal {} scored: high {}, low {}, right {}, left {}, joker {}, game {}; \
         {} bid {} and {}; scores {} / {} / {}",
        h.deal,
        t(p.high),
        t(p.low),
        t(p.right),
        t(p.left),
        t(p.joker),
        t(p.game),
        h.bidder,
        h.bid,
        if h.made { "made it" } else { "was set" },
        h.scores[0],
        h.scores[1],
        h.scores[2]
    )
}
