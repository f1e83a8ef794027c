//! Property tests over random legal play.
//!
//! A [`Model`] re-derives the game from the engine's events alone, with its own
//! implementation of RULES.md (trump membership, following suit, trick winners,
//! points, scoring, game end) built only on `Card`'s printed rank and suit, and
//! checks every event against it. It is also an oracle for arbitrary actions: the
//! engine must accept exactly the actions the model calls legal, and a refused
//! action must leave the game untouched.

use proptest::prelude::*;

use schmier_protocol::rules::{
    random_legal, Action, Call, Decision, EndReason, Event, Game, HandScore, Legal, RulesConfig,
    SeatView,
};
use schmier_protocol::shuffle::{first_dealer, SeededRng};
use schmier_protocol::{Card, CardSet, Rank, Seat, Suit, Team};

// ----- RULES.md, restated independently of the engine -----

/// The trump suit high to low (RULES.md §10); index 0 is the strongest.
fn trump_order(t: Suit) -> [Card; 15] {
    use Rank::*;
    let r = |rank| Card::new(rank, t);
    [
        r(Ace),
        r(King),
        r(Queen),
        r(Jack),
        Card::new(Jack, left_suit(t)),
        r(Ten),
        r(Nine),
        r(Eight),
        r(Seven),
        r(Six),
        r(Five),
        r(Four),
        r(Three),
        r(Two),
        Card::JOKER,
    ]
}

/// The suit of the same colour as `t`.
fn left_suit(t: Suit) -> Suit {
    match t {
        Suit::Spades => Suit::Clubs,
        Suit::Clubs => Suit::Spades,
        Suit::Hearts => Suit::Diamonds,
        Suit::Diamonds => Suit::Hearts,
    }
}

/// A trump suit with its derived card sets (RULES.md §10-12, §16).
#[derive(Clone, Copy)]
struct Trump {
    suit: Suit,
    /// High to low.
    order: [Card; 15],
    cards: CardSet,
    /// Rule 16: A, both bowers, 2 of trump and the joker.
    protected: CardSet,
}

impl Trump {
    fn new(suit: Suit) -> Trump {
        let order = trump_order(suit);
        Trump {
            suit,
            order,
            cards: order.into_iter().collect(),
            protected: [order[0], order[3], order[4], order[13], order[14]]
                .into_iter()
                .collect(),
        }
    }

    /// Rule 12: the suit a card belongs to while this is trump.
    fn suit_of(&self, c: Card) -> Suit {
        if self.cards.contains(c) {
            self.suit
        } else {
            c.suit().expect("the joker is always trump")
        }
    }

    /// Rule 20: the cards `hand` may play to a trick led with `led`.
    fn may_play(&self, hand: CardSet, led: Option<Card>, trump_anytime: bool) -> CardSet {
        let Some(led) = led else { return hand };
        let s = self.suit_of(led);
        let follow: CardSet = hand.iter().filter(|&c| self.suit_of(c) == s).collect();
        if follow.is_empty() {
            hand
        } else if trump_anytime {
            follow.union(hand.intersection(self.cards))
        } else {
            follow
        }
    }

    /// Rule 21: the index of the winning card, and how many cards share its
    /// power (must be 1).
    fn winner_of(&self, cards: &[Card]) -> (usize, usize) {
        let led = self.suit_of(cards[0]);
        let power = |c: Card| -> i32 {
            if let Some(p) = self.order.iter().position(|&o| o == c) {
                100 - p as i32
            } else if self.suit_of(c) == led {
                c.rank().unwrap().index() as i32
            } else {
                -1
            }
        };
        let best = (0..cards.len()).max_by_key(|&i| power(cards[i])).unwrap();
        let ties = cards
            .iter()
            .filter(|&&c| power(c) == power(cards[best]))
            .count();
        (best, ties)
    }
}

/// Rule 23's game-count values.
fn value(c: Card) -> u32 {
    match c.rank() {
        None => 1,
        Some(Rank::Ace) => 4,
        Some(Rank::King) => 3,
        Some(Rank::Queen) => 2,
        Some(Rank::Jack) => 1,
        Some(Rank::Ten) => 10,
        Some(_) => 0,
    }
}

