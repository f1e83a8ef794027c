//! [`LegalWire`] read as `#[serde(untagged)]` would read it — the first variant
//! in declaration order that fits — but without buffering the value and
//! building an error for each variant that does not: a list is read once,
//! element by element, then classified (calls, else suits, else distinct
//! cards); an object is the `Cards` variant.

use std::fmt;

use serde::de::{Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::LegalWire;
use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::rules::Call;

/// The message `#[serde(untagged)]` gives, kept word for word.
const NONE: &str = "data did not match any variant of untagged enum LegalWire";

impl<'de> Deserialize<'de> for LegalWire {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LegalVisitor)
    }
}

/// One element of a list: a number, a short string, or anything else.
enum Token {
    Num(u64),
    Str([u8; 4], usize),
    Other,
}

impl Token {
    fn text(&self) -> Option<&str> {
        match self {
            Token::Str(b, n) => std::str::from_utf8(&b[..*n]).ok(),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Token {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TokenVisitor)
    }
}

struct TokenVisitor;

impl<'de> Visitor<'de> for TokenVisitor {
    type Value = Token;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_u64<E: Error>(self, n: u64) -> Result<Token, E> {
        Ok(Token::Num(n))
    }
    fn visit_i64<E: Error>(self, n: i64) -> Result<Token, E> {
        Ok(u64::try_from(n).map_or(Token::Other, Token::Num))
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Token, E> {
        Ok(Token::Other)
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Token, E> {
        Ok(Token::Other)
    }
    fn visit_unit<E: Error>(self) -> Result<Token, E> {
        Ok(Token::Other)
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<Token, E> {
        let mut b = [0u8; 4];
        if v.len() > 4 {
            return Ok(Token::Other);
        }
        b[..v.len()].copy_from_slice(v.as_bytes());
        Ok(Token::Str(b, v.len()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Token, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Token::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Token, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Token::Other)
    }
}

#[derive(Deserialize)]
struct CardsWire {
    must: CardSet,
    from: CardSet,
    min: u8,
    max: u8,
}

/// A list's elements as the first variant they fit: calls, else suits, else
/// distinct cards.
fn classify(tokens: &[Token]) -> Option<LegalWire> {
    let calls: Option<Vec<Call>> = tokens
        .iter()
        .map(|t| match t {
            Token::Num(n) => u8::try_from(*n).ok().map(Call::Bid),
            t => (t.text() == Some("pass")).then_some(Call::Pass),
        })
        .collect();
    if let Some(calls) = calls {
        return Some(LegalWire::Bids(calls));
    }
    let suits: Option<Vec<Suit>> = tokens
        .iter()
        .map(|t| t.text().and_then(|s| s.parse().ok()))
        .collect();
    if let Some(suits) = suits {
        return Some(LegalWire::Suits(suits));
    }
    let mut cards = CardSet::EMPTY;
    for t in tokens {
        match t.text().and_then(|s| s.parse::<Card>().ok()) {
            Some(c) if !cards.contains(c) => cards.insert(c),
            _ => return None,
        }
    }
    Some(LegalWire::Play(cards))
}

struct LegalVisitor;

impl<'de> Visitor<'de> for LegalVisitor {
    type Value = LegalWire;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of calls, suits or cards, or an object")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LegalWire, A::Error> {
        let mut tokens = Vec::with_capacity(a.size_hint().unwrap_or(8));
        while let Some(t) = a.next_element::<Token>()? {
            tokens.push(t);
        }
        classify(&tokens).ok_or_else(|| A::Error::custom(NONE))
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<LegalWire, A::Error> {
        let c = CardsWire::deserialize(serde::de::value::MapAccessDeserializer::new(a))
            .map_err(|_| A::Error::custom(NONE))?;
        Ok(LegalWire::Cards {
            must: c.must,
            from: c.from,
            min: c.min,
            max: c.max,
        })
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<LegalWire, E> {
        Err(E::custom(NONE))
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<LegalWire, E> {
        Err(E::custom(NONE))
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<LegalWire, E> {
        Err(E::custom(NONE))
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<LegalWire, E> {
        Err(E::custom(NONE))
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<LegalWire, E> {
        Err(E::custom(NONE))
    }
    fn visit_unit<E: Error>(self) -> Result<LegalWire, E> {
        Err(E::custom(NONE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RulesConfig;

    /// The derive this reader stands in for: the reference it must agree with.
    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    enum Untagged {
        Bids(Vec<Call>),
        Suits(Vec<Suit>),
        Cards {
            must: CardSet,
            from: CardSet,
            min: u8,
            max: u8,
        },
        Play(CardSet),
    }

    fn derived(text: &str) -> Option<LegalWire> {
        Some(match serde_json::from_str::<Untagged>(text).ok()? {
            Untagged::Bids(c) => LegalWire::Bids(c),
            Untagged::Suits(s) => LegalWire::Suits(s),
            Untagged::Cards {
                must,
                from,
                min,
                max,
            } => LegalWire::Cards {
                must,
                from,
                min,
                max,
            },
            Untagged::Play(c) => LegalWire::Play(c),
        })
    }

    /// Lists and objects no game produces: near misses of every variant.
    const ODD: [&str; 24] = [
        "[]",
        r#"["pass"]"#,
        "[3, 255]",
        "[256]",
        "[-1]",
        "[3.5]",
        r#"["S","H"]"#,
        r#"["S","AS"]"#,
        r#"["AS","AS"]"#,
        r#"["AS","pass"]"#,
        r#"["AS",[1]]"#,
        r#"["AS",{"a":1}]"#,
        r#"["10S"]"#,
        r#"["pas"]"#,
        r#"[null]"#,
        r#"[true]"#,
        r#"{"must":[],"from":["AS"],"min":0,"max":1,"extra":[1,{"b":2}]}"#,
        r#"{"must":[],"from":["AS","AS"],"min":0,"max":1}"#,
        r#"{"must":[]}"#,
        r#"{"must":[],"from":[],"min":300,"max":1}"#,
        "3",
        r#""pass""#,
        "null",
        "true",
    ];

    /// `LegalWire`'s hand-written reading against what `#[serde(untagged)]`
    /// derives for the same variants (its definition before): the same value
    /// wherever that one reads one, an error wherever it fails.
    #[test]
    fn legal_wire_reads_as_the_untagged_derive_would() {
        // Every legal set of a few whole games, as the referee sends them.
        let mut texts: Vec<String> = Vec::new();
        for seed in 0..20 {
            let (mut game, _) = crate::rules::Game::new(seed, RulesConfig::default());
            let mut rng = crate::shuffle::SeededRng::new(seed, 1);
            while let Some(legal) = game.legal() {
                texts.push(serde_json::to_string(&LegalWire::from(&legal)).unwrap());
                game.apply(crate::rules::random_legal(&game, &mut rng))
                    .unwrap();
            }
        }
        let kinds: std::collections::BTreeSet<String> =
            texts.iter().map(|t| t[..1].to_owned()).collect();
        assert_eq!(kinds.len(), 2, "lists and objects: {kinds:?}");
        texts.extend(ODD.iter().map(|t| t.to_string()));
        let mut read = 0;
        for t in &texts {
            let ours = serde_json::from_str::<LegalWire>(t).ok();
            assert_eq!(ours, derived(t), "{t}");
            read += usize::from(ours.is_some());
        }
        assert!(read > 1000, "only {read} legal sets read");
    }
}
