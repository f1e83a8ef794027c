//! A time in milliseconds as a user writes it, on the command line or in the
//! tournament file, read the same way in both: a limit (`--decision-ms`,
//! `--startup-ms`) is at least 1, an allowance (`--grace-ms`, `--time-bank-ms`,
//! `--pace-ms`) at least 0. A negative number is read as a number, so it is
//! refused for what it is rather than taken for an unknown flag (`-5`), and 0
//! as a limit is refused rather than handed to the bots as `time_ms: 0`.

use serde::{Deserialize, Deserializer};

/// For no limit at all: the flag that says so.
const NO_LIMIT: &str = "`play`, `tournament` and `sprt` take --no-timeouts for no limit";

/// A time limit: a whole number of milliseconds, at least 1.
pub(crate) fn limit(ms: i128) -> Result<u64, String> {
    if ms < 1 {
        return Err(format!(
            "a time limit must be at least 1 ms, got {ms}: a bot would have no time \
             at all to answer ({NO_LIMIT})"
        ));
    }
    u64::try_from(ms).map_err(|_| format!("{ms} ms is too long a time limit"))
}

/// An allowance: a whole number of milliseconds, 0 (none) or more.
pub(crate) fn allowance(ms: i128) -> Result<u64, String> {
    if ms < 0 {
        return Err(format!("a time must be 0 ms or more, got {ms}"));
    }
    u64::try_from(ms).map_err(|_| format!("{ms} ms is too long"))
}

fn number(text: &str) -> Result<i128, String> {
    text.trim().parse().map_err(|_| {
        format!("expected a whole number of milliseconds (e.g. 1000 for one second), got {text:?}")
    })
}

/// `value_parser` of a time-limit flag (with `allow_negative_numbers`).
pub(crate) fn limit_flag(text: &str) -> Result<u64, String> {
    limit(number(text)?)
}

/// `value_parser` of an allowance flag (with `allow_negative_numbers`).
pub(crate) fn allowance_flag(text: &str) -> Result<u64, String> {
    allowance(number(text)?)
}

/// A key's value as written: a number is checked, anything else is refused
/// with what was expected (serde alone would say "expected i64").
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Whole(i64),
    Other(toml::Value),
}

fn key<'de, D: Deserializer<'de>>(
    d: D,
    check: fn(i128) -> Result<u64, String>,
) -> Result<Option<u64>, D::Error> {
    let checked = match Option::<Written>::deserialize(d)? {
        None => return Ok(None),
        Some(Written::Whole(ms)) => check(ms.into()),
        Some(Written::Other(v)) => Err(format!(
            "expected a whole number of milliseconds{} (e.g. 1000 for one second), got {v}",
            if v.is_str() { " without quotes" } else { "" }
        )),
    };
    checked.map(Some).map_err(serde::de::Error::custom)
}

/// `deserialize_with` of a time-limit key of the tournament file.
pub(crate) fn limit_key<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    key(d, limit)
}

/// `deserialize_with` of an allowance key of the tournament file.
pub(crate) fn allowance_key<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    key(d, allowance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_positive_and_an_allowance_not_negative() {
        assert_eq!(limit_flag("1"), Ok(1));
        assert_eq!(allowance_flag("0"), Ok(0));
        for bad in ["0", "-5"] {
            let e = limit_flag(bad).unwrap_err();
            assert!(
                e.contains("at least 1 ms") && e.contains("--no-timeouts"),
                "{e}"
            );
        }
        assert!(allowance_flag("-1").unwrap_err().contains("0 ms or more"));
        assert!(limit_flag("1.5").unwrap_err().contains("whole number"));
        assert!(limit_flag("99999999999999999999999").is_err());
    }
}
