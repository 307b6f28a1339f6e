//! Diagnosis assembly: one structured [`Diagnosis`] that every renderer
//! ([`crate::report`]) reads.
//!
//! [`Diagnosis::build`] turns ranked matches into the result: the causes (with
//! evidence, filled remediation and the consequences folded under them), the explained
//! noise and the extracted failures.

use std::collections::BTreeMap;

use crate::engine::extract::{Attempt, Extraction, Failure, FailureId, Occurrence, Site};
use crate::engine::rank::{self, Confidence, EvidenceLine, Ranked};
use crate::engine::remedy::fill;
use crate::engine::remedy::{render_step_list, RenderedStep};
use crate::knowledge::signature::lazy::LazyRegex;
use crate::knowledge::signature::{Category, Library, Severity, SigIndex};

/// Words in a capture's name that make its value an environmental fact (a version, a
/// path, a library or a device): see [`bug_without_environment`].
const ENVIRONMENT_FACTS: &[&str] = &[
    "version",
    "path",
    "file",
    "dir",
    "lib",
    "device",
    "gpu",
    "driver",
    "cuda",
    "arch",
    "capability",
    "package",
];

/// An environment signature's match on a failure whose structure says the software
/// itself failed ([`crate::engine::infer::bug`]: a `NotImplementedError`, a bare
/// assertion inside an installed package, an `ImportError` between a package's own
/// modules) that read no environmental fact from the log — no version, path, library
/// or device among its captured values: it says `low` (issue 28). The words match an
/// environment class; the structure says a bug is as likely, and nothing the match
/// read tells the two apart. A usage error with a known fix (`unsupported-config`)
/// and a wrapper (`other`) keep their confidence.
fn bug_without_environment(
    lib: &Library,
    by_id: &BTreeMap<FailureId, &Failure>,
    r: &Ranked,
) -> bool {
    let sig = &lib.signatures[r.signature];
    if matches!(sig.category, Category::Other | Category::UnsupportedConfig)
        || sig.severity == Severity::Benign
    {
        return false;
    }
    let fact = r.captures.iter().any(|(name, value)| {
        let name = name.to_ascii_lowercase();
        !value.trim().is_empty() && ENVIRONMENT_FACTS.iter().any(|w| name.contains(w))
    });
    !fact
        && r.failures
            .iter()
            .filter_map(|id| by_id.get(id))
            .any(|f| crate::engine::infer::bug::probable(f).is_some())
}

/// Something that follows from a cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consequence {
    pub signature: Option<String>,
    pub text: String,
    pub line: usize,
    pub count: usize,
    /// Folded through the cause's `explains:` link (a reverse link).
    pub linked: bool,
}

/// The first failure of a crash attempt, shown beside a consequence cause.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstFailure {
    pub line: usize,
    pub headline: String,
}

/// The first failure of the top cause's attempt when the top cause is a consequence
/// (its signature follows another, or every failure it matched follows another) and
/// no cause explains that first failure.
fn first_failure_hidden(lib: &Library, x: &Extraction, causes: &[Cause]) -> Option<FirstFailure> {
    let top = causes.first()?;
    let sig = lib.signatures.iter().find(|s| s.id == top.signature)?;
    let matched: Vec<&Failure> = x
        .failures
        .iter()
        .filter(|f| top.failures.contains(&f.id))
        .collect();
    let consequence = !sig.consequence_of.is_empty()
        || (!matched.is_empty() && matched.iter().all(|f| f.consequence_of.is_some()));
    if !consequence {
        return None;
    }
    let attempt = matched.first().map_or(1, |f| f.attempt);
    let first = x.first_failure_of(attempt)?;
    // a cause that lists it among its consequences explains it too
    let explained = causes.iter().any(|c| {
        c.failures.contains(&first.id) || c.consequences.iter().any(|k| k.line == first.first.line)
    });
    (!explained).then(|| FirstFailure {
        line: first.first.line,
        headline: first.headline.clone(),
    })
}

/// A `high` top cause is sure of what it names, not that it is the log's failure, when
/// its attempt failed earlier in a way no cause explains: the first failure of that
/// attempt, printed before the top cause's evidence, of a fatal shape (a traceback, an
/// exception, an abort, the OOM killer), matched by no signature (not even a benign one)
/// and following no other. Two independent failures in one log (a download stopped by a
/// quota, then a script missing a module) leave the report unsure which one the reader
/// came for: the top cause is capped at `medium`.
/// Every cause found by a signature layer gets its score's calibrated probability (the
/// layer's shipped fit, [`crate::knowledge::calibrate::shipped_probability`]), from its
/// final score, after every cap. An inferred cause has its own; a library without the
/// embedded model (one of the user's folders alone, which the fit never saw) gives none.
fn attach_probabilities(lib: &Library, causes: &mut [Cause]) {
    if lib.model.is_none() {
        return;
    }
    for c in causes.iter_mut().filter(|c| c.probability.is_none()) {
        c.probability =
            crate::knowledge::calibrate::shipped_probability(c.layer.as_deref(), c.score)
                .map(|p| (p * 100.0).round() / 100.0);
    }
}

