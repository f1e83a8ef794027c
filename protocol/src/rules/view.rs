//! What one seat may know. This file is the only place that decides it: the
//! referee builds every message to a bot from [`SeatView`] and [`SeatEvent`], so a
//! hidden card can only reach the wrong seat through a bug here, and the tests here
//! and in the referee's leak test look for exactly that.

use serde::{Deserialize, Serialize};

use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::seat::{Seat, Team};

use super::event::{Call, EndReason, Event, HandScore, Played};
use super::game::{Game, Phase};

/// A seat's bid, as everyone saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SeatCall {
    pub seat: Seat,
    pub bid: Call,
}

/// How many cards a seat exchanged (public); the cards only for the seat itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SeatExchange {
    pub seat: Seat,
    pub count: u32,
}

/// A seat's own exchange or dealer's discard, known only to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OwnExchange {
    pub discarded: CardSet,
    /// Cards drawn from the stock (for the dealer: the whole pickup).
    pub drawn: CardSet,
}

/// A trick in progress or completed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TrickView {
    pub leader: Seat,
    pub cards: Vec<Played>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub winner: Option<Seat>,
}

/// Everything one seat knows at a decision point, so that a stateless bot can
/// decide from this alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SeatView {
    pub seat: Seat,
    pub team: Team,
    pub partner: Seat,
    /// Deal number within the game (1-based, thrown-in deals included).
    pub deal: u32,
    pub dealer: Seat,
    /// Scores by team before this hand.
    pub scores: [i32; 3],
    pub target: i32,
    pub hand: CardSet,
    /// The auction so far, in order.
    pub bids: Vec<SeatCall>,
    /// The winning bidder and bid once bidding is over.
    pub bidder: Option<Seat>,
    pub bid: Option<u8>,
    pub trump: Option<Suit>,
    /// Non-dealers' exchange counts so far, in order.
    pub exchanges: Vec<SeatExchange>,
    /// Number of cards the dealer picked up, once known.
    pub dealer_pickup: Option<u32>,
    /// This seat's own exchange (or, for the dealer, pickup and discard).
    pub own_exchange: Option<OwnExchange>,
    pub trick: Option<TrickView>,
    pub tricks: Vec<TrickView>,
}

impl Game {
    /// What `seat` knows now.
    pub fn view(&self, seat: Seat) -> SeatView {
        let auction_over = !matches!(self.phase, Phase::Bidding);
        let trump_named = matches!(
            self.phase,
            Phase::Exchange | Phase::DealerDiscard | Phase::Play
        );
        let exchanges = Seat::all()
            .map(|i| self.dealer.plus(1 + i.index()))
            .take(5)
            .filter_map(|s| {
                self.exchanges[s.index()].map(|(d, _)| SeatExchange {
                    seat: s,
                    count: d.len(),
                })
            })
            .collect();
        let picked_up = matches!(self.phase, Phase::DealerDiscard | Phase::Play);
        let own_exchange = if seat == self.dealer {
            picked_up.then(|| OwnExchange {
                discarded: self.dealer_discard.unwrap_or_default(),
                drawn: self.dealer_pickup,
            })
        } else {
            self.exchanges[seat.index()].map(|(discarded, drawn)| OwnExchange { discarded, drawn })
        };
        let in_play = self.phase == Phase::Play;
        SeatView {
            seat,
            team: seat.team(),
            partner: seat.partner(),
            deal: self.deals,
            dealer: self.dealer,
            scores: self.scores,
            target: self.config.target,
            hand: self.hands[seat.index()],
            bids: self.calls[..self.n_calls]
                .iter()
                .map(|&(seat, bid)| SeatCall { seat, bid })
                .collect(),
            bidder: (auction_over && self.high_bid > 0).then_some(self.bidder),
            bid: (auction_over && self.high_bid > 0).then_some(self.high_bid),
            trump: trump_named.then_some(self.trump),
            exchanges,
            dealer_pickup: picked_up.then(|| self.dealer_pickup.len()),
            own_exchange,
            trick: in_play.then(|| TrickView {
                leader: self.leader,
                cards: (0..self.trick_len)
                    .map(|i| Played {
                        seat: self.leader.plus(i),
                        card: self.trick[i],
                    })
                    .collect(),
                winner: None,
            }),
            tricks: self.tricks[..if in_play { self.n_tricks } else { 0 }]
                .iter()
                .map(|t| TrickView {
                    leader: t.leader,
                    cards: (0..6)
                        .map(|i| Played {
                            seat: t.leader.plus(i),
                            card: t.cards[i],
                        })
                        .collect(),
                    winner: Some(t.winner),
                })
                .collect(),
        }
    }
}

