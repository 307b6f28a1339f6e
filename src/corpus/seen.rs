//! The seen/unseen split: an incident is *seen* when the library's own examples contain
//! its key line or a line of its failure, so that getting it right measures recall on
//! the library's examples rather than on logs the library has never met.
//!
//! A line counts when it says something of its own: frame lines (`File "…", line N`),
//! the source line printed under a frame, the traceback header, caret markers and lines
//! shorter than [`MIN_CHARS`] are left out (every traceback shares them). Lines are
//! compared by their message (prefixes peeled) and trimmed, as a substring of an
//! example's text.
//!
//! An incident expected to be explained by a `rare: true` signature is seen whatever its
//! lines: such a signature has a single public source, usually that very incident, so
//! getting it right says nothing about logs the library has never met (an example
//! reformatted from the incident would otherwise slip into the unseen split).

use crate::engine::diagnosis::Diagnosis;
use crate::knowledge::signature::Library;

/// Lines shorter than this (trimmed) never make an incident seen.
pub const MIN_CHARS: usize = 24;

/// Every example log of a library, as one text.
#[derive(Debug, Clone, Default)]
pub struct ExampleText {
    text: String,
    /// Ids of the `rare: true` signatures.
    rare: std::collections::BTreeSet<String>,
}

impl ExampleText {
    pub fn of(lib: &Library) -> Self {
        let mut text = String::new();
        let mut rare = std::collections::BTreeSet::new();
        for s in &lib.signatures {
            if s.rare {
                rare.insert(s.id.clone());
            }
            for e in s.examples.matches.iter().chain(&s.examples.no_match) {
                text.push_str(&e.log);
                text.push('\n');
            }
        }
        ExampleText { text, rare }
    }

    /// Whether `id` is a `rare: true` signature of the library.
    pub fn is_rare(&self, id: &str) -> bool {
        self.rare.contains(id)
    }

    /// Whether an example contains `line` (trimmed; short lines never do).
    pub fn contains(&self, line: &str) -> bool {
        let l = line.trim();
        l.chars().count() >= MIN_CHARS
            && memchr::memmem::find(self.text.as_bytes(), l.as_bytes()).is_some()
    }
}

fn is_frame(m: &str) -> bool {
    m.trim_start().starts_with("File \"")
}

/// The lines of a diagnosis's failures that say something of their own.
fn telling_lines(d: &Diagnosis) -> Vec<&str> {
    let mut out = Vec::new();
    for f in &d.failures {
        let mut after_frame = false;
        for l in &f.lines {
            let m = l.message.trim();
            let skip = after_frame
                || is_frame(m)
                || m.starts_with("Traceback (most recent call last)")
                || m.starts_with('^')
                || m.starts_with('~');
            after_frame = is_frame(m);
            if !skip {
                out.push(m);
            }
        }
    }
    out
}

/// Whether an incident is seen: the signature it expects is `rare: true`, or its key
/// line or a telling line of its failures is in the library's examples.
pub fn is_seen(ex: &ExampleText, expected: Option<&str>, key: Option<&str>, d: &Diagnosis) -> bool {
    expected.is_some_and(|id| ex.is_rare(id))
        || key.is_some_and(|k| ex.contains(k))
        || telling_lines(d).iter().any(|l| ex.contains(l))
}