/// Rule 26: who wins after a hand, if anyone.
fn game_winner(scores: [i32; 3], bidder: usize, target: i32) -> Option<usize> {
    let best = *scores.iter().max().unwrap();
    if best < target {
        return None;
    }
    let leaders: Vec<usize> = (0..3).filter(|&t| scores[t] == best).collect();
    if leaders.len() == 1 {
        Some(leaders[0])
    } else if leaders.contains(&bidder) {
        Some(bidder)
    } else {
        None
    }
}

fn team(seat: usize) -> usize {
    seat % 3
}

// ----- the model -----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before a `Deal` (start, after a thrown-in or scored deal).
    Between,
    Bid,
    Trump,
    Exchange,
    Discard,
    Play,
    /// Six tricks done: `HandEnd` is due.
    Scoring,
    /// Everyone passed: `ThrownIn` is due.
    Throwing,
    Over,
}

/// What must follow a `HandEnd` or `ThrownIn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Deal {
        dealer: usize,
    },
    End {
        winner: Option<usize>,
        reason: EndReason,
    },
}

struct Model {
    cfg: RulesConfig,
    phase: Phase,
    next: Option<Next>,
    deal: u32,
    dealer: usize,
    streak: u32,
    scores: [i32; 3],
    delta_sum: [i32; 3],
    turn: usize,
    hands: [CardSet; 6],
    /// The stock still to be drawn, top first.
    stock: Vec<Card>,
    discards: CardSet,
    played: CardSet,
    calls: u32,
    high: u8,
    bidder: usize,
    trump: Trump,
    trick: Vec<(usize, Card)>,
    leader: usize,
    tricks: u8,
    won: [CardSet; 3],
    /// Team of the seat that played the trump A / the trump 2.
    high_team: Option<usize>,
    low_team: Option<usize>,
    /// Team winning the trick with the right bower / left bower / joker.
    right: Option<usize>,
    left: Option<usize>,
    joker: Option<usize>,
    // statistics
    hands_scored: u32,
    thrown_in: u32,
}

impl Model {
    fn new(seed: u64, cfg: RulesConfig) -> Model {
        Model {
            cfg,
            phase: Phase::Between,
            next: Some(Next::Deal {
                dealer: first_dealer(seed).index(),
            }),
            deal: 0,
            dealer: 0,
            streak: 0,
            scores: [0; 3],
            delta_sum: [0; 3],
            turn: 0,
            hands: [CardSet::EMPTY; 6],
            stock: Vec::new(),
            discards: CardSet::EMPTY,
            played: CardSet::EMPTY,
            calls: 0,
            high: 0,
            bidder: 0,
            trump: Trump::new(Suit::Spades),
            trick: Vec::new(),
            leader: 0,
            tricks: 0,
            won: [CardSet::EMPTY; 3],
            high_team: None,
            low_team: None,
            right: None,
            left: None,
            joker: None,
            hands_scored: 0,
            thrown_in: 0,
        }
    }

    fn next_seat(s: usize) -> usize {
        (s + 1) % 6
    }

    fn dealer_stuck(&self) -> bool {
        self.turn == self.dealer
            && self.high == 0
            && (self.cfg.stick_the_dealer || self.streak >= self.cfg.redeal_limit)
    }

    /// Every card is in exactly one place: a hand, the stock, the discards or played.
    fn check_conservation(&self) {
        let mut all = CardSet::EMPTY;
        let mut n = 0;
        let stock: CardSet = self.stock.iter().copied().collect();
        assert_eq!(stock.len() as usize, self.stock.len());
        for part in self
            .hands
            .iter()
            .copied()
            .chain([stock, self.discards, self.played])
        {
            assert!(all.intersection(part).is_empty(), "a card is in two places");
            all = all.union(part);
            n += part.len();
        }
        assert_eq!((all, n), (CardSet::FULL, 53));
    }

    /// The dealer's hand as the engine shows it (with the pickup while discarding).
    fn hand(&self, seat: usize) -> CardSet {
        let h = self.hands[seat];
        if self.phase == Phase::Discard && seat == self.dealer {
            h.union(self.stock.iter().copied().collect())
        } else {
            h
        }
    }

