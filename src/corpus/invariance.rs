//! The metamorphic harness: the same failure must get the same diagnosis however it is
//! presented.
//!
//! Every transformation of [`super::metamorph`] is applied to every log (corpus
//! incidents in `corpus run --metamorphic`, signature examples in the tests); a
//! (log, transformation) *pair holds* when the transformed log's top cause is the plain
//! log's top cause (or both have none) and, when the plain log's top cause shows the key
//! line in its evidence and the transformation kept that line, the transformed top
//! cause shows it too. Lines are compared by content with whitespace removed (line
//! numbers, prefixes and wrapping change), so a key line wrapped over two evidence
//! lines is still found.
//!
//! The saved form is the metamorphic baseline: a pair that held there and fails now is
//! a regression (the gate), like an incident in [`super::baseline`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::metamorph::{self, squeeze, Ctx, Transform};
use super::Incident;
use crate::engine::diagnosis::{BuildOptions, Diagnosis};
use crate::engine::matcher::Compiled;
use crate::engine::matcher::EngineKind;
use crate::engine::pipeline::Engine;

/// Version of the saved metamorphic result.
pub const FORMAT_VERSION: u32 = 1;

/// A log to transform: its name, text and key line (the line its diagnosis must show).
#[derive(Debug, Clone)]
pub struct Subject {
    pub name: String,
    pub text: String,
    pub key_line: Option<String>,
}

/// One failing pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
pub struct Failure {
    pub log: String,
    pub reason: String,
}

/// One transformation's pairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Row {
    pub transform: String,
    /// Logs whose pair held.
    pub held: Vec<String>,
    pub failed: Vec<Failure>,
    /// Logs it does not apply to (a truncation of a log without traceback).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applicable: Vec<String>,
}

impl Row {
    pub fn total(&self) -> usize {
        self.held.len() + self.failed.len()
    }
}

/// A whole metamorphic run (also the saved baseline format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invariance {
    pub format: u32,
    pub seed: u64,
    pub bury_lines: usize,
    pub rows: Vec<Row>,
}

impl Invariance {
    /// Pairs held and pairs in all.
    pub fn totals(&self) -> (usize, usize) {
        self.rows
            .iter()
            .fold((0, 0), |(h, t), r| (h + r.held.len(), t + r.total()))
    }
}

/// What a line shows: the text, or the `MESSAGE` of a journald JSON record.
fn content(text: &str) -> String {
    if text.starts_with("{\"") {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            if let Some(m) = v.get("MESSAGE").and_then(serde_json::Value::as_str) {
                return squeeze(m);
            }
        }
    }
    squeeze(text)
}

/// Whether the top cause's evidence shows `key` (by content).
fn shows(d: &Diagnosis, key: &str) -> bool {
    let Some(c) = d.causes.first() else {
        return false;
    };
    let all: String = c.evidence.iter().map(|l| content(&l.text)).collect();
    all.contains(&squeeze(key))
}

fn top(d: &Diagnosis) -> &str {
    d.causes
        .first()
        .map_or("no cause", |c| c.signature.as_str())
}

/// Why a transformed log's diagnosis breaks the relation, or `None` when it holds.
pub fn compare(
    plain: &Diagnosis,
    now: &Diagnosis,
    key: Option<&str>,
    text: &str,
) -> Option<String> {
    if top(plain) != top(now) {
        return Some(format!("top cause {} → {}", top(plain), top(now)));
    }
    let key = key.filter(|k| !k.trim().is_empty())?;
    let kept = content(text).contains(&squeeze(key))
        || text.lines().any(|l| content(l).contains(&squeeze(key)));
    (kept && shows(plain, key) && !shows(now, key))
        .then(|| "key line not in the top cause's evidence".to_string())
}

/// The plain log's key line: the incident's, or else the first evidence line of its
/// top cause (signature examples name none).
fn key_of(s: &Subject, plain: &Diagnosis) -> Option<String> {
    s.key_line.clone().or_else(|| {
        plain
            .causes
            .first()
            .and_then(|c| c.evidence.first())
            .map(|l| l.text.clone())
    })
}

/// The outcome of one subject under every transformation: (transform index, result),
/// `Ok` held, `Err(reason)` failed, `None` not applicable.
type Outcomes = Vec<Option<Result<(), String>>>;

fn run_subject(engine: &mut Engine<'_>, s: &Subject, ctx: &Ctx<'_>, ts: &[Transform]) -> Outcomes {
    let opts = BuildOptions { top: 3 };
    let plain = engine.diagnose_text(&s.name, &s.text, opts);
    let key = key_of(s, &plain);
    ts.iter()
        .map(|t| {
            let text = (t.apply)(&s.text, ctx)?;
            let now = engine.diagnose_text(&s.name, &text, opts);
            Some(match compare(&plain, &now, key.as_deref(), &text) {
                None => Ok(()),
                Some(r) => Err(r),
            })
        })
        .collect()
}

