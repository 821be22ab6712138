//! The layers of lunmark point one way (a test, not code). Every `crate::`
//! path and `super::` path in `src/` is read, and each import between
//! top-level modules is checked against `ALLOWED`; within a module, files that
//! import each other in a circle are refused too. A new upward import fails
//! here with the file that makes it, so the layering is kept, not just drawn.
//!
//! The layers, bottom up: units and output paths; the workload; I/O traces
//! and the cache sizing from them; verification
//! records and measurement; the network transports; targets; engines; the
//! result schema and what builds it; the run and the exporters; MPI ranks of
//! a run (`mpi`, beside the labs: both drive the run); the labs; the command line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What each top-level module may import. A module not listed may import
/// nothing of lunmark's.
const ALLOWED: &[(&str, &[&str])] = &[
    ("units", &[]),
    ("output_path", &[]),
    // Every input file's rule (a regular file within its kind's limit).
    ("input_path", &["units", "output_path"]),
    ("workload", &["units", "output_path", "input_path"]),
    // I/O traces: lunmark's binary format (written by the run), blkparse text
    // and MSR Cambridge CSV; records of workload operations.
    ("trace", &["workload", "units", "output_path", "input_path"]),
    // Trace-based cache sizing: miss-ratio curves and predictions from traces.
    ("sizing", &["trace", "workload", "units", "output_path", "input_path"]),
    ("verify", &["workload", "units", "output_path", "input_path"]),
    ("metrics", &["verify", "workload", "units", "output_path", "input_path"]),
    ("transport", &["units"]),
    ("targets", &["transport", "metrics", "workload", "units", "output_path", "input_path"]),
    ("engine", &["targets", "transport", "metrics", "workload", "units", "output_path", "input_path"]),
    // The result schema and what builds it from recorders: reads what the run produced.
    ("results", &["engine", "targets", "metrics", "verify", "workload", "units", "output_path", "input_path"]),
    ("run", &["results", "engine", "targets", "metrics", "verify", "trace", "workload", "units", "output_path", "input_path"]),
    // The exporters and the renderers. `verify` sits below `metrics`, which
    // imports it: the verify report reads its blocks and options as they are.
    ("report", &["results", "metrics", "verify", "workload", "units", "output_path", "input_path"]),
    // MPI ranks of one run: launch detection, the world, reducing each point's
    // figures to rank 0. Drives the run through its `Cluster` hooks; the run
    // never imports it. Only the command line calls it.
    ("mpi", &["run", "results", "metrics", "verify", "workload", "units", "output_path", "input_path"]),
    (
        "lab",
        &["run", "report", "results", "engine", "targets", "metrics", "sizing", "trace", "workload", "units", "output_path", "input_path"],
    ),
    (
        "cli",
        &[
            "lab",
            "mpi",
            "run",
            "report",
            "results",
            "engine",
            "targets",
            "transport",
            "metrics",
            "verify",
            "sizing",
            "trace",
            "workload",
            "units",
            "output_path",
            "input_path",
        ],
    ),
    // Property tests of the parsers, which sit in several layers.
    ("parsers_proptest", &["results", "targets", "verify", "workload", "units"]),
];

/// Upward imports that remain, each with what removes it. Keep this list
/// short: an entry here is a known debt, not a permission.
const KNOWN_UPWARD: &[(&str, &str, &str)] = &[];

/// One source file: its module path (`["results", "model"]`) and its text.
struct Source {
    module: Vec<String>,
    file: String,
    text: String,
}

fn sources() -> Vec<Source> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("reading src/") {
            let path = entry.expect("reading src/").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(&root).ok()?.to_string_lossy().into_owned();
            if rel == "lib.rs" || rel == "main.rs" || rel == "layers.rs" {
                return None;
            }
            let mut module: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).expect("reading a source file");
            Some(Source { module, file: format!("src/{rel}"), text })
        })
        .collect()
}

/// The code of a file without its comment lines (doc comments name modules
/// in prose) and without its unit tests (a test may reach anywhere).
fn code(text: &str) -> String {
    let body = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    body.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The paths (as module path segments) that `prefix::` leads to in `code`,
/// expanding one level of `prefix::{a, b::c}` groups.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().last();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let heads: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            // Split the group's top level at commas.
            let (mut depth, mut start, mut parts) = (0usize, 0usize, Vec::new());
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        parts.push(&group[start..i]);
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(&group[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            parts
        } else {
            vec![rest]
        };
        for head in heads {
            let mut segs = Vec::new();
            let mut s = head.trim_start();
            loop {
                let id = ident(s);
                if id.is_empty() {
                    break;
                }
                segs.push(id.to_string());
                match s[id.len()..].strip_prefix("::") {
                    Some(next) => s = next,
                    None => break,
                }
            }
            if !segs.is_empty() {
                out.push(segs);
            }
        }
    }
    out
}

