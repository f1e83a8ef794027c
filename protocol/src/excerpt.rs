//! Bounded quotes of what a bot sent. Whatever a bot controls and the referee
//! keeps (a fault's reason quoting its line, its `hello` name) is cut here to a
//! fixed size, so that a bot cannot make a transcript, a page or a console line
//! as long as it likes: a 60 KB malformed action is quoted by its first
//! [`QUOTE_MAX`] bytes and its length, never whole.

use std::borrow::Cow;

/// The most bytes of a bot's own output quoted in one fault reason.
pub const QUOTE_MAX: usize = 200;

/// The most characters of a `hello` name that are kept (PROTOCOL.md, `hello`).
pub const NAME_MAX_CHARS: usize = 64;

/// The longest prefix of `text` of at most `max` bytes that ends on a character
/// boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Quotes a bot's bad output (as a debug string): lossy UTF-8, its first
/// [`QUOTE_MAX`] bytes, then its length when it is longer.
pub fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTE_MAX)]);
    if bytes.len() > QUOTE_MAX {
        format!("{text:?}... ({} bytes)", bytes.len())
    } else {
        format!("{text:?}")
    }
}

/// `text` as it is when it has at most `max` bytes, else its first `max` bytes
/// (on a character boundary) followed by `... (N bytes)`. For text that already
/// quotes a bot (a JSON value it sent, a parser's message about it).
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{}... ({} bytes)", prefix(text, max), text.len()))
    }
}

/// A JSON value a bot sent, as JSON text cut to [`QUOTE_MAX`] bytes.
pub fn quote_json(value: &serde_json::Value) -> String {
    cut(&value.to_string(), QUOTE_MAX).into_owned()
}

/// A `hello` name as the referee keeps it: at most [`NAME_MAX_CHARS`]
/// characters; a longer name keeps its first `NAME_MAX_CHARS - 1` and ends in
/// `…`, so that a reader can tell it was cut.
pub fn bounded_name(name: String) -> String {
    match name.char_indices().nth(NAME_MAX_CHARS) {
        None => name,
        Some(_) => {
            let keep = name
                .char_indices()
                .nth(NAME_MAX_CHARS - 1)
                .map_or(name.len(), |(i, _)| i);
            format!("{}…", &name[..keep])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_cut_to_the_cap_with_the_length() {
        assert_eq!(quote(b"{\"x\""), r#""{\"x\"""#);
        let long = vec![b'a'; 60_000];
        let q = quote(&long);
        assert!(q.len() < QUOTE_MAX + 40, "{}", q.len());
        assert!(q.ends_with("... (60000 bytes)"), "{q}");
        // A cut never splits a character, however the bytes fall.
        let text = "é".repeat(300);
        for max in [0, 1, 199, 200, 201] {
            let c = cut(&text, max);
            assert!(
                c.len() <= max + 20 && c.starts_with('é') == (max >= 2),
                "{c}"
            );
        }
        assert_eq!(cut("short", 200), "short");
        let v = serde_json::json!(["AS", "x".repeat(60_000)]);
        let q = quote_json(&v);
        assert!(
            q.starts_with(r#"["AS","xxx"#) && q.len() < QUOTE_MAX + 40,
            "{q}"
        );
    }

    #[test]
    fn names_keep_at_most_their_first_characters() {
        assert_eq!(bounded_name("my-bot".into()), "my-bot");
        let exact = "ж".repeat(NAME_MAX_CHARS);
        assert_eq!(bounded_name(exact.clone()), exact);
        let long = bounded_name("ж".repeat(152_000));
        assert_eq!(long.chars().count(), NAME_MAX_CHARS);
        assert!(long.ends_with('…') && long.starts_with("жж"), "{long}");
    }
}
