//! The replay page's frames as the page carries them: each frame lists only
//! the fields that changed since the frame before, and card lists are runs of
//! two-letter codes. A whole frame per step repeats six hands, the auction and
//! the scores several hundred times a game; a tournament of 180 games came to
//! 53 MB of pages that way, and this brings it to 7.9 MB, about the size of its
//! transcripts (tests/integration/page.rs measures it).
//!
//! The encoding knows nothing of the game: it diffs flat JSON objects, so the
//! page's script undoes it with one `Object.assign` per frame and the rules stay
//! in Rust. Three more savings, as general: captions repeat (a long game plays
//! the same card from the same seat many times), so each caption is written
//! once in a table of texts and frames give its number; a text that only grew
//! (the trick, the auction) travels as what was added, under its key with a
//! `+` before it (`"+t": "4JK"`); and keys are one or two letters
//! (`replay.js` names them back, in `NAMES`), as a key is repeated in nearly
//! every frame. Field by field:
//!
//! | key | field | value |
//! |---|---|---|
//! | `d`, `D` | deal, dealer | numbers (`null`: none yet) |
//! | `x` | the caption | its number in the texts |
//! | `v` | the caption as each seat was told it, or `null` | `{"*": most seats' text, "N": seat N's}`, by number |
//! | `a` | the seat that acted | number or `null` |
//! | `h0` … `h5` | seat N's cards | e.g. `"AS7DJK"` |
//! | `t` | the cards on the table, in play order | seat and card each, e.g. `"3AS4JK"` |
//! | `w`, `n` | the trick's winner, its number | numbers |
//! | `b` | the auction so far | seat and `p` (pass) or the bid each, e.g. `"1p24"` |
//! | `B`, `k`, `T` | bidder, bid, trump | number, number, `"S"`/`"H"`/`"D"`/`"C"` |
//! | `s` | the three teams' scores | numbers |
//! | `f` | whether the step is a fault | boolean |

use serde_json::{json, Map, Value};

use schmier_protocol::rules::Call;
use schmier_protocol::CardSet;

use super::frame::Frame;

/// What the page carries: the texts, and the frames as changes.
pub(super) struct Compact {
    pub texts: Vec<String>,
    pub frames: Vec<Map<String, Value>>,
}

/// Numbers texts in order of first use.
#[derive(Default)]
struct Texts {
    list: Vec<String>,
    index: std::collections::HashMap<String, usize>,
}

impl Texts {
    fn number(&mut self, text: &str) -> Value {
        if let Some(&i) = self.index.get(text) {
            return json!(i);
        }
        self.list.push(text.to_owned());
        self.index.insert(text.to_owned(), self.list.len() - 1);
        json!(self.list.len() - 1)
    }
}

/// The frames as changes: the first whole, each later one only what changed.
pub(super) fn compact(frames: &[Frame]) -> Compact {
    let mut texts = Texts::default();
    let mut before = Map::new();
    let frames = frames
        .iter()
        .map(|f| {
            let now = flat(f, &mut texts);
            let mut changed = Map::new();
            for (k, v) in now.iter().filter(|&(k, v)| before.get(k) != Some(v)) {
                match (before.get(k), v) {
                    (Some(Value::String(old)), Value::String(new))
                        if !old.is_empty() && new.starts_with(old.as_str()) =>
                    {
                        changed.insert(format!("+{k}"), json!(new[old.len()..]));
                    }
                    _ => {
                        changed.insert(k.clone(), v.clone());
                    }
                }
            }
            before = now;
            changed
        })
        .collect();
    Compact {
        texts: texts.list,
        frames,
    }
}

/// `"AS7DJK"`.
fn codes(set: CardSet) -> String {
    set.iter().map(|c| c.to_string()).collect()
}

/// The captions by seat, as the most common one (`"*"`) and the others by
/// seat: a seat's own exchange differs from what the other five were told.
fn views(told: &[String], texts: &mut Texts) -> Value {
    let common = (told.iter())
        .max_by_key(|t| {
            (
                told.iter().filter(|u| u == t).count(),
                std::cmp::Reverse(*t),
            )
        })
        .cloned()
        .unwrap_or_default();
    let mut m = Map::new();
    for (s, t) in told.iter().enumerate().filter(|(_, t)| **t != common) {
        m.insert(s.to_string(), texts.number(t));
    }
    m.insert("*".into(), texts.number(&common));
    Value::Object(m)
}

