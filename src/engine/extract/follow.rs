//! Repeated multi-line blocks, followed instead of read again.
//!
//! A crash loop prints the same traceback again and again: per rank (eight ranks' lines
//! interleaved), per restart, per request. Each line of each copy took the full path: a
//! record, the block machine ([`super::block`]: frame parsing, a dozen strings kept per
//! line), and at its end `close` (sites, headline, consequence shape, dedup key) only
//! for [`link::merge`](super::link::merge) to drop all of it and add one occurrence to
//! the failure the first copy made.
//!
//! So a block the full path read from its opening line to the line that closed it, on
//! one stream, is remembered as a *template*: the fields of each line the block machine
//! reads ([`Key`]: message, level, logger origin, and the writer fields `classify`
//! reads), the line that ended it, and the failure it became. When a later block opens
//! on the same stream, in the same attempt, with a line of the same shape as a
//! template's opening line, the block is still opened by the full path, but its next
//! lines are only compared with the template's ([`Extractor::follow`]): a line equal to
//! the template's next one is counted and its line number and text kept (a few bytes,
//! no record); when the whole template is matched and the stream's next line is the one
//! that ended the template, the block is counted into the template's failure exactly as
//! `close` would have merged it (one more occurrence, within the same caps; one more in
//! the count), and that line takes the full path (it opens what comes next).
//!
//! Why the outcome is the full path's: the block machine's decisions, the failure's
//! dedup key and everything `close` computes are functions of those fields of the
//! block's lines (never of line numbers or raw text, but for the text bounds, which a
//! template is kept far from); the merge keeps the content of the earlier block and adds
//! the later one's first occurrence, which is all that is counted here. Lines whose full
//! path does more than feed the block are never part of a template: a unit, systemd's
//! lines, a restart counter, a kernel OOM line's pid ([`super::units::UnitLinks`]).
//!
//! At the first line that differs (or the end of the input, a new attempt, a stream
//! evicted) the block falls back: the followed lines are replayed through the block
//! machine from the template's fields and the kept line numbers and text
//! ([`Extractor::materialize`]), which rebuilds the very block the full path would hold,
//! and the full path goes on from there. Templates are forgotten when an attempt starts,
//! as one-line shapes are ([`super::repeats`]). The brute-force engine never takes this
//! path: the tests compare the two on every corpus log, on a generated failure-heavy log
//! and on generated interleaved blocks with small variations.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::block::Step;
use super::{Extractor, Occurrence, StreamState, MAX_OCCURRENCES, MAX_TOTAL_OCCURRENCES};
use crate::engine::normalize::{Level, Record, Stream};

/// Templates kept per attempt; past it, new blocks take the full path every time.
const MAX_TEMPLATES: usize = 1024;
/// Templates kept per opening line (the same `Traceback (most recent call last):` opens
/// different tracebacks).
const MAX_PER_OPENER: usize = 8;
/// Lines a template may have after its opening line: far from the block machine's
/// bounds (an abort's 40 lines, [`super::MAX_BLOCK_LINES`]).
const MAX_TEMPLATE_LINES: usize = 32;
/// Bytes (raw and message) a followed block may hold: far from
/// [`super::MAX_FAILURE_TEXT`], so that the text bound never decides what a block keeps.
const MAX_FOLLOW_BYTES: usize = super::MAX_FAILURE_TEXT / 4;

/// The fields of a line that the extractor reads, borrowed from a line.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    /// The stream's key ([`Stream::key`]).
    pub stream: &'a str,
    pub level: Option<Level>,
    pub origin: Option<&'a str>,
    pub message: &'a str,
    pub ident: Option<&'a str>,
    pub unit: Option<&'a str>,
    pub pid: Option<u32>,
    /// A worker stream's line (a rank, or a `Worker` process tag).
    pub worker: bool,
}

impl<'a> Key<'a> {
    /// The key of a record whose stream key is `stream`.
    pub fn of(rec: &'a Record, stream: &'a str) -> Key<'a> {
        Key {
            stream,
            level: rec.level,
            origin: rec.origin.as_deref(),
            message: &rec.message,
            ident: rec.stream.ident.as_deref(),
            unit: rec.stream.unit.as_deref(),
            pid: rec.stream.pid,
            worker: is_worker(&rec.stream),
        }
    }

    fn hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        (self.stream, self.level, self.origin, self.message).hash(&mut h);
        h.finish()
    }

    /// Whether the full path does nothing with this line but feed its block: no unit,
    /// no systemd line, no restart counter, no kernel OOM pid.
    fn only_feeds(&self) -> bool {
        self.unit.is_none()
            && self.ident != Some("systemd")
            && !self.message.contains("task_memcg=")
            && super::shapes::restart_counter(self.message).is_none()
    }
}

