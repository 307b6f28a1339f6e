//! Inference: a category for a failure no signature explains (layer `inferred`).
//!
//! When nothing in the library matches, the report used to say "no known cause". Yet a
//! person reading the failure knows its class from the words: the category model
//! ([`crate::knowledge::model`], trained at build time, frozen with the library) reads
//! the failure's lines and gives each category a probability and the nearest signatures.
//! The engine turns that into one cause: the category, its probability, the two or three
//! signatures it resembles, and the category's guide (explain and read-only checks,
//! [`crate::knowledge::signature::guide`]).
//!
//! It says less than a signature: an inferred cause is never `high` (capped at
//! [`MAX_SCORE`]) and is `medium` only from [`MEDIUM_FROM`] — a probability calibrated
//! on the knock-out run (`crashdoc corpus run --knockout`, [`crate::knowledge::calibrate`]),
//! so 0.7 means right about 7 times in 10 on incidents the model never saw — and only
//! when it reads an exception or a fatal shape;
//! below it, or from an error line, `low`. It never makes the exit status 0 alone (no
//! known cause). A failure the model finds most like the
//! routine lines of benign signatures gets nothing (it is no cause), nor does one whose
//! words the model never saw.
//!
//! When: no cause was found, or every cause found is `low` (a consequence, a structural
//! fallback) and some failure is left unexplained; the inferred cause then ranks first
//! when it is `medium`, last when `low`. Which failure: of those no cause explains, one
//! in the failing block the log's structure shows ([`crate::engine::steps`]) first, then
//! an exception or fatal signal before an error line before a systemd exit, the first of
//! an attempt first; the model reads its lines and the block's. With no such failure, a
//! short paste (a message pasted alone, [`Extraction::paste`]) is read whole, at `low`,
//! when the model is sure of its class (on the knock-out run: no cause 20 → 16, top-1
//! 275 → 279 of 415). A log a signature explains with confidence costs nothing more.
//!
//! A probable bug ([`bug`]): when the failure's structure says the software itself
//! failed (a `NotImplementedError`, a bare assertion inside an installed package, a package
//! that cannot import from its own modules) and the model is not at `medium`, the cause
//! is category `other` at `low`, named after the package and the function, with the query
//! for the package's issues — not a guess of an environment class from words it lacks.

pub mod bug;

use crate::engine::extract::{shapes, Extraction, Failure, FailureId, FailureKind};
use crate::engine::normalize::{normalize_text, Level};
use crate::engine::rank::{Confidence, EvidenceLine};
use crate::engine::steps::Block;
use crate::knowledge::model::{Model, Prediction, BENIGN};
use crate::knowledge::signature::{Category, Library};

/// The highest score of an inferred cause (`high` starts at 0.75).
pub const MAX_SCORE: f64 = 0.74;
/// The calibrated probability from which an inferred cause is `medium`: what `medium`
/// means everywhere (right at least 70 % of the time). The probability is the model's,
/// mapped through the Platt fit of the knock-out run ([`crate::knowledge::calibrate`]).
pub const MEDIUM_FROM: f64 = 0.7;
/// The score of a probable bug ([`bug`]): `low` (below 0.5), as a fallback's.
pub const BUG_SCORE: f64 = 0.45;
/// Signatures named as the nearest.
pub const NEAREST: usize = 3;
/// A nearest signature less similar than this is not named.
pub const NEAREST_MIN: f64 = 0.15;

/// A signature the failure resembles.
#[derive(Debug, Clone, PartialEq)]
pub struct Resemblance {
    pub signature: String,
    pub title: String,
    /// Cosine similarity of the words (0–1).
    pub similarity: f64,
}

