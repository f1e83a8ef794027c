//! "Did you mean": the known name nearest a mistyped one, for the keys of the
//! tournament file and the names of the built-in bots, as clap suggests the
//! nearest flag for a mistyped one (the same measure and threshold: Jaro
//! similarity above 0.7).

/// The known name nearest `typed`, if any is near enough.
pub(crate) fn nearest<'a>(
    typed: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (strsim::jaro(typed, k), k))
        .filter(|&(score, _)| score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// " (did you mean `NAME`?)", or nothing.
pub(crate) fn did_you_mean<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    nearest(typed, known).map_or(String::new(), |k| format!(" (did you mean `{k}`?)"))
}

/// serde's "unknown field `X`, expected one of `A`, `B`" (or "expected `A`"),
/// with the nearest of the expected names suggested; other messages unchanged.
pub(crate) fn unknown_field(message: &str) -> String {
    let Some((_, rest)) = message.split_once("unknown field `") else {
        return message.to_owned();
    };
    let Some((typed, expected)) = rest.split_once('`') else {
        return message.to_owned();
    };
    let known = expected.split('`').skip(1).step_by(2);
    let hint = did_you_mean(typed, known);
    format!("{}{hint}", message.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_gets_the_nearest_name_and_a_stranger_none() {
        let keys = ["decision_ms", "startup_ms", "seed", "entrant"];
        assert_eq!(nearest("decison_ms", keys), Some("decision_ms"));
        assert_eq!(nearest("entrants", keys), Some("entrant"));
        assert_eq!(nearest("colour", keys), None);
        let serde = "unknown field `comand`, expected one of `name`, `command`, `dir`, `env`\n";
        assert_eq!(
            unknown_field(serde),
            "unknown field `comand`, expected one of `name`, `command`, `dir`, `env` \
             (did you mean `command`?)"
        );
        assert_eq!(unknown_field("invalid type"), "invalid type");
    }
}