/// Whether a stream is a worker's ([`Extractor::push`] notes them).
pub(super) fn is_worker(s: &Stream) -> bool {
    s.rank.is_some() || s.worker.as_deref().is_some_and(|w| w.contains("Worker"))
}

/// A [`Key`], owned, with the line's text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owned {
    /// The text of the line the template was read from ([`Record::raw`]).
    raw: String,
    level: Option<Level>,
    origin: Option<String>,
    message: String,
    ident: Option<String>,
    pid: Option<u32>,
    worker: bool,
}

impl Owned {
    fn of(k: &Key<'_>, raw: &str) -> Owned {
        Owned {
            raw: raw.to_string(),
            level: k.level,
            origin: k.origin.map(str::to_string),
            message: k.message.to_string(),
            ident: k.ident.map(str::to_string),
            pid: k.pid,
            worker: k.worker,
        }
    }

    /// Same fields but the text (the stream is the template's; templates hold no
    /// unit).
    fn is(&self, k: &Key<'_>) -> bool {
        k.unit.is_none()
            && self.level == k.level
            && self.pid == k.pid
            && self.worker == k.worker
            && self.message == k.message
            && self.origin.as_deref() == k.origin
            && self.ident.as_deref() == k.ident
    }

    /// Same fields, text aside.
    fn same(&self, o: &Owned) -> bool {
        self.level == o.level
            && self.pid == o.pid
            && self.worker == o.worker
            && self.message == o.message
            && self.origin == o.origin
            && self.ident == o.ident
    }

    /// The record the full path would have built, for the block machine (which reads
    /// neither the timestamp nor the other writer fields).
    fn record(&self, line: usize, raw: &str) -> Record {
        Record {
            line,
            raw: raw.to_string(),
            message: self.message.clone(),
            stream: Stream {
                unit: None,
                host: None,
                ident: self.ident.clone(),
                pid: self.pid,
                worker: None,
                rank: None,
            },
            level: self.level,
            timestamp: None,
            origin: self.origin.clone(),
            truncated: 0,
        }
    }
}

/// A block read in full: its opening line, the lines it absorbed, the line that closed
/// it, and the failure it became.
struct Template {
    stream: String,
    opener: Owned,
    lines: Vec<Owned>,
    end: Owned,
    at: usize,
}

/// The lines of a block the full path is reading, for a template.
#[derive(Debug)]
pub(super) struct Trace {
    opener: Owned,
    lines: Vec<Owned>,
}

/// A block being followed along a template.
#[derive(Debug)]
pub(super) struct Follow {
    template: usize,
    /// The lines of the template matched so far: their numbers, and their text when it
    /// is not the template's (a range of `raw`).
    kept: Vec<(usize, Option<(usize, usize)>)>,
    raw: String,
    bytes: usize,
}

impl Follow {
    fn pos(&self) -> usize {
        self.kept.len()
    }
}

/// This attempt's templates, by the hash of their opening line ([`Key::hash`]).
#[derive(Default)]
pub(super) struct Templates {
    all: Vec<Template>,
    by_opener: HashMap<u64, Vec<usize>>,
    /// The template a followed stream reads next, by the [`text_hash`] of the text of
    /// its next line (stale entries are harmless: a hit is checked against the stream).
    expected: HashMap<u64, usize, std::hash::BuildHasherDefault<super::Prehashed>>,
    /// Off: every block takes the full path (the tests' reference).
    pub(super) off: bool,
}

impl Templates {
    pub(super) fn clear(&mut self) {
        self.all.clear();
        self.by_opener.clear();
        self.expected.clear();
    }

    /// Notes the line a stream following template `t` reads next (`pos`).
    fn expect(&mut self, t: usize, pos: usize) {
        if let Some(l) = self.all[t].lines.get(pos) {
            if self.expected.len() >= MAX_EXPECTED {
                self.expected.clear();
            }
            self.expected.insert(text_hash(&l.raw), t);
        }
    }