/// Applies every transformation of `ts` to every subject, in parallel (one engine per
/// pool thread), and gathers the rows.
pub fn run(
    compiled: &Compiled<'_>,
    subjects: &[Subject],
    ctx: &Ctx<'_>,
    ts: &[Transform],
) -> Invariance {
    let results: Vec<Outcomes> = subjects
        .par_iter()
        .map_init(
            || Engine::new(compiled, EngineKind::Prefilter),
            |engine, s| run_subject(engine, s, ctx, ts),
        )
        .collect();
    let mut rows: Vec<Row> = ts
        .iter()
        .map(|t| Row {
            transform: t.name.to_string(),
            ..Row::default()
        })
        .collect();
    for (s, outcomes) in subjects.iter().zip(results) {
        for (row, o) in rows.iter_mut().zip(outcomes) {
            match o {
                None => row.not_applicable.push(s.name.clone()),
                Some(Ok(())) => row.held.push(s.name.clone()),
                Some(Err(reason)) => row.failed.push(Failure {
                    log: s.name.clone(),
                    reason,
                }),
            }
        }
    }
    Invariance {
        format: FORMAT_VERSION,
        seed: ctx.seed,
        bury_lines: ctx.bury_lines,
        rows,
    }
}

/// The corpus's healthy logs (`category: none`), line by line: the interleaved stream
/// (the first) and the burying noise (all). A healthy log that also accepts a failure
/// category (`also:`, a run that survived a real failure, such as torch.compile falling
/// back to eager) is no noise: its failure would be buried into every other log.
pub fn healthy_lines(incidents: &[Incident]) -> (Vec<String>, Vec<String>) {
    let logs: Vec<Vec<String>> = incidents
        .iter()
        .filter(|i| i.expected.category == "none" && i.expected.also.is_empty())
        .filter_map(|i| std::fs::read_to_string(&i.log).ok())
        .map(|t| t.lines().map(str::to_string).collect())
        .collect();
    let first = logs.first().cloned().unwrap_or_default();
    (first, logs.concat())
}

/// The corpus incidents as subjects (unreadable logs are left out; `corpus run` reports
/// them).
pub fn subjects(incidents: &[Incident]) -> Vec<Subject> {
    incidents
        .iter()
        .filter_map(|i| {
            let text = std::fs::read(&i.log).ok()?;
            Some(Subject {
                name: i.name.clone(),
                text: crate::engine::ingest::clean_text(&text),
                key_line: i.expected.key_line.clone(),
            })
        })
        .collect()
}

/// The default seed of `corpus run --metamorphic`.
pub const SEED: u64 = 15;

/// Every transformation of the corpus with the default seed and burying depth.
pub fn run_corpus(compiled: &Compiled<'_>, incidents: &[Incident]) -> Invariance {
    let (healthy, noise) = healthy_lines(incidents);
    let ctx = Ctx {
        seed: SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: metamorph::BURY_LINES,
    };
    run(compiled, &subjects(incidents), &ctx, metamorph::ALL)
}

/// Pairs that held in `baseline` and fail in `now`: (transform, log, reason).
pub fn regressions(baseline: &Invariance, now: &Invariance) -> Vec<(String, Failure)> {
    let held: BTreeMap<&str, BTreeSet<&str>> = baseline
        .rows
        .iter()
        .map(|r| {
            let s = r.held.iter().map(String::as_str).collect();
            (r.transform.as_str(), s)
        })
        .collect();
    let mut out = Vec::new();
    for r in &now.rows {
        for f in &r.failed {
            if held
                .get(r.transform.as_str())
                .is_some_and(|s| s.contains(f.log.as_str()))
            {
                out.push((r.transform.clone(), f.clone()));
            }
        }
    }
    out
}

/// Reads a saved metamorphic result.
pub fn read(path: &Path) -> Result<Invariance, String> {
    let text = crate::knowledge::files::read_text(path, crate::knowledge::files::MAX_REPORT_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Invariance =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if v.format != FORMAT_VERSION {
        return Err(format!(
            "{}: metamorphic format {} is not supported (this crashdoc writes {FORMAT_VERSION})",
            path.display(),
            v.format
        ));
    }
    Ok(v)
}

/// The saved form (pretty JSON, final newline).
pub fn to_json(v: &Invariance) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// Failing pairs grouped by reason kind (the reason with signature ids kept: `top cause
/// a → b`), each with its (transform, log) pairs.
pub fn by_reason(v: &Invariance) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for r in &v.rows {
        for f in &r.failed {
            out.entry(f.reason.clone())
                .or_default()
                .push((r.transform.clone(), f.log.clone()));
        }
    }
    out
}

/// Burying depth for the signature examples' record (`tests/data/metamorphic/examples.json`):
/// 1,000 lines rather than the corpus run's [`super::metamorph::BURY_LINES`], to keep
/// the test that checks the record fast.
pub const EXAMPLE_BURY_LINES: usize = 1_000;

/// Every positive example of a library, as a metamorphic subject (`<id>#<n>`, from 0).
pub fn example_subjects(lib: &crate::knowledge::signature::Library) -> Vec<Subject> {
    lib.signatures
        .iter()
        .flat_map(|s| {
            s.examples
                .matches
                .iter()
                .enumerate()
                .map(move |(i, e)| Subject {
                    name: format!("{}#{i}", s.id),
                    text: e.log.clone(),
                    key_line: None,
                })
        })
        .collect()
}
