//! The layers import one way: knowledge ← env ← engine ← report ← tools, corpus ← cli
//! (and inside the engine: ingest ← normalize ← extract ← matcher ← rank ← diagnosis,
//! findings ← pipeline). Every `crate::…` path in the code of a layer (comments aside)
//! must name a layer at or below it; peers (tools, corpus) do not import each other.

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
    ("diagnosis", 8),
    ("findings", 8),
    ("pipeline", 9),
];

fn rank(table: &[(&str, u32)], name: &str) -> Option<u32> {
    table.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// The first path segment(s) of every `crate::` path in code (comments stripped).
fn crate_paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let segs: Vec<String> = after
                .split("::")
                .take(2)
                .map(|s| {
                    s.chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect()
                })
                .collect();
            out.push((i + 1, segs));
            rest = after;
        }
    }
    out
}

/// The violations in one file of layer `layer` (and engine stage `stage`).
fn violations(file: &str, code: &str, layer: &str, stage: Option<&str>) -> Vec<String> {
    let Some(mine) = rank(LAYERS, layer) else {
        return vec![format!("{file}: not in a layer folder")];
    };
    let mut out = Vec::new();
    for (line, segs) in crate_paths(code) {
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
                // `diagnosis` and `findings` are one assembly stage (they share the step type)
                (Some(a), Some(b))
                    if b > a
                        || (a == b && stage != sub && Some(b) != rank(ENGINE, "diagnosis")) =>
                {
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

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap_or(f);
        let parts: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        let (layer, stage) = match parts.as_slice() {
            [top] if top == "lib" || top == "main" => continue,
            [top] => (top.clone(), None),
            [top, sub, ..] => (top.clone(), Some(sub.clone())),
            [] => continue,
        };
        let code = std::fs::read_to_string(f).unwrap_or_default();
        let stage = (layer == "engine").then_some(stage).flatten();
        let stage = stage.filter(|s| s != "mod");
        bad.extend(violations(
            &rel.display().to_string(),
            &code,
            &layer,
            stage.as_deref(),
        ));
        seen += 1;
    }
    assert!(
        seen > 50,
        "only {seen} files scanned under {}",
        src.display()
    );
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

#[test]
fn the_check_sees_an_upward_import() {
    let code = "use crate::engine::diagnosis::Diagnosis; // crate::cli in a comment\n";
    assert_eq!(
        violations("env/x.rs", code, "env", None),
        ["env/x.rs:1: env imports from engine"]
    );
    assert!(violations("report/x.rs", code, "report", None).is_empty());
    let down = "let r = crate::engine::pipeline::Engine::new(lib, kind);";
    assert_eq!(
        violations("engine/extract/x.rs", down, "engine", Some("extract")),
        ["engine/extract/x.rs:1: engine::extract imports from pipeline"]
    );
    assert_eq!(
        violations("tools/x.rs", "crate::corpus::load_dir(p)", "tools", None),
        ["tools/x.rs:1: tools imports from corpus"]
    );
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
