//! Replay pages: one page that replays a game at a table — the hands, the
//! auction, each card played, step forward and back, jump to a deal, a
//! seat's-view toggle. `referee show FILE --html OUT.html` writes one
//! self-contained page (no network, no external assets); a tournament's pages
//! share their script and style, `replay.js` and `replay.css`, written once
//! beside them ([`write_assets`]), and each names its players by their entrant
//! names, is titled with its matchup and links back to the tournament's page.
//!
//! Rust does the game logic: every transcript line becomes a *frame* — the
//! caption, everyone's holdings, the cards on the table, the auction and scores
//! after it — and the page's script (`replay.js`) only draws frames. A caption
//! that names hidden cards comes with each seat's version, made from
//! `Event::seen_by`, so the seat's-view toggle shows what that seat was told.
//! The frames travel compactly, as changes from one to the next (`compact.rs`).
//!
//! The page reads its URL fragment (`#deal=3&seat=2&next=12`) on load, so a
//! headless browser can be driven without a script of its own.

use std::path::Path;

use serde::Serialize;

use schmier_protocol::rules::{Call, Event, HandScore, Played, SeatCall, SeatEvent};
use schmier_protocol::{CardSet, Seat, Team};

use super::escape::{html as escape, json_in_script};
use super::frame::Frame;
use super::replay::{Replay, What};
use super::text::plain_card;
use crate::transcript::{FaultRecord, ResultRecord};

const TEMPLATE: &str = include_str!("replay.html");
/// The page's script and style: inlined in a page of its own, else shared.
pub const SCRIPT: &str = include_str!("replay.js");
pub const STYLE: &str = include_str!("replay.css");
/// The shared files' names, beside the pages that use them (named in the layout).
use crate::layout::tournament::{SCRIPT_FILE, STYLE_FILE};

/// How a page is set in its surroundings.
#[derive(Default)]
pub struct Setting {
    /// The page's title; by default the game number and seeds.
    pub title: Option<String>,
    /// Each seat's player as the page names it; by default the name its bot
    /// gave in `hello`, as recorded in the transcript.
    pub players: Option<[String; 6]>,
    /// A link back (`href`, text), e.g. to the tournament's page.
    pub back: Option<(String, String)>,
    /// Load `replay.js` and `replay.css` from beside the page instead of
    /// carrying them.
    pub shared_assets: bool,
}

#[derive(Serialize)]
struct Page {
    title: String,
    players: Vec<String>,
    result: String,
    texts: Vec<String>,
    frames: Vec<serde_json::Map<String, serde_json::Value>>,
}

fn cards(set: CardSet) -> String {
    if set.is_empty() {
        return "nothing".into();
    }
    set.iter().map(plain_card).collect::<Vec<_>>().join(" ")
}

/// The self-contained page for `replay`.
pub fn render(replay: &Replay) -> anyhow::Result<String> {
    render_in(replay, &Setting::default())
}

/// The page for `replay`, set as `setting` says.
pub fn render_in(replay: &Replay, setting: &Setting) -> anyhow::Result<String> {
    let h = &replay.header;
    let (frames, result) = frames(replay);
    let compact = super::compact::compact(&frames);
    let page = Page {
        title: setting.title.clone().unwrap_or_else(|| {
            format!(
                "Schmier game {} (match seed {}, game seed {})",
                h.game, h.match_seed, h.seed
            )
        }),
        players: match &setting.players {
            Some(names) => names.to_vec(),
            None => (h.seats.iter())
                .map(|s| crate::names::printable(&s.name).into_owned())
                .collect(),
        },
        result,
        texts: compact.texts,
        frames: compact.frames,
    };
    // The data element holds no `<`, `>` or `&` (see escape.rs).
    let data = json_in_script(&page)?;
    let (style, script) = if setting.shared_assets {
        (
            format!("<link rel=\"stylesheet\" href=\"{STYLE_FILE}\">"),
            format!("<script src=\"{SCRIPT_FILE}\"></script>"),
        )
    } else {
        (
            format!("<style>\n{STYLE}</style>"),
            format!("<script>\n{SCRIPT}</script>"),
        )
    };
    let back = setting.back.as_ref().map_or(String::new(), |(href, text)| {
        format!(
            "<a id=\"back\" href=\"{}\">{}</a>",
            escape(href),
            escape(text)
        )
    });
    Ok(fill(
        TEMPLATE,
        &[
            ("STYLE", &style),
            ("SCRIPT", &script),
            ("BACK", &back),
            ("TITLE", &escape(&page.title)),
            ("DATA", &data),
        ],
    ))
}

/// Every step of `replay` as a frame, and the game's result in one line.
fn frames(replay: &Replay) -> (Vec<Frame>, String) {
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
    (frames, result)
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

/// `template` with each `{{KEY}}` replaced by its value, in one pass, so that
/// a value (which may hold names bots chose) is never searched for another
/// placeholder.
pub(crate) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let known = after.find("}}").and_then(|end| {
            let key = &after[..end];
            let value = values.iter().find(|(k, _)| *k == key)?.1;
            Some((value, end))
        });
        match known {
            Some((value, end)) => {
                out.push_str(value);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Writes `replay.js` and `replay.css` into `folder`, for pages rendered with
/// [`Setting::shared_assets`].
pub fn write_assets(folder: &Path) -> anyhow::Result<()> {
    crate::safe_create::write_atomic(&folder.join(SCRIPT_FILE), SCRIPT.as_bytes())?;
    crate::safe_create::write_atomic(&folder.join(STYLE_FILE), STYLE.as_bytes())?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::fill;

    /// A value is put in as it is: a name that looks like a placeholder is not
    /// filled in again, and an unknown placeholder stays.
    #[test]
    fn a_value_is_never_searched_for_placeholders() {
        let page = fill(
            "<title>{{TITLE}}</title>{{DATA}}{{OTHER}}",
            &[("TITLE", "{{DATA}}"), ("DATA", "[1]")],
        );
        assert_eq!(page, "<title>{{DATA}}</title>[1]{{OTHER}}");
    }
}
