//! JSON Schema (`schemars`, feature `schema`) for the types whose serde form is
//! written by hand: cards, suits, card lists, seats, teams and calls. The derived
//! types pick these up; `referee schema` writes the whole set.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use crate::rules::Call;
use crate::{Card, CardSet, Seat, Suit, Team};

impl JsonSchema for Suit {
    fn schema_name() -> Cow<'static, str> {
        "Suit".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A suit: S (spades), H (hearts), D (diamonds), C (clubs).",
            "type": "string",
            "enum": ["S", "H", "D", "C"]
        })
    }
}

impl JsonSchema for Card {
    fn schema_name() -> Cow<'static, str> {
        "Card".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A card: rank (2-9, T, J, Q, K, A) then suit (S, H, D, C), e.g. \"AS\", \"TH\"; \"JK\" is the joker.",
            "type": "string",
            "pattern": "^([2-9TJQKA][SHDC]|JK)$"
        })
    }
}

impl JsonSchema for CardSet {
    fn schema_name() -> Cow<'static, str> {
        "CardSet".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let card = generator.subschema_for::<Card>();
        json_schema!({
            "description": "Distinct cards, written in card order (spades 2..A, hearts, diamonds, clubs, joker); read as a set.",
            "type": "array",
            "items": card,
            "uniqueItems": true,
            "maxItems": 53
        })
    }
}

impl JsonSchema for Seat {
    fn schema_name() -> Cow<'static, str> {
        "Seat".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A seat, 0-5 clockwise; seat s is on team s % 3.",
            "type": "integer",
            "minimum": 0,
            "maximum": 5
        })
    }
}

impl JsonSchema for Team {
    fn schema_name() -> Cow<'static, str> {
        "Team".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A team, 0-2: team k is seats k and k + 3.",
            "type": "integer",
            "minimum": 0,
            "maximum": 2
        })
    }
}

impl JsonSchema for Call {
    fn schema_name() -> Cow<'static, str> {
        "Call".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A call in the auction: \"pass\" or a bid, a JSON number from 3 to 6 (the string \"3\" is not a bid).",
            "oneOf": [
                { "const": "pass" },
                { "type": "integer", "minimum": 3, "maximum": 6 }
            ]
        })
    }
}
