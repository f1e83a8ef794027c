//! The game state machine: deal -> bidding -> trump -> exchange -> dealer's discard
//! -> six tricks -> scoring, repeated until a team wins or the hand cap is hit.
//!
//! Pure: a seed (or explicit hands) comes in, events come out. `apply` either
//! changes the state and appends events, or returns a [`RuleError`] and leaves the
//! state exactly as it was.

use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::seat::{Seat, Team};
use crate::shuffle;

use super::action::{Action, Decision, Legal};
use super::config::RulesConfig;
use super::error::RuleError;
use super::event::{Call, EndReason, Event, HandScore, Played};
use super::scoring::{self, Points};
use super::trick::{legal_plays, trick_winner};

/// Cards dealt to each seat.
pub const HAND_SIZE: usize = 6;
/// Cards left in the stock after the deal.
pub const STOCK_SIZE: usize = 17;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Bidding,
    Trump,
    Exchange,
    DealerDiscard,
    Play,
    Over,
}

/// `ROTATION[s][n]`: the seat `n` places left of seat `s` (`Seat::plus` without
/// the division).
const ROTATION: [[Seat; 6]; 6] = {
    let mut table = [[Seat::new(0); 6]; 6];
    let mut s = 0;
    while s < 6 {
        let mut n = 0;
        while n < 6 {
            table[s][n] = Seat::new((s + n) % 6);
            n += 1;
        }
        s += 1;
    }
    table
};

/// `GAME_VALUES[card]`: [`Card::game_value`] as a table.
const GAME_VALUES: [u8; Card::COUNT] = {
    let mut table = [0; Card::COUNT];
    let mut i = 0;
    while i < Card::COUNT {
        table[i] = Card::from_index(i).game_value() as u8;
        i += 1;
    }
    table
};

/// The seat `n` (< 6) places left of `seat`.
#[inline]
fn plus(seat: Seat, n: usize) -> Seat {
    ROTATION[seat.index()][n]
}

/// A completed trick, as the state keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrickRecord {
    pub leader: Seat,
    pub cards: [Card; 6],
    pub winner: Seat,
}

/// The parts of a [`Game`] that world sampling re-deals ([`Game::set_hidden`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hidden {
    /// The seed of the deals after this one.
    pub seed: u64,
    pub hands: [CardSet; 6],
    pub stock: [Card; STOCK_SIZE],
    pub exchanges: [Option<(CardSet, CardSet)>; 6],
    pub dealer_pickup: CardSet,
    pub dealer_discard: Option<CardSet>,
}

/// The full, omniscient state of one game.
#[derive(Clone, Debug)]
pub struct Game {
    pub(crate) config: RulesConfig,
    seed: u64,
    /// Deals started so far; the current deal's number (1-based).
    pub(crate) deals: u32,
    pub(crate) dealer: Seat,
    /// Consecutive thrown-in deals.
    streak: u32,
    pub(crate) scores: [i32; 3],
    pub(crate) phase: Phase,
    pub(crate) turn: Seat,
    pub(crate) hands: [CardSet; 6],
    stock: [Card; STOCK_SIZE],
    stock_top: usize,
    /// Calls of this deal's auction, in order.
    pub(crate) calls: [(Seat, Call); 6],
    pub(crate) n_calls: usize,
    pub(crate) high_bid: u8,
    pub(crate) bidder: Seat,
    pub(crate) trump: Suit,
    /// Per seat: (discarded, drawn) once it has exchanged.
    pub(crate) exchanges: [Option<(CardSet, CardSet)>; 6],
    /// The dealer's pickup and discard, once made.
    pub(crate) dealer_pickup: CardSet,
    pub(crate) dealer_discard: Option<CardSet>,
    pub(crate) leader: Seat,
    pub(crate) trick: [Card; 6],
    pub(crate) trick_len: usize,
    /// The current trick's led suit (effective, RULES.md §12); empty while no
    /// card is down. A seat holding one of these must play from `follow_with`.
    follow: CardSet,
    /// The led suit, plus trump under `trump_anytime` (RULES.md §20).
    follow_with: CardSet,
    /// In the play phase, the cards the seat to act may play: worked out once
    /// when its turn comes, read by `legal_plays` and checked against by `play`.
    playable: CardSet,
    pub(crate) tricks: [TrickRecord; 6],
    pub(crate) n_tricks: usize,
    /// Game count (RULES.md §23) of the tricks won so far, per team.
    game_counts: [u32; 3],
    high: Option<Team>,
    low: Option<Team>,
    right: Option<Team>,
    left: Option<Team>,
    joker: Option<Team>,
    pub(crate) winner: Option<Team>,
}

