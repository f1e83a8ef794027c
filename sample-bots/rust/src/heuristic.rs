//! A heuristic bot: a few explainable rules that beat random play by far.
//!
//! It is meant to be read and copied. Every decision is made from the request
//! alone (the legal actions and the seat's [`SeatView`]), so the bot keeps no state
//! and replays identically: it uses no randomness and no hash maps, and on ties it
//! takes the first candidate in card order.
//!
//! The ideas, decision by decision:
//!
//! - **Bid** (`bid`): estimate, for each suit as trump, how many of the six points
//!   our team can expect (`hand_value`), and make the cheapest legal bid when the
//!   best estimate reaches it. Outbid a partner only with a clearly better hand;
//!   a stuck dealer, who may not pass, bids the minimum.
//! - **Name trump**: the suit with the best estimate.
//! - **Exchange** (`exchange`): throw away the three weakest non-trumps. About
//!   one card in four drawn from the stock is a trump, and trumps win the tricks.
//! - **Dealer's discard** (`dealer_discard`): keep the trumps and the highest
//!   other cards.
//! - **Play** (`lead`, `follow`): estimate from the cards seen so far how
//!   likely a card is to win the trick, then weigh the points we expect to win
//!   against the strength the card uses up. That one rule covers the classic
//!   advice: lead trumps nobody can beat (they pull bowers, the joker and tens out
//!   of the other hands), give point cards to a partner whose trick is safe
//!   ("smearing"), take a trick with the cheapest card that wins it, never overtake
//!   a partner who is winning anyway, and throw the least useful card otherwise.
//!   The trump 2 needs no care: Low goes to whoever plays it, and every card is
//!   played by the end of the hand.
//!
//! How strong is it? `tests/strength.rs` plays it against `RandomBot` in-process,
//! and `examples/arena.rs` pits any sample bots against each other.
//!
//! Whatever the rules above say, the bot checks its answer against `legal` before
//! sending it, and falls back to the first legal action if it got anything wrong.

use schmier_protocol::card::{Card, Rank, Suit};
use schmier_protocol::cardset::CardSet;
use schmier_protocol::rules::{trick_winner, Action, Call, Decision, SeatView, TrickView};
use schmier_protocol::seat::Seat;
use schmier_protocol::wire::{LegalWire, Request};

use crate::Strategy;

/// The heuristic strategy. It has no fields: everything it needs is in the request.
#[derive(Default)]
pub struct Heuristic;

impl Heuristic {
    /// The heuristic's own choice, or `None` where it has no opinion (a request
    /// shape it does not handle). It is meant to be legal on its own: tests call
    /// this directly, so nothing covers for an illegal choice.
    pub fn choose(&self, req: &Request) -> Option<Action> {
        let view = &req.view;
        match &req.legal {
            LegalWire::Bids(calls) => Some(bid(view, calls)),
            LegalWire::Suits(suits) => best_trump(view, suits).map(Action::Trump),
            LegalWire::Cards {
                must,
                from,
                min,
                max,
            } => match (req.decision, view.trump) {
                (Decision::Exchange, Some(trump)) => {
                    Some(Action::Exchange(exchange(trump, *from, *max)))
                }
                (Decision::Discard, Some(trump)) => {
                    Some(Action::Discard(dealer_discard(trump, *must, *from, *min)))
                }
                _ => None,
            },
            LegalWire::Play(cards) => play(view, *cards).map(Action::Play),
        }
    }
}

impl Strategy for Heuristic {
    fn name(&self) -> &str {
        "heuristic"
    }

    /// The heuristic's choice as it is (an illegal one is the referee's to judge),
    /// or the first legal action where it has none.
    fn decide(&mut self, req: &Request) -> Action {
        self.choose(req).unwrap_or_else(|| first_legal(req))
    }
}

// ---------------------------------------------------------------------------
// What cards are worth
// ---------------------------------------------------------------------------