/// What the model infers of a failure (or, for a probable bug, what its structure says).
#[derive(Debug, Clone, PartialEq)]
pub struct Inference {
    pub category: Category,
    /// Calibrated: the share of such inferences that were right on held-out incidents.
    pub probability: f64,
    /// The model's own probability, before calibration (what the calibration is fitted on).
    pub raw: f64,
    pub confidence: Confidence,
    pub resembles: Vec<Resemblance>,
    /// The failure read; none for a short paste read whole ([`Extraction::paste`]).
    pub failure: Option<FailureId>,
    pub evidence: Vec<EvidenceLine>,
    /// The failure's structure says a bug in the software ([`bug`]): category `other`,
    /// `low`, and no probability of the model (`probability` and `raw` are 0).
    pub bug: Option<bug::Bug>,
}

/// How telling a failure's shape is: an exception or a fatal signal (`Some(0)`); a line
/// of a CUDA or NCCL error or an error line (`Some(1)`), which a healthy run prints too
/// (NCCL's `WARN` level, a routine `ERROR`): read only when the run ends soon after
/// ([`terminal`]) and never more than `low`; never systemd lines nor a logger's warnings
/// (on the corpus's healthy logs those gave most of the spurious inferred causes) — a
/// Python warning at the end of a run is read, last ([`python_warning`]).
fn shape_rank(k: FailureKind) -> Option<u8> {
    // Every kind is named, so a new one is placed here deliberately (`is_fatal` agrees:
    // a test checks the two).
    match k {
        FailureKind::Traceback
        | FailureKind::Exception
        | FailureKind::Abort
        | FailureKind::Signal
        | FailureKind::OomKill => Some(0),
        FailureKind::CudaError | FailureKind::Nccl | FailureKind::ErrorLine => Some(1),
        FailureKind::Systemd | FailureKind::Warning | FailureKind::Line => None,
    }
}

/// Lines after an error line within which its attempt ends for it to be what stopped the
/// run (a healthy server prints routine error lines and goes on for long after).
pub const TERMINAL_LINES: usize = 30;

/// The run ended soon after this failure: its attempt's last line is close to the
/// failure's last line or, when every stream (rank, worker) printed it once, to its last
/// occurrence: each rank of a job reporting the same error in turn, each with its stack,
/// is the end of the run, not a run going on. A line one stream repeats is not read so
/// (a healthy server's routine error line recurs to its last line).
fn terminal(x: &Extraction, f: &Failure) -> bool {
    let once_per_stream = f.streams.len() > 1 && f.count == f.streams.len();
    let mut last = f.last_line();
    if once_per_stream {
        last = f.occurrences.iter().map(|o| o.line).fold(last, usize::max);
    }
    x.attempts
        .iter()
        .find(|a| a.index == f.attempt)
        .is_some_and(|a| a.last_line.saturating_sub(last) <= TERMINAL_LINES)
}

/// A line whose own level is INFO or DEBUG (`NCCL INFO … abortFlag 0`) holds an error
/// word, not an error: the program says it is fine. A level the log's prefix did not
/// carry is read from the line's first level word (`NCCL INFO`, `[DEBUG]`, logfmt's
/// `level=info`; `NCCL_DEBUG=INFO` is a setting, not a level) — but for the kernel's
/// reports, whose `INFO:` is a word of the message ([`shapes::kernel_report`]).
fn informational(f: &Failure) -> bool {
    if let Some(l) = f.level {
        return matches!(l, Level::Info | Level::Debug);
    }
    if shapes::kernel_report(&f.headline) {
        return false;
    }
    f.headline
        .split(|c: char| c.is_whitespace() || "[]():|".contains(c))
        .filter_map(|w| {
            let logfmt = w.strip_prefix("level=").or_else(|| w.strip_prefix("lvl="));
            let w = logfmt.map_or_else(|| w.to_string(), str::to_ascii_uppercase);
            let level = matches!(
                w.as_str(),
                "INFO" | "DEBUG" | "TRACE" | "WARN" | "WARNING" | "ERROR" | "FATAL" | "CRITICAL"
            );
            level.then_some(w)
        })
        .next()
        .is_some_and(|w| matches!(w.as_str(), "INFO" | "DEBUG" | "TRACE"))
}