impl Game {
    /// A new game: the first dealer and every deal's cards come from `seed` (see
    /// [`crate::shuffle`]). Appends the first `Deal` event to `out`.
    pub fn start(seed: u64, config: RulesConfig, out: &mut Vec<Event>) -> Game {
        let mut game = Game::blank(seed, config, shuffle::first_dealer(seed));
        game.deal_from_seed(out);
        game
    }

    /// Convenience for [`Game::start`] returning the events.
    pub fn new(seed: u64, config: RulesConfig) -> (Game, Vec<Event>) {
        let mut out = Vec::new();
        let game = Game::start(seed, config, &mut out);
        (game, out)
    }

    /// A game whose first deal is given explicitly (for tests and for bots that
    /// simulate from a guess at the hidden cards). Later deals come from `seed`.
    /// Panics unless the hands and stock are 6 x 6 + 17 distinct cards.
    pub fn from_deal(
        seed: u64,
        config: RulesConfig,
        dealer: Seat,
        hands: [CardSet; 6],
        stock: [Card; STOCK_SIZE],
        out: &mut Vec<Event>,
    ) -> Game {
        let mut all = CardSet::EMPTY;
        for h in hands {
            assert_eq!(h.len() as usize, HAND_SIZE, "every hand has six cards");
            all = all.union(h);
        }
        all = all.union(stock.iter().copied().collect());
        assert_eq!(
            all,
            CardSet::FULL,
            "hands and stock must be the 53 distinct cards"
        );
        let mut game = Game::blank(seed, config, dealer);
        game.begin_deal(hands, stock, out);
        game
    }