    /// Whether the seat to act may take `action` now (RULES.md, independently).
    fn allows(&self, action: Action) -> bool {
        let hand = self.hand(self.turn);
        let t = self.trump;
        match (self.phase, action) {
            (Phase::Bid, Action::Pass) => !self.dealer_stuck(),
            (Phase::Bid, Action::Bid(n)) => (3..=6).contains(&n) && n > self.high,
            (Phase::Trump, Action::Trump(_)) => true,
            (Phase::Exchange, Action::Exchange(c)) => {
                c.is_subset(hand) && c.len() <= 3 && c.intersection(t.cards).is_empty()
            }
            (Phase::Discard, Action::Discard(c)) => {
                let held = hand.intersection(t.cards).len();
                let kept = hand.difference(c).intersection(t.cards).len();
                c.is_subset(hand)
                    && hand.len() - c.len() == 6
                    && c.intersection(t.protected).is_empty()
                    && kept >= held.min(6)
            }
            (Phase::Play, Action::Play(c)) => {
                let led = self.trick.first().map(|&(_, c)| c);
                t.may_play(hand, led, self.cfg.trump_anytime).contains(c)
            }
            _ => false,
        }
    }

    fn on_event(&mut self, e: &Event) {
        match *e {
            Event::Deal {
                deal,
                dealer,
                hands,
                stock,
            } => {
                assert_eq!(self.phase, Phase::Between);
                assert_eq!(
                    self.next.take(),
                    Some(Next::Deal {
                        dealer: dealer.index()
                    }),
                    "wrong dealer"
                );
                assert_eq!(deal, self.deal + 1, "deals are numbered 1, 2, ...");
                self.deal = deal;
                self.dealer = dealer.index();
                for h in hands {
                    assert_eq!(h.len(), 6);
                }
                self.hands = hands;
                self.stock = stock.to_vec();
                self.discards = CardSet::EMPTY;
                self.played = CardSet::EMPTY;
                self.check_conservation();
                self.phase = Phase::Bid;
                self.turn = Self::next_seat(self.dealer);
                self.calls = 0;
                self.high = 0;
                self.trick.clear();
                self.tricks = 0;
                self.won = [CardSet::EMPTY; 3];
                self.high_team = None;
                self.low_team = None;
                self.right = None;
                self.left = None;
                self.joker = None;
            }
            Event::Bid { seat, bid } => {
                assert_eq!((self.phase, seat.index()), (Phase::Bid, self.turn));
                match bid {
                    Call::Pass => assert!(!self.dealer_stuck(), "a stuck dealer passed"),
                    Call::Bid(n) => {
                        assert!((3..=6).contains(&n) && n > self.high, "bid {n}");
                        self.high = n;
                        self.bidder = self.turn;
                    }
                }
                self.calls += 1;
                assert!(self.calls <= 6);
                if self.high == 6 || self.turn == self.dealer {
                    if self.high == 0 {
                        assert_eq!(self.calls, 6);
                        self.phase = Phase::Throwing;
                    } else {
                        self.phase = Phase::Trump;
                        self.turn = self.bidder;
                    }
                } else {
                    self.turn = Self::next_seat(self.turn);
                }
            }
            Event::ThrownIn {
                deal,
                dealer,
                streak,
            } => {
                assert_eq!(self.phase, Phase::Throwing);
                assert_eq!((deal, dealer.index()), (self.deal, self.dealer));
                self.streak += 1;
                self.thrown_in += 1;
                assert_eq!(streak, self.streak);
                self.phase = Phase::Between;
                self.next = Some(if self.deal >= self.cfg.hand_cap {
                    Next::End {
                        winner: None,
                        reason: EndReason::HandCap,
                    }
                } else {
                    Next::Deal {
                        dealer: self.dealer,
                    }
                });
            }
            Event::Trump { seat, bid, suit } => {
                assert_eq!(self.phase, Phase::Trump);
                assert_eq!((seat.index(), bid), (self.bidder, self.high));
                self.trump = Trump::new(suit);
                self.phase = Phase::Exchange;
                self.turn = Self::next_seat(self.dealer);
            }
            Event::Exchange {
                seat,
                discarded,
                drawn,
            } => {
                assert_eq!((self.phase, seat.index()), (Phase::Exchange, self.turn));
                assert!(self.allows(Action::Exchange(discarded)), "{e:?}");
                let n = discarded.len() as usize;
                let top: CardSet = self.stock.drain(..n).collect();
                assert_eq!(drawn, top, "draws come from the top of the stock");
                let s = seat.index();
                self.hands[s] = self.hands[s].difference(discarded).union(drawn);
                self.discards = self.discards.union(discarded);
                self.check_conservation();
                self.turn = Self::next_seat(s);
                if self.turn == self.dealer {
                    self.phase = Phase::Discard;
                }
            }
            Event::DealerDiscard {
                seat,
                picked_up,
                discarded,
            } => {
                assert_eq!((self.phase, seat.index()), (Phase::Discard, self.dealer));
                let rest: CardSet = self.stock.iter().copied().collect();
                assert_eq!(picked_up, rest, "the dealer takes the whole rest");
                assert!((2..=17).contains(&picked_up.len()));
                assert!(self.allows(Action::Discard(discarded)), "{e:?}");
                let full = self.hands[self.dealer].union(picked_up);
                self.stock.clear();
                self.hands[self.dealer] = full.difference(discarded);
                self.discards = self.discards.union(discarded);
                self.check_conservation();
                self.phase = Phase::Play;
                self.leader = self.bidder;
                self.turn = self.bidder;
            }
            Event::Play { seat, card } => {
                assert_eq!((self.phase, seat.index()), (Phase::Play, self.turn));
                assert!(self.allows(Action::Play(card)), "{e:?}");
                let s = seat.index();
                self.hands[s].remove(card);
                self.played.insert(card);
                self.trick.push((s, card));
                let order = self.trump.order;
                if card == order[0] {
                    self.high_team = Some(team(s));
                }
                if card == order[13] {
                    self.low_team = Some(team(s));
                }
                self.check_conservation();
                self.turn = Self::next_seat(s);
            }
            Event::Trick {
                number,
                leader,
                cards,
                winner,
            } => {
                assert_eq!(self.phase, Phase::Play);
                assert_eq!(self.trick.len(), 6, "a trick is six cards");
                assert_eq!(number, self.tricks + 1);
                assert_eq!(leader.index(), self.leader);
                let got: Vec<(usize, Card)> =
                    cards.iter().map(|p| (p.seat.index(), p.card)).collect();
                assert_eq!(got, self.trick, "the trick's cards in play order");
                let plain: Vec<Card> = self.trick.iter().map(|&(_, c)| c).collect();
                let (best, ties) = self.trump.winner_of(&plain);
                assert_eq!(ties, 1, "exactly one winning card");
                let w = self.trick[best].0;
                assert_eq!(winner.index(), w, "trick {plain:?}");
                let set: CardSet = plain.iter().copied().collect();
                self.won[team(w)] = self.won[team(w)].union(set);
                let order = self.trump.order;
                if set.contains(order[3]) {
                    self.right = Some(team(w));
                }
                if set.contains(order[4]) {
                    self.left = Some(team(w));
                }
                if set.contains(Card::JOKER) {
                    self.joker = Some(team(w));
                }
                self.trick.clear();
                self.tricks += 1;
                self.leader = w;
                self.turn = w;
                if self.tricks == 6 {
                    self.phase = Phase::Scoring;
                }
            }
            Event::HandEnd(score) => self.on_hand_end(&score),
            Event::GameEnd {
                winner,
                scores,
                deals,
                reason,
            } => {
                assert_eq!(self.phase, Phase::Between);
                let Some(Next::End {
                    winner: want,
                    reason: want_reason,
                }) = self.next.take()
                else {
                    panic!("the game ended early: {e:?}")
                };
                assert_eq!(winner.map(Team::index), want);
                assert_eq!(reason, want_reason);
                if let Some(w) = winner {
                    assert!(scores[w.index()] >= self.cfg.target);
                }
                if reason == EndReason::HandCap {
                    assert_eq!(deals, self.cfg.hand_cap);
                }
                assert_eq!((scores, deals), (self.scores, self.deal));
                self.phase = Phase::Over;
            }
        }
    }

