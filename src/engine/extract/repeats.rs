//! Repeated lines, counted instead of extracted again.
//!
//! A healthy server repeats the same few lines that each make a one-line failure (a
//! warning, an error line with no logger origin, a CUDA error…): in a serving journal a
//! quarter of the lines can be the same handful of warnings. Each took the full path:
//! a record (a dozen strings), `classify` (several regex searches), the failure's
//! headline, sites, consequence shape and dedup key, then a merge into the failure made
//! by the first of them — about 19,000 instructions, on the thread every line waits for.
//!
//! So the first such line is extracted in full and its *shape* remembered: the fields
//! the full path reads (stream key, level, logger origin, message). A later line of the
//! same shape, in the same attempt, on a stream with nothing open, is counted into that
//! failure as one more occurrence without building anything ([`Extractor::repeat`]). Its
//! outcome is the full path's: `classify` and every step of `close` depend on those
//! fields alone, and the merge adds one occurrence (within the same caps) and one to the
//! count. A line whose full path changes more than its failure is never remembered: one
//! with a unit (systemd's attempt and restart bookkeeping), a restart counter, or a
//! kernel OOM line's pid (`UnitLinks`). Shapes are forgotten when an attempt starts. The
//! brute-force engine never takes this path: the tests compare the two on every corpus
//! log and on a generated warning-heavy log.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::{Extractor, Occurrence, MAX_OCCURRENCES, MAX_TOTAL_OCCURRENCES};
use crate::engine::normalize::{Level, Record};

/// Shapes remembered per attempt; past it, new shapes take the full path every time.
const MAX_SHAPES: usize = 4096;

/// What a one-line failure is made of, borrowed from a line.
pub struct Shape<'a> {
    /// The stream's key ([`crate::engine::normalize::Stream::key`]).
    pub stream: &'a str,
    pub level: Option<Level>,
    pub origin: Option<&'a str>,
    pub message: &'a str,
}

impl Shape<'_> {
    fn hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        (self.stream, self.level, self.origin, self.message).hash(&mut h);
        h.finish()
    }
}

/// A remembered shape.
struct Owned {
    stream: String,
    level: Option<Level>,
    origin: Option<String>,
    message: String,
}

impl Owned {
    fn is(&self, s: &Shape<'_>) -> bool {
        self.stream == s.stream
            && self.level == s.level
            && self.origin.as_deref() == s.origin
            && self.message == s.message
    }
}

/// The shapes of this attempt's one-line failures: hash → (shape, index of the failure).
#[derive(Default)]
pub(super) struct Repeats {
    by_hash: HashMap<u64, Vec<(Owned, usize)>>,
    len: usize,
}

impl Repeats {
    pub(super) fn clear(&mut self) {
        self.by_hash.clear();
        self.len = 0;
    }

    fn find(&self, s: &Shape<'_>) -> Option<usize> {
        let list = self.by_hash.get(&s.hash())?;
        list.iter().find(|(o, _)| o.is(s)).map(|&(_, at)| at)
    }
}

impl Extractor {
    /// Remembers the shape of `rec`, a line the full path just made a one-line failure
    /// of (stream `key`), closed as failure `at` of `closed`.
    pub(super) fn remember(&mut self, rec: &Record, key: &str, at: usize) {
        let changes_more = rec.stream.unit.is_some()
            || rec.message.contains("task_memcg=")
            || super::shapes::restart_counter(&rec.message).is_some();
        if changes_more || self.repeats.len >= MAX_SHAPES {
            return;
        }
        let shape = Shape {
            stream: key,
            level: rec.level,
            origin: rec.origin.as_deref(),
            message: &rec.message,
        };
        if self.repeats.find(&shape).is_some() {
            return;
        }
        let owned = Owned {
            stream: key.to_string(),
            level: rec.level,
            origin: rec.origin.clone(),
            message: rec.message.clone(),
        };
        self.repeats
            .by_hash
            .entry(shape.hash())
            .or_default()
            .push((owned, at));
        self.repeats.len += 1;
    }

    /// Counts line `line` of shape `shape` into the failure the first line of that shape
    /// made, when this attempt has seen the shape and nothing is open on its stream;
    /// `false`: the caller takes the full path.
    pub fn repeat(&mut self, shape: &Shape<'_>, line: usize, timestamp: Option<&str>) -> bool {
        if self.repeats.len == 0 || self.streams.contains_key(shape.stream) {
            return false;
        }
        let Some(at) = self.repeats.find(shape) else {
            return false;
        };
        self.lines = line;
        let attempt = self.attempt();
        attempt.last_line = line;
        attempt.failures += 1;
        let room = MAX_TOTAL_OCCURRENCES.saturating_sub(self.listed);
        let f = &mut self.closed[at];
        if f.occurrences.len() < MAX_OCCURRENCES && room > 0 {
            f.occurrences.push(Occurrence {
                stream: shape.stream.to_string(),
                line,
                timestamp: timestamp.map(str::to_string),
            });
            self.listed += 1;
        }
        f.count += 1;
        true
    }
}
