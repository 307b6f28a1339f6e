//! Repeated multi-line blocks, counted instead of reassembled again.
//!
//! A crash loop, or a thousand ranks, print the same traceback again and again: every
//! `[rankN]:` stream of every round writes the same six lines, interleaved with the
//! other ranks'. Each line took the full path (normalize, the block machine, and at the
//! end `close`: headline, sites, consequence shape, dedup key, merge into the failure
//! the first of them made) — on the failure-heavy benchmark profile that was 0.1x
//! ripgrep. [`super::repeats`] does the same for one-line failures.
//!
//! So a block the full path reassembled and closed is remembered as a *known block*:
//! the records it took, in order (its first line opened it on a stream with nothing
//! open or pending), the raw text of the line that closed it, and the failure it was
//! merged into. Later, a line whose raw text is the first of a known block, on a stream
//! with nothing open, starts a *replay* on that stream: each next line of the stream
//! whose raw text is the known block's next one is only noted (its number), and when
//! the block is complete and the stream's next line is one that closed it before, the
//! block is counted into the failure as one more occurrence, exactly as `close` and
//! `link::merge` would.
//!
//! Why this is exact: a record is a function of its line's text (its number and the
//! bytes cut by ingest aside: [`crate::engine::normalize::normalize`]), and the block
//! machine ([`super::block`]) a function of the records it is fed, in order. Equal raw
//! texts make equal records, so the replayed block is, line for line, the block the
//! full path would build, and equal to the known one but for line numbers; the line
//! that closed the known block closes it too. Its failure has the known one's dedup key
//! (which reads no line number) in the same attempt (known blocks are forgotten when an
//! attempt starts), so `close` would merge it into the same failure, adding one count
//! and its first occurrence within the same caps. The rest of what the full path does
//! per line is done the same way (line counts, the attempt's last line and workers, the
//! stream's place in the least-recently-used order); what it would do and a replay
//! cannot is excluded when a block is learned: lines of systemd or of a unit, kernel
//! OOM lines (`UnitLinks`), restart counters. Whenever a line departs from the known
//! block (another text, a closing line not seen before, the end of the input, a
//! systemd start, an eviction, a merge that would make the replayed block the
//! failure's first occurrence), the replay is *materialized*: the block machine is run
//! on the noted lines (rebuilt from the known records and the noted numbers) and the
//! full path goes on from there, as if it had never stopped. Hash collisions only send
//! a line down the full path (every match compares the texts). The brute-force engine
//! never replays; the tests compare the two on the corpus and on the generated
//! failure-heavy log.

use std::collections::HashMap;

use super::{
    Extractor, Occurrence, Prehashed, StreamState, MAX_OCCURRENCES, MAX_TOTAL_OCCURRENCES,
};
use crate::engine::normalize::Record;

/// Bytes of records (raw text and message) a block may hold in its trail; past it the
/// block is not remembered.
pub(super) const MAX_TRAIL_BYTES: usize = 16 << 10;
/// Bytes of known blocks remembered per attempt; past it, new blocks are not learned.
const MAX_KNOWN_BYTES: usize = 4 << 20;
/// Closing lines remembered per known block.
const MAX_CLOSERS: usize = 8;
/// Known blocks one first line starts, at most: each look-up ([`Memo::alternative`], the
/// search for an equal block when learning) walks them all, so a stream of blocks that
/// share their first lines and differ after (`ValueError: request {i} has no prompt`,
/// a million times) would make the pass quadratic; past this, a new variant is not
/// learned and takes the full path.
const MAX_PER_START: usize = 8;

type Prehash = std::hash::BuildHasherDefault<Prehashed>;

/// The records a block took, in order, while it may be remembered.
#[derive(Debug, Default)]
pub(super) struct Trail {
    records: Vec<Record>,
    bytes: usize,
}

impl Trail {
    /// Appends `rec` to `trail`, or forgets the trail past [`MAX_TRAIL_BYTES`].
    pub(super) fn push(trail: &mut Option<Trail>, rec: Record) {
        if let Some(t) = trail {
            t.bytes += rec.raw.len() + rec.message.len();
            if t.bytes > MAX_TRAIL_BYTES {
                *trail = None;
            } else {
                t.records.push(rec);
            }
        }
    }
}

/// A block the full path reassembled and closed, in this attempt.
struct Known {
    records: Vec<Record>,
    /// Per record: the hash of its stream's key when the stream is a worker's.
    workers: Vec<Option<u64>>,
    /// The stream's key.
    key: String,
    /// Hash of the first record's raw text.
    start: u64,
    /// Raw texts of lines that closed it.
    closers: Vec<String>,
    /// Index of the failure it was merged into (`Extractor::closed`).
    at: usize,
    /// The id of its first record ([`Extractor::replay`]); the next ones follow.
    id: usize,
}