/// How much holding `card` adds to our team's expected points when it is trump,
/// for the bidding estimate. These were fitted (least squares) to many hands
/// played out by this bot; the comments say why they come out as they do.
fn trump_card_value(card: Card, trump: Suit) -> f32 {
    match card.trump_strength(trump) {
        // The ace is High for sure (it is always played and nothing beats it), and
        // it wins a trick full of the other players' trumps.
        15 => 1.6,
        // The king and queen usually win a trick once the ace has gone.
        14 => 0.9,
        13 => 0.65,
        // A bower is a point if our team wins its trick; holding it is a good start.
        12 => 0.75,
        11 => 0.6,
        // The ten of trump is 10 of the 81 game-count points, but it is often lost.
        10 => 0.35,
        // Low goes to whoever plays the 2, and it is always played: a sure point.
        2 => 1.0,
        // The joker is the lowest trump: we keep its point only if our team wins
        // the trick it falls in, which is rare for the side that holds it.
        1 => 0.3,
        // Any other trump still wins a trick late, or saves a bower from having to
        // follow a trump lead.
        _ => 0.25,
    }
}

/// The points the team that wins a trick gets from `card` in it: a bower or the
/// joker is a whole point; game-count cards help towards the Game point (a ten is
/// worth about a third of a point, an ace much less). High and Low are not here:
/// they go to whoever *plays* the trump A or 2, whoever wins the trick.
fn point_value(card: Card, trump: Suit) -> f32 {
    let whole_point =
        card == Card::right_bower(trump) || card == Card::left_bower(trump) || card.is_joker();
    let point = if whole_point { 1.0 } else { 0.0 };
    point + card.game_value() as f32 / 30.0
}

/// How useful `card` still is for winning a later trick, from 0 (useless) to 1
/// (a sure trick). `unseen` are the cards we have not seen: in other hands, or
/// among the discards.
fn strength_value(card: Card, trump: Suit, unseen: CardSet) -> f32 {
    let strength = card.trump_strength(trump);
    if strength > 0 {
        if is_master_trump(card, trump, unseen) {
            // Nobody can beat it: it will win a trick whenever we want.
            1.0
        } else {
            f32::from(strength) / 20.0
        }
    } else {
        // An off-suit card wins only if its suit is led and nobody trumps it; only
        // aces and kings have much of a chance. The rank makes low cards go first.
        let rank = card.rank().map_or(0, Rank::index) as f32;
        let bonus = match card.rank() {
            Some(Rank::Ace) => 0.25,
            Some(Rank::King) => 0.1,
            _ => 0.0,
        };
        bonus + rank / 100.0
    }
}

/// How much a card's later usefulness weighs against points now. Self-play found
/// that a little above 1 is best: a strong card kept also keeps control of later
/// tricks.
const KEEP_WEIGHT: f32 = 1.5;

/// A trump higher than every trump we have not seen.
fn is_master_trump(card: Card, trump: Suit, unseen: CardSet) -> bool {
    let strength = card.trump_strength(trump);
    strength > 0
        && unseen
            .intersection(CardSet::trumps(trump))
            .iter()
            .all(|c| c.trump_strength(trump) < strength)
}

/// The card of `cards` with the highest `score` (the first one on ties, in card
/// order, so that the choice depends on nothing but the request).
fn best_by(cards: CardSet, score: impl Fn(Card) -> f32) -> Option<Card> {
    let mut best: Option<(Card, f32)> = None;
    for card in cards {
        let s = score(card);
        let better = match best {
            None => true,
            Some((_, best_score)) => s > best_score,
        };
        if better {
            best = Some((card, s));
        }
    }
    best.map(|(card, _)| card)
}

// ---------------------------------------------------------------------------
// Bidding and naming trump
// ---------------------------------------------------------------------------

/// Points our team wins on average as bidder even without a single trump: the
/// partner's cards, the draws from the stock, the lead to the first trick.
///
/// With it, a hand whose estimate just reaches the bid makes it only about 60% of
/// the time, yet bidding it wins more games than passing: a failed bid of 3 costs
/// 3, but passing hands the contract (and the choice of trump) to another team.
const BASE_VALUE: f32 = 1.0;

/// Outbidding our own partner takes a hand this much better: they will name a
/// trump that suits them, and we would only take the risk over.
const PARTNER_MARGIN: f32 = 1.0;

/// Expected points for our team if `trump` is trump and we hold `hand`.
fn hand_value(hand: CardSet, trump: Suit) -> f32 {
    let held = hand.intersection(CardSet::trumps(trump));
    BASE_VALUE + held.iter().map(|c| trump_card_value(c, trump)).sum::<f32>()
}

