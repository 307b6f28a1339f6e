//! Extract: records in, failures out.
//!
//! Extraction reads the normalized records of one input in order and keeps, per stream
//! (see [`Stream::key`](crate::engine::normalize::Stream::key)), at most one open *block*: a
//! Python traceback being reassembled, a multi-line exception message, an NCCL block, a
//! C++ abort with its `what():`. Lines of other streams interleave freely — 8 workers
//! writing their tracebacks at the same moment are reassembled into 8 tracebacks.
//!
//! A closed block becomes a [`Failure`]. Failures that are the same failure in several
//! streams (same kind, exception type, message with numbers blanked, raise site) within
//! one crash attempt are merged: one failure with its streams, a count, and the first
//! occurrence. Attempts are told apart by systemd's `Started`/`Starting` lines after a
//! failure. Within an attempt the first failure that is not a known consequence shape is
//! marked `first_in_attempt`; the failures after it whose text says they follow from
//! another (`see root cause above`, `was terminated`, systemd exits…) are linked to it
//! as consequences.
//!
//! Records that no block absorbs and that are not failures themselves are handed back
//! to the caller ([`Extractor::push`] returns them) so that the matcher can look at
//! every line once without extraction keeping them.
//!
//! Memory is bounded: at most [`MAX_BLOCK_LINES`] lines kept per failure, at most
//! [`MAX_CHAIN`] exceptions per chain, at most [`MAX_OCCURRENCES`] occurrences listed per
//! failure and [`MAX_TOTAL_OCCURRENCES`] in all, at most [`MAX_FAILURES`] distinct failures per
//! input; what is dropped is counted and reported, never silently lost.
//!
//! Layout, by role: [`model`] is the data extraction produces (failures, attempts, the
//! limits); `block` is the machine that reads one block line by line; this module is the
//! [`Extractor`] that keeps the streams, the attempts, the merged failures and their
//! store; [`shapes`] says what a line is, `sites` where a failure was raised, `link`
//! which failure follows from which, `units` which systemd unit wrote it, `repeats`
//! counts a one-line failure's repeats without extracting them again, and `replay` a
//! multi-line block's (a traceback repeated per rank and per restart) once the full path
//! has reassembled it (its docs say why the result is the same).

mod block;
mod link;
pub mod model;
mod repeats;
mod replay;
pub mod shapes;
mod sites;
pub mod units;

use std::collections::HashMap;

use crate::engine::normalize::{fnv1a, Record, FNV_OFFSET};
pub use crate::knowledge::failure_kind::FailureKind;
use block::{could_open, Open, State, Step};
pub use model::{
    Attempt, BlockLine, ExceptionInfo, ExtractOptions, Extraction, Failure, FailureId, Frame,
    Occurrence, Paste, MAX_BLOCK_LINES, MAX_CHAIN, MAX_FAILURES, MAX_FAILURE_TEXT, MAX_FRAMES,
    MAX_MESSAGE_LINES, MAX_OCCURRENCES, MAX_TOTAL_OCCURRENCES,
};
pub use repeats::Shape;
pub use shapes::ChainMarker;
pub use sites::{top_package, Site};
use units::UnitLinks;

/// Builds the shape classifiers' and the cause linker's regexes now
/// ([`crate::engine::warm_up_in_background`]).
pub fn warm_up() {
    link::warm_up();
    shapes::warm_up();
}

#[derive(Default)]
struct StreamState {
    open: Option<Open>,
    /// An error line that may introduce a traceback on this stream's next line.
    pending: Option<(Record, String)>,
    /// When the stream last fed a line (for evicting the least recently used).
    touched: u64,
    /// A known block being replayed ([`replay`]); never with `open` or `pending`.
    replay: Option<replay::Cursor>,
}

/// Streams with an open block or a pending line kept at once: past it, the least
/// recently used quarter is closed as if its input had ended there (counted in
/// `evicted_streams`), so that a million `[rankN]:` streams cost no more than this.
pub const MAX_OPEN_STREAMS: usize = 4096;
/// Bytes of text kept over all the distinct failures of an input ([`failure_bytes`]):
/// past it a new distinct failure is counted in `dropped_failures`, not kept (the report
/// says so). [`MAX_FAILURES`] alone let 20,000 failures of [`MAX_FAILURE_TEXT`] each
/// hold about 5 GiB; this keeps the whole store within the 64 MB a run aims at.
pub const MAX_STORE_BYTES: usize = 24 << 20;

