//! Match: confirm candidate signatures on failures and lines, producing evidence.
//!
//! The [`Prefilter`] scans each line once with one Aho-Corasick automaton over the atoms
//! of the whole library; an atom hit makes its signatures *candidates* for the failure
//! (or loose line) the line belongs to. A candidate is never a verdict: [`Matcher`]
//! confirms it by evaluating the signature's full condition tree on each *subject* of
//! the failure (each exception of a chain, final first, or the failure itself). The
//! brute-force engine skips the prefilter and evaluates every signature everywhere; it
//! is the oracle the prefilter is tested against, and the naive baseline.

mod eval;
pub mod fuzzy;
pub mod layers;
mod precedence;
mod prefilter;
pub mod text;
pub mod wrap;

use std::collections::BTreeMap;

pub use eval::{evaluate, evaluate_with, Subject};
pub use prefilter::{Prefilter, PrefilterError};

use crate::engine::extract::{BlockLine, Extraction, Failure, FailureId, FailureKind, Occurrence};
use crate::engine::normalize::Record;
use crate::env::Facts;
use crate::knowledge::signature::{Library, Severity, SigIndex};

/// How a match was found when it was not by a signature's own conditions on the text
/// (set by the [`layers`]: [`wrap`] and [`fuzzy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The inner error of a wrapper (the wrapper's signature index).
    Wrapper { wrapper: SigIndex },
    /// A resemblance to the signature's examples (similarity in thousandths).
    Fuzzy { per_mille: u16 },
}

/// A note on one match: the signature, the failure (`None` for loose lines) and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViaNote {
    pub signature: SigIndex,
    pub failure: Option<FailureId>,
    pub via: Via,
}

/// Evidence lines kept per loose-line match group.
pub const MAX_LOOSE_EVIDENCE: usize = 5;

/// Places kept per loose-line match group of a signature that `explains:` later
/// failures (the latest ones: a marker's window reaches forward).
pub const MAX_MARKS: usize = 4096;

/// Which matcher runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineKind {
    /// One Aho-Corasick pass over the atoms, then confirmation of candidates.
    #[default]
    Prefilter,
    /// Every signature's conditions on every failure and line (the oracle).
    Brute,
}

/// Where in a failure a signature matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// The exception that matters most of a traceback or exception failure.
    PrimaryException,
    /// Another exception of the chain.
    ChainException,
    /// A failure without an exception (signal, systemd, NCCL block, error line).
    FailureLine,
    /// A warning.
    Warning,
    /// A line of a failure read as text, or a folded reading of its text
    /// ([`text::readings`]): the parse did not match, the text did.
    FailureText,
    /// A line that is part of no failure.
    LooseLine,
}

/// One confirmed match of a signature on a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureHit {
    pub signature: SigIndex,
    pub failure: FailureId,
    pub place: Place,
    pub captures: BTreeMap<String, String>,
    /// Log lines that show the match.
    pub lines: Vec<usize>,
}

/// Confirmed matches of one signature on loose lines, aggregated while streaming.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LooseHits {
    pub count: usize,
    pub evidence: Vec<(BlockLine, String)>,
    pub captures: BTreeMap<String, String>,
    pub attempts: Vec<usize>,
    pub streams: Vec<String>,
    pub first: Option<Occurrence>,
    /// Every place it matched, `(line, attempt)`, for a signature that `explains:` later
    /// failures (a benign marker folds only what follows it closely) or `completes:` a run
    /// (it folds what came before it), [`crate::engine::rank::layers`]; the latest
    /// [`MAX_MARKS`] are kept.
    pub marks: std::collections::VecDeque<(usize, usize)>,
}

/// Every confirmed match in one input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matches {
    pub failures: Vec<FailureHit>,
    /// Per signature index.
    pub loose: BTreeMap<SigIndex, LooseHits>,
    /// Matches found by a layer other than the signature's own conditions.
    pub via: Vec<layers::ViaNote>,
}