    fn on_hand_end(&mut self, score: &HandScore) {
        assert_eq!(self.phase, Phase::Scoring);
        // 53 cards conserved, 36 of them played, the hands empty.
        self.check_conservation();
        assert_eq!(self.played.len(), 36);
        assert_eq!(self.discards.len(), 17);
        assert!(self.hands.iter().all(|h| h.is_empty()));
        assert!(self.trump.protected.is_subset(self.played), "rule 18");

        assert_eq!(
            (score.deal, score.bidder.index(), score.bid, score.trump),
            (self.deal, self.bidder, self.high, self.trump.suit)
        );
        let counts: [u32; 3] = self.won.map(|s| s.iter().map(value).sum());
        assert_eq!(
            counts.iter().sum::<u32>(),
            self.played.iter().map(value).sum::<u32>()
        );
        assert_eq!(score.game_counts, counts);
        let max = *counts.iter().max().unwrap();
        let game = match (0..3).filter(|&t| counts[t] == max).collect::<Vec<_>>()[..] {
            [one] => Some(one),
            _ => None,
        };
        let p = score.points;
        let got = [p.high, p.low, p.right, p.left, p.joker, p.game].map(|t| t.map(Team::index));
        let want = [
            self.high_team,
            self.low_team,
            self.right,
            self.left,
            self.joker,
            game,
        ];
        assert_eq!(got, want, "points (high, low, right, left, joker, game)");
        assert!(want[..5].iter().all(Option::is_some));

        let mut won = [0i32; 3];
        for t in want.into_iter().flatten() {
            won[t] += 1;
        }
        let total: i32 = won.iter().sum();
        assert!(total <= 6);
        assert_eq!(total, if game.is_some() { 6 } else { 5 });
        assert_eq!(score.won, won);
        let bt = team(self.bidder);
        let made = won[bt] >= i32::from(self.high);
        assert_eq!(score.made, made);
        let mut delta = won;
        if !made {
            delta[bt] = -i32::from(self.high);
        }
        assert_eq!(score.delta, delta, "rule 24-25");
        for (t, (&mine, &reported)) in delta.iter().zip(&score.delta).enumerate() {
            self.scores[t] += mine;
            self.delta_sum[t] += reported;
        }
        // The reported scores are the sum of the reported deltas, and the model's.
        assert_eq!(score.scores, self.delta_sum, "scores are the sum of deltas");
        assert_eq!(score.scores, self.scores);

        self.hands_scored += 1;
        self.streak = 0;
        self.phase = Phase::Between;
        self.next = Some(match game_winner(self.scores, bt, self.cfg.target) {
            Some(w) => Next::End {
                winner: Some(w),
                reason: EndReason::Target,
            },
            None if self.deal >= self.cfg.hand_cap => Next::End {
                winner: None,
                reason: EndReason::HandCap,
            },
            None => Next::Deal {
                dealer: Self::next_seat(self.dealer),
            },
        });
    }

