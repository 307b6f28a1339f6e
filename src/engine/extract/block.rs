//! The machine that reads one block: a traceback, a multi-line exception message, an
//! NCCL block, a C++ abort with its `what():`, a Python warning with its source line.
//!
//! An [`Open`] block takes the records of its stream one at a time
//! ([`Open::advance`]): each either belongs to it ([`Step::Absorbed`]) or ends it
//! ([`Step::Closed`], the record then starts whatever comes next). Which lines belong is
//! decided by the block's [`State`] and the line shapes of [`super::shapes`]; the
//! bounds ([`MAX_BLOCK_LINES`], [`MAX_FRAMES`], [`MAX_CHAIN`], [`MAX_FAILURE_TEXT`]) keep
//! one block's memory fixed however long its input. Closing a block, merging it with
//! the same failure of other streams and linking consequences is the extractor's work
//! ([`super::Extractor`]), not this module's.

use super::model::{
    BlockLine, ExceptionInfo, Frame, Occurrence, MAX_BLOCK_LINES, MAX_CHAIN, MAX_FAILURE_TEXT,
    MAX_FRAMES, MAX_MESSAGE_LINES,
};
use super::shapes::{self, ChainMarker};
use super::units::Owner;
use super::{link, sites};
use crate::engine::normalize::{Level, Record};
use crate::knowledge::failure_kind::FailureKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Frames,
    Message { blank: bool },
    AfterMarker,
    Nccl,
    Abort,
    PyWarning { source_seen: bool },
    Single,
}

#[derive(Debug)]
pub(super) struct Open {
    pub(super) kind: FailureKind,
    pub(super) state: State,
    pub(super) lines: Vec<BlockLine>,
    pub(super) elided_lines: usize,
    pub(super) chain: Vec<ExceptionInfo>,
    pub(super) elided_exceptions: usize,
    pub(super) frames: Vec<Frame>,
    pub(super) elided_frames: usize,
    pub(super) follows: Option<ChainMarker>,
    /// Origin and level of the exception line, for message continuation.
    pub(super) origin: Option<String>,
    pub(super) level: Option<Level>,
    pub(super) msg_lines: usize,
    pub(super) preamble: Option<String>,
    pub(super) headline: Option<String>,
    pub(super) truncated: bool,
    pub(super) first: Occurrence,
    pub(super) owner: Owner,
    /// Bytes of line text kept in `lines`.
    pub(super) text_bytes: usize,
    /// The records the block took, in order, while it may still be remembered as a
    /// shape ([`super::replay`]): only for a block a line opened on an idle stream, and
    /// dropped past [`super::replay::MAX_TRAIL_BYTES`].
    pub(super) trail: Option<super::replay::Trail>,
}

/// Pushes `item` onto `v`, which holds at most `cap`: past it, the outermost half is
/// kept and the innermost half slides (the middle entry is dropped); `true` when one
/// was dropped.
fn push_keeping_ends<T>(v: &mut Vec<T>, item: T, cap: usize) -> bool {
    let full = v.len() >= cap;
    if full {
        v.remove(cap / 2);
    }
    v.push(item);
    full
}

impl Open {
    pub(super) fn new(kind: FailureKind, state: State, rec: &Record, stream: &str) -> Self {
        Open {
            kind,
            state,
            lines: Vec::new(),
            elided_lines: 0,
            chain: Vec::new(),
            elided_exceptions: 0,
            frames: Vec::new(),
            elided_frames: 0,
            follows: None,
            origin: rec.origin.clone(),
            level: rec.level,
            msg_lines: 0,
            preamble: None,
            headline: None,
            truncated: false,
            first: Occurrence {
                stream: stream.to_string(),
                line: rec.line,
                timestamp: rec.timestamp.clone(),
            },
            owner: Owner::of(rec),
            text_bytes: 0,
            trail: None,
        }
    }

    pub(super) fn absorb(&mut self, rec: &Record) {
        let bytes = rec.raw.len() + rec.message.len();
        if self.lines.len() < MAX_BLOCK_LINES
            && (self.lines.is_empty() || self.text_bytes + bytes <= MAX_FAILURE_TEXT)
        {
            self.text_bytes += bytes;
            self.lines.push(BlockLine {
                line: rec.line,
                text: rec.raw.clone(),
                message: rec.message.clone(),
            });
        } else {
            self.elided_lines += 1;
        }
        if self.level.is_none() {
            self.level = rec.level;
        }
    }