/// An event as one seat is told it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SeatEvent {
    /// A new deal: only this seat's own six cards.
    Deal {
        deal: u32,
        dealer: Seat,
        hand: CardSet,
    },
    Bid {
        seat: Seat,
        bid: Call,
    },
    ThrownIn {
        deal: u32,
        dealer: Seat,
        streak: u32,
    },
    Trump {
        seat: Seat,
        bid: u8,
        suit: Suit,
    },
    /// A non-dealer's exchange: the count for everyone, the cards for the seat only.
    Exchange {
        seat: Seat,
        count: u32,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        discarded: Option<CardSet>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        drawn: Option<CardSet>,
    },
    /// The dealer's pickup and discard: counts for everyone, cards for the dealer.
    DealerDiscard {
        seat: Seat,
        picked_up: u32,
        discarded: u32,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        picked_up_cards: Option<CardSet>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        discarded_cards: Option<CardSet>,
    },
    Play {
        seat: Seat,
        card: Card,
    },
    Trick {
        number: u8,
        leader: Seat,
        cards: [Played; 6],
        winner: Seat,
    },
    HandEnd(HandScore),
    GameEnd {
        winner: Option<Team>,
        scores: [i32; 3],
        deals: u32,
        reason: EndReason,
    },
}

impl Event {
    /// This event as `seat` may see it.
    pub fn seen_by(&self, seat: Seat) -> SeatEvent {
        match *self {
            Event::Deal {
                deal,
                dealer,
                ref hands,
                ..
            } => SeatEvent::Deal {
                deal,
                dealer,
                hand: hands[seat.index()],
            },
            Event::Bid { seat, bid } => SeatEvent::Bid { seat, bid },
            Event::ThrownIn {
                deal,
                dealer,
                streak,
            } => SeatEvent::ThrownIn {
                deal,
                dealer,
                streak,
            },
            Event::Trump { seat, bid, suit } => SeatEvent::Trump { seat, bid, suit },
            Event::Exchange {
                seat: s,
                discarded,
                drawn,
            } => {
                let own = s == seat;
                SeatEvent::Exchange {
                    seat: s,
                    count: discarded.len(),
                    discarded: own.then_some(discarded),
                    drawn: own.then_some(drawn),
                }
            }
            Event::DealerDiscard {
                seat: s,
                picked_up,
                discarded,
            } => {
                let own = s == seat;
                SeatEvent::DealerDiscard {
                    seat: s,
                    picked_up: picked_up.len(),
                    discarded: discarded.len(),
                    picked_up_cards: own.then_some(picked_up),
                    discarded_cards: own.then_some(discarded),
                }
            }
            Event::Play { seat, card } => SeatEvent::Play { seat, card },
            Event::Trick {
                number,
                leader,
                cards,
                winner,
            } => SeatEvent::Trick {
                number,
                leader,
                cards,
                winner,
            },
            Event::HandEnd(score) => SeatEvent::HandEnd(score),
            Event::GameEnd {
                winner,
                scores,
                deals,
                reason,
            } => SeatEvent::GameEnd {
                winner,
                scores,
                deals,
                reason,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RulesConfig;

    /// No card of another seat's hand, the stock or a discard appears in what a
    /// seat is told before it is played face up.
    #[test]
    fn views_and_events_never_show_hidden_cards() {
        for seed in 0..10 {
            let (mut game, mut events) = Game::new(seed, RulesConfig::default());
            let mut played = CardSet::EMPTY;
            let mut known = [CardSet::EMPTY; 6];
            let mut steps = 0;
            loop {
                for e in events.drain(..) {
                    if let Event::Deal { .. } = e {
                        played = CardSet::EMPTY;
                        known = [CardSet::EMPTY; 6];
                    }
                    for s in Seat::all() {
                        let text = serde_json::to_string(&e.seen_by(s)).unwrap();
                        let seen = cards_in(&text);
                        if let Event::Deal { hands, .. } = &e {
                            known[s.index()] = hands[s.index()];
                        }
                        if let Event::Exchange { seat, drawn, .. } = &e {
                            if *seat == s {
                                known[s.index()] = known[s.index()].union(*drawn);
                            }
                        }
                        if let Event::DealerDiscard {
                            seat, picked_up, ..
                        } = &e
                        {
                            if *seat == s {
                                known[s.index()] = known[s.index()].union(*picked_up);
                            }
                        }
                        if let Event::Play { card, .. } = &e {
                            played.insert(*card);
                        }
                        let allowed = known[s.index()].union(played);
                        if !matches!(e, Event::HandEnd(_)) {
                            assert!(
                                seen.is_subset(allowed),
                                "seed {seed}: {s} saw {:?} in {text}",
                                seen.difference(allowed)
                            );
                        }
                    }
                }
                let Some(seat) = game.to_act() else { break };
                let view = serde_json::to_string(&game.view(seat)).unwrap();
                let seen = cards_in(&view);
                // A seat always knows its own hand (for the dealer: the pickup too).
                let allowed = known[seat.index()].union(played).union(game.hand(seat));
                assert!(seen.is_subset(allowed), "seed {seed}: view leaks {view}");
                let action = crate::rules::first_legal(&game);
                game.apply_into(action, &mut events).unwrap();
                steps += 1;
                if steps > 20_000 {
                    break;
                }
            }
        }
    }

    fn cards_in(text: &str) -> CardSet {
        Card::all()
            .filter(|c| text.contains(&format!("\"{c}\"")))
            .collect()
    }
}