fn flat(f: &Frame, texts: &mut Texts) -> Map<String, Value> {
    let mut m = Map::new();
    let seat = |s: Option<schmier_protocol::Seat>| json!(s.map(|s| s.index()));
    m.insert("d".into(), json!(f.deal));
    m.insert("D".into(), seat(f.dealer));
    m.insert("x".into(), texts.number(&f.text));
    let told = f.seat_text.as_deref();
    m.insert("v".into(), told.map_or(Value::Null, |t| views(t, texts)));
    m.insert("a".into(), seat(f.actor));
    for (s, hand) in f.hands.iter().enumerate() {
        m.insert(format!("h{s}"), json!(codes(*hand)));
    }
    let trick: String = (f.trick.iter())
        .map(|p| format!("{}{}", p.seat.index(), p.card))
        .collect();
    m.insert("t".into(), json!(trick));
    m.insert("w".into(), seat(f.winner));
    m.insert("n".into(), json!(f.trick_number));
    let bids: String = (f.bids.iter())
        .map(|b| match b.bid {
            Call::Pass => format!("{}p", b.seat.index()),
            Call::Bid(n) => format!("{}{n}", b.seat.index()),
        })
        .collect();
    m.insert("b".into(), json!(bids));
    m.insert("B".into(), seat(f.bidder));
    m.insert("k".into(), json!(f.bid));
    m.insert("T".into(), json!(f.trump.map(|s| s.letter().to_string())));
    m.insert("s".into(), json!(f.scores));
    m.insert("f".into(), json!(f.fault));
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use schmier_protocol::rules::Played;
    use schmier_protocol::Seat;

    /// Undoing the changes the way the page does (each frame is the one before
    /// with the delta's fields laid over it, a `+` field appended to the text
    /// before) gives back every whole frame.
    #[test]
    fn the_changes_laid_over_each_other_give_every_frame_back() {
        let mut a = Frame::before_the_first_deal();
        a.text = "Deal 1".into();
        a.hands[2] = "AS 7D JK".split(' ').map(|c| c.parse().unwrap()).collect();
        let mut b = a.clone();
        b.text = "seat 2 plays A♠".into();
        b.hands[2].remove("AS".parse().unwrap());
        b.trick.push(Played {
            seat: Seat::new(2),
            card: "AS".parse().unwrap(),
        });
        let mut c = b.clone();
        c.trick.push(Played {
            seat: Seat::new(3),
            card: "JK".parse().unwrap(),
        });
        let mut told = vec!["seat 2 exchanges 1 card(s)".to_string(); 6];
        told[2] = "seat 2 (you) discards 7♦, draws 9♣".into();
        c.seat_text = Some(told);
        let mut d = c.clone();
        d.seat_text = None;
        d.text = "Deal 1".into();
        let frames = [a, b, c, d];
        let out = compact(&frames);
        let mut shown = Map::new();
        let mut again = Texts::default();
        for (f, delta) in frames.iter().zip(&out.frames) {
            for (k, v) in delta {
                match k.strip_prefix('+') {
                    Some(k) => {
                        let grown =
                            format!("{}{}", shown[k].as_str().unwrap(), v.as_str().unwrap());
                        shown.insert(k.to_owned(), json!(grown));
                    }
                    None => {
                        shown.insert(k.clone(), v.clone());
                    }
                }
            }
            assert_eq!(shown, flat(f, &mut again));
        }
        assert_eq!(again.list, out.texts);
        // Only what changed travels: the second frame is its caption, one hand
        // and the card put on the table.
        let keys: Vec<&str> = out.frames[1].keys().map(String::as_str).collect();
        assert_eq!(keys, ["h2", "t", "x"]);
        assert_eq!(out.frames[1]["h2"], "7DJK");
        assert_eq!(out.frames[2]["+t"], "3JK");
        // Five seats were told the same; seat 2 its own version.
        let text = |v: &Value| out.texts[v.as_u64().unwrap() as usize].as_str();
        let v = &out.frames[2]["v"];
        assert_eq!(text(&v["*"]), "seat 2 exchanges 1 card(s)");
        assert_eq!(text(&v["2"]), "seat 2 (you) discards 7♦, draws 9♣");
        assert_eq!(out.frames[3]["v"], Value::Null);
        // A caption seen before is not written again.
        assert_eq!(out.frames[3]["x"], out.frames[0]["x"]);
        assert_eq!(out.texts.iter().filter(|t| *t == "Deal 1").count(), 1);
    }
}