    pub(super) fn push_frame(&mut self, f: shapes::FrameLine, rec: &Record) {
        let import_machinery = sites::is_import_machinery(&f.file);
        let frame = Frame {
            file: f.file,
            line: f.line,
            function: f.function,
            source: None,
            log_line: rec.line,
            import_machinery,
        };
        if push_keeping_ends(&mut self.frames, frame, MAX_FRAMES) {
            self.elided_frames += 1;
        }
    }

    pub(super) fn push_exception(&mut self, ty: String, message: String, rec: &Record) {
        let frames = std::mem::take(&mut self.frames);
        let elided_frames = std::mem::take(&mut self.elided_frames);
        let exc = ExceptionInfo {
            exception_type: ty,
            wrapper: link::is_wrapper(&message),
            message,
            line: rec.line,
            follows: self.follows.take(),
            frames,
            elided_frames,
        };
        if push_keeping_ends(&mut self.chain, exc, MAX_CHAIN) {
            self.elided_exceptions += 1;
        }
        self.origin = rec.origin.clone();
        self.level = rec.level.or(self.level);
        self.msg_lines = 1;
    }

    /// Reads the next record of this block's stream: it belongs to the block, or ends it.
    pub(super) fn advance(&mut self, rec: &Record) -> Step {
        let msg = rec.message.as_str();
        match self.state {
            State::Frames => frames_line(self, rec),
            State::Message { blank } => message_line(self, rec, blank),
            State::AfterMarker => after_marker(self, rec),
            State::Nccl => {
                if shapes::is_nccl_any(msg) && self.lines.len() < 64 {
                    self.absorb(rec);
                    return Step::Absorbed;
                }
                Step::Closed
            }
            State::Abort => abort_line(self, rec),
            State::PyWarning { source_seen } => {
                if !source_seen && msg.starts_with([' ', '\t']) && !msg.trim().is_empty() {
                    self.absorb(rec);
                    self.state = State::PyWarning { source_seen: true };
                    return Step::Absorbed;
                }
                Step::Closed
            }
            State::Single => Step::Closed,
        }
    }
}

/// Cheap test: can this record start or be part of any block or failure? (Used to skip
/// stream bookkeeping for the bulk of ordinary lines.)
pub(super) fn could_open(rec: &Record) -> bool {
    let m = rec.message.as_str();
    shapes::is_traceback_header(m) || shapes::frame(m).is_some() || shapes::classify(rec).is_some()
}

pub(super) enum Step {
    Absorbed,
    Closed,
}

/// Whether a record continues the exception message of an open block.
fn continues_message(open: &Open, rec: &Record) -> bool {
    let msg = rec.message.as_str();
    // "Failed to import X because of the following error (look up to see its
    // traceback):" — the next line is the real error, a failure of its own
    if open
        .chain
        .last()
        .is_some_and(|e| e.wrapper && e.message.trim_end().ends_with(':'))
    {
        return false;
    }
    if shapes::is_traceback_header(msg)
        || shapes::chain_marker(msg).is_some()
        || shapes::foreign_output(msg)
    {
        return false;
    }
    if open.origin.is_some() {
        return rec.origin == open.origin && rec.level == open.level;
    }
    // no logger prefix: continue unless the line has one, or starts another failure shape
    rec.origin.is_none()
        && rec.level.is_none()
        && shapes::lone_exception(msg).is_none()
        && shapes::classify(rec).is_none_or(|k| k == FailureKind::ErrorLine)
}