    /// The model agrees with what the engine shows through its public API.
    fn check_against(&self, game: &Game) {
        assert_eq!(game.is_over(), self.phase == Phase::Over);
        assert_eq!((game.deals(), game.scores()), (self.deal, self.scores));
        if self.phase == Phase::Over {
            assert_eq!(game.to_act(), None);
            return;
        }
        let decision = match self.phase {
            Phase::Bid => Decision::Bid,
            Phase::Trump => Decision::Trump,
            Phase::Exchange => Decision::Exchange,
            Phase::Discard => Decision::Discard,
            Phase::Play => Decision::Play,
            p => panic!("between events in phase {p:?}"),
        };
        assert_eq!(game.decision(), Some(decision));
        assert_eq!(game.to_act(), Some(Seat::new(self.turn)));
        assert_eq!(game.dealer().index(), self.dealer);
        for s in 0..6 {
            assert_eq!(game.hand(Seat::new(s)), self.hand(s));
        }
        match game.legal().unwrap() {
            Legal::Bid { pass, lowest } => {
                assert_eq!(pass, !self.dealer_stuck());
                assert_eq!(lowest, self.high.max(2) + 1);
            }
            Legal::Play(set) => {
                let led = self.trick.first().map(|&(_, c)| c);
                let want = self
                    .trump
                    .may_play(self.hand(self.turn), led, self.cfg.trump_anytime);
                assert_eq!(set, want);
            }
            Legal::Trump | Legal::Cards { .. } => {}
        }
    }
}

// ----- driving games -----