/// Whether the first cause follows, in its attempt, a failure of a fatal shape that
/// no signature matched and that is no consequence (an exception, an abort): the attempt
/// failed first in a way no cause explains.
fn after_unexplained_first(x: &Extraction, ranked: &[Ranked], causes: &[Cause]) -> bool {
    use crate::engine::extract::FailureKind;
    let Some(top) = causes.first() else {
        return false;
    };
    let Some(top_line) = top.evidence.iter().map(|e| e.line).min() else {
        return false;
    };
    let attempt = x.attempt_at(top_line);
    let matched = |id: FailureId| ranked.iter().any(|r| r.failures.contains(&id));
    x.first_failure_of(attempt).is_some_and(|f| {
        f.last_line() < top_line
            && f.consequence_of.is_none()
            && !f.consequence_shape
            // a signal is what something else did to the process: no root of its own
            && f.kind.is_fatal()
            && f.kind != FailureKind::Signal
            && !matched(f.id)
            && !top.failures.contains(&f.id)
            && !same_report(f, top_line)
            // a traceback cut off before its exception line names no root
            && !(f.kind == FailureKind::Traceback && f.primary().is_none())
    })
}

/// Failure `f` ends just before the cause's first line: one report's lines the
/// extraction split (the kernel's `oom-kill:constraint=…` line before its `Out of memory:
/// Killed process …`; a traceback's frames pasted on one line, its exception on the next).
fn same_report(f: &Failure, top_line: usize) -> bool {
    const ADJACENT: usize = 3;
    top_line.saturating_sub(f.last_line()) <= ADJACENT
}

/// A `high` first cause after an unexplained first failure ([`after_unexplained_first`])
/// is capped at `medium`: the attempt may have failed for another reason first.
fn cap_after_unexplained_first(lib: &Library, unexplained_first: bool, causes: &mut [Cause]) {
    let Some(top) = causes.first_mut() else {
        return;
    };
    if top.confidence != Confidence::High {
        return;
    }
    if unexplained_first && lib.get(&top.signature).is_some() {
        let score = top.score.min(rank::WEIGHTS.cap_medium);
        top.score = (score * 100.0).round() / 100.0;
        top.confidence = Confidence::of(score);
    }
}

/// A signature that also matches a cause's evidence, less specifically.
#[derive(Debug, Clone, PartialEq)]
pub struct AlsoMatch {
    pub signature: String,
    pub title: String,
    pub category: Category,
    pub score: f64,
}

/// The signatures shown under cause `of` as "also matches", best score first.
fn also_matches(lib: &Library, ranked: &[Ranked], of: SigIndex) -> Vec<AlsoMatch> {
    ranked
        .iter()
        .filter(|o| o.also_of == Some(of))
        .map(|o| {
            let s = &lib.signatures[o.signature];
            AlsoMatch {
                signature: s.id.clone(),
                title: s.title.clone(),
                category: s.category,
                score: (o.score * 100.0).round() / 100.0,
            }
        })
        .collect()
}

/// One probable cause.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    pub rank: usize,
    pub signature: String,
    /// The layer of knowledge that matched when it is not a signature file:
    /// `table:<id>` for an entry of a code table.
    pub layer: Option<String>,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    pub confidence: Confidence,
    pub score: f64,
    pub explain: String,
    /// What the environment facts add to the explanation (`explain_env`).
    pub environment: Vec<String>,
    pub evidence: Vec<EvidenceLine>,
    pub captures: BTreeMap<String, String>,
    pub remediation: Vec<RenderedStep>,
    pub references: Vec<String>,
    pub consequences: Vec<Consequence>,
    /// For a fuzzy match: the similarity to the closest real example.
    pub similarity: Option<f64>,
    /// For a cause found inside a wrapper's message: the wrapper's id.
    pub wrapped_by: Option<String>,
    /// Less specific signatures that rest on the same evidence lines: shown under this
    /// cause, not ranked as causes of their own (their fixes are not printed first).
    pub also_matches: Vec<AlsoMatch>,
    /// The calibrated probability that the cause is right
    /// ([`crate::knowledge::calibrate`]): an inferred cause's from the category model, the
    /// other layers' from their score ([`attach_probabilities`]).
    pub probability: Option<f64>,
    /// For an inferred cause: the model's probability before calibration (what the
    /// knock-out run fits the calibration on; not part of the report).
    pub raw_probability: Option<f64>,
    /// For an inferred cause: the signatures whose words are nearest.
    pub resembles: Vec<crate::engine::infer::Resemblance>,
    /// Crash attempts it was seen in.
    pub attempts: usize,
    /// Streams (workers, ranks, processes) that show it.
    pub streams: Vec<String>,
    pub occurrences: usize,
    pub first: Option<Occurrence>,
    pub crash_site: Option<Site>,
    pub raise_site: Option<Site>,
    pub importing: Option<String>,
    /// Ids of the extracted failures it explains.
    pub failures: Vec<FailureId>,
    /// For each attempt it was seen in: (streams showing it, worker streams in the attempt).
    pub spread: Vec<(usize, usize, usize)>,
}

