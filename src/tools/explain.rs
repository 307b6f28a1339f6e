//! Explain: why one signature did or did not match a log (`crashdoc explain`).
//!
//! The log goes through the real pipeline (ingest, normalize, extract, prefilter). The
//! explanation then shows, for the signature asked about:
//!
//! - the atoms that hit, with the lines they hit (no hit: the prefilter never made the
//!   signature a candidate, whatever the conditions say);
//! - the failure it matched, or else the failure (and subject) that came closest: every
//!   node of the condition tree evaluated on it, with its outcome;
//! - for a miss, the log line closest to what the signature looks for: a word diff
//!   (`similar`) of the regexes' literal parts against that line, and of the nearest
//!   line of the signature's positive examples against it. "Closest" is the word-diff
//!   similarity ratio; ties go to the earlier line.

use std::fmt::Write as _;

use regex_syntax::hir::{Hir, HirKind};
use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use crate::engine::extract::Failure;
use crate::engine::ingest::LineReader;
use crate::engine::matcher::{evaluate, Subject};
use crate::engine::normalize::normalize;
use crate::knowledge::cond::Tree;
use crate::knowledge::signature::compile::Leaf;
use crate::knowledge::signature::{Cond, Library, Signature};

/// Atom hits kept per atom.
pub const MAX_ATOM_LINES: usize = 5;

#[derive(Debug, Clone, Serialize)]
pub struct AtomHit {
    pub atom: String,
    /// Log lines (1-based) holding it.
    pub lines: Vec<usize>,
}

/// One node of the condition tree and its outcome on the chosen subject.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub depth: usize,
    pub condition: String,
    pub holds: bool,
}

/// The log line closest to the signature, for a miss.
#[derive(Debug, Clone, Serialize)]
pub struct Closest {
    pub line: usize,
    pub text: String,
    /// Similarity of the literal parts to the line (0..1).
    pub ratio: f32,
    /// Word diff: `[-…-]` only in the signature's literals, `{+…+}` only in the log.
    pub diff_literals: String,
    /// The nearest line of the positive examples, and its word diff against the log line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_example: Option<String>,
}

/// Why a signature did or did not match.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub signature: String,
    pub input: String,
    pub matched: bool,
    pub atoms: Vec<AtomHit>,
    /// The failure evaluated (matched, or closest), by headline and first line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<(usize, String)>,
    /// The subject within it (`Type: message` or the line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub conditions: Vec<Outcome>,
    /// Lines outside failures it matched.
    pub loose_lines: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest: Option<Closest>,
    /// Which layer matched: signature, table, fallback, wrapper, fuzzy (none on a miss).
    pub layer: String,
    /// How that layer matched (the wrapper, the similarity, the links).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layer_notes: Vec<String>,
    /// The similarity of the closest failure to the signature's examples (fuzzy layer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
}

