//! Bot-given text as it may land in a page: every name, reply and fault reason
//! a bot controls goes through one of these two functions, chosen for the
//! context it lands in. Both are total: no input can end the element or the
//! attribute it is written into, or switch the browser's parser to another
//! state (`<!--<script>` inside a `<script>` element would make it swallow the
//! page's own script).

use serde::Serialize;

/// `text` for HTML text or a quoted attribute value (either quote).
pub(crate) fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `value` as JSON for the inside of a `<script>` element. `<`, `>` and `&`
/// only occur inside JSON strings, where `\u003c`, `\u003e` and `\u0026` mean
/// the same to `JSON.parse`, so the element holds none of them: no `</script>`,
/// no `<!--`, no `<script` can end it early or make it run on past its end.
/// U+2028 and U+2029 are written as escapes too, so the text stays valid
/// JavaScript should it ever be read as such.
pub(crate) fn json_in_script(value: &impl Serialize) -> serde_json::Result<String> {
    let json = serde_json::to_string(value)?;
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_that_could_end_or_switch_an_element_is_left() {
        let hostile = "<!--<script></script>\"'&\u{2028}\u{2029}";
        let text = html(hostile);
        assert_eq!(
            text,
            "&lt;!--&lt;script&gt;&lt;/script&gt;&quot;&#39;&amp;\u{2028}\u{2029}"
        );
        let json = json_in_script(&serde_json::json!({ "name": hostile })).unwrap();
        for bad in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            assert!(!json.contains(bad), "{bad:?} in {json}");
        }
        // It reads back as the same data.
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["name"], hostile);
    }
}