/// A benign signature's matches: harmless lines that look like errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Noise {
    pub signature: String,
    pub title: String,
    pub count: usize,
    pub evidence: Vec<EvidenceLine>,
}

/// What chose the block a report leads with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrimaryFrom {
    /// The top cause's evidence.
    Cause,
    /// The log's structure: the failing step's first cluster of its strongest error lines
    /// (see [`crate::engine::steps`]).
    Structure,
    /// The first extracted failure of the last crash attempt.
    Failure,
    /// A short paste in which no failure shape was found: all of it
    /// ([`Extraction::paste`]).
    Paste,
}

/// The block a report leads with: what a person reads first, with or without a cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Primary {
    /// 1-based physical input lines, inclusive.
    pub start: usize,
    pub end: usize,
    /// The extracted failure the block's first line belongs to.
    pub failure: Option<FailureId>,
    pub from: PrimaryFrom,
    /// The block's lines the report shows (number, text), at most 60.
    pub lines: Vec<(usize, String)>,
}

/// A failure's lines that fall in `start..=end`.
fn lines_of(f: Option<&Failure>, start: usize, end: usize) -> Vec<(usize, String)> {
    f.map(|f| {
        f.lines
            .iter()
            .filter(|l| (start..=end).contains(&l.line))
            .map(|l| (l.line, l.text.clone()))
            .collect()
    })
    .unwrap_or_default()
}

/// The line a person points at in a failure: the final exception's line (Python prints
/// the traceback before it), else its first line.
fn headline_line(f: &Failure) -> usize {
    f.primary().map_or(f.first_line(), |e| e.line)
}

/// The failure whose lines hold `line`.
fn failure_at(x: &Extraction, line: usize) -> Option<&Failure> {
    x.failures
        .iter()
        .find(|f| f.first_line() <= line && line <= f.last_line())
}

/// The block a report leads with. A confident top cause leads with its evidence unless
/// a CI runner said which step failed and the evidence lies outside that step, or its
/// failure was retried and the structure's block is its last try; otherwise
/// the failing block the structure shows; otherwise the evidence of a signature's (or a
/// code table's) weaker match; otherwise the first failure of the last crash attempt;
/// otherwise, for a short paste in which no failure shape was found, all of it.
fn primary_block(x: &Extraction, causes: &[Cause]) -> Option<Primary> {
    let step = x.failing_block.as_ref();
    let in_step = |line: usize| {
        step.and_then(crate::engine::steps::Block::failed_step)
            .is_none_or(|r| r.contains(&line))
    };
    // an inferred cause is a guess at the category from the failure's words: where the
    // failure is, the structure says
    let top = causes
        .first()
        .filter(|c| c.confidence >= Confidence::Medium && c.layer.as_deref() != Some("inferred"))
        .and_then(|c| c.evidence.first().map(|e| (c, e.line)))
        .filter(|(_, line)| in_step(*line));
    if let Some((c, line)) = top {
        // a failure retried is read at its last try: the structure's block when it starts
        // at a later occurrence of the evidence's failure (a pull retried, then given up)
        let retried = failure_at(x, line).filter(|f| {
            step.is_some_and(|b| b.start > line && f.occurrences.iter().any(|o| o.line == b.start))
        });
        if let (Some(f), Some(b)) = (retried, step) {
            return Some(structure_block(b, Some(f.id)));
        }
        // the evidence inside the structure's block, which starts on a line of another
        // failure or none (a test's record header): the block shows it in its context;
        // a block that starts on the evidence's own failure (`terminate called …` before
        // its `what():`) leads from the evidence's line
        let own = failure_at(x, line).map(|f| f.id);
        if let Some(b) = step.filter(|b| {
            b.start < line && line <= b.end && failure_at(x, b.start).map(|f| f.id) != own
        }) {
            return Some(structure_block(b, failure_at(x, b.start).map(|f| f.id)));
        }
        return Some(cause_block(x, c, line));
    }
    if let Some(b) = step {
        return Some(structure_block(b, failure_at(x, b.start).map(|f| f.id)));
    }
    // no step structure: a signature's (or a code table's) match, even a weak one,
    // names a failure class; the first failure of the last attempt is only a position
    let named = causes
        .first()
        .filter(|c| c.layer.as_deref().is_none_or(|l| l.starts_with("table:")))
        .and_then(|c| c.evidence.first().map(|e| (c, e.line)));
    if let Some((c, line)) = named {
        return Some(cause_block(x, c, line));
    }
    let last_attempt = x.attempts.last().map_or(1, |a| a.index);
    let f = x
        .first_failure_of(last_attempt)
        .or_else(|| x.failures.first());
    match f {
        Some(f) => Some(failure_block(f)),
        None => paste_block(x),
    }
}