/// The text a failure holds: its lines, headline, preamble and every exception's
/// message and frames (what [`MAX_STORE_BYTES`] counts).
fn failure_bytes(f: &Failure) -> usize {
    let lines: usize = f.lines.iter().map(|l| l.text.len() + l.message.len()).sum();
    let chain: usize = f
        .chain
        .iter()
        .map(|e| {
            e.exception_type.len()
                + e.message.len()
                + e.frames
                    .iter()
                    .map(|fr| {
                        fr.file.len()
                            + fr.function.len()
                            + fr.source.as_ref().map_or(0, String::len)
                    })
                    .sum::<usize>()
        })
        .sum();
    lines + chain + f.headline.len() + f.preamble.as_ref().map_or(0, String::len)
}

/// The streaming extractor.
pub struct Extractor {
    opts: ExtractOptions,
    streams: HashMap<String, StreamState>,
    closed: Vec<Failure>,
    index: HashMap<(usize, String), usize>,
    attempts: Vec<Attempt>,
    links: UnitLinks,
    lines: usize,
    dropped: usize,
    /// Bytes held by the kept failures ([`MAX_STORE_BYTES`]).
    stored: usize,
    /// Occurrences listed over every closed failure ([`MAX_TOTAL_OCCURRENCES`]).
    listed: usize,
    /// Streams closed early by [`MAX_OPEN_STREAMS`], and the clock of their use.
    evicted: usize,
    tick: u64,
    /// Hashes of the keys of `streams`, rebuilt when `busy_dirty`.
    busy: Vec<u64>,
    busy_dirty: bool,
    /// Hashes of the worker streams' keys seen in this attempt (already hashed: no
    /// second hash).
    workers: std::collections::HashSet<u64, std::hash::BuildHasherDefault<Prehashed>>,
    /// The shapes of this attempt's one-line failures ([`repeats`]).
    repeats: repeats::Repeats,
    /// Whether blocks are remembered for [`Extractor::replay`] (the fast path's).
    learning: bool,
    /// This attempt's known blocks ([`replay`]).
    memo: replay::Memo,
}

impl Extractor {
    pub fn new(opts: ExtractOptions) -> Self {
        Extractor {
            opts,
            streams: HashMap::new(),
            closed: Vec::new(),
            index: HashMap::new(),
            attempts: vec![Attempt {
                index: 1,
                first_line: 1,
                last_line: 0,
                unit: None,
                restart_counter: None,
                failures: 0,
                workers: 0,
            }],
            workers: Default::default(),
            repeats: Default::default(),
            learning: false,
            memo: Default::default(),
            busy: Vec::new(),
            busy_dirty: true,
            links: UnitLinks::default(),
            lines: 0,
            dropped: 0,
            stored: 0,
            listed: 0,
            evicted: 0,
            tick: 0,
        }
    }

    /// Remembers closed blocks so that [`Extractor::replay`] can count their repeats
    /// (the prefilter engine's fast path; the brute-force engine never does).
    pub fn with_replay(mut self) -> Self {
        self.learning = true;
        self
    }

    fn attempt(&mut self) -> &mut Attempt {
        let n = self.attempts.len();
        &mut self.attempts[n - 1]
    }

    fn note_worker(&mut self, hash: u64) {
        if self.workers.len() < 4096 && self.workers.insert(hash) {
            let n = self.workers.len();
            self.attempt().workers = n;
        }
    }

    /// No block is open and no error line is pending: a line that starts no failure
    /// can be skipped with [`Extractor::skip`].
    pub fn idle(&self) -> bool {
        self.streams.is_empty()
    }

    /// Whether a block is open or an error line pending on a stream, by the hash of its
    /// key ([`crate::engine::normalize::stream_key_hash`]; the fast path hashes a line's key from
    /// its parts without building it): the next line of such a stream may belong to it,
    /// while a line of any other stream that starts no failure is loose whatever the
    /// other streams hold. A hash collision only sends a line down the full path, which
    /// is always right.
    pub fn stream_busy_hash(&mut self, hash: u64) -> bool {
        if self.streams.is_empty() {
            return false;
        }
        if self.busy_dirty {
            self.busy.clear();
            self.busy.extend(
                self.streams
                    .keys()
                    .map(|k| crate::engine::normalize::stream_key_hash(k)),
            );
            self.busy_dirty = false;
        }
        self.busy.contains(&hash)
    }

    /// Accounts for a line the caller decided is part of no failure (see
    /// [`crate::engine::pipeline`]): only line counts and worker streams are kept. `worker` is
    /// the hash of the stream's key ([`crate::engine::normalize::stream_key_hash`]) when the
    /// line comes from a worker stream.
    pub fn skip_hashed(&mut self, line: usize, worker: Option<u64>) {
        self.lines = line;
        self.attempt().last_line = line;
        if let Some(h) = worker {
            self.note_worker(h);
        }
    }