/// The suit with the highest `hand_value`, and that value (ties: S, H, D, C).
fn best_suit(hand: CardSet) -> (Suit, f32) {
    let mut best = (Suit::Spades, f32::MIN);
    for suit in Suit::ALL {
        let value = hand_value(hand, suit);
        if value > best.1 {
            best = (suit, value);
        }
    }
    best
}

fn bid(view: &SeatView, calls: &[Call]) -> Action {
    let can_pass = calls.contains(&Call::Pass);
    let lowest = calls
        .iter()
        .filter_map(|call| match call {
            Call::Bid(n) => Some(*n),
            Call::Pass => None,
        })
        .min();
    let Some(lowest) = lowest else {
        return Action::Pass;
    };
    // A stuck dealer may not pass: the cheapest bid loses the least if it fails.
    if !can_pass {
        return Action::Bid(lowest);
    }
    let (_, value) = best_suit(view.hand);
    // The highest bid so far is the last bid in the auction (bids only go up).
    let high_bidder = view.bids.iter().rev().find_map(|call| match call.bid {
        Call::Bid(_) => Some(call.seat),
        Call::Pass => None,
    });
    let margin = if high_bidder == Some(view.partner) {
        PARTNER_MARGIN
    } else {
        0.0
    };
    // Always the cheapest legal bid: a made contract scores every point won
    // anyway, so a higher bid only adds risk.
    if value >= f32::from(lowest) + margin {
        Action::Bid(lowest)
    } else {
        Action::Pass
    }
}

fn best_trump(view: &SeatView, suits: &[Suit]) -> Option<Suit> {
    let (suit, _) = best_suit(view.hand);
    suits.contains(&suit).then_some(suit)
}

// ---------------------------------------------------------------------------
// Exchange and the dealer's discard
// ---------------------------------------------------------------------------

/// How much a card is worth keeping; the lowest go first.
fn keep_value(card: Card, trump: Suit) -> f32 {
    if card.is_trump(trump) {
        // Trumps are always worth keeping; the order matters only for a dealer
        // holding more than six: keep the strong ones and the ten (game count).
        return 100.0 + f32::from(card.trump_strength(trump)) + card.game_value() as f32 / 2.0;
    }
    card.rank().map_or(0, Rank::index) as f32
}

/// The `count` cards of `from` least worth keeping.
fn weakest(trump: Suit, from: CardSet, count: usize) -> CardSet {
    let mut cards: Vec<Card> = from.iter().collect();
    // A stable sort: equal cards stay in card order, so the choice is repeatable.
    cards.sort_by(|&a, &b| keep_value(a, trump).total_cmp(&keep_value(b, trump)));
    cards.into_iter().take(count).collect()
}

/// Non-dealer: discard as many non-trumps as allowed (`max`, at most three; `from`
/// is all of our non-trumps), weakest first. Even an off-suit ace rarely wins a
/// trick when all 15 trumps are in play, so a fresh card is worth more.
fn exchange(trump: Suit, from: CardSet, max: u8) -> CardSet {
    weakest(trump, from, usize::from(max))
}

/// Dealer: discard every card of `must` and the `count` weakest cards of `from`.
fn dealer_discard(trump: Suit, must: CardSet, from: CardSet, count: u8) -> CardSet {
    must.union(weakest(trump, from, usize::from(count)))
}

// ---------------------------------------------------------------------------
// Play
// ---------------------------------------------------------------------------

/// What the seat knows about the cards during play, and the odds it derives.
struct Table {
    trump: Suit,
    me: Seat,
    /// Cards not in our hand and not seen played: in another hand, or discarded.
    unseen: CardSet,
    /// `void[seat][suit]`: the seat once did not follow that (effective) suit, so
    /// it holds none of it.
    void: [[bool; 4]; 6],
    /// Cards still in each other seat's hand.
    hand_size: [u32; 6],
    /// The chance that an unseen non-trump is still in someone's hand rather than
    /// among the discards. (Trumps are in play: only a dealer holding more than
    /// six may discard one.)
    in_play: f32,
}