/// Failure while explaining.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The id, and a "did you mean" hint (empty when no id is close).
    #[error("no signature `{0}` in the loaded library{1}")]
    UnknownSignature(String, String),
    #[error("{0}")]
    Input(#[from] crate::engine::ingest::IngestError),
    #[error("{0}")]
    Run(#[from] crate::tools::draft::DraftError),
}

fn describe(c: &Cond) -> String {
    match c {
        Tree::Leaf(l) => describe_leaf(l),
        Tree::All(_) => "all of".to_string(),
        Tree::Any(_) => "any of".to_string(),
        Tree::Not(_) => "not".to_string(),
    }
}

fn describe_leaf(l: &Leaf) -> String {
    match l {
        Leaf::Message(r) => format!("message /{}/", r.as_str()),
        Leaf::Contains(s) => format!("contains {s:?}"),
        Leaf::Exception(s) => format!("exception {s}"),
        Leaf::Text(r) => format!("text /{}/", r.as_str()),
        Leaf::Frame { file, function } => format!(
            "frame{}{}",
            file.as_ref()
                .map_or(String::new(), |r| format!(" file /{}/", r.as_str())),
            function
                .as_ref()
                .map_or(String::new(), |r| format!(" function /{}/", r.as_str()))
        ),
        Leaf::Kind(k) => format!("kind {}", k.as_str()),
        Leaf::Stream(r) => format!("stream /{}/", r.as_str()),
        Leaf::Fact(f) => format!("environment fact {f:?}"),
    }
}

fn outcomes(c: &Cond, f: &Failure, s: &Subject<'_>, depth: usize, out: &mut Vec<Outcome>) {
    out.push(Outcome {
        depth,
        condition: describe(c),
        holds: evaluate(c, f, s).is_some(),
    });
    match c {
        Tree::All(v) | Tree::Any(v) => v.iter().for_each(|c| outcomes(c, f, s, depth + 1, out)),
        Tree::Not(b) => outcomes(b, f, s, depth + 1, out),
        _ => {}
    }
}

/// The literal parts of a regex, in order (runs of literal characters).
pub fn literal_parts(pattern: &str) -> Vec<String> {
    fn walk(h: &Hir, cur: &mut String, out: &mut Vec<String>) {
        match h.kind() {
            HirKind::Literal(l) => cur.push_str(&String::from_utf8_lossy(&l.0)),
            HirKind::Concat(v) => v.iter().for_each(|c| walk(c, cur, out)),
            HirKind::Capture(c) => walk(&c.sub, cur, out),
            HirKind::Repetition(r) if r.min >= 1 => {
                flush(cur, out);
                walk(&r.sub, cur, out);
                flush(cur, out);
            }
            _ => flush(cur, out),
        }
    }
    fn flush(cur: &mut String, out: &mut Vec<String>) {
        let t = cur.trim();
        if !t.is_empty() {
            out.push(t.to_string());
        }
        cur.clear();
    }
    let mut out = Vec::new();
    if let Ok(h) = regex_syntax::parse(pattern) {
        let mut cur = String::new();
        walk(&h, &mut cur, &mut out);
        flush(&mut cur, &mut out);
    }
    out
}

fn positive_literals(c: &Cond, out: &mut Vec<String>) {
    match c {
        Tree::Leaf(Leaf::Message(r) | Leaf::Text(r)) => out.extend(literal_parts(r.as_str())),
        Tree::Leaf(Leaf::Contains(s) | Leaf::Exception(s)) => out.push(s.clone()),
        Tree::All(v) | Tree::Any(v) => v.iter().for_each(|c| positive_literals(c, out)),
        _ => {}
    }
}

/// A word diff rendered inline: `[-old-]` and `{+new+}`.
pub fn word_diff(old: &str, new: &str) -> String {
    let diff = TextDiff::from_words(old, new);
    let mut out = String::new();
    let (mut del, mut ins) = (String::new(), String::new());
    let flush = |out: &mut String, del: &mut String, ins: &mut String| {
        if !del.trim().is_empty() {
            let _ = write!(out, "[-{}-]", del.trim());
        }
        if !ins.trim().is_empty() {
            let _ = write!(out, "{{+{}+}}", ins.trim());
        }
        if !del.trim().is_empty() || !ins.trim().is_empty() {
            out.push(' ');
        }
        del.clear();
        ins.clear();
    };
    for ch in diff.iter_all_changes() {
        let v = ch.value();
        match ch.tag() {
            ChangeTag::Equal => {
                flush(&mut out, &mut del, &mut ins);
                out.push_str(v);
            }
            ChangeTag::Delete => del.push_str(v),
            ChangeTag::Insert => ins.push_str(v),
        }
    }
    flush(&mut out, &mut del, &mut ins);
    out.trim_end().to_string()
}

fn ratio(a: &str, b: &str) -> f32 {
    TextDiff::from_words(a, b).ratio()
}

/// The log's lines, prefixes peeled: (line number, message).
fn peeled_lines(name: &str, text: &str) -> Result<Vec<(usize, String)>, ExplainError> {
    let mut lines: Vec<(usize, String)> = Vec::new();
    let cursor = std::io::Cursor::new(text.as_bytes().to_vec());
    let mut reader = LineReader::from_reader(Box::new(cursor), name.to_string())?;
    while let Some(l) = reader.next_line()? {
        let r = normalize(l);
        lines.push((r.line, r.message));
    }
    Ok(lines)
}

/// Each atom of the signature with the lines that hold it (the first few).
fn atom_hits(sig: &Signature, lines: &[(usize, String)]) -> Vec<AtomHit> {
    sig.atoms
        .iter()
        .map(|a| AtomHit {
            atom: a.clone(),
            lines: lines
                .iter()
                .filter(|(_, t)| t.to_ascii_lowercase().contains(a.as_str()))
                .map(|(n, _)| *n)
                .take(MAX_ATOM_LINES)
                .collect(),
        })
        .collect()
}

/// The failure (line, headline), subject and condition outcomes to show the tree on.
type TreeSubject = (Option<(usize, String)>, Option<String>, Vec<Outcome>);

/// The failure and subject to show the tree on: the matched one (`hit`), else the one
/// where the most condition nodes hold.
fn tree_subject(
    sig: &Signature,
    x: &crate::engine::extract::Extraction,
    hit: Option<crate::engine::extract::FailureId>,
) -> TreeSubject {
    let mut best: Option<(usize, &Failure, Subject<'_>, Vec<Outcome>)> = None;
    for f in &x.failures {
        if hit.is_some_and(|h| h != f.id) {
            continue;
        }
        for s in Subject::all(f) {
            let mut o = Vec::new();
            outcomes(&sig.cond, f, &s, 0, &mut o);
            let score = o.iter().filter(|o| o.holds).count() + usize::from(o[0].holds) * 1000;
            if best.as_ref().is_none_or(|b| score > b.0) {
                best = Some((score, f, s, o));
            }
        }
    }
    match best {
        Some((_, f, s, o)) => (
            Some((f.first.line, f.headline.clone())),
            Some(s.headline.clone()),
            o,
        ),
        None => (None, None, Vec::new()),
    }
}

/// The log line closest to the signature's literal parts, with word diffs against them
/// and against the nearest example line.
fn closest_line(sig: &Signature, lines: &[(usize, String)]) -> Option<Closest> {
    let mut lits = Vec::new();
    positive_literals(&sig.cond, &mut lits);
    let target = lits.join(" ");
    lines
        .iter()
        .filter(|(_, t)| !t.trim().is_empty())
        .map(|(n, t)| (*n, t, ratio(&target, t)))
        .fold(None::<(usize, &String, f32)>, |acc, c| match acc {
            Some(a) if a.2 >= c.2 => Some(a),
            _ => Some(c),
        })
        .map(|(n, t, r)| {
            let example = sig
                .examples
                .matches
                .iter()
                .flat_map(|e| e.log.lines())
                .filter(|l| !l.trim().is_empty())
                .map(|l| (l, ratio(l, t)))
                .fold(None::<(&str, f32)>, |acc, c| match acc {
                    Some(a) if a.1 >= c.1 => Some(a),
                    _ => Some(c),
                })
                .map(|(l, _)| l.to_string());
            Closest {
                line: n,
                text: t.clone(),
                ratio: r,
                diff_literals: word_diff(&target, t),
                diff_example: example.as_ref().map(|e| word_diff(e, t)),
                example,
            }
        })
}

/// Explains signature `id` on the text of one log.
pub fn explain(
    lib: &Library,
    id: &str,
    name: &str,
    text: &str,
) -> Result<Explanation, ExplainError> {
    let Some(index) = lib.signatures.position(id) else {
        let ids = lib.signatures.iter().map(|s| s.id.as_str());
        let hint = crate::knowledge::text::did_you_mean(&crate::knowledge::text::closest(id, ids));
        return Err(ExplainError::UnknownSignature(id.to_string(), hint));
    };
    let sig: &Signature = &lib.signatures[index];
    let (x, m) = crate::tools::draft::run_text(lib, name, text)?;

    let lines = peeled_lines(name, text)?;
    let atoms = atom_hits(sig, &lines);

    let hit = m.failures.iter().find(|h| h.signature == index);
    let loose_lines: Vec<usize> = m
        .loose
        .get(&index)
        .map(|l| l.evidence.iter().map(|(b, _)| b.line).collect())
        .unwrap_or_default();
    let matched = hit.is_some() || !loose_lines.is_empty();

    let (failure, subject, conditions) = tree_subject(sig, &x, hit.map(|h| h.failure));
    let closest = if matched {
        None
    } else {
        closest_line(sig, &lines)
    };

    let (layer, layer_notes, similarity) =
        crate::engine::matcher::layers::explain_layer(lib, index, &x, &m);
    Ok(Explanation {
        layer,
        layer_notes,
        similarity,
        signature: sig.id.clone(),
        input: name.to_string(),
        matched,
        atoms,
        failure,
        subject,
        conditions,
        loose_lines,
        closest,
    })
}

/// The human rendering.
pub fn render(e: &Explanation) -> String {
    use crate::knowledge::text::escape_control;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: signature {} {}",
        e.input,
        e.signature,
        if e.matched {
            "MATCHES"
        } else {
            "does not match"
        }
    );
    if e.matched {
        let _ = writeln!(o, "Layer: {}", e.layer);
    }
    for n in &e.layer_notes {
        let _ = writeln!(o, "  {}", escape_control(n));
    }
    if let (false, Some(sim)) = (e.matched, e.similarity) {
        let _ = writeln!(
            o,
            "Fuzzy: the closest failure resembles it with similarity {sim:.2} (threshold {:.2})",
            crate::engine::matcher::fuzzy::THRESHOLD
        );
    }
    render_atoms(&mut o, e);
    render_conditions(&mut o, e);
    if !e.loose_lines.is_empty() {
        let _ = writeln!(
            o,
            "\nMatched loose lines: {}",
            e.loose_lines
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    render_closest(&mut o, e);
    o
}

/// The atoms and the lines that hold them.
fn render_atoms(o: &mut String, e: &Explanation) {
    let _ = writeln!(o, "\nAtoms (the prefilter looks for any one):");
    for a in &e.atoms {
        if a.lines.is_empty() {
            let _ = writeln!(o, "  ✗ {:?}  no line holds it", a.atom);
        } else {
            let _ = writeln!(
                o,
                "  ✓ {:?}  lines {}",
                a.atom,
                a.lines
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if e.atoms.iter().all(|a| a.lines.is_empty()) {
        let _ = writeln!(
            o,
            "  → no atom hit: the signature is never a candidate on this log"
        );
    }
}

/// The condition tree on the failure shown.
fn render_conditions(o: &mut String, e: &Explanation) {
    use crate::knowledge::text::{clip, escape_control};
    match (&e.failure, &e.subject) {
        (Some((line, head)), Some(subj)) => {
            let _ = writeln!(
                o,
                "\nConditions on the failure at line {line} ({}):",
                escape_control(&clip(head, 100))
            );
            if subj != head {
                let _ = writeln!(o, "  subject: {}", escape_control(&clip(subj, 100)));
            }
            for c in &e.conditions {
                let _ = writeln!(
                    o,
                    "  {}{} {}",
                    "  ".repeat(c.depth),
                    if c.holds { "✓" } else { "✗" },
                    escape_control(&clip(&c.condition, 140))
                );
            }
        }
        _ => {
            let _ = writeln!(o, "\nNo failure was extracted from the log.");
        }
    }
}

/// The closest line, when nothing matched.
fn render_closest(o: &mut String, e: &Explanation) {
    use crate::knowledge::text::{clip, escape_control};
    if let Some(c) = &e.closest {
        let _ = writeln!(o, "\nClosest line: {} (similarity {:.2})", c.line, c.ratio);
        let _ = writeln!(o, "  {}", escape_control(&clip(&c.text, 200)));
        let _ = writeln!(
            o,
            "Against the regex's literal parts ([-signature-] {{+log+}}):"
        );
        let _ = writeln!(o, "  {}", escape_control(&clip(&c.diff_literals, 300)));
        if let (Some(ex), Some(d)) = (&c.example, &c.diff_example) {
            let _ = writeln!(
                o,
                "Against the nearest example line ([-example-] {{+log+}}):"
            );
            let _ = writeln!(o, "  example: {}", escape_control(&clip(ex, 200)));
            let _ = writeln!(o, "  {}", escape_control(&clip(d, 300)));
        }
    }
}
