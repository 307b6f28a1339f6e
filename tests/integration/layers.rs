//! The layers import one way: knowledge ← env ← engine ← report ← tools, corpus ← cli
//! (and inside the engine: ingest ← normalize ← rejoin ← steps ← extract ← matcher ← rank
//! ← infer, remedy ← findings ← diagnosis ← pipeline). Every `crate::…`, `super::…` and `self::…` path in the code of
//! a layer (comments aside, resolved from the file's module) must name a layer at or
//! below it; peers (tools, corpus) do not import each other; and at every level, no two
//! modules under one parent import each other, directly or through others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers in order; a module may import from its own rank or lower ranks, never
/// from a peer of the same rank with another name.
const LAYERS: &[(&str, u32)] = &[
    ("knowledge", 0),
    ("env", 1),
    ("engine", 2),
    ("report", 3),
    ("tools", 4),
    ("corpus", 4),
    ("cli", 5),
];

/// The engine's stages, in order (same rules one level down).
const ENGINE: &[(&str, u32)] = &[
    ("ingest", 0),
    ("normalize", 1),
    ("rejoin", 2),
    ("steps", 3),
    ("extract", 4),
    ("matcher", 5),
    ("rank", 6),
    ("infer", 7),
    ("remedy", 7),
    ("findings", 8),
    ("diagnosis", 9),
    ("pipeline", 10),
];

fn rank(table: &[(&str, u32)], name: &str) -> Option<u32> {
    table.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// Every module path a piece of code names through `crate::`, `super::` or `self::`
/// (comments stripped), resolved from `module` (the path of the file's module) into an
/// absolute path from the crate's root: `(line, segments)`. A `{…}` group gives one path
/// per entry (its first segment). Segments stop at the first one that is no lowercase
/// name (a type, a macro, `*`).
fn module_paths(code: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let b = code.as_bytes();
        for start in ["crate::", "super::", "self::"] {
            let mut from = 0;
            while let Some(at) = code[from..].find(start).map(|k| k + from) {
                from = at + start.len();
                let before = at.checked_sub(1).map(|k| b[k]);
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':') {
                    continue;
                }
                for path in expand(&code[at..]) {
                    if let Some(abs) = resolve(&path, module) {
                        out.push((i + 1, abs));
                    }
                }
            }
        }
    }
    out
}

/// The paths written at the start of `text`: `a::b::c`, or `a::{b::c, d}` as `a::b::c`
/// and `a::d` (one level of braces).
fn expand(text: &str) -> Vec<Vec<String>> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut segs = Vec::new();
    let mut rest = text;
    loop {
        let id = ident(rest);
        if id.is_empty() {
            break;
        }
        rest = &rest[id.len()..];
        segs.push(id);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![segs],
        }
    }
    let Some(group) = rest.strip_prefix('{') else {
        return vec![segs];
    };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut entry = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut entry));
                continue;
            }
            _ => {}
        }
        entry.push(c);
    }
    out.push(entry);
    out.iter()
        .map(|e| {
            let mut p = segs.clone();
            p.extend(
                e.trim()
                    .split("::")
                    .map(ident)
                    .take_while(|s| !s.is_empty() && s != "self"),
            );
            p
        })
        .collect()
}