    /// The templates whose opening line is `k`.
    fn opened_by<'s>(&'s self, k: &Key<'s>) -> impl Iterator<Item = usize> + 's {
        let list = self.by_opener.get(&k.hash()).map_or(&[][..], Vec::as_slice);
        let stream = k.stream;
        let k = *k;
        list.iter()
            .copied()
            .filter(move |&i| self.all[i].stream == stream && self.all[i].opener.is(&k))
    }

    /// Another template of the same opening line that agrees with template `t` on its
    /// first `pos` lines and has `k` next.
    fn switch(&self, t: usize, pos: usize, k: &Key<'_>) -> Option<usize> {
        let cur = &self.all[t];
        let opener = self.by_opener.get(&key_hash_of(&cur.stream, &cur.opener))?;
        opener.iter().copied().find(|&i| {
            let o = &self.all[i];
            i != t
                && o.stream == cur.stream
                && o.opener.same(&cur.opener)
                && o.lines.len() > pos
                && o.lines[..pos]
                    .iter()
                    .zip(&cur.lines)
                    .all(|(a, b)| a.same(b))
                && o.lines[pos].is(k)
        })
    }
}

/// Entries of [`Templates::expected`] kept at most (it is emptied past it).
const MAX_EXPECTED: usize = 4 * super::MAX_OPEN_STREAMS;

/// The hash [`Templates::expected`] is keyed by.
fn text_hash(s: &str) -> u64 {
    crate::engine::normalize::quick_hash(s.as_bytes())
}

fn key_hash_of(stream: &str, o: &Owned) -> u64 {
    let mut h = DefaultHasher::new();
    (stream, o.level, o.origin.as_deref(), o.message.as_str()).hash(&mut h);
    h.finish()
}

impl Extractor {
    /// Follows repeated blocks (the default) or not (every block on the full path).
    pub fn follow_repeats(&mut self, on: bool) {
        self.templates.off = !on;
    }

    /// After the full path opened a block on `st` with `rec` (stream key `key`): follow
    /// a template it opens, or else trace the block to make one.
    pub(super) fn begin_block(&mut self, st: &mut StreamState, key: &str, rec: &Record) {
        st.trace = None;
        st.follow = None;
        if self.templates.off || st.open.is_none() {
            return;
        }
        let k = Key::of(rec, key);
        if !k.only_feeds() {
            return;
        }
        let found = self.templates.opened_by(&k).next();
        if let Some(t) = found {
            st.follow = Some(Follow {
                template: t,
                kept: Vec::new(),
                raw: String::new(),
                bytes: 0,
            });
            self.templates.expect(t, 0);
        } else if self.templates.all.len() < MAX_TEMPLATES {
            st.trace = Some(Trace {
                opener: Owned::of(&k, &rec.raw),
                lines: Vec::new(),
            });
        }
    }

    /// A line the block on `st` absorbed on the full path: traced, or the trace dropped.
    pub(super) fn trace_line(st: &mut StreamState, rec: &Record, key: &str) {
        if let Some(t) = st.trace.as_mut() {
            let k = Key::of(rec, key);
            if t.lines.len() < MAX_TEMPLATE_LINES && k.only_feeds() {
                t.lines.push(Owned::of(&k, &rec.raw));
            } else {
                st.trace = None;
            }
        }
    }

    /// The block traced on a stream was closed by `end` and became failure `at`: a
    /// template, unless one like it is known.
    pub(super) fn learn(&mut self, trace: Trace, key: &str, end: &Record, at: usize) {
        let k = Key::of(end, key);
        if !k.only_feeds() || self.templates.all.len() >= MAX_TEMPLATES {
            return;
        }
        let hash = key_hash_of(key, &trace.opener);
        let list = self.templates.by_opener.entry(hash).or_default();
        let same = |t: &Template| {
            t.stream == key
                && t.opener.same(&trace.opener)
                && t.lines.len() == trace.lines.len()
                && t.lines.iter().zip(&trace.lines).all(|(a, b)| a.same(b))
        };
        if list.len() >= MAX_PER_OPENER || list.iter().any(|&i| same(&self.templates.all[i])) {
            return;
        }
        list.push(self.templates.all.len());
        self.templates.all.push(Template {
            stream: key.to_string(),
            opener: trace.opener,
            lines: trace.lines,
            end: Owned::of(&k, &end.raw),
            at,
        });
    }