    /// The current attempt's index (1-based).
    pub fn current_attempt(&self) -> usize {
        self.attempts.len()
    }

    /// Feeds one record. Returns it back when it is part of no failure (a *loose* line).
    pub fn push(&mut self, rec: Record) -> Option<Record> {
        // only `push` changes the open streams (`finish` ends the extractor)
        self.busy_dirty = true;
        self.lines = rec.line;
        self.attempt().last_line = rec.line;
        self.links.note(&rec);
        // Crash attempts: systemd (re)starting the unit after a failure opens a new one.
        if shapes::is_systemd_start(&rec) {
            let had_failures = self.attempt().failures > 0
                || self.attempt().restart_counter.is_some()
                || self
                    .streams
                    .values()
                    .any(|s| s.open.is_some() || s.pending.is_some());
            if had_failures {
                self.flush_all();
                let index = self.attempts.len() + 1;
                self.attempts.push(Attempt {
                    index,
                    first_line: rec.line,
                    last_line: rec.line,
                    unit: rec.stream.unit.clone(),
                    restart_counter: None,
                    failures: 0,
                    workers: 0,
                });
                self.workers.clear();
                self.repeats.clear();
                self.memo.clear();
            }
            return Some(rec);
        }
        if let Some(n) = shapes::restart_counter(&rec.message) {
            self.attempt().restart_counter = Some(n);
        }
        let key = rec.stream.key();
        if let Some(h) = worker_hash(&rec, &key) {
            self.note_worker(h);
        }
        self.feed(key, rec)
    }

    fn feed(&mut self, key: String, rec: Record) -> Option<Record> {
        let mut st = match self.streams.remove(&key) {
            Some(st) => st,
            None if self.streams.is_empty() && !could_open(&rec) => return Some(rec),
            None => StreamState::default(),
        };
        self.materialize(&mut st, &key);
        let out = self.step(&mut st, &key, rec);
        self.adopt(&mut st, &key);
        if st.open.is_some() || st.pending.is_some() || st.replay.is_some() {
            self.tick += 1;
            st.touched = self.tick;
            self.streams.insert(key, st);
            if self.streams.len() > MAX_OPEN_STREAMS {
                self.evict_oldest();
            }
        }
        out
    }

    fn step(&mut self, st: &mut StreamState, key: &str, rec: Record) -> Option<Record> {
        // 1. A pending error line either introduces this traceback or stands alone.
        if let Some((p, label)) = st.pending.take() {
            if shapes::is_traceback_header(&rec.message)
                && shapes::collapsed_traceback(&rec.message).is_none()
            {
                let mut open = Open::new(FailureKind::Traceback, State::Frames, &p, &label);
                open.absorb(&p);
                open.preamble = Some(p.message.trim().to_string());
                open.absorb(&rec);
                st.open = Some(open);
                return None;
            }
            let mut open = Open::new(FailureKind::ErrorLine, State::Single, &p, &label);
            open.absorb(&p);
            self.close(open);
        }
        // 2. An open block absorbs what belongs to it.
        if let Some(mut open) = st.open.take() {
            match open.advance(&rec) {
                Step::Absorbed => {
                    replay::Trail::push(&mut open.trail, rec);
                    st.open = Some(open);
                    return None;
                }
                Step::Closed => {
                    let trail = open.trail.take();
                    if let (Some(trail), Some(at)) = (trail, self.close(open)) {
                        self.learn(key, trail, &rec, at);
                    }
                }
            }
        }
        // 3. A new block, a one-line failure, or a loose line.
        self.start(st, key, rec)
    }

    /// A record no open block took: it opens a block (a traceback, an exception, an
    /// abort, NCCL, a Python warning), waits as a pending error line, is a one-line
    /// failure, or is returned as a loose line. A block it opens starts its trail with
    /// it ([`replay`]) when blocks are learned.
    fn start(&mut self, st: &mut StreamState, key: &str, rec: Record) -> Option<Record> {
        if !self.open_from(st, key, &rec) {
            return Some(rec);
        }
        if self.learning {
            if let Some(open) = st.open.as_mut() {
                open.trail = Some(replay::Trail::default());
                replay::Trail::push(&mut open.trail, rec);
            }
        }
        None
    }