/// A line after a traceback header or a frame: a frame, its source line, a chained header or the exception line.
fn frames_line(open: &mut Open, rec: &Record) -> Step {
    let msg = rec.message.as_str();
    if let Some(f) = shapes::frame(msg) {
        open.absorb(rec);
        open.push_frame(f, rec);
        return Step::Absorbed;
    }
    if msg.trim().is_empty() {
        return Step::Absorbed;
    }
    if msg.starts_with([' ', '\t']) {
        // the source line of the last frame, or a caret marker line
        open.absorb(rec);
        let t = msg.trim();
        if let Some(last) = open.frames.last_mut() {
            if last.source.is_none() && !t.chars().all(|c| matches!(c, '^' | '~' | ' ')) {
                last.source = Some(t.to_string());
            }
        }
        return Step::Absorbed;
    }
    if shapes::is_traceback_header(msg) || msg.starts_with("[Previous line repeated") {
        open.absorb(rec);
        return Step::Absorbed;
    }
    if let Some((ty, m)) = shapes::exception_line(msg).filter(|(ty, _)| shapes::python_type(ty)) {
        open.absorb(rec);
        open.push_exception(ty, m, rec);
        open.state = State::Message { blank: false };
        return Step::Absorbed;
    }
    // a wrapped fragment of the previous line (copied from a narrow terminal), or another
    // stream's line interleaved among the frames
    open.absorb(rec);
    Step::Absorbed
}

/// A line after an exception line: a chain marker, a continued message, or the end (a frame right after the message means it was a wrapped fragment or an interleaved line).
fn message_line(open: &mut Open, rec: &Record, blank: bool) -> Step {
    let msg = rec.message.as_str();
    if let Some(marker) = shapes::chain_marker(msg) {
        open.absorb(rec);
        open.follows = Some(marker);
        open.state = State::AfterMarker;
        return Step::Absorbed;
    }
    if let Some(f) = shapes::frame(msg) {
        let quoted = open
            .chain
            .last()
            .is_some_and(|e| e.message.contains("Traceback (most recent call last)"));
        if !blank && open.kind == FailureKind::Traceback && (open.msg_lines == 1 || !quoted) {
            // Python prints no frame right after an exception's message (a header or a
            // chain marker comes first) unless the message quotes a traceback on lines
            // of its own (PyTorch's `Caught … in replica 0` then `Original Traceback
            // (most recent call last):`): what looked like the exception line was a
            // wrapped fragment, or another stream's line interleaved among the frames
            // (its lines and the frame's source line after it were read as a message)
            if let Some(e) = open.chain.pop() {
                open.frames = e.frames;
                open.follows = e.follows;
            }
            open.absorb(rec);
            open.push_frame(f, rec);
            open.state = State::Frames;
            return Step::Absorbed;
        }
        return Step::Closed;
    }
    if msg.trim().is_empty() {
        open.state = State::Message { blank: true };
        return Step::Absorbed;
    }
    if !blank && open.msg_lines < MAX_MESSAGE_LINES && continues_message(open, rec) {
        open.absorb(rec);
        open.msg_lines += 1;
        if let Some(e) = open.chain.last_mut() {
            if !e.message.is_empty() || !msg.trim().is_empty() {
                if !e.message.is_empty() {
                    e.message.push('\n');
                }
                e.message.push_str(msg.trim_end());
            }
        }
        return Step::Absorbed;
    }
    Step::Closed
}

/// A line after a chain marker (`During handling of …`): the next traceback, or the block was cut off.
fn after_marker(open: &mut Open, rec: &Record) -> Step {
    let msg = rec.message.as_str();
    if msg.trim().is_empty() {
        return Step::Absorbed;
    }
    if shapes::is_traceback_header(msg) {
        open.absorb(rec);
        open.state = State::Frames;
        return Step::Absorbed;
    }
    if let Some(f) = shapes::frame(msg) {
        open.absorb(rec);
        open.push_frame(f, rec);
        open.state = State::Frames;
        return Step::Absorbed;
    }
    open.truncated = true;
    Step::Closed
}

/// A line after a C++ abort (`terminate called …`): its `what():` line and the backtrace under it.
fn abort_line(open: &mut Open, rec: &Record) -> Step {
    let msg = rec.message.as_str();
    if let Some(w) = shapes::what_line(msg) {
        open.absorb(rec);
        let ty = shapes::abort_type(&open.lines[0].message).unwrap_or_default();
        open.chain.push(ExceptionInfo {
            exception_type: ty,
            wrapper: false,
            message: w,
            line: rec.line,
            follows: None,
            frames: Vec::new(),
            elided_frames: 0,
        });
        return Step::Absorbed;
    }
    let t = msg.trim_start();
    if !msg.trim().is_empty()
        && open.lines.len() < 40
        && (msg.starts_with([' ', '\t'])
            || t.starts_with("Exception raised from")
            || t.starts_with("frame #"))
    {
        open.absorb(rec);
        return Step::Absorbed;
    }
    Step::Closed
}
