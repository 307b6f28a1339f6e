//! Wrappers: a message that carries an inner error (`Capture cuda graph failed: <inner>`,
//! `Worker failed with error '<inner>'`, `what(): <inner>`). The signature names the
//! capture that holds the inner text (`wraps: inner`); that text is diagnosed through the
//! whole library as a failure of its own (an exception when it reads `Type: message`),
//! and each cause found takes the wrapper's place and evidence. An inner text that is a
//! wrapper again is unwrapped in turn, at most [`MAX_DEPTH`] times.

use std::sync::OnceLock;

use regex::Regex;

use super::{FailureHit, Matcher, Matches};
use super::{Via, ViaNote};
use crate::engine::extract::{BlockLine, ExceptionInfo, Extraction, Failure, FailureKind};
use crate::env::Facts;
use crate::knowledge::signature::{Severity, SigIndex};

/// How many wrappers deep an inner error is followed.
pub const MAX_DEPTH: usize = 4;

fn exception_line() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?P<t>[A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure)): ?(?P<m>[\s\S]*)$",
        )
        .ok()
    })
    .as_ref()
}

/// The failure an inner text makes: an exception when it reads `Type: message`, a
/// line otherwise; in the wrapper's streams, at the wrapper's line.
pub fn inner_failure(outer: &Failure, text: &str, line: usize) -> Failure {
    let text = text.trim().trim_matches(|c| c == '\'' || c == '"').trim();
    let mut f = outer.clone();
    f.headline = text.to_string();
    f.chain = Vec::new();
    f.elided_exceptions = 0;
    f.lines = vec![BlockLine {
        line,
        text: String::new(),
        message: text.to_string(),
    }];
    f.elided_lines = 0;
    if let Some(c) = exception_line().and_then(|re| re.captures(text)) {
        f.kind = FailureKind::Exception;
        f.chain.push(ExceptionInfo {
            exception_type: c["t"].to_string(),
            message: c["m"].to_string(),
            line,
            follows: None,
            wrapper: false,
            frames: Vec::new(),
            elided_frames: 0,
        });
    } else if f.kind == FailureKind::Traceback || f.kind == FailureKind::Exception {
        f.kind = FailureKind::ErrorLine;
    }
    f
}

/// The inner text of a hit whose signature wraps one.
fn inner_text(matcher: &Matcher<'_>, h: &FailureHit) -> Option<String> {
    let cap = matcher
        .library()
        .signatures
        .get(h.signature)?
        .wraps
        .as_ref()?;
    let t = h.captures.get(cap)?.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Diagnoses the inner text of every wrapper matched on a failure.
pub fn unwrap_failures(matcher: &mut Matcher<'_>, x: &Extraction, m: &mut Matches, facts: &Facts) {
    let mut queue: Vec<(usize, usize)> = (0..m.failures.len()).map(|i| (i, 0)).collect();
    while let Some((i, depth)) = queue.pop() {
        if depth >= MAX_DEPTH {
            continue;
        }
        let Some(h) = m.failures.get(i).cloned() else {
            continue;
        };
        let Some(text) = inner_text(matcher, &h) else {
            continue;
        };
        let Some(outer) = x.failures.iter().find(|f| f.id == h.failure) else {
            continue;
        };
        let line = h.lines.first().copied().unwrap_or(outer.first.line);
        let inner = Extraction {
            failures: vec![inner_failure(outer, &text, line)],
            ..Extraction::default()
        };
        let mut found = Matches::default();
        matcher.match_failures(&inner, &mut found, facts);
        for ih in found.failures {
            let sig = &matcher.library().signatures[ih.signature];
            let known = m
                .failures
                .iter()
                .any(|e| e.signature == ih.signature && e.failure == h.failure);
            if ih.signature == h.signature || sig.severity == Severity::Benign {
                continue;
            }
            // the inner cause may also match the wrapper's text itself (an unanchored
            // regex): the wrapper still folds under it, and it is unwrapped in turn
            m.via.push(ViaNote {
                signature: ih.signature,
                failure: Some(h.failure),
                via: Via::Wrapper {
                    wrapper: h.signature,
                },
            });
            if known {
                if let Some(i) = m
                    .failures
                    .iter()
                    .position(|e| e.signature == ih.signature && e.failure == h.failure)
                {
                    queue.push((i, depth + 1));
                }
                continue;
            }
            m.failures.push(FailureHit {
                place: h.place,
                lines: h.lines.clone(),
                ..ih
            });
            queue.push((m.failures.len() - 1, depth + 1));
        }
    }
}

/// Diagnoses the inner text of wrappers matched on loose lines (their first match).
pub fn unwrap_loose(matcher: &mut Matcher<'_>, m: &mut Matches, facts: &Facts) {
    let wrappers: Vec<SigIndex> = m
        .loose
        .keys()
        .copied()
        .filter(|&s| matcher.library().signatures[s].wraps.is_some())
        .collect();
    for w in wrappers {
        let mut text = None;
        let mut loose = None;
        if let (Some(cap), Some(lh)) = (&matcher.library().signatures[w].wraps, m.loose.get(&w)) {
            text = lh.captures.get(cap).cloned();
            loose = Some(lh.clone());
        }
        let (Some(text), Some(lh)) = (text, loose) else {
            continue;
        };
        let Some((bl, stream)) = lh.evidence.first() else {
            continue;
        };
        let rec = crate::engine::normalize::Record {
            line: bl.line,
            raw: bl.text.clone(),
            message: bl.message.clone(),
            stream: crate::engine::normalize::Stream::default(),
            level: None,
            timestamp: None,
            origin: None,
            truncated: 0,
        };
        let attempt = lh.attempts.first().copied().unwrap_or(1);
        let outer = Failure::line_target(&rec, attempt, stream);
        let inner = Extraction {
            failures: vec![inner_failure(&outer, &text, bl.line)],
            ..Extraction::default()
        };
        let mut found = Matches::default();
        matcher.match_failures(&inner, &mut found, facts);
        for ih in found.failures {
            let sig = &matcher.library().signatures[ih.signature];
            if ih.signature == w || sig.severity == Severity::Benign {
                continue;
            }
            if m.loose.contains_key(&ih.signature) {
                continue;
            }
            let mut hits = lh.clone();
            hits.captures = ih.captures;
            m.loose.insert(ih.signature, hits);
            m.via.push(ViaNote {
                signature: ih.signature,
                failure: None,
                via: Via::Wrapper { wrapper: w },
            });
        }
    }
}