/// The known blocks of this attempt.
#[derive(Default)]
pub(super) struct Memo {
    known: Vec<Known>,
    /// Hash of a first line's raw text → the known blocks it starts.
    starts: HashMap<u64, Vec<usize>, Prehash>,
    /// Hash of any known line's raw text → a known block holding it (for its stream).
    texts: HashMap<u64, usize, Prehash>,
    bytes: usize,
    /// The id the next known record gets: never reused in one input.
    next_id: usize,
}

impl Memo {
    pub(super) fn clear(&mut self) {
        self.known.clear();
        self.starts.clear();
        self.texts.clear();
        self.bytes = 0;
    }

    /// Another known block with the same first `next` lines as `k` and `text` after.
    fn alternative(&self, k: usize, next: usize, text: &str) -> Option<usize> {
        let kn = &self.known[k];
        self.starts.get(&kn.start)?.iter().copied().find(|&j| {
            let o = &self.known[j];
            j != k
                && o.key == kn.key
                && o.records.len() > next
                && o.records[next].raw == text
                && o.records[..next]
                    .iter()
                    .zip(&kn.records[..next])
                    .all(|(a, b)| a.raw == b.raw)
        })
    }
}

/// A replay in progress on one stream: the known block and the lines noted so far.
#[derive(Debug)]
pub(super) struct Cursor {
    known: usize,
    /// (line number, bytes cut by ingest) of each line taken.
    lines: Vec<(usize, usize)>,
}

/// A fast hash of a line's text (8 bytes at a time).
fn text_hash(text: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let b = text.as_bytes();
    let mut h = b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let mut w = [0u8; 8];
    w[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K)
}

/// Whether the full path does, for this record, nothing a replay does not.
fn replayable(rec: &Record) -> bool {
    rec.stream.unit.is_none()
        && rec.stream.ident.as_deref() != Some("systemd")
        && !rec.message.contains("task_memcg=")
        && super::shapes::restart_counter(&rec.message).is_none()
}

impl Extractor {
    /// Learns the block whose `trail` the full path just closed on stream `key` (the
    /// line `closer` closed it) into failure `at`.
    pub(super) fn learn(&mut self, key: &str, trail: Trail, closer: &Record, at: usize) {
        if !replayable(closer) || !trail.records.iter().all(replayable) {
            return;
        }
        let Some(first) = trail.records.first() else {
            return;
        };
        let start = text_hash(&first.raw);
        let memo = &mut self.memo;
        let same = memo.starts.get(&start).and_then(|list| {
            list.iter().copied().find(|&k| {
                let o = &memo.known[k];
                o.key == key
                    && o.records.len() == trail.records.len()
                    && o.records
                        .iter()
                        .zip(&trail.records)
                        .all(|(a, b)| a.raw == b.raw)
            })
        });
        if let Some(k) = same {
            let o = &mut memo.known[k];
            if o.closers.len() < MAX_CLOSERS && !o.closers.contains(&closer.raw) {
                o.closers.push(closer.raw.clone());
            }
            return;
        }
        let variants = memo.starts.get(&start).map_or(0, Vec::len);
        if memo.bytes + trail.bytes > MAX_KNOWN_BYTES || variants >= MAX_PER_START {
            return;
        }
        memo.bytes += trail.bytes;
        let k = memo.known.len();
        memo.starts.entry(start).or_default().push(k);
        for r in &trail.records {
            memo.texts.entry(text_hash(&r.raw)).or_insert(k);
        }
        let id = memo.next_id;
        memo.next_id += trail.records.len();
        let workers = trail
            .records
            .iter()
            .map(|r| super::worker_hash(r, &r.stream.key()))
            .collect();
        memo.known.push(Known {
            records: trail.records,
            workers,
            key: key.to_string(),
            start,
            closers: vec![closer.raw.clone()],
            at,
            id,
        });
    }