/// `path` (starting with `crate`, `super` or `self`) from the module `module`, as an
/// absolute path of lowercase names.
fn resolve(path: &[String], module: &[String]) -> Option<Vec<String>> {
    let mut abs: Vec<String> = module.to_vec();
    let mut segs = path.iter().peekable();
    match segs.next()?.as_str() {
        "crate" => abs.clear(),
        "self" => {}
        "super" => {
            abs.pop()?;
            while segs.peek().is_some_and(|s| *s == "super") {
                segs.next();
                abs.pop()?;
            }
        }
        _ => return None,
    }
    abs.extend(
        segs.take_while(|s| s.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
            .cloned(),
    );
    Some(abs)
}

/// The violations in one file of layer `layer` (and engine stage `stage`), `module`
/// the path of its module.
fn violations(
    file: &str,
    code: &str,
    module: &[String],
    layer: &str,
    stage: Option<&str>,
) -> Vec<String> {
    let Some(mine) = rank(LAYERS, layer) else {
        return vec![format!("{file}: not in a layer folder")];
    };
    let mut out = Vec::new();
    for (line, segs) in module_paths(code, module) {
        let Some(target) = segs.first() else { continue };
        let Some(theirs) = rank(LAYERS, target) else {
            out.push(format!("{file}:{line}: crate::{target} is no layer"));
            continue;
        };
        if theirs > mine || (theirs == mine && target != layer) {
            out.push(format!("{file}:{line}: {layer} imports from {target}"));
            continue;
        }
        if let (Some(stage), "engine", "engine") = (stage, layer, target.as_str()) {
            let Some(sub) = segs.get(1) else { continue };
            match (rank(ENGINE, stage), rank(ENGINE, sub)) {
                (Some(a), Some(b)) if b > a || (a == b && stage != sub) => {
                    out.push(format!("{file}:{line}: engine::{stage} imports from {sub}"))
                }
                (Some(_), Some(_)) => {}
                _ => out.push(format!("{file}:{line}: engine::{sub} is no stage")),
            }
        }
    }
    out
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every source file of `src/`: (its path under `src/`, its module's path, its code).
fn sources() -> Vec<(String, Vec<String>, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    files.sort();
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap_or(f);
            let mut module: Vec<String> = rel
                .iter()
                .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if module
                .last()
                .is_some_and(|m| m == "mod" || m == "lib" || m == "main")
            {
                module.pop();
            }
            let code = std::fs::read_to_string(f).unwrap_or_default();
            (rel.display().to_string(), module, code)
        })
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let mut bad = Vec::new();
    let mut seen = 0;
    for (rel, module, code) in sources() {
        let Some(layer) = module.first() else {
            continue;
        };
        if rel == "main.rs" {
            continue;
        }
        let stage = (layer == "engine").then(|| module.get(1)).flatten();
        bad.extend(violations(
            &rel,
            &code,
            &module,
            layer,
            stage.map(String::as_str),
        ));
        seen += 1;
    }
    assert!(seen > 50, "only {seen} files scanned");
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

/// The edges between sibling modules: for a path from module `a` to `b`, the children
/// of their deepest common ancestor on each side (`knowledge::signature::load` naming
/// `knowledge::reading::Kind` is the edge `knowledge: signature → reading`). A path to
/// an item of an ancestor, or into a module's own children, is no edge.
fn sibling_edges(
    files: &[(String, Vec<String>, String)],
) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> {
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .flat_map(|(_, m, _)| (1..=m.len()).map(|k| m[..k].to_vec()))
        .collect();
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    for (rel, module, code) in files {
        for (line, target) in module_paths(code, module) {
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            let (Some(from), Some(to)) = (module.get(common), target.get(common)) else {
                continue;
            };
            if !modules.contains(&target[..=common]) {
                continue;
            }
            edges
                .entry(module[..common].to_vec())
                .or_default()
                .entry(from.clone())
                .or_default()
                .entry(to.clone())
                .or_insert_with(|| format!("{rel}:{line}"));
        }
    }
    edges
}

/// The cycles among the children of each module: `parent: a → b → a (where)`.
fn cycles(
    edges: &BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>>,
) -> Vec<(String, Vec<String>, String)> {
    let mut out = Vec::new();
    for (parent, graph) in edges {
        let reach = |from: &str, to: &str| -> Option<Vec<String>> {
            // breadth-first: the shortest path from `from` to `to`
            let mut prev: BTreeMap<String, String> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([from.to_string()]);
            while let Some(n) = queue.pop_front() {
                for next in graph.get(&n).into_iter().flat_map(|m| m.keys()) {
                    if prev.contains_key(next) || next == from {
                        continue;
                    }
                    prev.insert(next.clone(), n.clone());
                    if next == to {
                        let mut path = vec![to.to_string()];
                        let mut at = to.to_string();
                        while let Some(p) = prev.get(&at) {
                            path.push(p.clone());
                            at = p.clone();
                        }
                        path.reverse();
                        return Some(path);
                    }
                    queue.push_back(next.clone());
                }
            }
            None
        };
        let mut seen: BTreeSet<Vec<String>> = BTreeSet::new();
        for (a, targets) in graph {
            for (b, at) in targets {
                // each cycle once: the same cycle is found from each of its edges
                if a < b {
                    if let Some(back) = reach(b, a) {
                        let mut c = vec![a.clone()];
                        c.extend(back);
                        let mut key = c[..c.len() - 1].to_vec();
                        let min = (0..key.len()).min_by_key(|&i| &key[i]).unwrap_or(0);
                        key.rotate_left(min);
                        if !seen.insert(key) {
                            continue;
                        }
                        let p = if parent.is_empty() {
                            "crate".to_string()
                        } else {
                            parent.join("::")
                        };
                        out.push((p, c, at.clone()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn no_two_modules_import_each_other() {
    let files = sources();
    let found: Vec<String> = cycles(&sibling_edges(&files))
        .iter()
        .map(|(p, c, at)| format!("{p}: {} (first edge at {at})", c.join(" → ")))
        .collect();
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_an_upward_import() {
    let m = |p: &str| -> Vec<String> { p.split("::").map(str::to_string).collect() };
    let code = "use crate::engine::diagnosis::Diagnosis; // crate::cli in a comment\n";
    assert_eq!(
        violations("env/x.rs", code, &m("env::x"), "env", None),
        ["env/x.rs:1: env imports from engine"]
    );
    assert!(violations("report/x.rs", code, &m("report::x"), "report", None).is_empty());
    let down = "let r = crate::engine::pipeline::Engine::new(lib, kind);";
    assert_eq!(
        violations(
            "engine/extract/x.rs",
            down,
            &m("engine::extract::x"),
            "engine",
            Some("extract")
        ),
        ["engine/extract/x.rs:1: engine::extract imports from pipeline"]
    );
    assert_eq!(
        violations(
            "tools/x.rs",
            "crate::corpus::load_dir(p)",
            &m("tools::x"),
            "tools",
            None
        ),
        ["tools/x.rs:1: tools imports from corpus"]
    );
    // `super::` paths are followed too, groups entry by entry
    let up = "use super::super::{pipeline::Engine, ingest};";
    assert_eq!(
        violations(
            "engine/extract/x.rs",
            up,
            &m("engine::extract::x"),
            "engine",
            Some("extract")
        ),
        ["engine/extract/x.rs:1: engine::extract imports from pipeline"]
    );
}

#[test]
fn the_check_sees_a_cycle_through_super_paths() {
    let m = |p: &str| -> Vec<String> { p.split("::").map(str::to_string).collect() };
    let files = vec![
        (
            "a/x.rs".to_string(),
            m("a::x"),
            "use super::y::Y;".to_string(),
        ),
        (
            "a/y.rs".to_string(),
            m("a::y"),
            "use crate::a::{z, w::W};".to_string(),
        ),
        (
            "a/z.rs".to_string(),
            m("a::z"),
            "fn f() { self::g(); super::x::f() }".to_string(),
        ),
        (
            "a/w.rs".to_string(),
            m("a::w"),
            "use super::Item;".to_string(),
        ),
        (
            "a/mod.rs".to_string(),
            m("a"),
            "pub struct Item;".to_string(),
        ),
    ];
    let found = cycles(&sibling_edges(&files));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "a");
    assert_eq!(found[0].1, ["x", "y", "z", "x"]);
}

/// build.rs compiles `src/knowledge` to freeze the embedded library, with its own list of
/// the layer's modules (every one but `embedded`, which it stands in for): the two lists
/// agree.
#[test]
fn build_rs_compiles_every_knowledge_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect(p);
    let mods = |code: &str| -> Vec<String> {
        code.lines()
            .filter_map(|l| l.trim().strip_prefix("pub mod "))
            .filter_map(|l| l.strip_suffix(';'))
            .map(str::to_string)
            .collect()
    };
    let mut want = mods(&read("src/knowledge/mod.rs"));
    want.retain(|m| m != "embedded");
    want.sort();
    let mut got = mods(&read("build.rs"));
    got.sort();
    assert!(!want.is_empty());
    assert_eq!(got, want, "build.rs's `mod knowledge` lists other modules");
}