/// A short paste in which no failure shape was found: all of it is what a person reads.
fn paste_block(x: &Extraction) -> Option<Primary> {
    let (first, last) = (x.paste.first()?, x.paste.last()?);
    Some(Primary {
        start: first.0,
        end: last.0,
        failure: None,
        from: PrimaryFrom::Paste,
        lines: x.paste.clone(),
    })
}

/// The failing block the log's structure shows ([`crate::engine::steps`]).
fn structure_block(b: &crate::engine::steps::Block, failure: Option<FailureId>) -> Primary {
    Primary {
        start: b.start,
        end: b.end,
        failure,
        from: PrimaryFrom::Structure,
        lines: b.lines.clone(),
    }
}

/// The block of a cause's evidence from its first line: to the end of the failure that
/// line belongs to, or the cause's last evidence line within 60 lines.
fn cause_block(x: &Extraction, c: &Cause, line: usize) -> Primary {
    let f = failure_at(x, line);
    let end = f.map_or(line, |f| f.last_line()).max(
        c.evidence
            .iter()
            .map(|e| e.line)
            .filter(|&l| l <= line + 60)
            .max()
            .unwrap_or(line),
    );
    let mut lines = lines_of(f, line, end);
    for e in c.evidence.iter().filter(|e| (line..=end).contains(&e.line)) {
        if !lines.iter().any(|(n, _)| *n == e.line) {
            lines.push((e.line, e.text.clone()));
        }
    }
    lines.sort_by_key(|(n, _)| *n);
    Primary {
        start: line,
        end,
        failure: f.map(|f| f.id),
        from: PrimaryFrom::Cause,
        lines,
    }
}

/// A failure's block from its headline line to its end.
fn failure_block(f: &Failure) -> Primary {
    let start = headline_line(f);
    let end = f.last_line().max(start);
    Primary {
        start,
        end,
        failure: Some(f.id),
        from: PrimaryFrom::Failure,
        lines: lines_of(Some(f), start, end),
    }
}

/// The diagnosis of one input.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub input: String,
    pub lines: usize,
    pub causes: Vec<Cause>,
    /// The block the report leads with ([`Primary`]).
    pub primary: Option<Primary>,
    pub noise: Vec<Noise>,
    /// When no cause was found: the first failure's final exception (or line).
    pub unexplained: Option<String>,
    /// When the top cause is a consequence (a failure that follows another) and the
    /// first failure of its crash attempt is explained by no cause: that failure, so a
    /// consequence never hides it.
    pub first_failure: Option<FirstFailure>,
    pub unit: Option<String>,
    pub attempts: Vec<Attempt>,
    pub failures: Vec<Failure>,
    /// Streams whose open block was closed early by the cap on open streams.
    pub evicted_streams: usize,
    /// Distinct failures counted but not kept (past the count or byte cap of the store).
    pub dropped_failures: usize,
    /// The environment facts used (from `--env` files and reports inside the log).
    pub environment: crate::env::Facts,
    /// Compatibility rules the environment breaks (see `crate::knowledge::rules`).
    pub findings: Vec<crate::engine::findings::Finding>,
}

/// Knobs for building a diagnosis.
#[derive(Debug, Clone, Copy)]
pub struct BuildOptions {
    /// Causes kept.
    pub top: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { top: 3 }
    }
}

/// The unit a cause's commands name: the unit whose process wrote its failures (all
/// of them in one unit), else the unit of a captured `pid` (the OOM killer's victim),
/// else the one unit of the failures that follow from it (the wrapper that saw its
/// child killed). `None` when the log does not establish it: never the first unit a
/// journal names.
fn cause_unit(
    x: &Extraction,
    by_id: &BTreeMap<FailureId, &Failure>,
    r: &Ranked,
    following: &[FailureId],
) -> Option<String> {
    let own = r.failures.iter().filter_map(|id| by_id.get(id).copied());
    let u = match one_unit(own) {
        Ok(Some(u)) => u,
        Ok(None) => {
            let pid = r.captures.get("pid").and_then(|p| p.parse::<u32>().ok());
            match pid.and_then(|p| x.pid_units.get(&p)) {
                Some(u) => u.as_str(),
                None => {
                    one_unit(following.iter().filter_map(|id| by_id.get(id).copied())).ok()??
                }
            }
        }
        Err(()) => return None,
    };
    Some(u.strip_suffix(".service").unwrap_or(u).to_string())
}

