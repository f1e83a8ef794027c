//! The map and the house rules it promises: every repository path that
//! ARCHITECTURE.md names exists, no function of the referee or the protocol
//! crate is longer than 80 lines (STYLE.md: functions of one job), and no two
//! files of either crate import each other, directly or round a loop
//! (`import_graph.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::import_graph::{cycles, graph, read_tree, Module};
use crate::support::root;

/// The longest function the house style allows, in lines from `fn` to its
/// closing brace.
const MAX_LINES: usize = 80;

/// The spans of `text` between backticks that look like repository paths: a
/// slash, or a file name with an extension, and nothing but path characters.
fn named_paths(text: &str) -> BTreeSet<String> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/._-".contains(c);
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.is_empty() && s.chars().all(path_char))
        .filter(|s| s.contains('/') || [".md", ".rs", ".toml"].iter().any(|e| s.ends_with(e)))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_path_architecture_md_names_exists() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let paths = named_paths(&text);
    // The map names each layer's files, the seams and the tests: a handful of
    // paths would mean the extraction above stopped working.
    assert!(
        paths.len() >= 30,
        "only {} paths found: {paths:?}",
        paths.len()
    );
    let missing: Vec<&String> = paths.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains("(ARCHITECTURE.md)"),
        "the README links the map"
    );
}

