//! Evaluating a condition tree on one subject of a failure.

use std::collections::BTreeMap;

use crate::extract::{ExceptionInfo, Failure};
use crate::signature::Cond;

/// What conditions look at: one exception of a chain, or the failure itself.
pub struct Subject<'a> {
    pub headline: String,
    pub exception: Option<&'a ExceptionInfo>,
    /// The log line of the headline.
    pub line: usize,
}

impl<'a> Subject<'a> {
    pub fn of_failure(f: &'a Failure) -> Subject<'a> {
        Subject {
            headline: f.headline.clone(),
            exception: None,
            line: f.first.line,
        }
    }

    /// Every subject of a failure: its exceptions, final first; or the failure itself.
    pub fn all(f: &'a Failure) -> Vec<Subject<'a>> {
        let mut v: Vec<Subject<'a>> = f
            .chain
            .iter()
            .rev()
            .filter(|e| !e.exception_type.is_empty())
            .map(|e| Subject {
                headline: e.headline(),
                exception: Some(e),
                line: e.line,
            })
            .collect();
        if v.is_empty() {
            v.push(Subject::of_failure(f));
        }
        v
    }
}

/// The result of a holding condition.
#[derive(Debug, Default)]
pub struct Found {
    pub captures: BTreeMap<String, String>,
    pub lines: Vec<usize>,
}

fn add_captures(re: &regex::Regex, caps: &regex::Captures<'_>, found: &mut Found) {
    for name in re.capture_names().flatten() {
        if let Some(m) = caps.name(name) {
            found
                .captures
                .entry(name.to_string())
                .or_insert_with(|| m.as_str().to_string());
        }
    }
}

/// Evaluates `cond`; `Some` with captures and evidence lines when it holds.
pub fn evaluate(cond: &Cond, f: &Failure, s: &Subject<'_>) -> Option<Found> {
    let mut found = Found::default();
    if eval(cond, f, s, &mut found) {
        Some(found)
    } else {
        None
    }
}

fn eval(cond: &Cond, f: &Failure, s: &Subject<'_>, found: &mut Found) -> bool {
    match cond {
        Cond::Message(re) => match re.captures(&s.headline) {
            Some(c) => {
                add_captures(re, &c, found);
                true
            }
            None => false,
        },
        Cond::Contains(lit) => s.headline.contains(lit.as_str()),
        Cond::Exception(name) => s.exception.is_some_and(|e| {
            let t = e.exception_type.as_str();
            t == name
                || (t.len() > name.len()
                    && t.ends_with(name.as_str())
                    && t.as_bytes()[t.len() - name.len() - 1] == b'.')
        }),
        Cond::Text(re) => {
            for l in &f.lines {
                if let Some(c) = re.captures(&l.message) {
                    add_captures(re, &c, found);
                    if !found.lines.contains(&l.line) {
                        found.lines.push(l.line);
                    }
                    return true;
                }
            }
            false
        }
        Cond::Frame { file, function } => s.exception.is_some_and(|e| {
            e.frames.iter().any(|fr| {
                file.as_ref().is_none_or(|re| re.is_match(&fr.file))
                    && function.as_ref().is_none_or(|re| re.is_match(&fr.function))
            })
        }),
        Cond::Kind(k) => f.kind == *k,
        Cond::Stream(re) => f.streams.iter().any(|st| re.is_match(st)),
        Cond::All(v) => v.iter().all(|c| eval(c, f, s, found)),
        Cond::Any(v) => v.iter().any(|c| eval(c, f, s, found)),
        Cond::Not(c) => {
            let mut scratch = Found::default();
            !eval(c, f, s, &mut scratch)
        }
    }
}