/// The unit of these failures: `Ok(None)` when none has one, `Err` when they disagree.
fn one_unit<'a>(fs: impl Iterator<Item = &'a Failure>) -> Result<Option<&'a str>, ()> {
    let mut units = fs.filter_map(|f| f.unit.as_deref());
    match units.next() {
        Some(u) if units.all(|v| v == u) => Ok(Some(u)),
        Some(_) => Err(()),
        None => Ok(None),
    }
}

impl Diagnosis {
    pub fn build(
        input: &str,
        lib: &Library,
        x: Extraction,
        ranked: Vec<Ranked>,
        opts: BuildOptions,
    ) -> Diagnosis {
        Diagnosis::build_with_facts(input, lib, x, ranked, opts, crate::env::Facts::default())
    }

    /// [`Diagnosis::build`] with environment facts: they fill `{{env.…}}`, add the
    /// `explain_env` sentences that hold and choose among `if:` remediation steps.
    /// Ordering, consequence folding and remediation filling happen here, before any
    /// renderer sees the result.
    pub fn build_with_facts(
        input: &str,
        lib: &Library,
        x: Extraction,
        mut ranked: Vec<Ranked>,
        opts: BuildOptions,
        facts: crate::env::Facts,
    ) -> Diagnosis {
        rank::order(lib, &x, &mut ranked);
        let by_id: BTreeMap<FailureId, &Failure> = x.failures.iter().map(|f| (f.id, f)).collect();
        let demoted = ranked
            .iter()
            .filter(|r| bug_without_environment(lib, &by_id, r))
            .map(|r| r.signature)
            .collect();
        let cx = Assembly {
            lib,
            x: &x,
            ranked: &ranked,
            by_id,
            facts: &facts,
            demoted,
        };
        let mut noise = Vec::new();
        let mut causes: Vec<Cause> = Vec::new();
        for r in ranked.iter() {
            let sig = &lib.signatures[r.signature];
            if sig.severity == Severity::Benign {
                noise.push(Noise {
                    signature: sig.id.clone(),
                    title: sig.title.clone(),
                    count: r.occurrences,
                    evidence: r.evidence.iter().take(3).cloned().collect(),
                });
                continue;
            }
            if r.folded_under.is_some() || r.also_of.is_some() || causes.len() >= opts.top {
                continue;
            }
            causes.push(cx.cause(r, causes.len() + 1));
        }
        let unexplained_first = after_unexplained_first(&x, &ranked, &causes);
        cx.add_inferred(&mut causes, opts.top, unexplained_first);
        cap_after_unexplained_first(lib, unexplained_first, &mut causes);
        attach_probabilities(lib, &mut causes);
        noise.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
        let unexplained = if causes.is_empty() {
            x.failures
                .iter()
                .find(|f| f.first_in_attempt)
                .or_else(|| x.failures.first())
                .map(|f| f.headline.clone())
        } else {
            None
        };
        let first_failure = first_failure_hidden(lib, &x, &causes);
        let primary = primary_block(&x, &causes);
        Diagnosis {
            input: input.to_string(),
            lines: x.lines,
            causes,
            primary,
            noise,
            unexplained,
            first_failure,
            unit: x.unit.clone(),
            attempts: x.attempts,
            failures: x.failures,
            evicted_streams: x.evicted_streams,
            dropped_failures: x.dropped_failures,
            environment: facts,
            findings: Vec::new(),
        }
    }

    /// Exit status: 0 when a cause was found, 1 when none (an inferred category alone is
    /// no known cause).
    pub fn found(&self) -> bool {
        self.causes
            .iter()
            .any(|c| c.layer.as_deref() != Some("inferred"))
    }
}

/// A signature whose cause is elsewhere: a wrapper of no category of its own
/// ([`Assembly::wraps`]), or one whose message carries an inner error (`wraps:`, as a
/// watchdog's "terminated with exception: <inner>"), whose own category is only a
/// fallback for an inner error nothing names. A failure only such signatures matched is
/// still unexplained: its root is in its own lines, unnamed. (A consequence with a
/// category of its own, such as an exit code 137, is a cause when its root is absent.)
fn wrapper(sig: &crate::knowledge::signature::Signature) -> bool {
    sig.wraps.is_some() || (sig.category == Category::Other && !sig.consequence_of.is_empty())
}

/// What assembling the causes of one diagnosis reads.
struct Assembly<'a> {
    lib: &'a Library,
    x: &'a Extraction,
    ranked: &'a [Ranked],
    by_id: BTreeMap<FailureId, &'a Failure>,
    facts: &'a crate::env::Facts,
    /// The environment signatures a bug-shaped failure demotes to `low`
    /// ([`bug_without_environment`]), read once for the cause and for inference.
    demoted: std::collections::BTreeSet<SigIndex>,
}

