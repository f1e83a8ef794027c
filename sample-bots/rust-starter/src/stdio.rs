//! The protocol loop, `schmier/1` on stdin/stdout: answer `hello`, reply to every
//! `request` with what `choose` returns, ignore every other message (events,
//! faults, and types from later protocol versions), stop at `bye` or at the end
//! of input. One JSON object per line, flushed at once; logs go to stderr.

use std::io::{BufRead, Write};

use schmier_protocol::rules::Action;
use schmier_protocol::wire::{action_json, Request, PROTOCOL};

pub fn run(
    choose: impl Fn(&Request) -> Action,
    name: &str,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
            eprintln!("{name}: ignoring a line that is not JSON: {line:.200}");
            continue;
        };
        let reply = match msg["type"].as_str() {
            Some("hello") => {
                serde_json::json!({"type": "hello", "name": name, "protocol": PROTOCOL})
            }
            Some("request") => match serde_json::from_value::<Request>(msg) {
                Ok(request) => serde_json::json!({
                    "type": "reply",
                    "id": request.id,
                    "action": action_json(choose(&request)),
                }),
                Err(e) => {
                    eprintln!("{name}: ignoring a request I cannot read: {e}");
                    continue;
                }
            },
            Some("bye") => break,
            _ => continue,
        };
        writeln!(output, "{reply}")?;
        output.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use schmier_protocol::rules::{Game, RulesConfig};

    #[test]
    fn hello_a_reply_per_request_unknown_messages_ignored_stop_at_bye() {
        let (game, _) = Game::new(1, RulesConfig::default());
        let mut request =
            serde_json::to_value(Request::for_decision(&game, 7, Some(1000)).unwrap()).unwrap();
        request["type"] = "request".into();
        request["x_unknown_field"] = true.into();
        let input = [
            r#"{"type":"hello","protocol":"schmier/1","referee":"test","limits":{}}"#.to_owned(),
            r#"{"type":"x_from_the_future","data":1}"#.to_owned(),
            "not json".to_owned(),
            request.to_string(),
            r#"{"type":"bye"}"#.to_owned(),
            request.to_string(),
        ]
        .join("\n");
        let mut out = Vec::new();
        run(crate::choose, "starter", input.as_bytes(), &mut out).unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                serde_json::json!({"type": "hello", "name": "starter", "protocol": "schmier/1"}),
                // The first seat to bid may pass: the starter does.
                serde_json::json!({"type": "reply", "id": 7, "action": "pass"}),
            ]
        );
    }
}
