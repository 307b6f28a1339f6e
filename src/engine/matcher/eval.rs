//! Evaluating a condition tree on one subject of a failure.
//!
//! Log conditions are true or false; a fact condition (`package`, `gpu_capability`…) is
//! three-valued and *unknown* when the environment facts it needs were not given. The
//! tree is combined with Kleene logic and the signature holds unless the result is
//! false: facts can rule a match out when they contradict it, never by their absence,
//! so a diagnosis without facts is the diagnosis it always was.

use std::collections::BTreeMap;

use crate::engine::extract::{ExceptionInfo, Failure};
use crate::env::eval::eval_fact;
use crate::env::Facts;
use crate::knowledge::cond::Truth;
use crate::knowledge::signature::compile::Leaf;
use crate::knowledge::signature::Cond;

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
    /// The line a `message:` match sits on when it is not the subject's own: a message
    /// that goes on over several lines (an exception's, with the lines after it) matched
    /// on a later one. That line, not the headline's, is the evidence (and what a benign
    /// match explains).
    pub on: Option<usize>,
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

/// Evaluates `cond` without environment facts; `Some` with captures and evidence lines
/// when it holds.
pub fn evaluate(cond: &Cond, f: &Failure, s: &Subject<'_>) -> Option<Found> {
    evaluate_with(cond, f, s, &Facts::default())
}

/// Evaluates `cond` with environment facts: `Some` unless the tree is false.
pub fn evaluate_with(cond: &Cond, f: &Failure, s: &Subject<'_>, facts: &Facts) -> Option<Found> {
    let mut found = Found::default();
    if eval(cond, f, s, facts, &mut found).possible() {
        Some(found)
    } else {
        None
    }
}

fn eval(cond: &Cond, f: &Failure, s: &Subject<'_>, facts: &Facts, found: &mut Found) -> Truth {
    cond.eval(&mut |leaf, keep| match leaf {
        Leaf::Fact(fact) => eval_fact(fact, facts, &mut Vec::new()),
        // under `not`: no captures, no evidence
        log if !keep => Truth::of(eval_log(log, f, s, &mut Found::default())),
        log => Truth::of(eval_log(log, f, s, found)),
    })
}

/// The block line after the subject's that holds byte `at` of a multi-line headline
/// (`None` on the headline's first line, or where no block line shows that text).
fn continuation_line(f: &Failure, s: &Subject<'_>, at: usize) -> Option<usize> {
    let before = s.headline.get(..at)?;
    let k = before.matches('\n').count();
    if k == 0 {
        return None;
    }
    let text = s.headline.split('\n').nth(k)?.trim();
    f.lines
        .iter()
        .find(|l| l.line > s.line && !text.is_empty() && l.message.trim() == text)
        .map(|l| l.line)
}

fn eval_log(cond: &Leaf, f: &Failure, s: &Subject<'_>, found: &mut Found) -> bool {
    match cond {
        // `is_match` first: most subjects do not match, and a search for captures
        // costs an allocation and several times the work of one that says yes or no
        Leaf::Message(re) if !re.is_match(&s.headline) => false,
        Leaf::Message(re) => match re.captures(&s.headline) {
            Some(c) => {
                add_captures(re, &c, found);
                let start = c.get(0).map_or(0, |m| m.start());
                if found.on.is_none() {
                    found.on = continuation_line(f, s, start);
                }
                true
            }
            None => false,
        },
        Leaf::Contains(lit) => s.headline.contains(lit.as_str()),
        Leaf::Exception(name) => s.exception.is_some_and(|e| {
            let t = e.exception_type.as_str();
            t == name
                || (t.len() > name.len()
                    && t.ends_with(name.as_str())
                    && t.as_bytes()[t.len() - name.len() - 1] == b'.')
        }),
        Leaf::Text(re) => {
            for l in f.lines.iter().filter(|l| re.is_match(&l.message)) {
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
        Leaf::Frame { file, function } => s.exception.is_some_and(|e| {
            e.frames.iter().any(|fr| {
                file.as_ref().is_none_or(|re| re.is_match(&fr.file))
                    && function.as_ref().is_none_or(|re| re.is_match(&fr.function))
            })
        }),
        Leaf::Kind(k) => f.kind == *k,
        Leaf::Stream(re) => f.streams.iter().any(|st| re.is_match(st)),
        // handled by `eval`
        Leaf::Fact(_) => false,
    }
}
