//! The checker behind "docs that stay true" (`docs.rs`): in a set of Markdown
//! documents it follows every relative link and `#anchor` (the anchor must be a
//! heading of the linked document, slugged as GitHub does), and it runs every
//! `referee …` command shown in a code block through the referee's own argument
//! parser (`Cli::try_parse_from`: parse only, nothing is played). It reports
//! each problem as `FILE:LINE: what`, so a renamed flag or a moved section fails
//! a test before it fails a reader.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use clap::Parser;

/// A document to check: its path relative to the repository root, and its text.
pub struct Doc {
    pub path: PathBuf,
    pub text: String,
}

/// What [`check`] found: the problems, and how many links and commands it
/// checked (so a test can tell an extraction that silently stopped working).
#[derive(Debug, Default)]
pub struct Findings {
    pub problems: Vec<String>,
    pub links: usize,
    pub commands: usize,
}

/// README.md and every other top-level `*.md`, and every `docs/*.md`, read
/// from `root`.
pub fn documents(root: &Path) -> Vec<Doc> {
    let mut paths = Vec::new();
    for dir in [PathBuf::new(), PathBuf::from("docs")] {
        for e in std::fs::read_dir(root.join(&dir)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && e.path().is_file() {
                paths.push(dir.join(name));
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| Doc {
            text: std::fs::read_to_string(root.join(&path)).unwrap(),
            path,
        })
        .collect()
}

/// Checks the links and commands of `docs`; a link's target is looked up among
/// `docs` first, then on disk under `root`.
pub fn check(root: &Path, docs: &[Doc]) -> Findings {
    let by_path: BTreeMap<&Path, &str> = docs
        .iter()
        .map(|d| (d.path.as_path(), d.text.as_str()))
        .collect();
    let mut found = Findings::default();
    for doc in docs {
        for (line, target) in links(&doc.text) {
            found.links += 1;
            if let Err(why) = follow(root, &by_path, &doc.path, &target) {
                found.problems.push(format!(
                    "{}:{line}: link ({target}): {why}",
                    doc.path.display()
                ));
            }
        }
        for (line, args) in commands(&doc.text) {
            found.commands += 1;
            if let Err(why) = parses(&args) {
                found.problems.push(format!(
                    "{}:{line}: `referee {}` does not parse: {why}",
                    doc.path.display(),
                    args.join(" ")
                ));
            }
        }
    }
    found
}

/// Each line of `text` with its number (from 1) and, inside a fenced code
/// block, the block's language (`""` unlabelled; the fences count as inside).
fn lines(text: &str) -> Vec<(usize, &str, Option<&str>)> {
    let mut lang: Option<&str> = None;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        let fence = t.starts_with("```") || t.starts_with("~~~");
        if fence && lang.is_none() {
            lang = Some(t.trim_start_matches(['`', '~']).trim());
            out.push((i + 1, l, lang));
        } else if fence {
            out.push((i + 1, l, lang.take()));
        } else {
            out.push((i + 1, l, lang));
        }
    }
    out
}

/// The code blocks whose lines are commands to check: shell, a console
/// session, or unlabelled (`text`, `toml`, `json` blocks are not shell).
const SHELL: [&str; 5] = ["", "sh", "bash", "shell", "console"];

/// `[text](target)` becomes `text`: a heading's slug is made of its words.
fn unlink(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        match after.find("](").and_then(|close| {
            let end = after[close..].find(')')?;
            Some((close, close + end))
        }) {
            Some((close, end)) => {
                out.push_str(&rest[..open]);
                out.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_`
/// kept, spaces made `-`, everything else dropped.
pub fn slug(heading: &str) -> String {
    unlink(heading.trim())
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor `text` defines: its headings' slugs (a repeated slug gets
/// `-1`, `-2`, … as on GitHub) and explicit `id="…"`/`name="…"` attributes.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, l, code) in lines(text) {
        if code.is_some() {
            continue;
        }
        let hashes = l.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && l[hashes..].starts_with(' ') {
            let s = slug(&l[hashes..]);
            let n = seen.entry(s.clone()).or_insert(0);
            out.insert(if *n == 0 {
                s.clone()
            } else {
                format!("{s}-{n}")
            });
            *n += 1;
        }
        for attr in ["id=\"", "name=\""] {
            for (i, _) in l.match_indices(attr) {
                let v = &l[i + attr.len()..];
                if let Some(end) = v.find('"') {
                    out.insert(v[..end].to_owned());
                }
            }
        }
    }
    out
}

/// `text` without its inline code spans (a link shown as code is not a link).
fn without_code_spans(l: &str) -> String {
    l.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// Every link target outside code, with its line: inline `[text](target)`
/// and reference definitions `[label]: target`. Absolute URLs are left out.
pub fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, l, code) in lines(text) {
        if code.is_some() {
            continue;
        }
        let prose = without_code_spans(l);
        let mut targets: Vec<&str> = prose
            .match_indices("](")
            .filter_map(|(i, _)| {
                let t = &prose[i + 2..];
                let end = t.find([')', ' '])?;
                Some(&t[..end])
            })
            .collect();
        let def = prose.trim_start();
        if let Some(rest) = def.strip_prefix('[').and_then(|r| r.split_once("]: ")) {
            targets.push(rest.1.split_whitespace().next().unwrap_or(""));
        }
        for t in targets {
            let absolute = t.contains("://") || t.starts_with("mailto:");
            if !absolute {
                out.push((n, t.trim_matches(['<', '>']).to_owned()));
            }
        }
    }
    out
}

/// `base/rel` with `.` and `..` folded, relative to the repository root; an
/// error when it climbs out of the repository.
fn join(base: &Path, rel: &str) -> Result<PathBuf, String> {
    let mut out = PathBuf::new();
    for c in base.join(rel).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err("points outside the repository".into());
                }
            }
            Component::Normal(p) => out.push(p),
            _ => return Err("is not a relative path".into()),
        }
    }
    Ok(out)
}

/// Follows one link of the document at `from`.
fn follow(
    root: &Path,
    docs: &BTreeMap<&Path, &str>,
    from: &Path,
    target: &str,
) -> Result<(), String> {
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        from.to_path_buf()
    } else {
        join(from.parent().unwrap_or(Path::new("")), path)?
    };
    let text = match docs.get(file.as_path()) {
        Some(t) => Some((*t).to_owned()),
        None if root.join(&file).exists() => std::fs::read_to_string(root.join(&file)).ok(),
        None => return Err(format!("{} does not exist", file.display())),
    };
    let Some(anchor) = anchor else {
        return Ok(());
    };
    let Some(text) = text.filter(|_| file.extension().is_some_and(|e| e == "md")) else {
        return Err(format!(
            "#{anchor} in {}, which is not a Markdown file",
            file.display()
        ));
    };
    if anchors(&text).contains(anchor) {
        Ok(())
    } else {
        Err(format!("{} has no heading #{anchor}", file.display()))
    }
}

/// The program names that are the referee: `referee`, a path to it, or
/// `cargo run [flags] -p referee [flags] --`.
fn referee_args(words: &[String]) -> Option<Vec<String>> {
    let mut w = words;
    // Environment assignments before the command (`RUST_LOG=info referee ...`).
    while w
        .first()
        .is_some_and(|x| x.contains('=') && !x.starts_with('-'))
    {
        w = &w[1..];
    }
    let first = w.first()?;
    let rest: &[String] = if first == "referee" || first.ends_with("/referee") {
        &w[1..]
    } else if first == "cargo" && w.get(1).is_some_and(|x| x == "run") {
        let names_referee = w
            .windows(2)
            .any(|p| (p[0] == "-p" || p[0] == "--package" || p[0] == "--bin") && p[1] == "referee");
        if !names_referee {
            return None;
        }
        match w.iter().position(|x| x == "--") {
            Some(i) => &w[i + 1..],
            None => &[],
        }
    } else {
        return None;
    };
    // The command ends where the shell would start another or redirect.
    let end = rest
        .iter()
        .position(|x| {
            ["|", "||", "&&", ";", "&"].contains(&x.as_str())
                || x.starts_with('>')
                || x.starts_with("2>")
        })
        .unwrap_or(rest.len());
    Some(rest[..end].to_vec())
}

/// Every referee command shown in a shell code block, with its line: a line
/// (after an optional `$ ` prompt, joined with the lines its trailing `\`
/// continues) whose first word is the referee, split as a shell would split it.
/// A word holding a shell variable (`--jobs $J`) stands for a value the text
/// does not give: it is checked as `1`, which every number and path accepts.
pub fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (n, l, code) in lines(text) {
        if !code.is_some_and(|lang| SHELL.contains(&lang)) {
            pending = None;
            continue;
        }
        let (start, mut joined) = match pending.take() {
            Some((s, j)) => (s, j + " " + l.trim()),
            None => (
                n,
                l.trim().strip_prefix("$ ").unwrap_or(l.trim()).to_owned(),
            ),
        };
        if let Some(cut) = joined.strip_suffix('\\') {
            joined = cut.to_owned();
            pending = Some((start, joined));
            continue;
        }
        let Some(words) = shlex::split(&joined) else {
            continue; // not shell (an unbalanced quote in an output line)
        };
        let words: Vec<String> = words
            .into_iter()
            .map(|w| if w.contains('$') { "1".to_owned() } else { w })
            .collect();
        if let Some(args) = referee_args(&words) {
            out.push((start, args));
        }
    }
    out
}

/// Whether `referee ARGS` parses; `--help` and `--version` count as parsing.
pub fn parses(args: &[String]) -> Result<(), String> {
    use clap::error::ErrorKind;
    let argv = std::iter::once("referee".to_owned()).chain(args.iter().cloned());
    match referee::cli::Cli::try_parse_from(argv) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(()),
        Err(e) => Err(e.to_string().lines().next().unwrap_or("").to_owned()),
    }
}
