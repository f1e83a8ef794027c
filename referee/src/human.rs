//! `--seat N=human`: a person plays a seat from the terminal. The referee plays
//! the seat inside itself (like an `inproc:` bot, so no clock runs for it): at
//! each decision it shows what the seat knows and the legal actions, numbered,
//! and reads a choice from stdin until it is a valid one. Prompts go to stderr,
//! so stdout keeps only the results.

use std::io::{BufRead, Write};

use schmier_protocol::rules::{Action, Call, Decision, SeatView};
use schmier_protocol::wire::{LegalWire, Request};
use schmier_protocol::{Card, CardSet};
use schmier_sample_bots::Strategy;

pub struct Human {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
    /// stdin ended: every later decision takes the default.
    ended: bool,
}

impl Human {
    /// A human at the terminal: reads stdin, writes stderr.
    pub fn at_terminal() -> Human {
        Human::new(
            Box::new(std::io::BufReader::new(std::io::stdin())),
            Box::new(std::io::stderr()),
        )
    }

    pub fn new(input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> Human {
        Human {
            input,
            output,
            ended: false,
        }
    }

    /// One line of input, trimmed; `None` at end of input.
    fn read_line(&mut self) -> Option<String> {
        if self.ended {
            return None;
        }
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => {
                self.ended = true;
                let _ = writeln!(
                    self.output,
                    "(input ended: the default is chosen for this and every later decision)"
                );
                None
            }
            Ok(_) => Some(line.trim().to_owned()),
        }
    }

    fn say(&mut self, text: &str) {
        let _ = writeln!(self.output, "{text}");
    }
}

impl Strategy for Human {
    fn name(&self) -> &str {
        "human"
    }

    fn decide(&mut self, request: &Request) -> Action {
        let situation = describe(&request.view);
        self.say(&situation);
        match &request.legal {
            LegalWire::Cards {
                must,
                from,
                min,
                max,
            } => self.choose_cards(request.decision, *must, *from, *min, *max),
            list => {
                let options = options(list);
                self.choose_one(request.decision, &options)
            }
        }
    }
}

impl Human {
    /// A numbered choice; Enter alone takes option 1.
    fn choose_one(&mut self, decision: Decision, options: &[(String, Action)]) -> Action {
        let list: Vec<String> = options
            .iter()
            .enumerate()
            .map(|(i, (text, _))| format!("{}) {text}", i + 1))
            .collect();
        self.say(&format!("Your {}: {}", decision.name(), list.join("   ")));
        loop {
            let _ = write!(self.output, "choose 1-{} [1]: ", options.len());
            let _ = self.output.flush();
            let Some(line) = self.read_line() else {
                return options[0].1;
            };
            if line.is_empty() {
                return options[0].1;
            }
            match line.parse::<usize>() {
                Ok(n) if (1..=options.len()).contains(&n) => return options[n - 1].1,
                _ => self.say(&format!(
                    "{line:?} is not a choice: type a number from 1 to {}",
                    options.len()
                )),
            }
        }
    }

    /// Cards to discard: every card of `must`, plus numbers of `from`; Enter
    /// alone discards the fewest allowed (`must` and the first `min` of `from`).
    fn choose_cards(
        &mut self,
        decision: Decision,
        must: CardSet,
        from: CardSet,
        min: u8,
        max: u8,
    ) -> Action {
        let choices: Vec<Card> = from.iter().collect();
        let list: Vec<String> = choices
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}) {}", i + 1, card_text(*c)))
            .collect();
        if !must.is_empty() {
            self.say(&format!("You must discard {}.", cards_text(must)));
        }
        self.say(&format!(
            "Your {}: discard {} to {} of   {}",
            decision.name(),
            min,
            max,
            list.join("   ")
        ));
        let default: CardSet = choices.iter().take(usize::from(min)).copied().collect();
        loop {
            let _ = write!(
                self.output,
                "card numbers separated by spaces [{}]: ",
                if min == 0 {
                    "none".to_owned()
                } else {
                    cards_text(default)
                }
            );
            let _ = self.output.flush();
            let Some(line) = self.read_line() else {
                return Action::cards(decision, must.union(default));
            };
            if line.is_empty() {
                return Action::cards(decision, must.union(default));
            }
            let mut chosen = CardSet::EMPTY;
            let mut bad = None;
            for word in line.split_whitespace() {
                match word.parse::<usize>() {
                    Ok(n) if (1..=choices.len()).contains(&n) => chosen.insert(choices[n - 1]),
                    _ => bad = Some(word.to_owned()),
                }
            }
            let n = chosen.len();
            match bad {
                Some(word) => self.say(&format!(
                    "{word:?} is not a card number: type numbers from 1 to {}",
                    choices.len()
                )),
                None if n < u32::from(min) || n > u32::from(max) => self.say(&format!(
                    "{n} card(s) chosen: choose from {min} to {max} different cards"
                )),
                None => return Action::cards(decision, must.union(chosen)),
            }
        }
    }
}