/// Every module path a file refers to, resolved to absolute segments.
fn references(src: &Source) -> Vec<Vec<String>> {
    let code = code(&src.text);
    let mut out = paths_after(&code, concat!("crate", "::"));
    // `super::` in a file is its parent module (mod.rs files are their directory).
    let parent: Vec<String> = src.module[..src.module.len().saturating_sub(1)].to_vec();
    for p in paths_after(&code, "super::") {
        if p.first().is_some_and(|s| s == "super") {
            continue; // super::super:: stays inside the top-level module, never crosses it
        }
        out.push(parent.iter().cloned().chain(p).collect());
    }
    out
}

#[test]
fn top_level_modules_import_only_the_layers_below_them() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED.iter().map(|(m, a)| (*m, a.iter().copied().collect())).collect();
    let tops: BTreeSet<String> = sources().iter().map(|s| s.module[0].clone()).collect();
    let mut wrong = Vec::new();
    let mut known_seen = BTreeSet::new();
    for src in sources() {
        let from = src.module[0].as_str();
        for path in references(&src) {
            let to = path[0].as_str();
            if to == from || !tops.contains(to) {
                continue;
            }
            if KNOWN_UPWARD.iter().any(|(f, t, _)| *f == from && *t == to) {
                known_seen.insert((from.to_string(), to.to_string()));
                continue;
            }
            if !allowed.get(from).is_some_and(|a| a.contains(to)) {
                wrong.push(format!("{}: {from} imports {}", src.file, path.join("::")));
            }
        }
    }
    for top in &tops {
        assert!(allowed.contains_key(top.as_str()), "src/{top}: a new top-level module; give it a row in ALLOWED");
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "imports against the layers (see ALLOWED in src/layers.rs):\n{}", wrong.join("\n"));
    for (f, t, why) in KNOWN_UPWARD {
        assert!(
            known_seen.contains(&(f.to_string(), t.to_string())),
            "{f} no longer imports {t} ({why}): remove the entry from KNOWN_UPWARD"
        );
    }
}

#[test]
fn files_of_a_module_import_each_other_in_no_circle() {
    let sources = sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    // Edges between siblings: each endpoint lifted to the child of their
    // deepest common parent. A module and its own parent (mod.rs re-exporting
    // a child, a child using the parent's items) are not siblings.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    let mut why: BTreeMap<(Vec<String>, Vec<String>), String> = BTreeMap::new();
    for src in &sources {
        for path in references(src) {
            let Some(to) = (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p)) else { continue };
            let from = &src.module;
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue;
            }
            let (a, b) = (from[..=common].to_vec(), to[..=common].to_vec());
            if common == 0 && KNOWN_UPWARD.iter().any(|(f, t, _)| a[0] == *f && b[0] == *t) {
                continue; // reported by the layer test
            }
            why.entry((a.clone(), b.clone())).or_insert_with(|| format!("{} uses {}", src.file, path.join("::")));
            edges.entry(a).or_default().insert(b);
        }
    }
    let reaches = |start: &Vec<String>, goal: &Vec<String>| {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![start.clone()]);
        while let Some(m) = todo.pop() {
            if &m == goal {
                return true;
            }
            if seen.insert(m.clone()) {
                todo.extend(edges.get(&m).into_iter().flatten().cloned());
            }
        }
        false
    };
    let mut circles = Vec::new();
    for (a, bs) in &edges {
        for b in bs {
            if reaches(b, a) {
                circles.push(format!("{} -> {} ({}), and back", a.join("::"), b.join("::"), why[&(a.clone(), b.clone())]));
            }
        }
    }
    assert!(circles.is_empty(), "modules that import each other:\n{}", circles.join("\n"));
}

#[test]
fn the_reader_finds_grouped_and_nested_paths() {
    let code = "use crate::{engine::mem, targets::{self, OpenTarget}};\nlet x = crate::units::parse_size(s);\n";
    let got = paths_after(code, concat!("crate", "::"));
    assert_eq!(got, vec![vec!["engine".to_string(), "mem".into()], vec!["targets".into()], vec!["units".into(), "parse_size".into()]]);
    assert!(paths_after("let a = my_crate::x;", concat!("crate", "::")).is_empty());
}
