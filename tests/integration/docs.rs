//! PROTOCOL.md stays true: every one-line JSON example in it parses as the message
//! type it claims to be (lines abbreviated with `{...}` excepted), and the
//! captured session's replies are well-formed answers to their requests.

use schmier_protocol::wire::{FromBot, ToBot};

use crate::support::root;

#[test]
fn every_protocol_example_parses() {
    let doc = std::fs::read_to_string(root().join("PROTOCOL.md")).unwrap();
    let (mut to_bot, mut from_bot) = (0, 0);
    let mut last_request = None;
    for line in doc.lines() {
        if let Some(json) = line.strip_prefix("> ") {
            let msg: ToBot = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
            if let ToBot::Request(r) = &msg {
                last_request = Some(r.clone());
            }
            to_bot += 1;
        } else if let Some(json) = line.strip_prefix("< ") {
            let msg: FromBot = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
            if let FromBot::Reply { id, action } = msg {
                let req = last_request.take().expect("a reply follows a request");
                assert_eq!(id, req.id);
                schmier_protocol::wire::parse_action(req.decision, &action).unwrap();
            }
            from_bot += 1;
        } else if line.starts_with('{') && line.ends_with('}') && !line.contains("{...}") {
            let value: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let parsed_to = serde_json::from_value::<ToBot>(value.clone()).is_ok();
            let parsed_from = serde_json::from_value::<FromBot>(value.clone()).is_ok();
            assert!(
                parsed_to || parsed_from,
                "neither a referee nor a bot message: {line}"
            );
            to_bot += usize::from(parsed_to);
            from_bot += usize::from(parsed_from);
        }
    }
    assert!(
        to_bot >= 20 && from_bot >= 4,
        "{to_bot} referee and {from_bot} bot examples checked"
    );
}