/// A warning Python's `warnings` module printed (`file.py:N: UserWarning: …`), not a
/// logger's WARNING line: read only when the run ends soon after it (a pasted warning
/// that names the fault — a driver too old, NumPy's API version — and nothing after),
/// at the lowest rank. A logger's warnings near a healthy run's end ("force killing
/// remaining processes", "may waste KV cache memory") gave healthy logs causes.
fn python_warning(f: &Failure) -> bool {
    f.kind == FailureKind::Warning
        && f.lines
            .first()
            .is_some_and(|l| shapes::python_warning(&l.message).is_some())
}

/// A one-line failure that is only a label for what follows (NCCL's `Last error:` before
/// the failing call): its words say nothing of the class; the line after it does.
fn label(f: &Failure) -> bool {
    let h = f.headline.trim();
    f.lines.len() <= 1 && h.ends_with(':') && h.split_whitespace().count() <= 3
}

/// A person stopping the program is no failure.
fn interrupted(f: &Failure) -> bool {
    f.primary()
        .is_some_and(|e| e.exception_type.ends_with("KeyboardInterrupt"))
}

/// The failing block the log's structure shows ([`crate::engine::steps`]: the error
/// block before the failing step's end or the crash), when `f` has lines in it.
fn block_of<'x>(x: &'x Extraction, f: &Failure) -> Option<&'x Block> {
    x.failing_block
        .as_ref()
        .filter(|b| f.first_line() <= b.end && b.start <= f.last_line())
}

/// `f` lies in the failing block of a step a CI runner said failed (`The command "…"
/// exited with 1.`, `Process completed with exit code 1.`): the runner, not the distance
/// to the log's end, says the run stopped there. A build's error lines are often followed
/// by the wrappers' summaries and the runner's cleanup, further than [`TERMINAL_LINES`].
fn in_failed_step(x: &Extraction, f: &Failure) -> bool {
    block_of(x, f).is_some_and(|b| b.failed_step().is_some())
}

/// The failure inference reads: of those no signature matched and that are not a
/// consequence, one in the failing block the structure shows first (what a person reads
/// first is what the model should read), then the most telling shape, the first failure
/// of an attempt first, then the earliest. With [`text`] reading the block too, the
/// knock-out run's top-1 went from 259 to 267 of 415.
fn target<'x>(x: &'x Extraction, explained: &[FailureId]) -> Option<&'x Failure> {
    x.failures
        .iter()
        .filter(|f| {
            !explained.contains(&f.id) && !f.consequence_shape && !interrupted(f) && !label(f)
        })
        .filter_map(|f| match shape_rank(f.kind) {
            Some(0) => Some((0, f)),
            Some(r) if (terminal(x, f) || in_failed_step(x, f)) && !informational(f) => {
                Some((r, f))
            }
            None if terminal(x, f) && python_warning(f) => Some((2, f)),
            _ => None,
        })
        .min_by_key(|(r, f)| {
            (
                block_of(x, f).is_none(),
                *r,
                !(f.first_in_attempt && f.consequence_of.is_none()),
                f.id,
            )
        })
        .map(|(_, f)| f)
}

/// The failure's text as the model reads it: its lines' messages, the log's prefixes
/// (timestamps, journald, process tags) peeled, so that how the log was captured does not
/// change what it says; then, when the failure lies in the failing block the structure
/// shows, that block's lines, peeled the same way (the context a step's error block
/// carries: the command that failed, the lines before the exit).
fn text(x: &Extraction, f: &Failure) -> String {
    let mut s = String::new();
    for l in &f.lines {
        s.push_str(if l.message.is_empty() {
            &l.text
        } else {
            &l.message
        });
        s.push('\n');
    }
    if s.is_empty() {
        s.push_str(&f.headline);
    }
    // peeled as the failure's own lines are (a journald or kubectl prefix is not a word of
    // the failure)
    push_peeled(
        &mut s,
        block_of(x, f)
            .map(|b| b.lines.as_slice())
            .unwrap_or_default(),
    );
    s
}

/// Appends each line's message, the log's prefixes peeled, one per line.
fn push_peeled(s: &mut String, lines: &[(usize, String)]) {
    for (number, line) in lines {
        let record = normalize_text(*number, line);
        s.push_str(&record.message);
        s.push('\n');
    }
}