/// The compiled library: the signatures (each regex built once, on first use, and
/// shared) and the prefilter automaton (built once, here; its failure is an error).
/// Immutable and `Send + Sync`: every scan on every thread borrows the same one.
pub struct Compiled<'l> {
    pub library: &'l Library,
    pub prefilter: Prefilter,
    /// The fuzzy-similarity index of the library's examples, built on the first failure
    /// nothing explains (see [`fuzzy`]).
    pub fuzzy: std::sync::OnceLock<fuzzy::FuzzyIndex>,
}

impl<'l> Compiled<'l> {
    pub fn new(library: &'l Library) -> Result<Self, PrefilterError> {
        Ok(Compiled {
            library,
            prefilter: Prefilter::new(library)?,
            fuzzy: std::sync::OnceLock::new(),
        })
    }
}

/// The matcher of one scan: the compiled library it reads and its own scratch buffer
/// (cheap to create; nothing is built).
pub struct Matcher<'c> {
    compiled: &'c Compiled<'c>,
    kind: EngineKind,
    scratch: Vec<SigIndex>,
}

impl<'c> Matcher<'c> {
    pub fn new(compiled: &'c Compiled<'c>, kind: EngineKind) -> Self {
        Matcher {
            compiled,
            kind,
            scratch: Vec::new(),
        }
    }

    /// The compiled library this matcher reads.
    pub fn compiled(&self) -> &'c Compiled<'c> {
        self.compiled
    }