/// The choices of a list-shaped decision, in the request's order.
fn options(legal: &LegalWire) -> Vec<(String, Action)> {
    match legal {
        LegalWire::Bids(calls) => calls
            .iter()
            .map(|c| match c {
                Call::Pass => ("pass".to_owned(), Action::Pass),
                Call::Bid(n) => (n.to_string(), Action::Bid(*n)),
            })
            .collect(),
        LegalWire::Suits(suits) => suits
            .iter()
            .map(|s| (format!("{} ({s})", s.symbol()), Action::Trump(*s)))
            .collect(),
        LegalWire::Play(cards) => cards
            .iter()
            .map(|c| (card_text(c), Action::Play(c)))
            .collect(),
        LegalWire::Cards { .. } => unreachable!("card sets are chosen by choose_cards"),
    }
}

/// "SEAT:CARD" for each card of a trick, in play order.
fn played_texts(cards: &[schmier_protocol::rules::Played]) -> Vec<String> {
    cards
        .iter()
        .map(|p| format!("{}:{}", p.seat.index(), card_text(p.card)))
        .collect()
}

fn card_text(card: Card) -> String {
    card.human()
}

fn cards_text(cards: CardSet) -> String {
    cards.iter().map(card_text).collect::<Vec<_>>().join(" ")
}

/// What the seat knows, in a few lines.
pub(crate) fn describe(v: &SeatView) -> String {
    let mut out = format!(
        "\n— deal {}, you are seat {} (partner seat {}), dealer seat {}; scores {:?} (yours: team {})",
        v.deal,
        v.seat.index(),
        v.partner.index(),
        v.dealer.index(),
        v.scores,
        v.team.index()
    );
    if !v.bids.is_empty() {
        let bids: Vec<String> = v
            .bids
            .iter()
            .map(|b| format!("seat {} {}", b.seat.index(), call_text(b.bid)))
            .collect();
        out += &format!("\n  bids: {}", bids.join(", "));
    }
    if let (Some(bidder), Some(bid), Some(trump)) = (v.bidder, v.bid, v.trump) {
        out += &format!(
            "\n  seat {} bid {bid}; trump is {} ({trump})",
            bidder.index(),
            trump.symbol()
        );
    }
    for t in &v.tricks {
        let cards = played_texts(&t.cards);
        out += &format!(
            "\n  trick: {} — won by seat {}",
            cards.join(" "),
            t.winner.map_or("?".into(), |s| s.index().to_string())
        );
    }
    if let Some(t) = &v.trick {
        let cards = played_texts(&t.cards);
        out += &format!(
            "\n  this trick: {}",
            if cards.is_empty() {
                "you lead".to_owned()
            } else {
                cards.join(" ")
            }
        );
    }
    out += &format!("\n  your hand: {}", cards_text(v.hand));
    out
}

fn call_text(c: Call) -> String {
    match c {
        Call::Pass => "pass".to_owned(),
        Call::Bid(n) => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schmier_protocol::rules::{Game, RulesConfig};

    /// Plays `input` as the human's keyboard at the first decision of seed 3.
    fn first_decision(input: &str) -> (Action, String, Game) {
        let (game, _) = Game::new(3, RulesConfig::default());
        let request = Request::for_decision(&game, 1, None).unwrap();
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().write(b)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut human = Human::new(
            Box::new(std::io::Cursor::new(input.as_bytes().to_vec())),
            Box::new(Shared(out.clone())),
        );
        let action = human.decide(&request);
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        (action, text, game)
    }

    #[test]
    fn a_bid_is_chosen_by_number_after_bad_input_is_refused() {
        let (action, text, game) = first_decision("x\n9\n3\n");
        // The first seat to bid may pass or bid 3-6: option 3 is a bid of 4.
        assert_eq!(action, Action::Bid(4));
        assert!(game.clone().apply(action).is_ok());
        assert!(text.contains("\"x\" is not a choice"), "{text}");
        assert!(text.contains("\"9\" is not a choice"), "{text}");
        assert!(
            text.contains("1) pass   2) 3   3) 4   4) 5   5) 6"),
            "{text}"
        );
        assert!(text.contains("your hand: "), "{text}");
    }

    #[test]
    fn discards_are_card_numbers_within_the_allowed_count() {
        // The fallback plays until a non-dealer's exchange is due. Four cards
        // (over the limit of 3) and card 0 are refused; "2 1" is taken.
        let (mut game, _) = Game::new(3, RulesConfig::default());
        while game.decision() != Some(Decision::Exchange) {
            game.apply(schmier_protocol::rules::first_legal(&game))
                .unwrap();
        }
        let request = Request::for_decision(&game, 1, None).unwrap();
        let LegalWire::Cards { from, max, .. } = request.legal else {
            panic!("an exchange")
        };
        assert!(from.len() >= 2 && max >= 2, "a choice to make: {from:?}");
        let mut human = Human::new(
            Box::new(std::io::Cursor::new(b"1 2 3 4\n0\n2 1\n".to_vec())),
            Box::new(std::io::sink()),
        );
        let action = human.decide(&request);
        let first_two: CardSet = from.iter().take(2).collect();
        assert_eq!(action, Action::Exchange(first_two));
        assert!(game.apply(action).is_ok());
    }

    #[test]
    fn enter_or_the_end_of_input_takes_the_first_option() {
        assert_eq!(first_decision("\n").0, Action::Pass);
        let (action, text, _) = first_decision("");
        assert_eq!(action, Action::Pass);
        assert!(text.contains("input ended"), "{text}");
    }
}
