//! The documents stay true. PROTOCOL.md: every one-line JSON example in it parses
//! as a protocol message or a transcript line (lines abbreviated with `{...}`
//! excepted), and the captured session's replies are well-formed answers to their
//! requests. README.md, the other top-level `*.md` and `docs/*.md`: every relative
//! link and anchor resolves and every `referee …` command shown parses
//! (`doc_check.rs`); the README keeps its two setup commands; the reference
//! names every flag of every command.

use schmier_protocol::wire::{FromBot, ToBot};

use std::path::Path;

use crate::doc_check::{anchors, check, commands, documents, links, slug};
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

#[test]
fn every_link_anchor_and_referee_command_in_the_docs_holds() {
    let docs = documents(&root());
    assert!(docs
        .iter()
        .any(|d| d.path == Path::new("docs/reference.md")));
    let found = check(&root(), &docs);
    assert!(
        found.problems.is_empty(),
        "{} problem(s):\n{}",
        found.problems.len(),
        found.problems.join("\n")
    );
    // The guide links its sections and shows its commands: a handful would
    // mean the extraction stopped working.
    assert!(found.links >= 80, "only {} links checked", found.links);
    assert!(
        found.commands >= 40,
        "only {} commands checked",
        found.commands
    );
}

/// The checker goes red: a scratch copy of the real documents, with a broken
/// link, an anchor no heading has and a misspelt flag planted in README.md,
/// gives exactly those three problems, each named by file and line.
#[test]
fn the_checker_finds_a_broken_link_anchor_and_misspelt_flag_planted_in_a_copy() {
    let mut docs = documents(&root());
    let readme = docs
        .iter_mut()
        .find(|d| d.path == Path::new("README.md"))
        .unwrap();
    let lines = readme.text.lines().count();
    readme.text.push_str(concat!(
        "\nSee [the old guide](docs/guide.md) and [its standings](docs/organisers.md#standings-ranking).\n",
        "\n```sh\nreferee tournament examples/sample-bracket.toml --sets 2 --jbos 2 --out runs/t1\n```\n",
    ));
    let found = check(&root(), &docs);
    assert_eq!(found.problems.len(), 3, "{:#?}", found.problems);
    let at = |n: usize| format!("README.md:{}: ", lines + n);
    assert!(
        found.problems[0].starts_with(&at(2)),
        "{}",
        found.problems[0]
    );
    assert!(found.problems[0].contains("docs/guide.md does not exist"));
    assert!(found.problems[1].starts_with(&at(2)));
    assert!(found.problems[1].contains("has no heading #standings-ranking"));
    assert!(
        found.problems[2].starts_with(&at(5)),
        "{}",
        found.problems[2]
    );
    assert!(
        found.problems[2].contains("--jbos"),
        "{}",
        found.problems[2]
    );
}

#[test]
fn anchors_follow_githubs_slugs_and_commands_are_found_as_a_shell_reads_them() {
    let text = "# Is my change better? `referee sprt`\n## Notes\n## Notes\n\
                ## Rules summary ([docs/RULES.md](docs/RULES.md) is authoritative)\n\
                ```sh\n# not a heading\n$ referee play --seat 4=\"./bot heuristic\" \\\n    \
                --games 2 > out.txt  # a comment\nRUST_LOG=info cargo run --release -p referee -- verify runs/\n\
                referee: a line of output, not a command\ncargo build --release -p referee\n```\n\
                [a](x.md#y) `[not](a link)` [b]: ../z.md\n";
    let got = anchors(text);
    let want = [
        "is-my-change-better-referee-sprt",
        "notes",
        "notes-1",
        "rules-summary-docsrulesmd-is-authoritative",
    ];
    assert_eq!(got.iter().map(String::as_str).collect::<Vec<_>>(), {
        let mut w = want.to_vec();
        w.sort();
        w
    });
    assert_eq!(slug("Plackett–Luce, 95% CI"), "plackettluce-95-ci");
    let cmds = commands(text);
    assert_eq!(
        cmds,
        vec![
            (
                7,
                ["play", "--seat", "4=./bot heuristic", "--games", "2"]
                    .map(String::from)
                    .to_vec()
            ),
            (9, ["verify", "runs/"].map(String::from).to_vec()),
        ]
    );
    assert_eq!(
        links(text),
        vec![
            (4, "docs/RULES.md".to_owned()),
            (13, "x.md#y".to_owned()),
            (13, "../z.md".to_owned())
        ]
    );
}

/// The README stays a page a newcomer reads in five minutes, and its quick start
/// is the two commands: a real game among the sample bots, and every test.
#[test]
fn the_readme_is_short_and_starts_with_the_two_setup_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(
        n <= 250,
        "README.md has {n} lines; the detail belongs in docs/"
    );
    let start = readme.find("## Quick start").expect("a quick start");
    let block: Vec<&str> = readme[start..]
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .map(|l| l.split(" #").next().unwrap().trim())
        .collect();
    assert_eq!(
        block,
        ["cargo run --release -p referee -- play", "scripts/test"]
    );
    assert!(root().join("scripts/test").is_file());
}