/// One function found by [`functions`]: its name, the line of its `fn` and its
/// length in lines.
#[derive(Debug, PartialEq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// Every function with a body in `source`. A small scanner, not a parser: it
/// skips comments, string, raw string and char literals (so braces inside them
/// do not count), takes `fn NAME` as a function, its first `{` outside
/// parentheses and brackets as the start of its body (a `;` first means a
/// declaration without one) and the matching `}` as its end. Nested functions
/// are found too, and counted inside their parent as well.
fn functions(source: &str) -> Vec<Function> {
    let s: Vec<char> = source.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let (mut i, mut line, mut depth) = (0, 1, 0);
    // A `fn` whose body has not begun: name, line, open ( and [.
    let mut pending: Option<(String, usize, i32)> = None;
    // Functions inside whose body we are: name, line, depth of their body.
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    let mut found = Vec::new();
    // The index just past `end`, searching from `from`; with `escapes`, a
    // backslash hides the character after it (in strings, not raw strings).
    let skip_to = |from: usize, end: &str, escapes: bool, line: &mut usize| -> usize {
        let end: Vec<char> = end.chars().collect();
        let mut j = from;
        while j < s.len() && !s[j..].starts_with(&end) {
            if escapes && s[j] == '\\' {
                j += 1;
            }
            if s.get(j) == Some(&'\n') {
                *line += 1;
            }
            j += 1;
        }
        (j + end.len()).min(s.len())
    };
    while i < s.len() {
        let c = s[i];
        let prev_ident = i > 0 && ident(s[i - 1]);
        if s[i..].starts_with(&['/', '/']) {
            i = skip_to(i, "\n", false, &mut line);
            line += 1;
            continue;
        }
        if s[i..].starts_with(&['/', '*']) {
            i = skip_to(i + 2, "*/", false, &mut line);
            continue;
        }
        if c == '"' {
            i = skip_to(i + 1, "\"", true, &mut line);
            continue;
        }
        // r"…", r#"…"#, and the byte string br"…".
        let raw_start = !prev_ident || (s[i - 1] == 'b' && (i < 2 || !ident(s[i - 2])));
        if c == 'r' && raw_start {
            let hashes = s[i + 1..].iter().take_while(|&&h| h == '#').count();
            if s.get(i + 1 + hashes) == Some(&'"') {
                let end = format!("\"{}", "#".repeat(hashes));
                i = skip_to(i + 2 + hashes, &end, false, &mut line);
                continue;
            }
        }
        if c == '\'' {
            // A char literal ('x', '\n', '\u{7b}'), or a lifetime ('a).
            if s.get(i + 1) == Some(&'\\') {
                i = skip_to(i + 3, "'", true, &mut line);
                continue;
            }
            if s.get(i + 2) == Some(&'\'') {
                i += 3;
                continue;
            }
        }
        if c == 'f' && !prev_ident && s[i..].starts_with(&['f', 'n']) {
            let rest: String = s[i + 2..].iter().take(100).collect();
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|&c| ident(c))
                .collect();
            if rest.starts_with(char::is_whitespace) && !name.is_empty() {
                pending = Some((name, line, 0));
            }
            i += 2;
            continue;
        }
        match c {
            '\n' => line += 1,
            '(' | '[' | ')' | ']' => {
                if let Some(p) = pending.as_mut() {
                    p.2 += if c == '(' || c == '[' { 1 } else { -1 };
                }
            }
            ';' if pending.as_ref().is_some_and(|p| p.2 == 0) => pending = None,
            '{' => {
                depth += 1;
                if pending.as_ref().is_some_and(|p| p.2 == 0) {
                    let (name, at, _) = pending.take().unwrap();
                    open.push((name, at, depth));
                }
            }
            '}' => {
                if open.last().is_some_and(|f| f.2 == depth) {
                    let (name, at, _) = open.pop().unwrap();
                    found.push(Function {
                        name,
                        line: at,
                        lines: line - at + 1,
                    });
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

#[test]
fn the_scanner_measures_what_a_reader_would() {
    let source = r####"
// fn commented_out() {
fn short(x: [u8; 2]) -> char {
    let _ = "a { brace in a string \" and an escaped quote";
    let _ = r#"a raw "{" string"#;
    let _ = '{';
    let _ = '\'';
    /* a { block comment */
    fn inner<'a>(s: &'a str) -> &'a str {
        s
    }
    '}'
}
trait T {
    fn declared(&self) -> u8;
    fn provided(&self) -> u8 {
        1
    }
}
"####;
    let found = functions(source);
    let summary: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    assert_eq!(
        summary,
        [("inner", 9, 3), ("short", 3, 11), ("provided", 16, 3)]
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Fails on main until the refactors of issue 16 have all landed: it names
/// every function still over the limit.
#[test]
fn no_function_in_the_referee_or_the_protocol_is_longer_than_80_lines() {
    let mut files = Vec::new();
    for dir in ["referee/src", "protocol/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    files.sort();
    let (mut measured, mut long) = (0, Vec::new());
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        for f in functions(&source) {
            measured += 1;
            if f.lines > MAX_LINES {
                let rel = file.strip_prefix(root()).unwrap().display();
                long.push(format!("{rel}:{} {} ({} lines)", f.line, f.name, f.lines));
            }
        }
    }
    assert!(measured > 500, "only {measured} functions found");
    assert!(
        long.is_empty(),
        "{} of {measured} functions are longer than {MAX_LINES} lines:\n{}",
        long.len(),
        long.join("\n")
    );
}

/// A file-level import cycle makes two rooms one: neither can be read or
/// changed without the other. Fails naming each cycle's files.
#[test]
fn no_file_level_import_cycle_in_the_referee_or_the_protocol() {
    let mut all = Vec::new();
    for dir in ["referee/src", "protocol/src"] {
        let files = read_tree(&root().join(dir));
        let g = graph(&files);
        let edges: usize = g.values().map(|t| t.len()).sum();
        assert!(edges > files.len(), "{dir}: only {edges} imports found");
        if std::env::var("SHOW_IMPORTS").is_ok() {
            for (m, ts) in &g {
                eprintln!(
                    "{} -> {:?}",
                    m.join("::"),
                    ts.iter().map(|t| t.join("::")).collect::<Vec<_>>()
                );
            }
        }
        all.extend(
            cycles(&g)
                .into_iter()
                .map(|c| format!("{dir}: {}", c.join(" <-> "))),
        );
    }
    assert!(all.is_empty(), "import cycles:\n{}", all.join("\n"));
}

fn tree(files: &[(&str, &str)]) -> std::collections::BTreeMap<Module, String> {
    files
        .iter()
        .map(|(m, text)| {
            let m: Module = m
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            (m, (*text).to_owned())
        })
        .collect()
}

/// The checker finds a cycle it is shown, through every way a file names
/// another, and no cycle made only of what does not count.
#[test]
fn the_import_checker_finds_a_planted_cycle_and_ignores_what_is_not_an_import() {
    let planted = tree(&[
        ("", "pub mod a; pub mod b; pub mod c; pub mod d; pub mod e;"),
        // a -> b through a use tree, b -> c inline, c -> a through super::.
        ("a", "use crate::{b::{X, Y as Z}, e};\npub fn g() {}"),
        ("b", "pub fn f() { crate::c::h(); }"),
        ("c", "pub fn h() { super::a::g() }"),
        // Not imports: a comment, a string, a test module (inline and in a file).
        ("d", "// crate::e::x\nconst S: &str = \"crate::e::x\";\n#[cfg(test)]\nmod tests {\n    use crate::e::x;\n}\n#[cfg(test)]\nmod more;\npub fn x() {}"),
        ("d::more", "use crate::e::x;"),
        ("e", "pub fn x() { crate::d::x() }"),
        // A folder's mod.rs naming its children is not a loop with them.
        ("f", "pub mod g; pub use g::G; use self::g::*; fn k() { crate::f::g::G }"),
        ("f::g", "pub struct G; use super::k;"),
    ]);
    let g = graph(&planted);
    let m = |s: &str| -> Module { s.split("::").map(String::from).collect() };
    assert_eq!(g[&m("a")], [m("b"), m("e")].into_iter().collect());
    assert!(g[&m("d")].is_empty(), "{:?}", g[&m("d")]);
    assert!(
        !g.contains_key(&m("d::more")),
        "a test-only file is test code"
    );
    assert_eq!(cycles(&g), [["a", "b", "c"]]);
    // Breaking one edge breaks the cycle.
    let mut fixed = planted.clone();
    fixed.insert(m("c"), "pub fn h() {}".into());
    assert!(cycles(&graph(&fixed)).is_empty());
}
