//! The regression gate: a run compared with a saved result.
//!
//! The baseline is a [`CorpusReport`] saved as JSON (`--update` writes it). A
//! *regression* is an incident that was right (`ok`) in the baseline and is wrong now;
//! the gate fails on any. Incidents wrong in both runs are known failures, recorded as
//! they are: the gate is about change, not about a perfect score. Improvements,
//! incidents new to the corpus and incidents gone from it are reported, never fatal
//! (adding or removing an incident is a reviewed change of its own).

use std::path::Path;

use crate::knowledge::files;

use serde::Serialize;

use super::score::CorpusReport;

/// Errors reading or writing a baseline.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("{path}: cannot read the baseline: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: not a crashdoc corpus result: {message}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: baseline format {found} is not supported (this crashdoc writes {want})")]
    Version { path: String, found: u32, want: u32 },
    #[error("{path}: cannot write the baseline: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// One incident whose verdict changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub name: String,
    /// The top signature before and now (`None`: no cause).
    pub before: Option<String>,
    pub now: Option<String>,
    /// Why it is wrong now (empty for an improvement).
    pub problems: Vec<String>,
}

/// The comparison of a run with a baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Comparison {
    pub regressions: Vec<Change>,
    pub improvements: Vec<Change>,
    /// In the run, not in the baseline.
    pub added: Vec<String>,
    /// In the baseline, not in the run.
    pub removed: Vec<String>,
    /// Right in both, but the top signature changed.
    pub top_changed: Vec<Change>,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.regressions.is_empty()
    }
}

/// Reads a saved result.
pub fn read(path: &Path) -> Result<CorpusReport, BaselineError> {
    let p = path.display().to_string();
    let text =
        files::read_text(path, files::MAX_REPORT_BYTES).map_err(|source| BaselineError::Read {
            path: p.clone(),
            source,
        })?;
    // the format version first, so an old file says so instead of a field error
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        if let Some(found) = v.get("format").and_then(serde_json::Value::as_u64) {
            let want = super::score::FORMAT_VERSION;
            if found != u64::from(want) {
                return Err(BaselineError::Version {
                    path: p,
                    found: u32::try_from(found).unwrap_or(u32::MAX),
                    want,
                });
            }
        }
    }
    let parse_error = |e: serde_json::Error| BaselineError::Parse {
        path: p.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(parse_error)?;
    if let Some(s) = first_unprintable(&value) {
        // located where the string is written (JSON escapes it the way serde_json does)
        let at = serde_json::to_string(s)
            .ok()
            .and_then(|q| text.find(&q))
            .unwrap_or(0);
        let line = text[..at].matches('\n').count() + 1;
        let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
        return Err(BaselineError::Parse {
            path: p,
            line,
            column,
            message: "a name, id or category holds a control, invisible or format character (a baseline crashdoc writes never does)".into(),
        });
    }
    serde_json::from_value(value).map_err(parse_error)
}

/// The first string or key of a saved result holding a control, invisible or format
/// character. A baseline is a file anyone may hand over, and its incident names,
/// categories and ids are printed (`gone: NAME …` on stderr): such a file is refused
/// rather than shown (crashdoc escapes incident names when it reads a corpus, so a
/// baseline it wrote never holds one).
fn first_unprintable(v: &serde_json::Value) -> Option<&str> {
    use serde_json::Value;
    let bad = |s: &str| {
        s.chars()
            .any(|c| c.is_control() || crate::knowledge::text::is_invisible(c))
    };
    match v {
        Value::String(s) => bad(s).then_some(s.as_str()),
        Value::Array(a) => a.iter().find_map(first_unprintable),
        Value::Object(o) => o.iter().find_map(|(k, x)| {
            if bad(k) {
                Some(k.as_str())
            } else {
                first_unprintable(x)
            }
        }),
        _ => None,
    }
}

/// The saved form: pretty JSON with a final newline (stable, diff-friendly).
pub fn to_json(r: &CorpusReport) -> Result<String, serde_json::Error> {
    Ok(serde_json::to_string_pretty(r)? + "\n")
}

/// Writes a saved result.
pub fn write(path: &Path, r: &CorpusReport) -> Result<(), BaselineError> {
    let text = to_json(r).map_err(|e| BaselineError::Write {
        path: path.display().to_string(),
        source: e.into(),
    })?;
    files::write_atomic(path, text.as_bytes()).map_err(|source| BaselineError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Compares a run with a baseline.
pub fn compare(baseline: &CorpusReport, now: &CorpusReport) -> Comparison {
    let mut c = Comparison::default();
    for n in &now.incidents {
        let Some(b) = baseline.get(&n.name) else {
            c.added.push(n.name.clone());
            continue;
        };
        let change = Change {
            name: n.name.clone(),
            before: b.signatures.first().cloned(),
            now: n.signatures.first().cloned(),
            problems: n.problems.clone(),
        };
        match (b.ok, n.ok) {
            (true, false) => c.regressions.push(change),
            (false, true) => c.improvements.push(change),
            (true, true) if change.before != change.now => c.top_changed.push(change),
            _ => {}
        }
    }
    for b in &baseline.incidents {
        if now.get(&b.name).is_none() {
            c.removed.push(b.name.clone());
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::score::IncidentResult;

    fn result(name: &str, ok: bool, top: Option<&str>) -> IncidentResult {
        IncidentResult {
            name: name.into(),
            expected: "gpu-oom".into(),
            expected_signature: None,
            also: vec![],
            got: top.map(|_| "gpu-oom".to_string()).into_iter().collect(),
            signatures: top.map(str::to_string).into_iter().collect(),
            top_confidence: None,
            top_score: None,
            top_probability: None,
            top_layer: None,
            top1: ok,
            top3: ok,
            key_line_hit: ok,
            key_line_primary: ok,
            has_key_line: true,
            ok,
            problems: if ok { vec![] } else { vec!["wrong".into()] },
            error: None,
            seen: false,
        }
    }

    fn report(v: Vec<IncidentResult>) -> CorpusReport {
        CorpusReport::new(&crate::knowledge::signature::Library::default(), v)
    }

    #[test]
    fn only_right_to_wrong_is_a_regression() {
        let before = report(vec![
            result("a", true, Some("s1")),
            result("b", false, None),
            result("c", true, Some("s1")),
            result("gone", true, Some("s1")),
        ]);
        let now = report(vec![
            result("a", false, Some("s2")),
            result("b", true, Some("s1")),
            result("c", true, Some("s3")),
            result("new", false, None),
        ]);
        let c = compare(&before, &now);
        let names = |v: &[Change]| v.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&c.regressions), ["a"]);
        assert_eq!(c.regressions[0].now.as_deref(), Some("s2"));
        assert_eq!(names(&c.improvements), ["b"]);
        assert_eq!(names(&c.top_changed), ["c"]);
        assert_eq!(c.added, ["new"]);
        assert_eq!(c.removed, ["gone"]);
        assert!(!c.passed());
        assert!(compare(&now, &now).passed());
        // the saved form reads back equal
        let back: CorpusReport =
            serde_json::from_str(&to_json(&now).expect("serializes")).expect("json");
        assert_eq!(back, now);
    }
}