    /// [`Extractor::start`]'s work: `false` for a loose line.
    fn open_from(&mut self, st: &mut StreamState, key: &str, rec: &Record) -> bool {
        let label = key.to_string();
        let msg = rec.message.as_str();
        if let Some((frames, exc)) = shapes::collapsed_traceback(msg) {
            let mut open = Open::new(FailureKind::Traceback, State::Single, rec, &label);
            open.absorb(rec);
            for f in frames {
                open.push_frame(f, rec);
            }
            if let Some((ty, m)) = exc {
                open.push_exception(ty, m, rec);
            }
            st.open = Some(open);
            return true;
        }
        if shapes::is_traceback_header(msg) {
            let mut open = Open::new(FailureKind::Traceback, State::Frames, rec, &label);
            open.absorb(rec);
            st.open = Some(open);
            return true;
        }
        if let Some(f) = shapes::frame(msg) {
            // a traceback whose header is not in the excerpt
            let mut open = Open::new(FailureKind::Traceback, State::Frames, rec, &label);
            open.truncated = true;
            open.absorb(rec);
            open.push_frame(f, rec);
            st.open = Some(open);
            return true;
        }
        let Some(kind) = shapes::classify(rec) else {
            return false;
        };
        match kind {
            FailureKind::Exception => {
                let mut open = Open::new(kind, State::Message { blank: false }, rec, &label);
                open.absorb(rec);
                if let Some((ty, m)) = shapes::lone_exception(msg) {
                    open.push_exception(ty, m, rec);
                }
                st.open = Some(open);
            }
            FailureKind::Abort => {
                let mut open = Open::new(kind, State::Abort, rec, &label);
                open.absorb(rec);
                open.headline = Some(msg.trim().to_string());
                st.open = Some(open);
            }
            FailureKind::Nccl => {
                let mut open = Open::new(kind, State::Nccl, rec, &label);
                open.absorb(rec);
                st.open = Some(open);
            }
            FailureKind::Warning if shapes::python_warning(msg).is_some() => {
                let mut open =
                    Open::new(kind, State::PyWarning { source_seen: false }, rec, &label);
                open.absorb(rec);
                st.open = Some(open);
            }
            FailureKind::ErrorLine if rec.origin.is_some() => {
                st.pending = Some((rec.clone(), label));
            }
            _ => {
                let mut open = Open::new(kind, State::Single, rec, &label);
                open.absorb(rec);
                if let Some(at) = self.close(open) {
                    self.remember(rec, key, at);
                }
            }
        }
        true
    }

    /// Closes a block: computes its sites and headline, and merges it with the same
    /// failure seen in another stream of this attempt. Returns the index in `closed` of
    /// the failure it made or merged into (`None`: dropped past [`MAX_FAILURES`]).
    fn close(&mut self, mut open: Open) -> Option<usize> {
        if matches!(open.state, State::Frames | State::AfterMarker)
            && open.kind == FailureKind::Traceback
        {
            // cut off before its exception line
            open.truncated = true;
        }
        if !open.frames.is_empty() {
            // frames with no exception line after them: keep them on a placeholder
            let frames = std::mem::take(&mut open.frames);
            open.chain.push(ExceptionInfo {
                exception_type: String::new(),
                message: String::new(),
                line: frames.last().map_or(open.first.line, |f| f.log_line),
                follows: open.follows.take(),
                wrapper: false,
                frames,
                elided_frames: std::mem::take(&mut open.elided_frames),
            });
        }
        let attempt = self.attempts.len();
        let mut failure = Failure {
            id: FailureId(0),
            kind: open.kind,
            attempt,
            level: open.level,
            headline: String::new(),
            preamble: open.preamble,
            chain: open.chain,
            elided_exceptions: open.elided_exceptions,
            raise_site: None,
            crash_site: None,
            importing: None,
            truncated: open.truncated,
            streams: vec![open.first.stream.clone()],
            count: 1,
            occurrences: vec![open.first.clone()],
            first: open.first,
            first_in_attempt: false,
            consequence_of: None,
            consequence_shape: false,
            lines: open.lines,
            elided_lines: open.elided_lines,
            unit: None,
            owner: open.owner,
        };
        failure.headline = open.headline.unwrap_or_else(|| headline_of(&failure));
        if failure.kind == FailureKind::Traceback
            && failure.chain.iter().all(|e| e.exception_type.is_empty())
        {
            failure.truncated = true;
        }
        if let Some(abort) = failure.chain.last() {
            if failure.kind == FailureKind::Abort {
                failure.headline = format!("{}: {}", abort.exception_type, abort.message);
            }
        }
        sites::locate(&mut failure, &self.opts.plumbing);
        failure.consequence_shape = link::is_consequence_shape(&failure);
        self.attempt().failures += 1;
        let key = (attempt, link::dedup_key(&failure));
        if let Some(&i) = self.index.get(&key) {
            let before = self.closed[i].occurrences.len();
            let room = MAX_TOTAL_OCCURRENCES.saturating_sub(self.listed);
            link::merge(&mut self.closed[i], failure, room);
            let after = self.closed[i].occurrences.len();
            self.listed = (self.listed + after).saturating_sub(before);
            return Some(i);
        }
        let bytes = failure_bytes(&failure) + key.1.len();
        if self.closed.len() >= MAX_FAILURES || self.stored + bytes > MAX_STORE_BYTES {
            self.dropped += 1;
            return None;
        }
        self.stored += bytes;
        self.listed += failure.occurrences.len();
        self.index.insert(key, self.closed.len());
        self.closed.push(failure);
        Some(self.closed.len() - 1)
    }

