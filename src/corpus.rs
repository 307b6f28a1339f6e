//! Corpus: past incidents (a real log plus its expected diagnosis) replayed against the
//! library.
//!
//! Each incident is a folder `corpus/<name>/` with `log.txt` and `expected.yaml`
//! (category, key line, source, …). [`evaluate`] diagnoses one incident and says
//! whether the expectation holds: the top cause's category (or one of `also`), the key
//! line among that cause's evidence, no forbidden signature; for `none` (a healthy log)
//! no cause; for `other` (a code bug) no cause of high confidence.
//!
//! On top of that (`crashdoc corpus …`): [`run`] replays a corpus in parallel, [`score`]
//! turns the outcomes into the summary table and the saved result, [`baseline`] is the
//! regression gate, [`render`] prints the table, [`add`] files a new incident.

pub mod add;
pub mod baseline;
pub mod calibration;
pub mod cluster;
pub mod diff;
pub mod invariance;
pub mod junit;
pub mod knockout;
pub mod metamorph;
pub mod render;
pub mod run;
pub mod score;
pub mod seen;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::diagnosis::{BuildOptions, Diagnosis};
use crate::engine::ingest::{LineReader, Source};
use crate::engine::pipeline::Engine;
use crate::engine::rank::Confidence;

/// `expected.yaml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub source: String,
    /// How the log was read from its source: `read_file` or `search` (the search tool's
    /// look-up verbs; a fetched snapshot is for reading only, never committed), or `own`
    /// (a team's own log). `corpus add --via` records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
    /// A taxonomy category, or `none` for a log without failure.
    pub category: String,
    /// The signature expected to rank first, when known.
    #[serde(default)]
    pub signature: Option<String>,
    #[serde(default)]
    pub also: Vec<String>,
    #[serde(default)]
    pub key_line: Option<String>,
    #[serde(default)]
    pub root_cause: Option<String>,
    #[serde(default)]
    pub fix: Option<String>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub noise: Vec<String>,
    #[serde(default)]
    pub must_not: Vec<String>,
}

/// The 1-based line of `field:` in a YAML text (0 when not found).
fn line_of(text: &str, field: &str) -> u64 {
    let key = format!("{field}:");
    text.lines()
        .position(|l| l.trim_start().starts_with(&key))
        .map_or(0, |i| i as u64 + 1)
}

impl Expected {
    /// The first one-line field (ids, categories, source) holding a character that is no
    /// plain text: refused, since `corpus run` prints them and a CI log reads them.
    fn forbidden(&self) -> Option<(&'static str, char)> {
        let bad = |s: &str| {
            s.chars()
                .find(|&c| c.is_control() || crate::knowledge::text::is_invisible(c))
        };
        let one = [
            ("source", Some(&self.source)),
            ("project", self.project.as_ref()),
            ("category", Some(&self.category)),
            ("signature", self.signature.as_ref()),
        ];
        one.into_iter()
            .filter_map(|(f, v)| Some((f, bad(v?)?)))
            .chain(self.also.iter().filter_map(|v| Some(("also", bad(v)?))))
            .next()
    }

    /// Every field with [`crate::knowledge::text::escape_control`] applied: the file is
    /// text a person or a CI log reads back (`corpus run` prints `signature`, `category`…),
    /// so a newline, a terminal escape or an invisible character in it is shown, never
    /// obeyed (a `\n::error::` would forge a CI annotation).
    fn escaped(self) -> Expected {
        let e = |s: String| crate::knowledge::text::escape_control(&s);
        let all = |v: Vec<String>| v.into_iter().map(e).collect();
        Expected {
            source: e(self.source),
            project: self.project.map(e),
            category: e(self.category),
            signature: self.signature.map(e),
            also: all(self.also),
            key_line: self.key_line.map(e),
            root_cause: self.root_cause.map(e),
            fix: self.fix.map(e),
            evidence: self.evidence.map(e),
            noise: all(self.noise),
            must_not: all(self.must_not),
            via: self.via.map(e),
        }
    }
}

/// One incident on disk.
#[derive(Debug, Clone)]
pub struct Incident {
    pub name: String,
    pub log: PathBuf,
    pub expected: Expected,
}

/// Errors reading a corpus.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Expected {
        path: String,
        line: u64,
        column: u64,
        message: String,
    },
    #[error("{path}: incident folder has no log.txt")]
    NoLog { path: String },
}