/// The line that names the failure, which the model weighs most: the primary exception's
/// `Type: message`, else the failure's headline — none when a traceback was cut off
/// before its exception line (its headline then says so, in crashdoc's words).
fn focus(f: &Failure) -> Option<String> {
    match f.primary().filter(|e| !e.exception_type.is_empty()) {
        Some(e) => Some(e.headline()),
        None if f.kind == FailureKind::Traceback => None,
        None => Some(f.headline.clone()),
    }
}

/// The line a person reads first: the primary exception's, else the failure's first —
/// preceded, for an error line inside the failing block the structure shows that starts
/// before it, by the block's first line: the model read the block, and an error line
/// there is as often the wrappers' summary (`npm ERR! Test failed.`, `make: *** [test]
/// Error 1`) as the failure, which the block starts at.
fn evidence(x: &Extraction, f: &Failure) -> Vec<EvidenceLine> {
    let line = f.primary().map_or(f.first.line, |e| e.line);
    let text = f
        .lines
        .iter()
        .find(|l| l.line == line)
        .map_or_else(|| f.headline.clone(), |l| l.text.clone());
    let own = EvidenceLine {
        line,
        text,
        stream: f.first.stream.clone(),
    };
    let lead = block_of(x, f)
        .filter(|b| shape_rank(f.kind) == Some(1) && b.start < line)
        .and_then(|b| b.lines.iter().find(|(n, _)| *n == b.start))
        .map(|(n, t)| EvidenceLine {
            line: *n,
            text: t.clone(),
            stream: f.first.stream.clone(),
        });
    lead.into_iter().chain(std::iter::once(own)).collect()
}

/// The inferred cause of a failure of `x` that no cause explains (`explained`: the
/// failures the causes found explain), if the model has one.
pub fn infer(lib: &Library, x: &Extraction, explained: &[FailureId]) -> Option<Inference> {
    lib.model.as_ref()?;
    let chosen = target(x, explained);
    if let Some(b) = wordless_block(x, chosen) {
        // the report shows the block whether or not the model is sure of its class
        return words_alone(lib, &b.lines, false);
    }
    let Some(f) = chosen else {
        return paste(lib, x);
    };
    // thawed only now: a log whose failures signatures explain never reads the model
    let model = lib.model.as_ref()?.get()?;
    let p = model.predict(&text(x, f), focus(f).as_deref(), NEAREST);
    let guess = p.as_ref().and_then(|p| guess(lib, &model, x, f, p));
    // a structure that says the software failed (a bare NotImplementedError has no words
    // to read) outweighs a guess the model is not sure of
    match bug::probable(f) {
        Some(b)
            if guess
                .as_ref()
                .is_none_or(|g| g.confidence != Confidence::Medium) =>
        {
            Some(Inference {
                category: Category::Other,
                probability: 0.0,
                raw: 0.0,
                confidence: Confidence::Low,
                resembles: p.map(|p| resembles(lib, &p)).unwrap_or_default(),
                failure: Some(f.id),
                evidence: evidence(x, f),
                bug: Some(b),
            })
        }
        _ => guess,
    }
}