impl Assembly<'_> {
    /// One cause, its remediation filled and its consequences folded under it.
    fn cause(&self, r: &Ranked, rank: usize) -> Cause {
        let sig = &self.lib.signatures[r.signature];
        let first_failure = r
            .failures
            .iter()
            .filter_map(|id| self.by_id.get(id))
            .min_by_key(|f| f.first.line);
        // the unit of a command is the unit whose process produced this cause's
        // evidence (or its consequences'), never merely the first unit of the log
        let following: Vec<FailureId> = self
            .ranked
            .iter()
            .filter(|c| c.folded_under == Some(r.signature))
            .flat_map(|c| c.failures.iter().copied())
            .chain(
                self.x
                    .failures
                    .iter()
                    .filter(|f| f.consequence_of.is_some_and(|c| r.failures.contains(&c)))
                    .map(|f| f.id),
            )
            .collect();
        let unit = cause_unit(self.x, &self.by_id, r, &following);
        let remediation = render_steps(
            sig,
            &r.captures,
            &sig.capture_patterns,
            unit.as_deref(),
            self.facts,
        );
        let layer = crate::engine::rank::layers::describe(self.lib, r);
        let score = if self.demoted.contains(&r.signature) {
            r.score.min(rank::WEIGHTS.cap_low)
        } else {
            r.score
        };
        Cause {
            rank,
            signature: sig.id.clone(),
            layer: layer.layer,
            similarity: layer.similarity,
            wrapped_by: layer.wrapped_by,
            title: fill(&sig.title, &r.captures),
            category: sig.category,
            severity: sig.severity,
            confidence: Confidence::of(score),
            score: (score * 100.0).round() / 100.0,
            explain: fill(&sig.prose.explain, &r.captures),
            environment: self.environment(sig),
            evidence: r.evidence.clone(),
            captures: r.captures.clone(),
            remediation,
            references: sig.prose.references.clone(),
            consequences: self.consequences(r),
            also_matches: also_matches(self.lib, self.ranked, r.signature),
            probability: None,
            raw_probability: None,
            resembles: Vec::new(),
            attempts: r.attempts.len(),
            streams: r.streams.clone(),
            occurrences: r.occurrences,
            first: first_failure.map(|f| f.first.clone()),
            crash_site: first_failure.and_then(|f| f.crash_site.clone()),
            raise_site: first_failure.and_then(|f| f.raise_site.clone()),
            importing: first_failure.and_then(|f| f.importing.clone()),
            failures: r.failures.clone(),
            spread: self.spread(r),
        }
    }

    /// A cause that only says a root failed elsewhere ("see the root cause above"): a
    /// wrapper signature (`consequence_of`) of no category of its own.
    fn wraps(&self, c: &Cause) -> bool {
        c.category == Category::Other
            && self
                .lib
                .get(&c.signature)
                .is_some_and(|s| !s.consequence_of.is_empty())
    }

    /// [`wrapper`] of a cause.
    fn wrapper_cause(&self, c: &Cause) -> bool {
        self.lib.get(&c.signature).is_some_and(wrapper)
    }

    /// Adds the inferred cause of a failure nothing explains, when the causes found say
    /// little: every one is `low` (a consequence, a structural fallback) or a wrapper, or
    /// the first is a wrapper ([`wrapper`]: its root is not among the causes).
    /// A failure only wrappers matched counts as unexplained (a root in a wrapper's own
    /// traceback, the inner error of a watchdog's exception). It goes
    /// first when `medium` and earliest (a root, not what followed a cause found); else
    /// before the first wrapper (which points at a root elsewhere: this is that root's
    /// category) when `medium`, printed before it or in its own lines; before a `low` cause
    /// printed before the step a CI runner said failed, when it reads that step; else last.
    fn add_inferred(&self, causes: &mut Vec<Cause>, top: usize, unexplained_first: bool) {
        let say_little = causes
            .iter()
            .all(|c| c.confidence == Confidence::Low || self.wraps(c));
        let wrapper_first = causes.first().is_some_and(|c| self.wrapper_cause(c));
        if !say_little && !wrapper_first && !unexplained_first {
            return;
        }
        // failures a signature matched (a benign one, a consequence folded under another)
        // are not what nothing explains, unless only wrappers matched them — and a
        // wrapper a benign marker explains (the spurious EngineDeadError of a requested
        // shutdown's teardown) explains its failure: a healthy run's shutdown, buried in
        // a longer log, was read as the unexplained failure instead of the real one; and an
        // environment match that a bug-shaped failure demoted ([`bug_without_environment`])
        // leaves its failure to the structure's reading
        let teardown = |r: &Ranked| {
            r.folded_under
                .is_some_and(|c| self.lib.signatures[c].severity == Severity::Benign)
        };
        let explained: Vec<FailureId> = self
            .ranked
            .iter()
            .filter(|r| !wrapper(&self.lib.signatures[r.signature]) || teardown(r))
            .filter(|r| !self.demoted.contains(&r.signature))
            .flat_map(|r| r.failures.iter().copied())
            .collect();
        let Some(i) = crate::engine::infer::infer(self.lib, self.x, &explained) else {
            return;
        };
        // read only for the earlier failure the first cause follows: a reading of the
        // first cause's own category adds nothing to it, nor one the model is not sure of
        let only_earlier = !say_little && !wrapper_first;
        if only_earlier
            && (i.confidence != Confidence::Medium
                || causes.first().is_some_and(|c| c.category == i.category))
        {
            return;
        }
        let inferred = self.inferred(&i);
        let at = self.inferred_position(causes, &inferred, &i);
        causes.insert(at, inferred);
        causes.truncate(top);
        for (n, c) in causes.iter_mut().enumerate() {
            c.rank = n + 1;
        }
    }

    /// Where the inferred cause `inferred` (of inference `i`) goes among `causes`
    /// ([`Assembly::add_inferred`]).
    fn inferred_position(
        &self,
        causes: &[Cause],
        inferred: &Cause,
        i: &crate::engine::infer::Inference,
    ) -> usize {
        let first_line = |c: &Cause| c.first.as_ref().map_or(usize::MAX, |o| o.line);
        let before = |c: &Cause| first_line(inferred) < first_line(c);
        // a later `low` cause of the same attempt whose category the inferred one's
        // explains (the category link table: a GPU fault before the MMU fault it caused),
        // when the inferred reading scores at least as high as the cause it goes before
        let printed = |c: &Cause| {
            c.first
                .as_ref()
                .map(|o| o.line)
                .or_else(|| c.evidence.iter().map(|e| e.line).min())
                .unwrap_or(usize::MAX)
        };
        let explained_by = |c: &Cause| {
            printed(inferred) < printed(c)
                && c.confidence == Confidence::Low
                && inferred.score >= c.score
                && self.x.attempt_at(printed(inferred)) == self.x.attempt_at(printed(c))
                && crate::knowledge::links::explains(i.category, c.category)
        };
        // a `low` cause printed before the step a CI runner said failed, when the inferred
        // reading is of that step: the runner says where the run stopped (a routine `command
        // not found` of the runner's own setup resembled a signature weakly); what the
        // runner prints at the step's end (its exit status) is the step's own
        let failed_step = self
            .x
            .failing_block
            .as_ref()
            .and_then(crate::engine::steps::Block::failed_step);
        let before_failed_step = |c: &Cause| {
            failed_step.as_ref().is_some_and(|step| {
                step.contains(&printed(inferred))
                    && printed(c) < *step.start()
                    && c.confidence == Confidence::Low
            })
        };
        if i.confidence == Confidence::Medium && causes.iter().all(before) {
            0
        } else {
            causes
                .iter()
                .position(|c| {
                    (self.wrapper_cause(c)
                        && (i.confidence == Confidence::Medium
                            || before(c)
                            || i.failure.is_some_and(|f| c.failures.contains(&f))))
                        || explained_by(c)
                        || before_failed_step(c)
                })
                .unwrap_or(causes.len())
        }
    }

    /// The cause a category inference gives ([`crate::engine::infer`]): the category's
    /// guide as its explanation and checks; for a probable bug, what its structure says
    /// first ([`bug_steps`]).
    fn inferred(&self, i: &crate::engine::infer::Inference) -> Cause {
        let guide = self.lib.guide(i.category);
        let f = i.failure.and_then(|id| self.by_id.get(&id));
        let what = guide.map_or_else(|| i.category.as_str().to_string(), |g| g.title.clone());
        let (none, no_patterns) = (BTreeMap::new(), BTreeMap::new());
        let mut remediation = guide.map_or_else(Vec::new, |g| {
            render_step_list(&g.checks, &none, &no_patterns, None, self.facts)
        });
        let mut references = guide.map(|g| g.references.clone()).unwrap_or_default();
        let mut explain = guide.map(|g| g.explain.clone()).unwrap_or_default();
        let mut title =
            format!("probably {what} (inferred from the failure's words; no signature matches)");
        let mut score = i.probability.min(crate::engine::infer::MAX_SCORE);
        if let Some(b) = &i.bug {
            title = b.title();
            explain = format!("{} {explain}", b.explain());
            score = crate::engine::infer::BUG_SCORE;
            let mut steps = bug_steps(b);
            steps.append(&mut remediation);
            remediation = steps;
            references.splice(0..0, b.search_url());
        }
        Cause {
            rank: 1,
            signature: format!("inferred:{}", i.category.as_str()),
            layer: Some("inferred".to_string()),
            title,
            category: i.category,
            severity: Severity::Error,
            confidence: i.confidence,
            score: (score * 100.0).round() / 100.0,
            explain,
            environment: Vec::new(),
            evidence: i.evidence.clone(),
            captures: BTreeMap::new(),
            remediation,
            references,
            consequences: Vec::new(),
            similarity: None,
            wrapped_by: None,
            also_matches: Vec::new(),
            probability: i
                .bug
                .is_none()
                .then(|| (i.probability * 100.0).round() / 100.0),
            raw_probability: i.bug.is_none().then_some(i.raw),
            resembles: i.resembles.clone(),
            attempts: usize::from(f.is_some()),
            streams: f.map(|f| f.streams.clone()).unwrap_or_default(),
            occurrences: f.map_or(0, |f| f.count),
            first: f.map(|f| f.first.clone()),
            crash_site: f.and_then(|f| f.crash_site.clone()),
            raise_site: f.and_then(|f| f.raise_site.clone()),
            importing: f.and_then(|f| f.importing.clone()),
            failures: i.failure.into_iter().collect(),
            spread: Vec::new(),
        }
    }

    /// Per attempt: the streams the cause shows in and the attempt's workers.
    fn spread(&self, r: &Ranked) -> Vec<(usize, usize, usize)> {
        let mut spread = Vec::new();
        for a in &r.attempts {
            let streams: usize = r
                .failures
                .iter()
                .filter_map(|id| self.by_id.get(id))
                .filter(|f| f.attempt == *a)
                .map(|f| f.streams.len())
                .max()
                .unwrap_or(0);
            let workers = self
                .x
                .attempts
                .iter()
                .find(|t| t.index == *a)
                .map_or(0, |t| t.workers);
            spread.push((*a, streams, workers));
        }
        spread
    }

    /// The `explain_env` sentences whose condition holds on the facts, filled.
    fn environment(&self, sig: &crate::knowledge::signature::Signature) -> Vec<String> {
        sig.prose
            .explain_env
            .iter()
            .filter(|(c, _)| {
                c.as_ref()
                    .is_none_or(|c| crate::env::eval::eval(c, self.facts, &mut Vec::new()).holds())
            })
            .filter_map(|(_, t)| crate::env::vars::fill_prose(t, self.facts))
            .collect()
    }

    /// Signatures folded under this cause, then the failures linked to it that no
    /// other cause explains; in line order.
    fn consequences(&self, r: &Ranked) -> Vec<Consequence> {
        let mut consequences = Vec::new();
        for c in self
            .ranked
            .iter()
            .filter(|c| c.folded_under == Some(r.signature))
        {
            let cs = &self.lib.signatures[c.signature];
            let text = c.evidence.first().map_or(cs.title.clone(), |e| {
                by_line_headline(self.x, e.line).unwrap_or_else(|| e.text.clone())
            });
            consequences.push(Consequence {
                signature: Some(cs.id.clone()),
                text,
                line: c.first_line,
                count: c.occurrences,
                linked: c.linked,
            });
        }
        let explained: std::collections::BTreeSet<FailureId> = self
            .ranked
            .iter()
            .filter(|o| self.lib.signatures[o.signature].severity != Severity::Benign)
            .flat_map(|o| o.failures.iter().copied())
            .collect();
        for f in &self.x.failures {
            if f.consequence_of
                .is_some_and(|root| r.failures.contains(&root))
                && !explained.contains(&f.id)
            {
                consequences.push(Consequence {
                    signature: None,
                    text: f.headline.clone(),
                    line: f.first.line,
                    count: f.count,
                    linked: false,
                });
            }
        }
        consequences.sort_by_key(|c| c.line);
        consequences
    }
}