/// Loads every incident folder of a corpus, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Incident>, CorpusError> {
    let read = |p: &Path| -> Result<std::fs::ReadDir, CorpusError> {
        std::fs::read_dir(p).map_err(|source| CorpusError::Read {
            path: p.display().to_string(),
            source,
        })
    };
    let mut out = Vec::new();
    for e in read(dir)? {
        let e = e.map_err(|source| CorpusError::Read {
            path: dir.display().to_string(),
            source,
        })?;
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        let exp_path = p.join("expected.yaml");
        if !exp_path.exists() {
            continue;
        }
        let text = crate::knowledge::files::read_text(
            &exp_path,
            crate::knowledge::files::MAX_SMALL_FILE_BYTES,
        )
        .map_err(|source| CorpusError::Read {
            path: exp_path.display().to_string(),
            source,
        })?;
        let expected: Expected = serde_saphyr::from_str(&text).map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            CorpusError::Expected {
                path: exp_path.display().to_string(),
                line,
                column,
                message: e.to_string().lines().next().unwrap_or("").to_string(),
            }
        })?;
        let log = p.join("log.txt");
        if !log.exists() {
            return Err(CorpusError::NoLog {
                path: p.display().to_string(),
            });
        }
        if let Some((field, c)) = expected.forbidden() {
            return Err(CorpusError::Expected {
                path: exp_path.display().to_string(),
                line: line_of(&text, field),
                column: 1,
                message: format!(
                    "`{field}` holds {} (a control, invisible or format character): an id, category or source is one line of plain text",
                    c.escape_unicode()
                ),
            });
        }
        out.push(Incident {
            // a folder name may hold a newline or an escape: shown, never obeyed
            name: crate::knowledge::text::escape_control(&e.file_name().to_string_lossy()),
            log,
            expected: expected.escaped(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The outcome of one incident.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub name: String,
    pub expected: String,
    /// Categories of the causes, in rank order.
    pub got: Vec<String>,
    pub top_signature: Option<String>,
    pub top_confidence: Option<Confidence>,
    pub top1: bool,
    pub top3: bool,
    /// The key line is among the evidence of the matching cause.
    pub key_line_hit: bool,
    /// The key line is part of an extracted failure.
    pub key_line_extracted: bool,
    /// The key line is inside the block the report leads with (`primary`).
    pub key_line_primary: bool,
    pub ok: bool,
    pub problems: Vec<String>,
}

fn fits(expected: &Expected, category: &str) -> bool {
    category == expected.category || expected.also.iter().any(|a| a == category)
}

/// Diagnoses one incident and checks it.
pub fn evaluate(
    engine: &mut Engine<'_>,
    inc: &Incident,
) -> Result<(Outcome, Diagnosis), crate::engine::ingest::IngestError> {
    let mut r = LineReader::open(&Source::Path(inc.log.clone()))?;
    let d = engine.diagnose(&mut r, BuildOptions { top: 3 })?;
    Ok((check(inc, &d), d))
}

/// Whether the block the report leads with holds a line with `key` (its own lines, or a
/// failure's lines inside it).
fn primary_holds(d: &Diagnosis, key: &str) -> bool {
    let Some(p) = &d.primary else {
        return false;
    };
    p.lines.iter().any(|(_, t)| t.contains(key))
        || d.failures.iter().any(|f| {
            f.lines
                .iter()
                .any(|l| (p.start..=p.end).contains(&l.line) && l.text.contains(key))
        })
}

/// Checks a diagnosis against an incident's expectation.
pub fn check(inc: &Incident, d: &Diagnosis) -> Outcome {
    let e = &inc.expected;
    let got: Vec<String> = d
        .causes
        .iter()
        .map(|c| c.category.as_str().to_string())
        .collect();
    let mut problems = Vec::new();
    let key = e.key_line.as_deref().unwrap_or("");
    let key_line_extracted = !key.is_empty()
        && d.failures
            .iter()
            .any(|f| f.lines.iter().any(|l| l.text.contains(key)));
    let key_line_primary = !key.is_empty() && primary_holds(d, key);
    let (top1, top3, key_line_hit) = match e.category.as_str() {
        "none" => {
            let ok = d.causes.is_empty();
            if !ok {
                problems.push(format!("expected no cause, got {}", d.causes[0].signature));
            }
            (ok, ok, true)
        }
        "other" => {
            let ok = d.causes.iter().all(|c| c.confidence != Confidence::High);
            if !ok {
                problems.push(format!(
                    "a code bug, but {} has high confidence",
                    d.causes[0].signature
                ));
            }
            (ok, ok, true)
        }
        _ => {
            let top1 = d
                .causes
                .first()
                .is_some_and(|c| fits(e, c.category.as_str()));
            let top3 = d.causes.iter().any(|c| fits(e, c.category.as_str()));
            let hit = d
                .causes
                .iter()
                .find(|c| fits(e, c.category.as_str()))
                .is_some_and(|c| key.is_empty() || c.evidence.iter().any(|l| l.text.contains(key)));
            if !top1 {
                problems.push(format!(
                    "expected {} first, got [{}]",
                    e.category,
                    got.join(", ")
                ));
            }
            if top3 && !hit {
                problems.push("the key line is not in the cause's evidence".to_string());
            }
            (top1, top3, hit)
        }
    };
    if let Some(sig) = &e.signature {
        if d.causes.first().map(|c| &c.signature) != Some(sig) {
            problems.push(format!("expected signature {sig} first"));
        }
    }
    for m in &e.must_not {
        if d.causes.iter().any(|c| &c.signature == m) {
            problems.push(format!("{m} must not appear"));
        }
    }
    Outcome {
        name: inc.name.clone(),
        expected: e.category.clone(),
        got,
        top_signature: d.causes.first().map(|c| c.signature.clone()),
        top_confidence: d.causes.first().map(|c| c.confidence),
        top1,
        top3,
        key_line_hit,
        key_line_extracted,
        key_line_primary,
        ok: problems.is_empty(),
        problems,
    }
}