impl Table {
    fn new(view: &SeatView, trump: Suit, trick: &TrickView) -> Table {
        let mut seen = view.hand;
        if let Some(own) = &view.own_exchange {
            // Our own discards are out of play, and we know it.
            seen = seen.union(own.discarded);
        }
        let mut void = [[false; 4]; 6];
        for t in view.tricks.iter().chain(std::iter::once(trick)) {
            let Some(first) = t.cards.first() else {
                continue;
            };
            let led = first.card.effective_suit(trump);
            for p in &t.cards {
                seen.insert(p.card);
                if p.card.effective_suit(trump) != led {
                    void[p.seat.index()][led.index()] = true;
                }
            }
        }
        let unseen = CardSet::FULL.difference(seen);
        // Every seat starts a trick with 6 - (tricks played) cards.
        let mut hand_size = [6u32.saturating_sub(view.tricks.len() as u32); 6];
        for p in &trick.cards {
            hand_size[p.seat.index()] = hand_size[p.seat.index()].saturating_sub(1);
        }
        hand_size[view.seat.index()] = 0;
        let in_hands: u32 = hand_size.iter().sum();
        let unseen_trumps = unseen.intersection(CardSet::trumps(trump)).len();
        let unseen_others = unseen.len().saturating_sub(unseen_trumps);
        let in_play = if unseen_others == 0 {
            0.0
        } else {
            (in_hands.saturating_sub(unseen_trumps) as f32 / unseen_others as f32).min(1.0)
        };
        Table {
            trump,
            me: view.seat,
            unseen,
            void,
            hand_size,
            in_play,
        }
    }

    /// How strong `card` is in a trick whose led suit is `led` (as in the rules
    /// engine): any trump beats any non-trump, a card off the led suit never wins.
    fn power(&self, card: Card, led: Suit) -> u16 {
        let t = card.trump_strength(self.trump);
        if t > 0 {
            100 + u16::from(t)
        } else if card.effective_suit(self.trump) == led {
            1 + card.rank().map_or(0, Rank::index) as u16
        } else {
            0
        }
    }

    /// The chance that `seat` holds the unseen `card`: none if it showed out of the
    /// card's suit, else its share of the cards of the seats that may hold it.
    fn holds(&self, seat: Seat, card: Card) -> f32 {
        let suit = card.effective_suit(self.trump).index();
        if self.void[seat.index()][suit] || !self.unseen.contains(card) {
            return 0.0;
        }
        let candidates: u32 = Seat::all()
            .filter(|s| !self.void[s.index()][suit])
            .map(|s| self.hand_size[s.index()])
            .sum();
        if candidates == 0 {
            return 0.0;
        }
        let in_play = if card.is_trump(self.trump) {
            1.0
        } else {
            self.in_play
        };
        in_play * self.hand_size[seat.index()] as f32 / candidates as f32
    }

    /// The chance that `seat` holds at least one of `cards` (treating the cards as
    /// independent, which is close enough).
    fn holds_any(&self, seat: Seat, cards: CardSet) -> f32 {
        1.0 - cards
            .iter()
            .map(|c| 1.0 - self.holds(seat, c))
            .product::<f32>()
    }

    /// The chance that `seat`, playing later to a trick led in `led`, beats `card`.
    fn beat_chance(&self, seat: Seat, card: Card, led: Suit) -> f32 {
        let power = self.power(card, led);
        let higher = |set: CardSet| -> CardSet {
            set.iter().filter(|&c| self.power(c, led) > power).collect()
        };
        let trumps = self.unseen.intersection(CardSet::trumps(self.trump));
        if led == self.trump {
            // A trump lead: only a higher trump beats it.
            return self.holds_any(seat, higher(trumps));
        }
        // The seat must follow suit if it can; it may trump only if it cannot.
        let led_cards = self
            .unseen
            .intersection(CardSet::effective_suit(led, self.trump));
        let void_in_led = 1.0 - self.holds_any(seat, led_cards);
        if card.is_trump(self.trump) {
            void_in_led * self.holds_any(seat, higher(trumps))
        } else {
            self.holds_any(seat, higher(led_cards)) + void_in_led * self.holds_any(seat, trumps)
        }
    }

    /// The chance that `card`, best so far in a trick led in `led`, stays best
    /// while the opponents among `later` play.
    fn hold_chance(&self, later: &[Seat], card: Card, led: Suit) -> f32 {
        later
            .iter()
            .filter(|s| s.team() != self.me.team())
            .map(|&s| 1.0 - self.beat_chance(s, card, led))
            .product()
    }