    pub fn library(&self) -> &'c Library {
        self.compiled.library
    }

    pub fn prefilter(&self) -> &'c Prefilter {
        &self.compiled.prefilter
    }

    fn candidates_of_lines<'a>(&mut self, lines: impl Iterator<Item = &'a str>) -> Vec<SigIndex> {
        match self.kind {
            EngineKind::Brute => self.library().signatures.indices().collect(),
            EngineKind::Prefilter => {
                self.scratch.clear();
                let pf = self.prefilter();
                for l in lines {
                    pf.candidates(l, &mut self.scratch);
                }
                self.scratch.sort_unstable();
                self.scratch.dedup();
                self.scratch.clone()
            }
        }
    }

    /// Matches a loose line (part of no failure) and folds the result into `into`;
    /// fact conditions read `facts`.
    ///
    /// The line's message is read as it is, then folded ([`text::folds`]: a wrapped or
    /// space-broken paste).
    pub fn match_loose(&mut self, rec: &Record, attempt: usize, into: &mut Matches, facts: &Facts) {
        let folds: Vec<String> = if text::has_run(&rec.message) {
            text::folds(rec.message.trim()).collect()
        } else {
            Vec::new()
        };
        let texts =
            || std::iter::once(rec.message.as_str()).chain(folds.iter().map(String::as_str));
        if self.kind == EngineKind::Prefilter && !texts().any(|t| self.prefilter().any(t)) {
            return;
        }
        let cands = self.candidates_of_lines(texts());
        if cands.is_empty() {
            return;
        }
        let stream = rec.stream.key();
        let target = Failure::line_target(rec, attempt, &stream);
        // the subjects are built once, not once per candidate signature
        let subjects: Vec<Subject<'_>> = texts()
            .map(|t| Subject {
                headline: t.trim().to_string(),
                exception: None,
                line: rec.line,
            })
            .collect();
        let mut confirmed = Vec::new();
        for s in cands {
            let sig = &self.library().signatures[s];
            let found = subjects
                .iter()
                .find_map(|subject| evaluate_with(&sig.cond, &target, subject, facts));
            if let Some(found) = found {
                confirmed.push((s, found));
            }
        }
        let lib = self.library();
        let benign: Vec<SigIndex> = confirmed
            .iter()
            .map(|(s, _)| *s)
            .filter(|&s| lib.signatures[s].severity == Severity::Benign)
            .collect();
        let level = rec.level.or_else(|| precedence::text_level(&rec.message));
        confirmed.retain(|(s, _)| {
            let sig = &lib.signatures[*s];
            sig.severity == Severity::Benign
                || (precedence::overrides(lib, sig, &benign) && !precedence::info_only(sig, level))
        });
        for (s, found) in confirmed {
            let marks = !lib.signatures[s].explains.is_empty() || lib.signatures[s].completes;
            let e = into.loose.entry(s).or_default();
            e.count += 1;
            if marks {
                if e.marks.len() >= MAX_MARKS {
                    e.marks.pop_front();
                }
                e.marks.push_back((rec.line, attempt));
            }
            if e.evidence.len() < MAX_LOOSE_EVIDENCE {
                e.evidence.push((
                    BlockLine {
                        line: rec.line,
                        text: rec.raw.clone(),
                        message: rec.message.clone(),
                    },
                    stream.clone(),
                ));
            }
            if e.first.is_none() {
                e.captures = found.captures;
                e.first = Some(Occurrence {
                    stream: stream.clone(),
                    line: rec.line,
                    timestamp: rec.timestamp.clone(),
                });
            }
            if !e.attempts.contains(&attempt) {
                e.attempts.push(attempt);
            }
            if !stream.is_empty() && !e.streams.contains(&stream) && e.streams.len() < 64 {
                e.streams.push(stream.clone());
            }
        }
    }

    /// Matches every extracted failure; fact conditions read `facts`.
    pub fn match_failures(&mut self, x: &Extraction, into: &mut Matches, facts: &Facts) {
        for f in &x.failures {
            // Conditions read the kept lines, but also the headlines and frames of the
            // chain, which outlive the lines: a chain longer than MAX_BLOCK_LINES keeps
            // its final exception after the last kept line, and a headline joins a
            // multi-line message. All of them feed the prefilter, or it would miss
            // what brute force finds (found by tests/integration/hostile.rs, 500 chained exceptions).
            let headlines: Vec<String> = f.chain.iter().map(|e| e.headline()).collect();
            let texts = f
                .lines
                .iter()
                .map(|l| l.message.as_str())
                .chain(std::iter::once(f.headline.as_str()))
                .chain(headlines.iter().map(String::as_str))
                .chain(f.chain.iter().flat_map(|e| {
                    e.frames
                        .iter()
                        .flat_map(|fr| [fr.file.as_str(), fr.function.as_str()])
                }));
            let readings = text::readings(f);
            let texts = texts.chain(readings.iter().map(|r| r.text.as_str()));
            let cands = self.candidates_of_lines(texts);
            if cands.is_empty() {
                continue;
            }
            // the subjects are built once per failure, not once per candidate signature
            let parsed = Subject::all(f);
            let read = text_subjects(f, &readings);
            let mut hits = Vec::new();
            for s in cands {
                let sig = &self.library().signatures[s];
                if let Some(hit) = match_parsed(sig, s, f, facts, &parsed)
                    .or_else(|| match_text(sig, s, f, facts, &read))
                {
                    hits.push(hit);
                }
            }
            precedence::filter_failure_hits(self.library(), f, &mut hits);
            into.failures.extend(hits);
        }
    }
}

/// Evaluates one signature on one failure: the first subject (final exception first)
/// that satisfies the tree wins.
pub fn match_failure(
    sig: &crate::knowledge::signature::Signature,
    index: SigIndex,
    f: &Failure,
) -> Option<FailureHit> {
    match_failure_with(sig, index, f, &Facts::default())
}

/// [`match_failure`] with environment facts.
pub fn match_failure_with(
    sig: &crate::knowledge::signature::Signature,
    index: SigIndex,
    f: &Failure,
    facts: &Facts,
) -> Option<FailureHit> {
    match_parsed(sig, index, f, facts, &Subject::all(f))
        .or_else(|| match_text(sig, index, f, facts, &text_subjects(f, &text::readings(f))))
}