fn by_line_headline(x: &Extraction, line: usize) -> Option<String> {
    x.failures
        .iter()
        .find(|f| f.lines.iter().any(|l| l.line == line))
        .map(|f| f.headline.clone())
}

/// The steps of a signature for these facts: a step whose `if` is false is left out; one
/// whose `if` is true fits and moves first (the order among fitting steps is kept).
fn render_steps(
    sig: &crate::knowledge::signature::Signature,
    captures: &BTreeMap<String, String>,
    patterns: &BTreeMap<String, LazyRegex>,
    unit: Option<&str>,
    facts: &crate::env::Facts,
) -> Vec<RenderedStep> {
    render_step_list(&sig.prose.remediation, captures, patterns, unit, facts)
}

/// A probable bug's steps ([`crate::engine::infer::bug::Bug::steps`]) as rendered steps:
/// a command holds a package's import name only (letters, digits, `_`), printed as is.
fn bug_steps(b: &crate::engine::infer::bug::Bug) -> Vec<RenderedStep> {
    b.steps()
        .into_iter()
        .map(|(description, command)| RenderedStep {
            description,
            written: command.as_ref().map(|_| "pip show <package>".to_string()),
            command,
            when: None,
            note: None,
            template: None,
            fits: false,
        })
        .collect()
}