/// A random action, often illegal: mostly of the kind due (bids out of range or
/// too low, foreign cards, too many or too few cards, trumps, protected cards,
/// not following suit), sometimes of another kind.
fn arbitrary_action(rng: &mut SeededRng, game: &Game, hand: CardSet) -> Action {
    let due = game.decision().expect("a decision is due");
    if rng.below(3) == 0 {
        return near_legal(rng, game, hand);
    }
    const KINDS: [Decision; 5] = [
        Decision::Bid,
        Decision::Trump,
        Decision::Exchange,
        Decision::Discard,
        Decision::Play,
    ];
    let kind = if rng.below(4) == 0 {
        KINDS[rng.below(5) as usize]
    } else {
        due
    };
    let foreign = |rng: &mut SeededRng| Card::from_index(rng.below(53) as usize);
    match kind {
        Decision::Bid if rng.below(3) == 0 => Action::Pass,
        Decision::Bid => Action::Bid([0, 1, 2, 3, 4, 5, 6, 7, 8, 255][rng.below(10) as usize]),
        Decision::Trump => Action::Trump(Suit::ALL[rng.below(4) as usize]),
        Decision::Exchange | Decision::Discard => {
            // Sizes around what is needed: 0-4 for an exchange, need-1..need+1
            // for the dealer.
            let n = if kind == Decision::Exchange || hand.len() < 6 {
                rng.below(5)
            } else {
                (hand.len() - 6 + rng.below(4)).saturating_sub(1)
            };
            let mut pool = hand;
            let mut cards = CardSet::EMPTY;
            for _ in 0..n.min(pool.len()) {
                let c = pool.nth(rng.below(pool.len())).unwrap();
                pool.remove(c);
                cards.insert(c);
            }
            if rng.below(5) == 0 {
                cards.insert(foreign(rng));
            }
            if kind == Decision::Exchange {
                Action::Exchange(cards)
            } else {
                Action::Discard(cards)
            }
        }
        Decision::Play if rng.below(4) > 0 && !hand.is_empty() => {
            Action::Play(hand.nth(rng.below(hand.len())).unwrap())
        }
        Decision::Play => Action::Play(foreign(rng)),
    }
}

/// A legal action nudged across a rule's boundary about half the time: one card
/// of an exchange or discard swapped for another card of the hand, one card
/// more or fewer, a bid one higher or lower.
fn near_legal(rng: &mut SeededRng, game: &Game, hand: CardSet) -> Action {
    let nudge = |rng: &mut SeededRng, mut cards: CardSet| {
        let out = hand.difference(cards);
        let swap_out = rng.below(3);
        if swap_out != 1 && !cards.is_empty() {
            cards.remove(cards.nth(rng.below(cards.len())).unwrap());
        }
        if swap_out != 2 && !out.is_empty() {
            cards.insert(out.nth(rng.below(out.len())).unwrap());
        }
        cards
    };
    let legal = random_legal(game, rng);
    if rng.below(2) == 0 {
        return legal;
    }
    match legal {
        Action::Exchange(c) => Action::Exchange(nudge(rng, c)),
        Action::Discard(c) => Action::Discard(nudge(rng, c)),
        Action::Bid(n) => Action::Bid(if rng.below(2) == 0 { n - 1 } else { n + 1 }),
        Action::Pass => Action::Bid(2 + rng.below(3) as u8),
        other => other,
    }
}

fn snapshot(game: &Game) -> (Vec<SeatView>, Option<Legal>, Option<Seat>, String) {
    (
        Seat::all().map(|s| game.view(s)).collect(),
        game.legal(),
        game.to_act(),
        format!("{game:?}"),
    )
}

