//! PROTOCOL.md stays true: every one-line JSON example in it parses as a protocol
//! message or a transcript line (lines abbreviated with `{...}` excepted), and the
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
            let transcript = serde_json::from_value::<referee::transcript::Line>(value).is_ok();
            assert!(
                parsed_to || parsed_from || transcript,
                "neither a referee nor a bot message nor a transcript line: {line}"
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

/// The repository carries its own rules reference: nothing links outside it, and
/// every "RULES.md §N" citation names a rule that docs/RULES.md has.
#[test]
fn every_rules_citation_resolves_inside_the_repository() {
    let rules = std::fs::read_to_string(root().join("docs/RULES.md")).unwrap();
    // Rules are numbered list items "N. " under sections 1-7, worked cases in section 8.
    let body = &rules[..rules.find("## 8. Worked cases").expect("section 8")];
    let numbered: Vec<u32> = body
        .lines()
        .filter_map(|l| l.split_once(". ").and_then(|(n, _)| n.parse().ok()))
        .collect();
    assert_eq!(
        numbered,
        (1..=27).collect::<Vec<_>>(),
        "rules 1-27 in order"
    );
    let cases = rules[rules.find("## 8. Worked cases").unwrap()..]
        .lines()
        .filter(|l| {
            l.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(cases, 20, "worked cases 1-20");

    let mut cited = 0;
    let mut files = vec![root().join("README.md"), root().join("PROTOCOL.md")];
    for dir in ["protocol", "referee", "sample-bots", "tests", "docs"] {
        collect(&root().join(dir), &mut files);
    }
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        if f.ends_with("tests/integration/docs.rs") {
            continue; // this test spells out what it looks for
        }
        assert!(
            !text.contains("../shared"),
            "{} links outside the repository",
            f.display()
        );
        for (i, _) in text.match_indices("RULES.md §") {
            let n: String = text[i + "RULES.md §".len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let Ok(n) = n.parse::<u32>() else {
                continue; // prose about citations, e.g. "RULES.md §N"
            };
            assert!(
                (1..=27).contains(&n),
                "{}: RULES.md §{n} does not exist",
                f.display()
            );
            cited += 1;
        }
    }
    assert!(cited >= 20, "{cited} citations checked");
}

fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules" {
            collect(&p, out);
        } else if [".rs", ".md", ".py", ".js"]
            .iter()
            .any(|x| name.ends_with(x))
        {
            out.push(p);
        }
    }
}