    /// What playing `card` uses up: its usefulness for later tricks, weighted.
    fn spend_cost(&self, card: Card) -> f32 {
        KEEP_WEIGHT * strength_value(card, self.trump, self.unseen)
    }
}

fn play(view: &SeatView, legal: CardSet) -> Option<Card> {
    let trump = view.trump?;
    let trick = view.trick.as_ref()?;
    let table = Table::new(view, trump, trick);
    if trick.cards.is_empty() {
        lead(&table, legal)
    } else {
        follow(&table, legal, trick)
    }
}

/// A card that wins the trick with at least this chance counts as a sure winner.
const SURE: f32 = 0.9;

/// Leading a trick: every other seat plays after us.
fn lead(t: &Table, legal: CardSet) -> Option<Card> {
    let others: Vec<Seat> = (1..6).map(|i| t.me.plus(i)).collect();
    let win_chance = |c: Card| t.hold_chance(&others, c, c.effective_suit(t.trump));
    let sure: CardSet = legal.iter().filter(|&c| win_chance(c) >= SURE).collect();
    // A sure-winning trump while others still hold trumps: they must follow with
    // them, so this pulls the bowers, the joker and the ten of trump into our trick.
    let trumps_out = !t.unseen.intersection(CardSet::trumps(t.trump)).is_empty();
    if trumps_out {
        let sure_trumps = sure.intersection(CardSet::trumps(t.trump));
        if let Some(c) = best_by(sure_trumps, |c| f32::from(c.trump_strength(t.trump))) {
            return Some(c);
        }
    }
    // Any other sure winner: lead the one worth the most points (say the joker
    // once nobody else has a trump left).
    if let Some(c) = best_by(sure, |c| point_value(c, t.trump)) {
        return Some(c);
    }
    // Nothing sure: lead the card we mind losing least.
    best_by(legal, |c| -(point_value(c, t.trump) + t.spend_cost(c)))
}

/// Following to a trick already started: score every legal card by the points we
/// expect from this trick, minus what the card would still be worth later.
fn follow(t: &Table, legal: CardSet, trick: &TrickView) -> Option<Card> {
    let cards: Vec<Card> = trick.cards.iter().map(|p| p.card).collect();
    let led = cards[0].effective_suit(t.trump);
    let best = trick_winner(&cards, t.trump);
    let (winning_seat, winning_card) = (trick.cards[best].seat, cards[best]);
    // The seats still to play after us.
    let later: Vec<Seat> = (cards.len() + 1..6).map(|i| trick.leader.plus(i)).collect();
    // Points already in the trick, for whoever ends up winning it.
    let stake: f32 = cards.iter().map(|&c| point_value(c, t.trump)).sum();
    // Unless our card takes the lead in the trick, the trick is ours only if our
    // partner is winning it and nobody beats them.
    let partner_chance = if winning_seat.team() == t.me.team() {
        t.hold_chance(&later, winning_card, led)
    } else {
        0.0
    };
    best_by(legal, |c| {
        let ours = if t.power(c, led) > t.power(winning_card, led) {
            t.hold_chance(&later, c, led)
        } else {
            partner_chance
        };
        let points = point_value(c, t.trump);
        // Won: the stake and our card's points are ours. Lost: our card's points go
        // to the other side. Either way the card is spent. (So a card that only
        // overtakes a safe partner scores no better than a cheap one: we keep it.)
        ours * (stake + points) - (1.0 - ours) * points - t.spend_cost(c)
    })
}

// ---------------------------------------------------------------------------
// No opinion
// ---------------------------------------------------------------------------

/// The first legal action, as the referee's own fallback would choose it.
fn first_legal(req: &Request) -> Action {
    match &req.legal {
        LegalWire::Bids(calls) => match calls.first() {
            Some(Call::Bid(n)) => Action::Bid(*n),
            _ => Action::Pass,
        },
        LegalWire::Suits(suits) => Action::Trump(suits.first().copied().unwrap_or(Suit::Spades)),
        LegalWire::Cards {
            must, from, min, ..
        } => {
            let chosen: CardSet = from.iter().take(usize::from(*min)).collect();
            Action::cards(req.decision, must.union(chosen))
        }
        LegalWire::Play(cards) => Action::Play(cards.first().unwrap_or(Card::JOKER)),
    }
}