    fn flush_all(&mut self) {
        let mut keys: Vec<String> = self.streams.keys().cloned().collect();
        keys.sort();
        for k in keys {
            if let Some(st) = self.streams.remove(&k) {
                self.close_stream(&k, st);
            }
        }
    }

    fn close_stream(&mut self, key: &str, mut st: StreamState) {
        self.materialize(&mut st, key);
        if let Some((p, label)) = st.pending.take() {
            let mut open = Open::new(FailureKind::ErrorLine, State::Single, &p, &label);
            open.absorb(&p);
            self.close(open);
        }
        if let Some(open) = st.open.take() {
            self.close(open);
        }
    }

    /// Closes the least recently used quarter of the open streams.
    fn evict_oldest(&mut self) {
        let mut ticks: Vec<u64> = self.streams.values().map(|s| s.touched).collect();
        let n = ticks.len() / 4;
        let (_, cut, _) = ticks.select_nth_unstable(n);
        let cut = *cut;
        let mut old: Vec<String> = self
            .streams
            .iter()
            .filter(|(_, s)| s.touched <= cut)
            .map(|(k, _)| k.clone())
            .collect();
        old.sort();
        for k in old {
            if let Some(st) = self.streams.remove(&k) {
                self.close_stream(&k, st);
                self.evicted += 1;
            }
        }
    }

    /// Ends the input: closes open blocks, orders failures and links consequences.
    pub fn finish(mut self) -> Extraction {
        self.flush_all();
        let mut failures = self.closed;
        failures.sort_by_key(|f| (f.first.line, f.kind));
        for (i, f) in failures.iter_mut().enumerate() {
            f.id = FailureId(i + 1);
            f.occurrences.sort_by_key(|o| o.line);
            f.streams.clear();
            for o in &f.occurrences {
                if !f.streams.contains(&o.stream) {
                    f.streams.push(o.stream.clone());
                }
            }
        }
        for f in &mut failures {
            f.unit = self.links.resolve(&f.owner);
        }
        link::link_attempts(&mut failures);
        for a in &mut self.attempts {
            a.failures = failures.iter().filter(|f| f.attempt == a.index).count();
        }
        Extraction {
            lines: self.lines,
            attempts: self.attempts,
            unit: failures.iter().find_map(|f| f.unit.clone()),
            failures,
            dropped_failures: self.dropped,
            evicted_streams: self.evicted,
            failing_block: None,
            pid_units: self.links.pid_units(),
            paste: Vec::new(),
        }
    }
}

/// The hash of a record's stream key when the stream is a worker's (a vLLM/Ray worker,
/// a torchrun rank): what an attempt counts in `workers`.
fn worker_hash(rec: &Record, key: &str) -> Option<u64> {
    let is_worker = rec.stream.rank.is_some()
        || rec
            .stream
            .worker
            .as_deref()
            .is_some_and(|w| w.contains("Worker"));
    is_worker.then(|| crate::engine::normalize::stream_key_hash(key))
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct Prehashed(u64);

impl std::hash::Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // only u64 keys are hashed with it; fold anything else in all the same
        self.0 = fnv1a(self.0 ^ FNV_OFFSET, bytes);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn headline_of(f: &Failure) -> String {
    if let Some(e) = f.chain.iter().rev().find(|e| !e.exception_type.is_empty()) {
        return e.headline();
    }
    if f.kind == FailureKind::Traceback {
        return "traceback cut off before its exception line".to_string();
    }
    f.lines
        .first()
        .map(|l| l.message.trim().to_string())
        .unwrap_or_default()
}

/// Runs extraction over records (convenience for tests and small inputs); loose lines
/// are dropped.
pub fn extract_records(
    records: impl IntoIterator<Item = Record>,
    opts: ExtractOptions,
) -> Extraction {
    let mut x = Extractor::new(opts);
    for r in records {
        let _ = x.push(r);
    }
    x.finish()
}

#[cfg(test)]
mod tests;
