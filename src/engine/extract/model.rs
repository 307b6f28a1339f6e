//! What extraction produces: failures, their exceptions, frames and lines, the crash
//! attempts of an input, and the limits that bound what one input may keep.
//!
//! These are plain data — the machine that reads one block is in `block`, the
//! streaming [`super::Extractor`] that keeps streams, attempts and the store in
//! [`super`] — so the stages after extraction (matcher, ranking, inference, diagnosis,
//! report) read them without depending on how they were built.

use super::shapes::ChainMarker;
use super::sites::Site;
use super::units::Owner;
use crate::engine::normalize::Level;
use crate::knowledge::failure_kind::FailureKind;

/// Lines kept per failure; further lines are counted in `elided_lines`.
pub const MAX_BLOCK_LINES: usize = 400;
/// Exceptions kept per chain (the first and the last halves).
pub const MAX_CHAIN: usize = 64;
/// Frames kept per exception (the outermost and innermost halves).
pub const MAX_FRAMES: usize = 200;
/// Distinct failures kept per input; further ones are counted in `dropped_failures`.
pub const MAX_FAILURES: usize = 20_000;
/// Occurrences listed per failure; `count` keeps the total (a million repeats of one
/// traceback cost a count, not a million entries).
pub const MAX_OCCURRENCES: usize = 1024;
/// Occurrences listed over all the failures of an input (a thousand distinct failures
/// repeated a thousand times each list 65,536 places in all, about 10 MB, not a
/// million); past it a repeat is counted only.
pub const MAX_TOTAL_OCCURRENCES: usize = 65_536;
/// Lines a multi-line exception message may span.
pub const MAX_MESSAGE_LINES: usize = 40;
/// Bytes of line text kept per failure (raw and peeled); further lines are counted in
/// `elided_lines`.
pub const MAX_FAILURE_TEXT: usize = 256 << 10;

/// One frame of a Python traceback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: u32,
    pub function: String,
    pub source: Option<String>,
    /// The log line the frame was read from.
    pub log_line: usize,
    /// A frame of Python's import machinery (`<frozen importlib._bootstrap>`, `importlib/__init__.py`).
    pub import_machinery: bool,
}

/// One exception of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExceptionInfo {
    pub exception_type: String,
    pub message: String,
    /// The log line of `Type: message`.
    pub line: usize,
    /// How this exception relates to the one printed before it.
    pub follows: Option<ChainMarker>,
    /// Its message says the real error is elsewhere ("look up to see its traceback").
    pub wrapper: bool,
    pub frames: Vec<Frame>,
    pub elided_frames: usize,
}

impl ExceptionInfo {
    /// `Type: message`, as Python prints it.
    pub fn headline(&self) -> String {
        if self.message.is_empty() {
            self.exception_type.clone()
        } else {
            format!("{}: {}", self.exception_type, self.message)
        }
    }

    /// The headline with the message's first line alone, when the message has more than
    /// one (the lines after it may be another stream's, interleaved before the record
    /// closed).
    pub fn first_line_headline(&self) -> Option<String> {
        let (first, _) = self.message.split_once('\n')?;
        Some(format!("{}: {}", self.exception_type, first.trim_end()))
    }
}

/// One line of a failure's block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLine {
    pub line: usize,
    /// The raw log line.
    pub text: String,
    /// The line with its prefixes peeled.
    pub message: String,
}

/// Where and when a failure occurred in one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub stream: String,
    pub line: usize,
    pub timestamp: Option<String>,
}

/// The id of a failure in one input: 1-based, in the order of the failures' first lines
/// ([`Extraction::failures`]); the JSON contract prints the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FailureId(pub usize);

impl std::fmt::Display for FailureId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// One failure, possibly seen in several streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub id: FailureId,
    pub kind: FailureKind,
    /// The crash attempt (1-based) it belongs to.
    pub attempt: usize,
    pub level: Option<Level>,
    /// What a person reads first: the final exception, or the line.
    pub headline: String,
    /// A line that introduced the traceback ("WorkerProc failed to start.").
    pub preamble: Option<String>,
    /// Python exceptions in printed order; the last one is the final exception.
    pub chain: Vec<ExceptionInfo>,
    pub elided_exceptions: usize,
    /// The innermost frame: where it was raised.
    pub raise_site: Option<Site>,
    /// The innermost application frame that is neither import machinery nor the failing
    /// dependency: where the program was when it failed.
    pub crash_site: Option<Site>,
    /// The module whose import failed, when the failure happened during an import.
    pub importing: Option<String>,
    /// The traceback was cut off (by the end of the log or the start of the excerpt).
    pub truncated: bool,
    /// Distinct streams, in order of first occurrence.
    pub streams: Vec<String>,
    /// How many times it occurred (all streams).
    pub count: usize,
    pub first: Occurrence,
    /// Every occurrence (stream and first line), in log order.
    pub occurrences: Vec<Occurrence>,
    pub first_in_attempt: bool,
    /// The failure this one follows from.
    pub consequence_of: Option<FailureId>,
    /// Its text has a consequence shape ("see root cause above", a systemd exit…).
    pub consequence_shape: bool,
    pub lines: Vec<BlockLine>,
    pub elided_lines: usize,
    /// The systemd unit whose process wrote it, when the log establishes it (see
    /// [`super::units`]).
    pub unit: Option<String>,
    /// Who wrote its first line (what ties it to a unit).
    pub owner: Owner,
}