/// docs/reference.md names every flag of every command the binary has, in that
/// command's section (`### \`referee NAME\``), or for the table settings that
/// `play`, `tournament` and `sprt` share, in "Table settings".
#[test]
fn the_reference_names_every_flag_of_every_command() {
    use clap::CommandFactory;
    let text = std::fs::read_to_string(root().join("docs/reference.md")).unwrap();
    let section = |title: &str| -> String {
        let Some(at) = text.find(&format!("\n### {title}\n")) else {
            return String::new();
        };
        let body = &text[at + title.len() + 6..];
        body[..body
            .find("\n### ")
            .or_else(|| body.find("\n## "))
            .unwrap_or(body.len())]
            .to_owned()
    };
    let shared = section("Table settings");
    assert!(
        shared.contains("`--decision-ms"),
        "the shared table settings are listed"
    );
    let cli = <referee::cli::Cli as CommandFactory>::command();
    let mut missing = Vec::new();
    let mut seen = 0;
    for cmd in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = cmd.get_name();
        let own = section(&format!("`referee {name}`"));
        if own.is_empty() {
            missing.push(format!("no section ### `referee {name}`"));
            continue;
        }
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else { continue };
            if long == "help" || long == "version" {
                continue;
            }
            seen += 1;
            let flag = format!("`--{long}");
            let may_share = ["play", "tournament", "sprt"].contains(&name);
            let documented = own.contains(&flag) || (may_share && shared.contains(&flag));
            if !documented {
                missing.push(format!("referee {name} --{long}"));
            }
        }
    }
    assert!(missing.is_empty(), "not in docs/reference.md: {missing:#?}");
    assert!(seen >= 100, "only {seen} flags seen");
}

/// The keys of a JSON object.
fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

/// The first cell of each row of the table whose header row opens with
/// `| first |`, each a `` `field` ``; and each row whole.
fn table_rows<'a>(doc: &'a str, first: &str) -> Vec<(String, &'a str)> {
    let start = doc
        .find(&format!("| {first} |"))
        .unwrap_or_else(|| panic!("PROTOCOL.md has no table headed {first}"));
    (doc[start..].lines().skip(2))
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cell = l.split('|').nth(1).unwrap().trim();
            (cell.trim_matches('`').to_owned(), l)
        })
        .collect()
}

/// PROTOCOL.md's "Transcripts" names every field a transcript's header, its
/// `isolation` record and its `result` line have, and no field they lack
/// (issue 45: `isolation.limits.frozen_while_waiting` was missing). The
/// fields are those of a real transcript's header and result, and of an
/// isolation record with every optional field written.
#[test]
fn protocol_md_names_every_field_of_the_transcript_header() {
    use referee::isolation_record::{IsolationRecord, LimitsRecord, SandboxRecord};
    let doc = std::fs::read_to_string(root().join("PROTOCOL.md")).unwrap();
    let section = &doc[doc.find("\n## Transcripts").unwrap()..];
    let section = &section[..section[1..].find("\n## ").unwrap()];
    let named = |field: &str| section.contains(&format!("`{field}`"));

    let done = crate::support::play().seed(3).inproc_bystanders().ok();
    let lines = done.lines(1);
    let header = &lines[0];
    let mut missing = Vec::new();
    // Every line's `type` says what it is (the header's is "header").
    let fields = keys(header).into_iter().filter(|k| k != "type");
    for key in fields.chain(keys(&header["seats"][0])) {
        if !named(&key) {
            missing.push(format!("header.{key}"));
        }
    }
    // Every optional field of the record written: sandboxed, limited,
    // frozen, paced, with a scratch of a size.
    let every = IsolationRecord {
        sandbox: Some(SandboxRecord {
            tool: "bubblewrap".into(),
            layers: vec!["namespaces".into()],
            tmpfs_bytes: 64 << 20,
        }),
        limits: LimitsRecord {
            memory_bytes: Some(1),
            cpu_seconds: Some(1),
            open_files: Some(1),
            processes: Some(1),
            cpu_millicores: Some(1),
            stderr_cap_bytes: 1,
            frozen_while_waiting: true,
        },
        pace_ms: Some(1),
        scratch: true,
        scratch_bytes: Some(1),
    };
    let every = serde_json::to_value(&every).unwrap();
    // A real header's record has the same fields, less the optional ones.
    for key in keys(&header["isolation"]) {
        assert!(every.get(&key).is_some(), "isolation.{key}");
    }
    let rows = table_rows(section, "`isolation` field");
    let row = |field: &str| rows.iter().find(|(f, _)| f == field).map(|(_, l)| *l);
    for key in keys(&every) {
        if row(&key).is_none() {
            missing.push(format!("isolation.{key}"));
        }
    }
    for nested in ["limits", "sandbox"] {
        for key in keys(&every[nested]) {
            if !row(nested).is_some_and(|l| l.contains(&format!("`{key}`"))) {
                missing.push(format!("isolation.{nested}.{key}"));
            }
        }
    }
    let result = lines.last().unwrap();
    let result_rows = table_rows(section, "`result` field");
    for key in keys(result).into_iter().filter(|k| k != "type") {
        if !result_rows.iter().any(|(f, _)| *f == key) {
            missing.push(format!("result.{key}"));
        }
    }
    assert!(missing.is_empty(), "PROTOCOL.md does not name {missing:?}");
    // And each row names a field there is.
    let stale: Vec<&String> = (rows.iter().map(|(f, _)| f))
        .filter(|f| every.get(f.as_str()).is_none())
        .chain((result_rows.iter().map(|(f, _)| f)).filter(|f| result.get(f.as_str()).is_none()))
        .collect();
    assert!(
        stale.is_empty(),
        "PROTOCOL.md's rows name no field: {stale:?}"
    );
}