/// Plays one game with random legal actions, checking every event against the
/// model. Every `probe_every` steps (0: never) it also tries `probes` arbitrary
/// actions on a copy: accepted iff the model allows them, and a refused one leaves
/// the copy exactly as it was. Returns (hands scored, deals thrown in).
fn check_game(seed: u64, cfg: RulesConfig, probe_every: u32, probes: u32) -> (u32, u32) {
    let mut model = Model::new(seed, cfg);
    let mut policy = SeededRng::new(seed, 1);
    let mut chaos = SeededRng::new(seed, 2);
    let (mut game, mut events) = Game::new(seed, cfg);
    let mut step = 0u32;
    loop {
        for e in events.drain(..) {
            model.on_event(&e);
        }
        model.check_against(&game);
        if game.is_over() {
            break;
        }
        step += 1;
        assert!(step < 200 * 80, "the game does not end");
        if step.checked_rem(probe_every) == Some(0) {
            let before = snapshot(&game);
            let hand = model.hand(model.turn);
            for _ in 0..probes {
                let action = arbitrary_action(&mut chaos, &game, hand);
                let allowed = model.allows(action);
                if let Some(legal @ Legal::Cards { .. }) = game.legal() {
                    if let Action::Exchange(c) | Action::Discard(c) = action {
                        let due = if model.phase == Phase::Discard {
                            Decision::Discard
                        } else {
                            Decision::Exchange
                        };
                        let kind_ok = Action::cards(due, c) == action;
                        assert_eq!(legal.allows_cards(c) && kind_ok, allowed, "{action:?}");
                    }
                }
                let mut copy = game.clone();
                let mut out = Vec::new();
                match copy.apply_into(action, &mut out) {
                    Ok(()) => assert!(allowed, "accepted illegal {action:?}"),
                    Err(err) => {
                        assert!(!allowed, "refused legal {action:?}: {err}");
                        assert!(out.is_empty());
                        assert_eq!(snapshot(&copy), before, "refused {action:?} changed state");
                    }
                }
            }
            // The real game too: a refused action changes nothing.
            let action = arbitrary_action(&mut chaos, &game, hand);
            if !model.allows(action) {
                assert!(game.apply_into(action, &mut events).is_err());
                assert!(events.is_empty());
                assert_eq!(snapshot(&game), before);
            }
        }
        let action = random_legal(&game, &mut policy);
        assert!(model.allows(action), "random_legal chose {action:?}");
        game.apply_into(action, &mut events).unwrap();
    }
    // Every game ends: with a winner at or above the target, or at the cap.
    match game.winner() {
        Some(w) => assert!(game.scores()[w.index()] >= cfg.target),
        None => assert_eq!(game.deals(), cfg.hand_cap),
    }
    (model.hands_scored, model.thrown_in)
}

/// Random variants, redeal limits, targets and caps. Low targets keep the games
/// short (random bidders are set so often that a game to 21 lasts ~100 hands).
fn configs(max_target: i32) -> impl Strategy<Value = RulesConfig> {
    (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(10u32), 0u32..12],
        1..=max_target,
        prop_oneof![Just(200u32), 1u32..40],
    )
        .prop_map(
            |(stick_the_dealer, trump_anytime, redeal_limit, target, hand_cap)| RulesConfig {
                stick_the_dealer,
                trump_anytime,
                redeal_limit,
                target,
                hand_cap,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// Whole games under the default rules (about 100 hands each): every event
    /// checked by the model.
    #[test]
    fn default_rules_games_follow_the_rules(seed in any::<u64>()) {
        check_game(seed, RulesConfig::default(), 0, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Games under random variants, targets and caps.
    #[test]
    fn variant_games_follow_the_rules(seed in any::<u64>(), cfg in configs(15)) {
        check_game(seed, cfg, 0, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Short games probed with arbitrary (mostly illegal) actions every other step.
    #[test]
    fn illegal_actions_are_refused_and_change_nothing(seed in any::<u64>(), cfg in configs(6)) {
        check_game(seed, cfg, 2, 2);
    }
}

/// Always-passing tables: thrown-in deals, the stuck dealer and the cap.
#[test]
fn passing_tables_throw_in_until_the_dealer_is_stuck_or_the_cap() {
    for seed in 0..200u64 {
        let cfg = RulesConfig {
            redeal_limit: (seed % 13) as u32,
            hand_cap: 1 + (seed % 17) as u32,
            ..RulesConfig::default()
        };
        let mut model = Model::new(seed, cfg);
        let (mut game, mut events) = Game::new(seed, cfg);
        let mut rng = SeededRng::new(seed, 3);
        loop {
            for e in events.drain(..) {
                model.on_event(&e);
            }
            model.check_against(&game);
            if game.is_over() {
                break;
            }
            // Pass whenever allowed, else play randomly.
            let action = match game.legal() {
                Some(Legal::Bid { pass: true, .. }) => Action::Pass,
                _ => random_legal(&game, &mut rng),
            };
            game.apply_into(action, &mut events).unwrap();
        }
        // Deals go: `redeal_limit` thrown in, one played (the stuck dealer bids),
        // and again, until the cap (or a team reaches the target).
        let (mut thrown, mut played, mut streak) = (0, 0, 0);
        for _ in 0..model.deal {
            if streak < cfg.redeal_limit {
                thrown += 1;
                streak += 1;
            } else {
                played += 1;
                streak = 0;
            }
        }
        assert_eq!(
            (model.thrown_in, model.hands_scored),
            (thrown, played),
            "{cfg:?}"
        );
        assert!(model.deal == cfg.hand_cap || game.winner().is_some());
    }
}