/// The model's reading of failure `f`: a routine line's words on an error line give no
/// cause; on an exception (a healthy run does not end in one), the likeliest failure
/// class, at what the model gives it.
fn guess(
    lib: &Library,
    model: &Model,
    x: &Extraction,
    f: &Failure,
    p: &Prediction,
) -> Option<Inference> {
    let exception = shape_rank(f.kind) == Some(0);
    let (category, raw) = class(p, exception)?;
    let probability = model.calibrated(raw);
    // an error line is a weaker witness than an exception: a healthy run prints some
    let confidence = if probability >= MEDIUM_FROM && exception {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    Some(Inference {
        category,
        probability,
        raw,
        confidence,
        resembles: resembles(lib, p),
        failure: Some(f.id),
        evidence: evidence(x, f),
        bug: None,
    })
}

/// The likeliest failure class of a prediction: none when it is the routine lines'
/// (benign), unless the failure is an exception (a healthy run does not end in one).
fn class(p: &Prediction, exception: bool) -> Option<(Category, f64)> {
    let (class, raw) = p
        .classes
        .iter()
        .map(|(c, p)| (c.as_str(), *p))
        .find(|(c, _)| *c != BENIGN || !exception)?;
    if class == BENIGN {
        return None;
    }
    Some((Category::parse(class)?, raw))
}

/// A short paste in which no failure shape was found (none, or only warnings, systemd
/// or plain lines), and that no signature explains (a message pasted alone: `unknown
/// model architecture: 'granite'`, a scheduler's `Reason=…` field): the model reads it
/// whole, and names a class only from calibrated probability [`MEDIUM_FROM`]. Always
/// `low`: no shape says it is a failure, only its words.
fn paste(lib: &Library, x: &Extraction) -> Option<Inference> {
    // a failure inference could read is no paste's: it was read, or is noise
    if x.paste.is_empty() || x.failures.iter().any(|f| shape_rank(f.kind).is_some()) {
        return None;
    }
    words_alone(lib, &x.paste, x.paste.len() == 1)
}

/// The model's reading of lines in which no failure's shape was found (a paste, a
/// [`wordless_block`]): `low`, tied to no failure, its evidence the first line; only a
/// class the model is sure of (calibrated at least [`MEDIUM_FROM`]: a healthy paste's
/// words lean to no class; `starting job` / `all done` got `other` at 0.54). `focused`:
/// the one line is also the focus.
fn words_alone(lib: &Library, lines: &[(usize, String)], focused: bool) -> Option<Inference> {
    let model = lib.model.as_ref()?.get()?;
    let mut text = String::new();
    push_peeled(&mut text, lines);
    let focus = focused.then(|| text.trim().to_string());
    let p = model.predict(&text, focus.as_deref(), NEAREST)?;
    let (category, raw) = class(&p, false)?;
    let probability = model.calibrated(raw);
    if probability < MEDIUM_FROM {
        return None;
    }
    let (line, shown) = lines.first()?;
    Some(Inference {
        category,
        probability,
        raw,
        confidence: Confidence::Low,
        resembles: resembles(lib, &p),
        failure: None,
        evidence: vec![EvidenceLine {
            line: *line,
            text: shown.clone(),
            stream: String::new(),
        }],
        bug: None,
    })
}

/// The failing block of a step a CI runner said failed, when no failure was extracted
/// from it (its lines have no error words: `flag provided but not defined: -x`, a usage
/// text) and the failure [`target`] chose lies outside that step (an `after_failure`
/// step's message, a setup line): the runner says the run stopped there, so the block is
/// what to read.
fn wordless_block<'x>(x: &'x Extraction, chosen: Option<&Failure>) -> Option<&'x Block> {
    let b = x.failing_block.as_ref()?;
    let step = b.failed_step()?;
    let outside = chosen.is_none_or(|f| !step.contains(&f.first_line()));
    let wordless = !x.failures.iter().any(|f| block_of(x, f).is_some());
    (outside && wordless && !b.lines.is_empty()).then_some(b)
}

/// The signatures a prediction names as nearest, similar enough to be named.
fn resembles(lib: &Library, p: &Prediction) -> Vec<Resemblance> {
    p.nearest
        .iter()
        .filter(|(_, sim)| *sim >= NEAREST_MIN)
        .filter_map(|(id, sim)| {
            lib.get(id).map(|s| Resemblance {
                signature: id.clone(),
                title: s.title.clone(),
                similarity: (sim * 100.0).round() / 100.0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shape that ends a process is read first, and only those (`shape_rank`'s `Some(0)`
    /// and [`FailureKind::is_fatal`] name the same kinds).
    #[test]
    fn the_first_rank_is_the_fatal_kinds() {
        for &k in FailureKind::ALL {
            assert_eq!(shape_rank(k) == Some(0), k.is_fatal(), "{k:?}");
        }
    }
}