impl Failure {
    /// The exception that matters most: the final one unless it only wraps another.
    pub fn primary(&self) -> Option<&ExceptionInfo> {
        self.chain
            .iter()
            .rev()
            .find(|e| !e.wrapper)
            .or_else(|| self.chain.last())
    }

    pub fn first_line(&self) -> usize {
        self.first.line
    }

    pub fn last_line(&self) -> usize {
        self.lines.last().map_or(self.first.line, |l| l.line)
    }
}

/// A crash attempt: the span between two starts of a service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub index: usize,
    pub first_line: usize,
    pub last_line: usize,
    pub unit: Option<String>,
    /// systemd's "restart counter is at N" at the end of this attempt.
    pub restart_counter: Option<u32>,
    pub failures: usize,
    /// Distinct worker streams (vLLM/Ray workers, torchrun ranks) seen in this attempt.
    pub workers: usize,
}

/// Everything extracted from one input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub lines: usize,
    pub attempts: Vec<Attempt>,
    pub failures: Vec<Failure>,
    /// The systemd unit of the first failure whose unit the log establishes (never
    /// merely the first unit a journal names; see [`super::units`]).
    pub unit: Option<String>,
    pub dropped_failures: usize,
    /// Streams whose open block was closed early by the cap on open streams.
    pub evicted_streams: usize,
    /// The failing block the log's structure shows (see [`crate::engine::steps`]).
    pub failing_block: Option<crate::engine::steps::Block>,
    /// The pids the log places in a unit.
    pub pid_units: std::collections::BTreeMap<u32, String>,
    /// The whole input when it is a short paste ([`PASTE_LINES`] lines that hold
    /// something, at most, in [`PASTE_PHYSICAL`] lines; in markdown, its first fenced
    /// block): its lines (number, text), for inference to read when no failure shape was
    /// found in it (a message pasted alone).
    pub paste: Vec<(usize, String)>,
}

/// Lines holding something that a short paste has at most.
pub const PASTE_LINES: usize = 5;
/// Physical lines a short paste has at most.
pub const PASTE_PHYSICAL: usize = 20;

/// Collects [`Extraction::paste`] as the lines go by: the lines that hold something
/// (at most [`PASTE_PHYSICAL`] physical lines are read, then nothing once the input is
/// longer than a paste). When the input is markdown with a code fence (an issue's body:
/// prose, then the log in ```` ``` ````), the first fenced block is the paste, not the
/// prose around it.
#[derive(Debug, Default)]
pub struct Paste {
    lines: Vec<(usize, String)>,
    /// The lines of the first fenced block, once one opened.
    fenced: Option<Vec<(usize, String)>>,
    /// The first fenced block closed: later lines are not its.
    fence_closed: bool,
    over: bool,
}

impl Paste {
    /// The next physical line (`text`: its text, escape sequences removed).
    pub fn push(&mut self, number: usize, text: impl FnOnce() -> String) {
        if self.over {
            return;
        }
        if number > PASTE_PHYSICAL {
            self.end();
            return;
        }
        let text = text();
        if crate::engine::normalize::is_fence_line(&text) {
            match self.fenced {
                None => self.fenced = Some(Vec::new()),
                Some(_) => self.fence_closed = true,
            }
            return;
        }
        if text.trim().is_empty() {
            return;
        }
        // one line past the bound is kept to tell a paste from a longer input (the
        // lines kept are bounded: a paste holds at most PASTE_LINES)
        if !self.fence_closed {
            if let Some(f) = self.fenced.as_mut().filter(|f| f.len() <= PASTE_LINES) {
                f.push((number, text.clone()));
            }
        }
        if self.lines.len() <= PASTE_LINES {
            self.lines.push((number, text));
        }
    }

    /// The input is longer than a paste (or read in a way that does not show every line).
    pub fn end(&mut self) {
        self.over = true;
        self.lines = Vec::new();
        self.fenced = None;
    }

    /// The paste's lines: the first fenced block's, else all; none when the input is
    /// longer than a paste or they are more than [`PASTE_LINES`].
    pub fn finish(self) -> Vec<(usize, String)> {
        if self.over {
            return Vec::new();
        }
        let lines = self.fenced.filter(|f| !f.is_empty()).unwrap_or(self.lines);
        if lines.len() > PASTE_LINES {
            Vec::new()
        } else {
            lines
        }
    }
}

impl Extraction {
    /// The failures marked first in their attempt.
    pub fn first_failures(&self) -> impl Iterator<Item = &Failure> {
        self.failures.iter().filter(|f| f.first_in_attempt)
    }

    /// The failure marked first in crash attempt `attempt`.
    pub fn first_failure_of(&self, attempt: usize) -> Option<&Failure> {
        self.failures
            .iter()
            .find(|f| f.attempt == attempt && f.first_in_attempt)
    }

    /// The index of the crash attempt line `line` lies in (1 when none holds it).
    pub fn attempt_at(&self, line: usize) -> usize {
        self.attempts
            .iter()
            .find(|a| a.first_line <= line && line <= a.last_line)
            .map_or(1, |a| a.index)
    }
}

/// Knobs for extraction.
#[derive(Debug, Clone, Default)]
pub struct ExtractOptions {
    /// Path fragments of generic framework frames (dispatch, layers, utilities) that are
    /// skipped when looking for the crash site. Comes from the library's `frames.yaml`.
    pub plumbing: Vec<String>,
}