    /// [`Game::from_deal`] for a deal later in a game: deal number `deal`
    /// (1-based), `scores` before it, `streak` thrown-in deals just before it.
    /// For world sampling (`crate::worlds`), which replays a seat's view onto it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_deal_at(
        seed: u64,
        config: RulesConfig,
        dealer: Seat,
        deal: u32,
        scores: [i32; 3],
        streak: u32,
        hands: [CardSet; 6],
        stock: [Card; STOCK_SIZE],
    ) -> Game {
        let mut game = Game::blank(seed, config, dealer);
        game.deals = deal.saturating_sub(1);
        game.scores = scores;
        game.streak = streak;
        game.begin_deal(hands, stock, &mut Vec::new());
        game
    }

    /// Overwrites the cards a seat's view does not show, keeping everything
    /// public (world sampling: a template world replayed once, then re-dealt).
    /// The caller keeps the state consistent: what each seat played, the stock
    /// already drawn, and who has exchanged are unchanged.
    pub(crate) fn set_hidden(&mut self, hidden: &Hidden) {
        self.seed = hidden.seed;
        self.hands = hidden.hands;
        self.stock = hidden.stock;
        self.exchanges = hidden.exchanges;
        self.dealer_pickup = hidden.dealer_pickup;
        self.dealer_discard = hidden.dealer_discard;
        if self.phase == Phase::Play {
            self.update_playable();
        }
    }

    fn blank(seed: u64, config: RulesConfig, dealer: Seat) -> Game {
        let nobody = Seat::new(0);
        Game {
            config,
            seed,
            deals: 0,
            dealer,
            streak: 0,
            scores: [0; 3],
            phase: Phase::Bidding,
            turn: dealer.left(),
            hands: [CardSet::EMPTY; 6],
            stock: [Card::JOKER; STOCK_SIZE],
            stock_top: 0,
            calls: [(nobody, Call::Pass); 6],
            n_calls: 0,
            high_bid: 0,
            bidder: nobody,
            trump: Suit::Spades,
            exchanges: [None; 6],
            dealer_pickup: CardSet::EMPTY,
            dealer_discard: None,
            leader: nobody,
            trick: [Card::JOKER; 6],
            trick_len: 0,
            follow: CardSet::EMPTY,
            follow_with: CardSet::EMPTY,
            playable: CardSet::EMPTY,
            tricks: [TrickRecord {
                leader: nobody,
                cards: [Card::JOKER; 6],
                winner: nobody,
            }; 6],
            n_tricks: 0,
            game_counts: [0; 3],
            high: None,
            low: None,
            right: None,
            left: None,
            joker: None,
            winner: None,
        }
    }

    /// Deals from the seed: deck card `i` (0..36) goes to the seat `1 + i mod 6`
    /// places left of the dealer, one card at a time; the last 17 are the stock.
    #[inline(never)]
    fn deal_from_seed(&mut self, out: &mut Vec<Event>) {
        let deck = shuffle::deck_order(self.seed, u64::from(self.deals));
        // Round by round: card `6 * r + k` goes to seat dealer + 1 + k.
        let mut by_position = [0u64; 6];
        for round in deck[..36].chunks_exact(6) {
            for (bits, &card) in by_position.iter_mut().zip(round) {
                *bits |= 1 << card.index();
            }
        }
        let mut hands = [CardSet::EMPTY; 6];
        for (k, bits) in by_position.into_iter().enumerate() {
            hands[plus(self.dealer, (1 + k) % 6).index()] = CardSet::from_bits(bits);
        }
        let mut stock = [Card::JOKER; STOCK_SIZE];
        stock.copy_from_slice(&deck[36..]);
        self.begin_deal(hands, stock, out);
    }

    fn begin_deal(&mut self, hands: [CardSet; 6], stock: [Card; STOCK_SIZE], out: &mut Vec<Event>) {
        self.deals += 1;
        self.hands = hands;
        self.stock = stock;
        self.stock_top = 0;
        self.phase = Phase::Bidding;
        self.turn = self.dealer.left();
        self.n_calls = 0;
        self.high_bid = 0;
        self.exchanges = [None; 6];
        self.dealer_pickup = CardSet::EMPTY;
        self.dealer_discard = None;
        self.trick_len = 0;
        self.follow = CardSet::EMPTY;
        self.follow_with = CardSet::EMPTY;
        self.playable = CardSet::EMPTY;
        self.n_tricks = 0;
        self.game_counts = [0; 3];
        self.high = None;
        self.low = None;
        self.right = None;
        self.left = None;
        self.joker = None;
        out.push(Event::Deal {
            deal: self.deals,
            dealer: self.dealer,
            hands,
            stock,
        });
    }

    // ----- queries -----

    pub fn config(&self) -> &RulesConfig {
        &self.config
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The seat whose decision is due, or `None` once the game is over.
    pub fn to_act(&self) -> Option<Seat> {
        (self.phase != Phase::Over).then_some(self.turn)
    }

    pub fn is_over(&self) -> bool {
        self.phase == Phase::Over
    }

    /// The winning team once the game is over (`None` also for a capped game).
    pub fn winner(&self) -> Option<Team> {
        self.winner
    }

    pub fn scores(&self) -> [i32; 3] {
        self.scores
    }

    pub fn dealer(&self) -> Seat {
        self.dealer
    }

    pub fn deals(&self) -> u32 {
        self.deals
    }

    pub fn hand(&self, seat: Seat) -> CardSet {
        self.hands[seat.index()]
    }

    /// Trump, once named for the current deal.
    pub fn trump(&self) -> Option<Suit> {
        matches!(
            self.phase,
            Phase::Exchange | Phase::DealerDiscard | Phase::Play
        )
        .then_some(self.trump)
    }

    /// The kind of decision due, if any.
    #[inline]
    pub fn decision(&self) -> Option<Decision> {
        Some(match self.phase {
            Phase::Bidding => Decision::Bid,
            Phase::Trump => Decision::Trump,
            Phase::Exchange => Decision::Exchange,
            Phase::DealerDiscard => Decision::Discard,
            Phase::Play => Decision::Play,
            Phase::Over => return None,
        })
    }

    fn dealer_is_stuck(&self) -> bool {
        self.turn == self.dealer
            && self.high_bid == 0
            && (self.config.stick_the_dealer || self.streak >= self.config.redeal_limit)
    }

    /// Every legal choice for the decision due (`None` once the game is over).
    #[inline]
    pub fn legal(&self) -> Option<Legal> {
        let hand = self.hands[self.turn.index()];
        Some(match self.phase {
            Phase::Bidding => Legal::Bid {
                pass: !self.dealer_is_stuck(),
                lowest: self.high_bid.max(2) + 1,
            },
            Phase::Trump => Legal::Trump,
            Phase::Exchange => {
                let from = hand.difference(CardSet::trumps(self.trump));
                Legal::Cards {
                    must: CardSet::EMPTY,
                    from,
                    min: 0,
                    max: from.len().min(3) as u8,
                }
            }
            Phase::DealerDiscard => {
                let trumps = CardSet::trumps(self.trump);
                let held_trumps = hand.intersection(trumps);
                let others = hand.difference(trumps);
                if held_trumps.len() as usize <= HAND_SIZE {
                    let n = (hand.len() as usize - HAND_SIZE) as u8;
                    Legal::Cards {
                        must: CardSet::EMPTY,
                        from: others,
                        min: n,
                        max: n,
                    }
                } else {
                    let n = (held_trumps.len() as usize - HAND_SIZE) as u8;
                    let from = held_trumps.difference(CardSet::protected(self.trump));
                    Legal::Cards {
                        must: others,
                        from,
                        min: n,
                        max: n,
                    }
                }
            }
            Phase::Play => Legal::Play(self.legal_plays()),
            Phase::Over => return None,
        })
    }

    /// The cards the seat to act may play (empty outside the play phase).
    #[inline]
    pub fn legal_plays(&self) -> CardSet {
        if self.phase != Phase::Play {
            return CardSet::EMPTY;
        }
        debug_assert_eq!(
            self.playable,
            legal_plays(
                self.hands[self.turn.index()],
                (self.trick_len > 0).then(|| self.trick[0]),
                self.trump,
                self.config.trump_anytime
            )
        );
        self.playable
    }

    /// Works out `playable` for the seat to act, in the play phase: what
    /// `trick::legal_plays` gives, from the led suit kept since the trick's
    /// first card (two ANDs and a select instead of table look-ups).
    #[inline]
    fn update_playable(&mut self) {
        let hand = self.hands[self.turn.index()];
        // Branch-free (whether the seat can follow depends on random cards): all
        // of the hand if it holds none of the led suit, else what follows it.
        let void = u64::from(hand.intersection(self.follow).is_empty()).wrapping_neg();
        self.playable = hand.intersection(CardSet::from_bits(void | self.follow_with.bits()));
    }

    // ----- transitions -----

    /// Convenience for [`Game::apply_into`] returning the events.
    pub fn apply(&mut self, action: Action) -> Result<Vec<Event>, RuleError> {
        let mut out = Vec::new();
        self.apply_into(action, &mut out)?;
        Ok(out)
    }

    /// Applies the decision of the seat to act. On success appends the resulting
    /// events to `out` (the action itself first); on error changes nothing.
    #[inline]
    pub fn apply_into(&mut self, action: Action, out: &mut Vec<Event>) -> Result<(), RuleError> {
        // Plays, 36 of a hand's ~49 decisions, go straight to `play`; the rest
        // (and every mismatch) out of line.
        if let (Phase::Play, Action::Play(card)) = (self.phase, action) {
            return self.play(card, out);
        }
        self.apply_other(action, out)
    }

    #[inline(never)]
    fn apply_other(&mut self, action: Action, out: &mut Vec<Event>) -> Result<(), RuleError> {
        let due = self.decision().ok_or(RuleError::GameOver)?;
        let got = match action {
            Action::Pass | Action::Bid(_) => Decision::Bid,
            Action::Trump(_) => Decision::Trump,
            Action::Exchange(_) => Decision::Exchange,
            Action::Discard(_) => Decision::Discard,
            Action::Play(_) => Decision::Play,
        };
        if got != due {
            return Err(RuleError::WrongDecision { expected: due, got });
        }
        match action {
            Action::Pass | Action::Bid(_) => {
                // One call site, so that `call` is inlined.
                let call = match action {
                    Action::Bid(n) => Call::Bid(n),
                    _ => Call::Pass,
                };
                self.call(call, out)
            }
            Action::Trump(suit) => {
                self.trump = suit;
                out.push(Event::Trump {
                    seat: self.turn,
                    bid: self.high_bid,
                    suit,
                });
                self.phase = Phase::Exchange;
                self.turn = self.dealer.left();
                Ok(())
            }
            Action::Exchange(cards) => self.exchange(cards, out),
            Action::Discard(cards) => self.dealer_discards(cards, out),
            Action::Play(card) => self.play(card, out),
        }
    }

    // `call`, `exchange` and `dealer_discards` only run from `apply_other`, out
    // of line already; `finish_trick`, `score_hand` and `deal_from_seed` are kept
    // out of line so that `play`, which runs for every card, stays small.
    #[inline]
    fn call(&mut self, call: Call, out: &mut Vec<Event>) -> Result<(), RuleError> {
        match call {
            Call::Pass if self.dealer_is_stuck() => return Err(RuleError::DealerMustBid),
            Call::Pass => {}
            Call::Bid(n) if !(3..=6).contains(&n) => {
                return Err(RuleError::BidOutOfRange { bid: n })
            }
            Call::Bid(n) if n <= self.high_bid => {
                return Err(RuleError::BidTooLow {
                    bid: n,
                    highest: self.high_bid,
                })
            }
            Call::Bid(n) => {
                self.high_bid = n;
                self.bidder = self.turn;
            }
        }
        self.calls[self.n_calls] = (self.turn, call);
        self.n_calls += 1;
        out.push(Event::Bid {
            seat: self.turn,
            bid: call,
        });
        if self.high_bid == 6 || self.turn == self.dealer {
            if self.high_bid == 0 {
                self.streak += 1;
                out.push(Event::ThrownIn {
                    deal: self.deals,
                    dealer: self.dealer,
                    streak: self.streak,
                });
                self.end_of_deal(None, out);
            } else {
                self.phase = Phase::Trump;
                self.turn = self.bidder;
            }
        } else {
            self.turn = self.turn.left();
        }
        Ok(())
    }

    #[inline]
    fn exchange(&mut self, cards: CardSet, out: &mut Vec<Event>) -> Result<(), RuleError> {
        let seat = self.turn;
        let hand = self.hands[seat.index()];
        if !cards.is_subset(hand) {
            return Err(RuleError::CardsNotInHand {
                seat,
                cards: cards.difference(hand),
            });
        }
        if cards.len() > 3 {
            return Err(RuleError::TooManyExchanged { count: cards.len() });
        }
        if let Some(card) = cards.intersection(CardSet::trumps(self.trump)).first() {
            return Err(RuleError::TrumpDiscarded { card });
        }
        let n = cards.len() as usize;
        let drawn: CardSet = self.stock[self.stock_top..self.stock_top + n]
            .iter()
            .copied()
            .collect();
        self.stock_top += n;
        self.hands[seat.index()] = hand.difference(cards).union(drawn);
        self.exchanges[seat.index()] = Some((cards, drawn));
        out.push(Event::Exchange {
            seat,
            discarded: cards,
            drawn,
        });
        self.turn = seat.left();
        if self.turn == self.dealer {
            let rest: CardSet = self.stock[self.stock_top..].iter().copied().collect();
            self.stock_top = STOCK_SIZE;
            self.dealer_pickup = rest;
            self.hands[self.dealer.index()] = self.hands[self.dealer.index()].union(rest);
            self.phase = Phase::DealerDiscard;
        }
        Ok(())
    }

    #[inline]
    fn dealer_discards(&mut self, cards: CardSet, out: &mut Vec<Event>) -> Result<(), RuleError> {
        let seat = self.turn;
        let hand = self.hands[seat.index()];
        if !cards.is_subset(hand) {
            return Err(RuleError::CardsNotInHand {
                seat,
                cards: cards.difference(hand),
            });
        }
        let need = hand.len() - HAND_SIZE as u32;
        if cards.len() != need {
            return Err(RuleError::WrongDiscardCount {
                need,
                count: cards.len(),
            });
        }
        if let Some(card) = cards.intersection(CardSet::protected(self.trump)).first() {
            return Err(RuleError::ProtectedDiscarded { card });
        }
        let trumps = CardSet::trumps(self.trump);
        let keep = hand.intersection(trumps).len().min(HAND_SIZE as u32);
        let kept = hand.difference(cards).intersection(trumps).len();
        if kept < keep {
            return Err(RuleError::TrumpsNotKept { keep, kept });
        }
        self.hands[seat.index()] = hand.difference(cards);
        self.dealer_discard = Some(cards);
        out.push(Event::DealerDiscard {
            seat,
            picked_up: self.dealer_pickup,
            discarded: cards,
        });
        self.phase = Phase::Play;
        self.leader = self.bidder;
        self.turn = self.bidder;
        self.update_playable();
        Ok(())
    }

    /// A card from the seat to act, in the play phase. Inlined into
    /// `apply_into`'s fast path (saving a call and its register spills for
    /// every card).
    #[inline(always)]
    fn play(&mut self, card: Card, out: &mut Vec<Event>) -> Result<(), RuleError> {
        let seat = self.turn;
        // The legal cards are a subset of the hand: one test admits the card.
        if !self.legal_plays().contains(card) {
            return Err(self.play_error(card));
        }
        self.hands[seat.index()].remove(card);
        if self.trick_len == 0 {
            self.follow = CardSet::suit_of(card, self.trump);
            self.follow_with = if self.config.trump_anytime {
                self.follow.union(CardSet::trumps(self.trump))
            } else {
                self.follow
            };
        }
        self.trick[self.trick_len] = card;
        self.trick_len += 1;
        out.push(Event::Play { seat, card });
        if card == Card::new(Rank::Ace, self.trump) {
            self.high = Some(seat.team());
        } else if card == Card::new(Rank::Two, self.trump) {
            self.low = Some(seat.team());
        }
        if self.trick_len < 6 {
            self.turn = plus(seat, 1);
            self.update_playable();
        } else {
            self.finish_trick(out);
        }
        Ok(())
    }

    /// Why the seat to act may not play `card`: not in its hand, or not
    /// following suit.
    #[cold]
    #[inline(never)]
    fn play_error(&self, card: Card) -> RuleError {
        let seat = self.turn;
        if !self.hands[seat.index()].contains(card) {
            return RuleError::NotInHand { seat, card };
        }
        RuleError::MustFollow {
            seat,
            card,
            led: self.playable,
        }
    }

    /// The sixth card is down: the trick's winner, the points it carries, the
    /// `Trick` event, and the hand's scoring after the sixth trick.
    #[inline(never)]
    fn finish_trick(&mut self, out: &mut Vec<Event>) {
        let winner = plus(self.leader, trick_winner(&self.trick, self.trump));
        let team = winner.team();
        let mut cards = CardSet::EMPTY;
        let mut count = 0;
        for c in self.trick {
            cards.insert(c);
            count += u32::from(GAME_VALUES[c.index()]);
        }
        self.game_counts[team.index()] += count;
        if cards.contains(Card::right_bower(self.trump)) {
            self.right = Some(team);
        }
        if cards.contains(Card::left_bower(self.trump)) {
            self.left = Some(team);
        }
        if cards.contains(Card::JOKER) {
            self.joker = Some(team);
        }
        let leader = self.leader;
        self.tricks[self.n_tricks] = TrickRecord {
            leader,
            cards: self.trick,
            winner,
        };
        self.n_tricks += 1;
        out.push(Event::Trick {
            number: self.n_tricks as u8,
            leader,
            cards: std::array::from_fn(|i| Played {
                seat: plus(leader, i),
                card: self.trick[i],
            }),
            winner,
        });
        self.trick_len = 0;
        self.follow = CardSet::EMPTY;
        self.follow_with = CardSet::EMPTY;
        self.leader = winner;
        self.turn = winner;
        self.playable = self.hands[winner.index()];
        if self.n_tricks == 6 {
            self.score_hand(out);
        }
    }

    #[inline(never)]
    fn score_hand(&mut self, out: &mut Vec<Event>) {
        let game_counts = self.game_counts;
        let points = Points {
            high: self.high,
            low: self.low,
            right: self.right,
            left: self.left,
            joker: self.joker,
            game: scoring::game_point(game_counts),
        };
        let bidder_team = self.bidder.team();
        let won = points.won();
        let delta = scoring::score_deltas(&points, bidder_team, self.high_bid);
        for (score, d) in self.scores.iter_mut().zip(delta) {
            *score += d;
        }
        out.push(Event::HandEnd(HandScore {
            deal: self.deals,
            bidder: self.bidder,
            bid: self.high_bid,
            trump: self.trump,
            points,
            game_counts,
            won,
            made: won[bidder_team.index()] >= i32::from(self.high_bid),
            delta,
            scores: self.scores,
        }));
        self.streak = 0;
        let winner = scoring::winner(self.scores, bidder_team, self.config.target);
        self.dealer = self.dealer.left();
        self.end_of_deal(winner, out);
    }

    /// After a thrown-in or scored deal: the game ends, or the next deal starts.
    fn end_of_deal(&mut self, winner: Option<Team>, out: &mut Vec<Event>) {
        let reason = if winner.is_some() {
            EndReason::Target
        } else if self.deals >= self.config.hand_cap {
            EndReason::HandCap
        } else {
            self.deal_from_seed(out);
            return;
        };
        self.winner = winner;
        self.phase = Phase::Over;
        out.push(Event::GameEnd {
            winner,
            scores: self.scores,
            deals: self.deals,
            reason,
        });
    }
}