/// The parsed subjects of a failure ([`Subject::all`]).
fn match_parsed(
    sig: &crate::knowledge::signature::Signature,
    index: SigIndex,
    f: &Failure,
    facts: &Facts,
    subjects: &[Subject<'_>],
) -> Option<FailureHit> {
    let primary_line = f.primary().map(|e| e.line);
    for subject in subjects {
        if let Some(found) = evaluate_with(&sig.cond, f, subject, facts) {
            let place = match (subject.exception, f.kind) {
                (Some(e), _) if Some(e.line) == primary_line => Place::PrimaryException,
                (Some(_), _) => Place::ChainException,
                (None, FailureKind::Warning) => Place::Warning,
                (None, _) => Place::FailureLine,
            };
            return Some(hit(sig, index, f, place, subject.line, found));
        }
    }
    None
}

/// A hit of signature `index` on failure `f`: the line of the subject that matched
/// first, then the other lines the conditions read.
///
/// A match on a later line of a multi-line headline ([`eval::Found::on`]) is at that line:
/// a benign signature explains only it (not the headline another signature matched), a
/// cause keeps the headline first and that line after it.
fn hit(
    sig: &crate::knowledge::signature::Signature,
    index: SigIndex,
    f: &Failure,
    place: Place,
    first: usize,
    found: eval::Found,
) -> FailureHit {
    let mut lines = match found.on {
        Some(on) if sig.severity == Severity::Benign => vec![on],
        Some(on) => vec![first, on],
        None => vec![first],
    };
    for l in found.lines {
        if !lines.contains(&l) {
            lines.push(l);
        }
    }
    FailureHit {
        signature: index,
        failure: f.id,
        place,
        captures: found.captures,
        lines,
    }
}

/// The subjects of the readings of a failure's text ([`text::readings`]).
fn text_subjects<'a>(f: &'a Failure, readings: &[text::Reading]) -> Vec<Subject<'a>> {
    readings
        .iter()
        .map(|r| Subject {
            headline: r.text.clone(),
            exception: r.exception.and_then(|i| f.chain.get(i)),
            line: r.line,
        })
        .collect()
}

/// The readings of a failure's text that the parse missed ([`text_subjects`]), at
/// [`Place::FailureText`].
fn match_text(
    sig: &crate::knowledge::signature::Signature,
    index: SigIndex,
    f: &Failure,
    facts: &Facts,
    subjects: &[Subject<'_>],
) -> Option<FailureHit> {
    for subject in subjects {
        if let Some(found) = evaluate_with(&sig.cond, f, subject, facts) {
            return Some(hit(sig, index, f, Place::FailureText, subject.line, found));
        }
    }
    None
}

impl Failure {
    /// A one-line pseudo-failure for matching a loose line.
    pub fn line_target(rec: &Record, attempt: usize, stream: &str) -> Failure {
        let occ = Occurrence {
            stream: stream.to_string(),
            line: rec.line,
            timestamp: rec.timestamp.clone(),
        };
        Failure {
            id: FailureId(0),
            kind: FailureKind::Line,
            attempt,
            level: rec.level,
            headline: rec.message.trim().to_string(),
            preamble: None,
            chain: Vec::new(),
            elided_exceptions: 0,
            raise_site: None,
            crash_site: None,
            importing: None,
            truncated: false,
            streams: vec![stream.to_string()],
            count: 1,
            first: occ.clone(),
            occurrences: vec![occ],
            first_in_attempt: false,
            consequence_of: None,
            consequence_shape: false,
            lines: vec![BlockLine {
                line: rec.line,
                text: String::new(),
                message: rec.message.clone(),
            }],
            elided_lines: 0,
            unit: None,
            owner: crate::engine::extract::units::Owner::of(rec),
        }
    }
}

/// The compiled library is shared across threads (checked at compile time).
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Compiled<'static>>();
};