    /// Takes line `line` (clean text `text`, `truncated` bytes cut by ingest) into a
    /// replay when it continues or starts one, and returns its record (the known one:
    /// equal but for the line number) and the record's id: the same id, in one input,
    /// is the same record, so that the caller may keep what it derives from it.
    /// `None`: the caller takes the full path.
    pub fn replay(
        &mut self,
        text: &str,
        line: usize,
        truncated: usize,
    ) -> Option<(&Record, usize)> {
        if self.memo.known.is_empty() {
            return None;
        }
        let h = text_hash(text);
        let k = *self.memo.texts.get(&h)?;
        let key = self.memo.known[k].key.as_str();
        if let Some(st) = self.streams.get_mut(key) {
            let cur = st.replay.as_mut()?;
            let kn = &self.memo.known[cur.known];
            let next = cur.lines.len();
            let continues = next < kn.records.len() && kn.records[next].raw == text;
            let closes = next == kn.records.len() && kn.closers.iter().any(|c| c == text);
            if !(continues || closes) {
                // another known block with the same beginning, or the full path
                cur.known = self.memo.alternative(cur.known, next, text)?;
            }
            let kn = &self.memo.known[cur.known];
            if next < kn.records.len() {
                cur.lines.push((line, truncated));
                self.tick += 1;
                st.touched = self.tick;
                let (k, worker) = (cur.known, kn.workers[next]);
                self.note_replayed(line, worker);
                let kn = &self.memo.known[k];
                return Some((&kn.records[next], kn.id + next));
            }
            // complete, and closed by a line that closed it before
            if cur.lines[0].0 < self.closed[kn.at].first.line {
                return None;
            }
            let key = kn.key.clone();
            if let Some(st) = self.streams.remove(&key) {
                self.busy_dirty = true;
                if let Some(cur) = st.replay {
                    self.commit(&cur);
                }
            }
        }
        self.start_replay(h, text, line, truncated)
    }

    /// Starts a replay with line `line` on its stream, which has nothing open.
    fn start_replay(
        &mut self,
        h: u64,
        text: &str,
        line: usize,
        truncated: usize,
    ) -> Option<(&Record, usize)> {
        let k = self
            .memo
            .starts
            .get(&h)?
            .iter()
            .copied()
            .find(|&k| self.memo.known[k].records[0].raw == text)?;
        let key = self.memo.known[k].key.clone();
        self.tick += 1;
        let st = StreamState {
            touched: self.tick,
            replay: Some(Cursor {
                known: k,
                lines: vec![(line, truncated)],
            }),
            ..StreamState::default()
        };
        self.streams.insert(key, st);
        self.busy_dirty = true;
        if self.streams.len() > super::MAX_OPEN_STREAMS {
            self.evict_oldest();
        }
        self.note_replayed(line, self.memo.known[k].workers[0]);
        let kn = &self.memo.known[k];
        Some((&kn.records[0], kn.id))
    }

    /// What `push` notes of every line: the line count, the attempt's last line, the
    /// worker streams.
    fn note_replayed(&mut self, line: usize, worker: Option<u64>) {
        self.lines = line;
        self.attempt().last_line = line;
        if let Some(w) = worker {
            self.note_worker(w);
        }
    }

    /// Counts a complete replayed block into its failure, as `close` and `link::merge`
    /// would (one more count; its first occurrence, within the caps).
    fn commit(&mut self, cur: &Cursor) {
        let kn = &self.memo.known[cur.known];
        let occurrence = Occurrence {
            stream: kn.key.clone(),
            line: cur.lines[0].0,
            timestamp: kn.records[0].timestamp.clone(),
        };
        let at = kn.at;
        self.attempt().failures += 1;
        let budget = MAX_TOTAL_OCCURRENCES.saturating_sub(self.listed);
        let f = &mut self.closed[at];
        if MAX_OCCURRENCES
            .saturating_sub(f.occurrences.len())
            .min(budget)
            > 0
        {
            f.occurrences.push(occurrence);
            self.listed += 1;
        }
        f.count += 1;
    }

    /// Turns a block just opened on stream `key` by one line into a replay, when that
    /// line starts a known block: the open block is what the block machine makes of
    /// that line alone, which [`Extractor::materialize`] rebuilds.
    pub(super) fn adopt(&mut self, st: &mut StreamState, key: &str) {
        if self.memo.known.is_empty() || st.pending.is_some() {
            return;
        }
        let Some(first) = st
            .open
            .as_ref()
            .and_then(|o| o.trail.as_ref())
            .filter(|t| t.records.len() == 1)
            .map(|t| &t.records[0])
        else {
            return;
        };
        let Some(k) = self
            .memo
            .starts
            .get(&text_hash(&first.raw))
            .and_then(|list| {
                list.iter().copied().find(|&k| {
                    let kn = &self.memo.known[k];
                    kn.key == key && kn.records[0].raw == first.raw
                })
            })
        else {
            return;
        };
        let lines = vec![(first.line, first.truncated)];
        st.open = None;
        st.replay = Some(Cursor { known: k, lines });
    }

    /// Turns the replay on stream `key` back into the open block the full path would
    /// hold: the block machine run on the lines it noted.
    pub(super) fn materialize(&mut self, st: &mut StreamState, key: &str) {
        let Some(cur) = st.replay.take() else {
            return;
        };
        let kn = &self.memo.known[cur.known];
        let records: Vec<Record> = cur
            .lines
            .iter()
            .zip(&kn.records)
            .map(|(&(line, truncated), r)| Record {
                line,
                truncated,
                ..r.clone()
            })
            .collect();
        for rec in records {
            // a prefix of a block the full path took whole: every line is absorbed
            let _ = self.step(st, key, rec);
        }
    }
}
