//! The file-level import graph of a crate's source tree, from the text alone
//! (no compiler), and its cycles: what `architecture.rs` checks so that no two
//! files of `referee/src` or `protocol/src` need each other, directly or round
//! a loop. A file is a module (`a/b.rs` and `a/b/mod.rs` are `a::b`); it imports
//! another when its code names a path into it — `use crate::…`, `use super::…`,
//! a `use` tree (`crate::{a::b, c::{d, e}}`), or a path written inline
//! (`crate::a::f()`, `super::x::Y`). Comments, string literals and test code
//! (a `#[cfg(test)]` module, inline or in its own file) do not count, and
//! neither does a module naming its own submodules (a `mod.rs` re-exporting its
//! children is how a folder is built, not a loop).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path inside its crate: `["tournament", "run"]`; the root is `[]`.
pub type Module = Vec<String>;

/// Every `.rs` file under `src`, by module, with its text.
pub fn read_tree(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut m: Module = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if m.last()
                    .is_some_and(|l| ["mod", "lib", "main"].contains(&l.as_str()))
                {
                    m.pop();
                }
                out.insert(m, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// `source` with comments, string and char literals blanked out (newlines kept).
fn code_only(source: &str) -> String {
    let s: Vec<char> = source.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    // Blanks s[from..to] into `out`, keeping line breaks.
    let blank = |out: &mut String, from: usize, to: usize| {
        for &c in &s[from..to.min(s.len())] {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    let find = |from: usize, end: &str, escapes: bool| -> usize {
        let end: Vec<char> = end.chars().collect();
        let mut j = from;
        while j < s.len() && !s[j..].starts_with(&end) {
            j += if escapes && s[j] == '\\' { 2 } else { 1 };
        }
        (j + end.len()).min(s.len())
    };
    while i < s.len() {
        let prev_ident = i > 0 && ident(s[i - 1]);
        let end = if s[i..].starts_with(&['/', '/']) {
            Some(find(i, "\n", false) - 1)
        } else if s[i..].starts_with(&['/', '*']) {
            Some(find(i + 2, "*/", false))
        } else if s[i] == '"' {
            Some(find(i + 1, "\"", true))
        } else if s[i] == 'r' && (!prev_ident || s[i - 1] == 'b') && {
            let h = s[i + 1..].iter().take_while(|&&c| c == '#').count();
            s.get(i + 1 + h) == Some(&'"')
        } {
            let h = s[i + 1..].iter().take_while(|&&c| c == '#').count();
            Some(find(i + 2 + h, &format!("\"{}", "#".repeat(h)), false))
        } else if s[i] == '\'' && s.get(i + 1) == Some(&'\\') {
            Some(find(i + 2, "'", true))
        } else if s[i] == '\'' && s.get(i + 2) == Some(&'\'') {
            Some(i + 3)
        } else {
            None
        };
        match end {
            Some(e) => {
                blank(&mut out, i, e);
                i = e.max(i + 1);
            }
            None => {
                out.push(s[i]);
                i += 1;
            }
        }
    }
    out
}

/// `code` without its `#[cfg(test)]` items: an inline `mod NAME { … }` is cut
/// to its closing brace; `mod NAME;` is cut and NAME returned (its file is test
/// code too).
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut out = code.to_owned();
    let mut test_files = Vec::new();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = at + "#[cfg(test)]".len();
        let rest = &out[after..];
        let item = rest.trim_start();
        let item = item
            .strip_prefix("pub(crate) ")
            .or(item.strip_prefix("pub "))
            .unwrap_or(item);
        let end = match item.strip_prefix("mod ") {
            Some(m) => {
                let name: String = m
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let m = m[name.len()..].trim_start();
                if m.starts_with(';') {
                    test_files.push(name);
                    after + rest.find(';').unwrap() + 1
                } else {
                    // The matching brace of the module's body.
                    let open = after + rest.find('{').unwrap_or(0);
                    let mut depth = 0;
                    let mut close = out.len();
                    for (k, c) in out[open..].char_indices() {
                        depth += match c {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        if depth == 0 {
                            close = open + k + 1;
                            break;
                        }
                    }
                    close
                }
            }
            // A test-only statement or item that is not a module: only the
            // attribute goes (the scanner cannot tell where the item ends).
            None => after,
        };
        out.replace_range(at..end, "");
    }
    (out, test_files)
}

/// Expands a `use` tree (`crate::{a::b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// Every path in `code` that starts at `crate::` or `super::`: `use` trees
/// expanded, inline paths as written.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let at_word = i == 0 || !(ident(chars[i - 1]) || chars[i - 1] == ':');
        let rest: String = chars[i..chars.len().min(i + 8)].iter().collect();
        if at_word && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            // The path runs over identifiers, `::`, and a use tree's braces.
            let (mut j, mut depth) = (i, 0);
            while j < chars.len() {
                let c = chars[j];
                if c == '{' && (depth > 0 || chars[j.saturating_sub(1)] == ':') {
                    depth += 1;
                } else if c == '}' && depth > 0 {
                    depth -= 1;
                } else if !(ident(c)
                    || c == ':'
                    || depth > 0 && (c == ',' || c.is_whitespace() || c == '*'))
                {
                    break;
                }
                j += 1;
            }
            let text: String = chars[i..j].iter().collect();
            out.extend(expand(&text));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// The module `path` (written in module `from`) lands in: the longest prefix
/// of its segments that is a file of `files`.
fn resolve(files: &BTreeMap<Module, String>, from: &Module, path: &str) -> Option<Module> {
    let mut segs = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut base: Module = match segs.peek() {
        Some(&"crate") => {
            segs.next();
            Vec::new()
        }
        _ => from.clone(),
    };
    while segs.peek() == Some(&"super") {
        segs.next();
        base.pop()?;
    }
    let mut best = files.contains_key(&base).then(|| base.clone());
    for s in segs {
        base.push(s.to_owned());
        if files.contains_key(&base) {
            best = Some(base.clone());
        }
    }
    best
}

/// Which modules each module imports (test code, self-references and its own
/// submodules left out).
pub fn graph(files: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut test_only: BTreeSet<Module> = BTreeSet::new();
    let mut code: BTreeMap<&Module, String> = BTreeMap::new();
    for (m, text) in files {
        let (c, tests) = without_tests(&code_only(text));
        for t in tests {
            let mut child = m.clone();
            child.push(t);
            test_only.insert(child);
        }
        code.insert(m, c);
    }
    let mut g = BTreeMap::new();
    for (m, c) in code {
        if test_only.iter().any(|t| m.starts_with(t)) {
            continue;
        }
        let targets: BTreeSet<Module> = paths(&c)
            .iter()
            .filter_map(|p| resolve(files, m, p))
            .filter(|t| t != m && !t.starts_with(m))
            .collect();
        g.insert(m.clone(), targets);
    }
    g
}

/// The import cycles of `g`: each strongly connected set of more than one
/// module, named `a::b` (the root `crate`), sorted.
pub fn cycles(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iteratively: (node, its targets not yet visited).
    let nodes: Vec<&Module> = g.keys().collect();
    let at: BTreeMap<&Module, usize> = nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let (mut index, mut low) = (vec![usize::MAX; nodes.len()], vec![0; nodes.len()]);
    let (mut stack, mut on_stack, mut next, mut found) =
        (Vec::new(), vec![false; nodes.len()], 0, Vec::new());
    for start in 0..nodes.len() {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, Vec<usize>)> = Vec::new();
        let targets = |v: usize| -> Vec<usize> {
            g[nodes[v]]
                .iter()
                .filter_map(|t| at.get(t).copied())
                .collect()
        };
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        work.push((start, targets(start)));
        while let Some((v, todo)) = work.last_mut() {
            let v = *v;
            if let Some(w) = todo.pop() {
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, targets(w)));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some((parent, _)) = work.last() {
                low[*parent] = low[*parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(if nodes[w].is_empty() {
                        "crate".to_owned()
                    } else {
                        nodes[w].join("::")
                    });
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    found.push(comp);
                }
            }
        }
    }
    found.sort();
    found
}