    /// A line of text `text`, number `line`, that is the next line of a followed
    /// block, read by its text alone: the same text as the template's line is the same
    /// record but for its number. Returns the line's message and level (what the
    /// environment scanner and the step tracker read); `None`: no followed block reads
    /// this text next (the caller goes on with [`Extractor::follow`] or the full path).
    pub fn follow_text(&mut self, line: usize, text: &str) -> Option<(&str, Option<Level>)> {
        let t = *self.templates.expected.get(&text_hash(text))?;
        let st = self.streams.get_mut(&self.templates.all[t].stream)?;
        let f = st.follow.as_mut()?;
        let pos = f.pos();
        let l = self.templates.all[f.template].lines.get(pos)?;
        if l.raw != text {
            return None;
        }
        f.bytes += l.raw.len() + l.message.len();
        if f.bytes > MAX_FOLLOW_BYTES {
            return None;
        }
        f.kept.push((line, None));
        let template = f.template;
        self.tick += 1;
        st.touched = self.tick;
        self.lines = line;
        let n = self.attempts.len();
        self.attempts[n - 1].last_line = line;
        self.templates.expect(template, pos + 1);
        let l = &self.templates.all[template].lines[pos];
        Some((&l.message, l.level))
    }

    /// A line of stream `k.stream`, number `line`, text `raw`: when the stream follows
    /// a template, the line is the template's next (counted, `true`), or the line that
    /// ended it (the block is counted into the template's failure, and the line takes
    /// the full path: `false`), or another line (`false`: the full path falls back).
    pub fn follow(&mut self, k: &Key<'_>, line: usize, raw: &str) -> bool {
        if self.streams.is_empty() {
            return false;
        }
        let Some(st) = self.streams.get_mut(k.stream) else {
            return false;
        };
        let Some(f) = st.follow.as_mut() else {
            return false;
        };
        let pos = f.pos();
        let t = &self.templates.all[f.template];
        if pos >= t.lines.len() {
            if !t.end.is(k) {
                return false;
            }
            let at = t.at;
            st.follow = None;
            if let Some(open) = st.open.take() {
                self.count(at, open.first);
            }
            return false;
        }
        if !t.lines[pos].is(k) {
            let Some(other) = self.templates.switch(f.template, pos, k) else {
                return false;
            };
            // the lines read by their text alone had this template's text
            for (l, kept) in t.lines.iter().zip(f.kept.iter_mut()) {
                if kept.1.is_none() {
                    let start = f.raw.len();
                    f.raw.push_str(&l.raw);
                    kept.1 = Some((start, f.raw.len()));
                }
            }
            f.template = other;
        }
        f.bytes += raw.len() + k.message.len();
        if f.bytes > MAX_FOLLOW_BYTES {
            return false;
        }
        let start = f.raw.len();
        f.raw.push_str(raw);
        f.kept.push((line, Some((start, f.raw.len()))));
        let template = f.template;
        self.tick += 1;
        st.touched = self.tick;
        self.lines = line;
        let n = self.attempts.len();
        self.attempts[n - 1].last_line = line;
        self.templates.expect(template, pos + 1);
        true
    }

    /// One more occurrence of failure `at`, as `close` merges a block into it.
    fn count(&mut self, at: usize, first: Occurrence) {
        self.attempt().failures += 1;
        let room = MAX_TOTAL_OCCURRENCES.saturating_sub(self.listed);
        let f = &mut self.closed[at];
        if f.occurrences.len() < MAX_OCCURRENCES && room > 0 {
            f.occurrences.push(first);
            self.listed += 1;
        }
        f.count += 1;
    }

    /// Rebuilds the block a followed stream would hold on the full path: the followed
    /// lines replayed through the block machine. The stream traces the block again.
    pub(super) fn materialize(&self, st: &mut StreamState) {
        let Some(f) = st.follow.take() else {
            return;
        };
        let t = &self.templates.all[f.template];
        let Some(open) = st.open.as_mut() else {
            return;
        };
        for (l, &(line, text)) in t.lines.iter().zip(&f.kept) {
            let raw = text.map_or(l.raw.as_str(), |(a, b)| &f.raw[a..b]);
            let step = open.advance(&l.record(line, raw));
            debug_assert!(
                matches!(step, Step::Absorbed),
                "a template line was absorbed"
            );
        }
        st.trace = Some(Trace {
            opener: t.opener.clone(),
            lines: t.lines[..f.pos()].to_vec(),
        });
    }
}
