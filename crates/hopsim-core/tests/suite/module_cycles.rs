//! The crate's top-level modules form layers: a module may use the ones below it, never one
//! that (through others) uses it back. The graph is read from the `crate::` paths of the
//! sources (outside comments), so a new cycle fails here with the files that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles known and owned by other work, each with why it is still there. The test fails
/// when one of them is gone too, so this list only shrinks.
const KNOWN: &[(&[&str], &str)] = &[];

/// Top-level module -> module it uses -> the places (file:line) that use it.
type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let p = entry.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module names a line of code names after `crate::`, including those inside
/// a `crate::{a, b::c}` group.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `hopsim_crate::`, not this crate
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 0 => {
                        out.push(ident(&group[j..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

fn module_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("non-empty").as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue; // the crate root sits above every module
        }
        let text = std::fs::read_to_string(&f).expect("read source");
        let uses = graph.entry(module.clone()).or_default();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for used in crate_paths(code) {
                if used != module {
                    uses.entry(used).or_default().push(format!("src/{}:{}", rel.display(), n + 1));
                }
            }
        }
    }
    graph
}

/// Strongly connected components with more than one module (Tarjan), each sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flat_map(|e| e.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(lw));
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = Vec::new();
            loop {
                let w = s.stack.pop().expect("on stack");
                s.on_stack.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), out: Vec::new() };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// The uses inside a cycle, one per line: `a -> b (src/a.rs:12, ...)`.
fn explain(graph: &Graph, scc: &[String]) -> String {
    let mut lines = Vec::new();
    for a in scc {
        for (b, at) in graph.get(a).into_iter().flatten() {
            if scc.contains(b) {
                let shown: Vec<&str> = at.iter().take(3).map(|s| s.as_str()).collect();
                let more = if at.len() > 3 { format!(", {} more", at.len() - 3) } else { String::new() };
                lines.push(format!("  {a} -> {b} ({}{more})", shown.join(", ")));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn top_level_modules_have_no_import_cycle() {
    let graph = module_graph();
    assert!(graph.contains_key("engine") && graph.contains_key("topology"), "the sources were found");
    let found = cycles(&graph);
    let known: Vec<Vec<String>> = KNOWN.iter().map(|(m, _)| m.iter().map(|s| s.to_string()).collect()).collect();
    let new: Vec<String> =
        found.iter().filter(|c| !known.contains(c)).map(|c| format!("cycle {}:\n{}", c.join(" <-> "), explain(&graph, c))).collect();
    assert!(new.is_empty(), "import cycles between top-level modules of hopsim-core:\n{}", new.join("\n"));
    let gone: Vec<String> = known.iter().filter(|k| !found.contains(k)).map(|k| k.join(" <-> ")).collect();
    assert!(gone.is_empty(), "cycles listed as known are gone; remove them from KNOWN: {}", gone.join("; "));
}

#[test]
fn the_parser_sees_paths_groups_and_cycles() {
    assert_eq!(crate_paths("use crate::spec::Spec; let x = crate::nic::f();"), ["spec", "nic"]);
    assert_eq!(crate_paths("use crate::{spec::{A, B}, topology, self};"), ["spec", "topology"]);
    assert_eq!(crate_paths("use other_crate::x;"), Vec::<String>::new());
    let mut g = Graph::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")] {
        g.entry(a.into()).or_default().entry(b.into()).or_default().push(format!("{a}.rs:1"));
    }
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".into(), "c".into()]]);
    assert!(explain(&g, &cycles(&g)[0]).contains("c -> a (c.rs:1)"));
}
