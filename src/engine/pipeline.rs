//! The pipeline for one input: ingest → rejoin (lines cut at a fixed width) → normalize → extract (+ loose-line matching) →
//! match failures → rank → diagnosis. One pass over the log; only failures and the
//! matches of loose lines are kept. Environment reports inside the log (pip list,
//! collect_env, nvidia-smi…) are read in the same pass ([`crate::env::Scanner`]) and
//! merged under the facts given with [`Engine::with_facts`] (`--env` files win).

use crate::engine::diagnosis::{BuildOptions, Diagnosis};
use crate::engine::extract::model::PASTE_PHYSICAL;
use crate::engine::extract::{ExtractOptions, Extraction, Extractor, Paste, Shape};
use crate::engine::ingest::{IngestError, LineReader, RawLine};
use crate::engine::matcher::{Compiled, EngineKind, Matcher, Matches, Prefilter};
use crate::engine::normalize::{self, Level, Record};
use crate::engine::rank;
use crate::engine::rejoin::Rejoiner;
use crate::engine::steps::{LineRead, LineShape, Steps};
use crate::env::{Facts, Scanner};
use crate::knowledge::rules::Rules;

/// A scan over inputs, one after the other: the mutable state (the matcher's scratch,
/// the stream key buffer, the facts given) over a [`Compiled`] library it borrows.
/// Creating one builds nothing; a thread makes its own.
///
/// The prefilter's automaton holds the library's atoms and every literal extraction acts
/// on in a message ([`crate::engine::extract::shapes::message_literals`]) and those the
/// environment scanner looks for ([`crate::env::parse::GATE_LITERALS`]): it is also the
/// fast path's scanner. Each line that is valid UTF-8 and reads as the usual
/// journald/vLLM layers is read with [`normalize::view`], without allocating. Such a
/// line with no error or warning level, whose message has none of those literals and
/// whose stream has no block open (blocks are reassembled per stream), cannot start or
/// continue a failure nor match a signature (the prefilter reads messages only): it is
/// counted and skipped. Every other line becomes a record: built from the view when
/// there is one (the same record, without running the layer parsers again), normalized
/// otherwise. A line that repeats a block extraction already reassembled on its stream
/// is noted, not rebuilt ([`Extractor::replay`]). The brute-force engine never skips
/// nor replays.
pub struct Engine<'c> {
    matcher: Matcher<'c>,
    /// Whether the fast path runs (not for the brute-force engine).
    fast: bool,
    /// The stream key of the line at hand (reused, not reallocated).
    key: String,
    /// Lines after which the rest of an input is read on a second thread.
    parallel_after: usize,
    /// Facts given apart from the log (`--env`).
    given: Facts,
    /// Compatibility rules checked on each diagnosis's facts (`findings`).
    rules: Option<&'c Rules>,
}

/// The state of one pass over an input.
struct PassState {
    x: Extractor,
    /// The failing step and its block (see [`crate::engine::steps`]).
    steps: Steps,
    m: Matches,
    scan: Scanner,
    matching: bool,
    /// The input, while it may be a short paste ([`Extraction::paste`]).
    paste: Paste,
    /// What was read of the replayed records seen last ([`Replayed`]).
    replayed: Replayed,
}

/// Slots of [`Replayed`].
const REPLAYED_SLOTS: usize = 4096;

/// What the pass read of a replayed record's message (by the record's id, which names
/// one record in one input: [`Extractor::replay`]): its step reading ([`Steps::read`])
/// and whether the environment scanner could read it ([`Scanner::may_read`]), both
/// functions of the message and level alone. Direct-mapped, the id kept and compared.
#[derive(Default)]
struct Replayed {
    slots: Vec<Option<(usize, LineRead, bool)>>,
}

impl Replayed {
    fn get(&mut self, id: usize, steps: &mut Steps, rec: &Record) -> (LineRead, bool) {
        if self.slots.is_empty() {
            self.slots = vec![None; REPLAYED_SLOTS];
        }
        let slot = &mut self.slots[id % REPLAYED_SLOTS];
        match slot {
            Some((i, read, env)) if *i == id => (*read, *env),
            _ => {
                let read = steps.read(&rec.message, rec.level);
                let env = Scanner::may_read(&rec.message);
                *slot = Some((id, read, env));
                (read, env)
            }
        }
    }
}

/// Lines after which an input is long enough to be worth a second thread.
pub const PARALLEL_AFTER_LINES: usize = 10_000;
const BATCH_BYTES: usize = 1 << 20;
const BATCH_LINES: usize = 8192;

/// Lines read ahead by the reading thread, with what the fast path found.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    lines: Vec<BatchLine>,
}

/// The reader thread's share of the stateless work of a parallel pass, in eighths of
/// the lines. The two threads balance it as they go: the reader takes one eighth more
/// when it finds the channel full (the other thread is behind), one less when the
/// other thread finds it empty (waiting for the reader). Which thread runs
/// [`Quiet::of`] on a line does not change its result. On the generated 100 MB logs a
/// fixed two in three left 0.5 core idle (the reader behind on one profile, the other
/// thread on the other).
struct Share(std::sync::atomic::AtomicUsize);

impl Default for Share {
    fn default() -> Self {
        Share(std::sync::atomic::AtomicUsize::new(4))
    }
}

impl Share {
    fn eighths(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn other_behind(&self) {
        let _ = self.0.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |n| (n < 8).then_some(n + 1),
        );
    }

    fn reader_behind(&self) {
        let _ = self.0.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |n| n.checked_sub(1),
        );
    }
}

/// The reader thread of [`Engine::pass_parallel`]: logical lines in batches (reusing
/// the batches sent back on `returned`), [`Quiet::of`] run on its [`Share`] of them.
fn read_batches(
    reader: &mut Rejoiner<'_>,
    pf: &Prefilter,
    share: &Share,
    tx: &std::sync::mpsc::SyncSender<Result<Batch, IngestError>>,
    returned: &std::sync::mpsc::Receiver<Batch>,
) {
    let mut key = String::new();
    loop {
        let mut b = returned.try_recv().unwrap_or_default();
        let mut end = false;
        let eighths = share.eighths();
        while b.bytes.len() < BATCH_BYTES && b.lines.len() < BATCH_LINES {
            let raw = match reader.next_raw() {
                Ok(Some(raw)) => raw,
                Ok(None) => {
                    end = true;
                    break;
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            let quiet = (b.lines.len() % 8 < eighths)
                .then(|| raw.clean().and_then(|t| Quiet::of(pf, t, &mut key)));
            let start = b.bytes.len();
            b.bytes.extend_from_slice(raw.bytes);
            b.lines.push(BatchLine {
                number: raw.number,
                start,
                end: b.bytes.len(),
                truncated: raw.truncated,
                quiet,
            });
        }
        let sent = match tx.try_send(Ok(b)) {
            Ok(()) => Ok(()),
            Err(std::sync::mpsc::TrySendError::Full(b)) => {
                share.other_behind();
                tx.send(b).map_err(|_| ())
            }
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => Err(()),
        };
        if sent.is_err() || end {
            return;
        }
    }
}

struct BatchLine {
    number: usize,
    start: usize,
    end: usize,
    truncated: usize,
    /// What [`Quiet::of`] found, when the reading thread ran it (two lines in three; the
    /// other thread runs it for the rest).
    quiet: Option<Option<Quiet>>,
}

/// What the fast path's stateless half found for a line it may skip: the line is clean,
/// read by [`normalize::view`], has no warning or error level, and its message has no
/// literal extraction or the environment scanner acts on, and no atom of a signature
/// that could take a line of its stream. Whether it is skipped depends on the state:
/// its stream must have no block open ([`Engine::line`]).
#[derive(Clone, Copy)]
struct Quiet {
    /// The hash of the line's stream key.
    key_hash: u64,
    /// The hash of the worker stream's key, when it is a worker's.
    worker: Option<u64>,
    /// Where the message starts in the line.
    message: usize,
    /// Whether the environment scanner could read the message.
    env: bool,
}

impl Quiet {
    fn of(pf: &Prefilter, text: &str, key: &mut String) -> Option<Quiet> {
        let v = normalize::view(text)?;
        if matches!(v.level, Some(l) if l >= Level::Warning) {
            return None;
        }
        // a folded reading may hold an atom the message lacks (the matcher reads both)
        if crate::engine::matcher::text::has_run(v.message) {
            return None;
        }
        let scanner = pf.scanner();
        let atoms = pf.atom_count();
        if let Some(first) = scanner.find(v.message) {
            if first.pattern().as_usize() >= atoms {
                return None;
            }
            v.key_into(key);
            let open = scanner.find_overlapping_iter(v.message).any(|m| {
                let p = m.pattern().as_usize();
                p >= atoms || pf.open_for(p, key)
            });
            if open {
                return None;
            }
        }
        let key_hash = v.key_hash();
        Some(Quiet {
            key_hash,
            worker: v.worker.filter(|w| w.contains("Worker")).map(|_| key_hash),
            message: text.len() - v.message.len(),
            env: Scanner::may_read_without_literals(v.message),
        })
    }
}

/// Lines after which an input is long enough to repay building the prefilter's DFA (on
/// another thread: the NFA goes on meanwhile).
const DFA_AFTER_LINES: usize = 2_000;

impl<'c> Engine<'c> {
    pub fn new(compiled: &'c Compiled<'c>, kind: EngineKind) -> Self {
        Engine {
            matcher: Matcher::new(compiled, kind),
            fast: kind == EngineKind::Prefilter,
            key: String::new(),
            parallel_after: PARALLEL_AFTER_LINES,
            given: Facts::default(),
            rules: None,
        }
    }

    /// Checks these compatibility rules on the facts of each diagnosis (its
    /// `findings`).
    pub fn with_rules(mut self, rules: &'c Rules) -> Self {
        self.rules = Some(rules);
        self
    }

    /// Reads inputs on a second thread after this many lines (tests use 0 to run the
    /// two-thread path on short logs).
    pub fn with_parallel_after(mut self, lines: usize) -> Self {
        self.parallel_after = lines;
        self
    }

    /// Uses these environment facts (from `--env` files) for every input.
    pub fn with_facts(mut self, facts: Facts) -> Self {
        self.given = facts;
        self
    }

    fn extract_options(&self) -> ExtractOptions {
        ExtractOptions {
            plumbing: self.matcher.library().plumbing.clone(),
        }
    }

    /// Extracts and matches one input.
    pub fn run(&mut self, reader: &mut LineReader) -> Result<(Extraction, Matches), IngestError> {
        let (x, m, _) = self.run_with_facts(reader)?;
        Ok((x, m))
    }

    /// Extracts and matches one input; also returns the environment facts (the log's
    /// own reports under the given ones). Loose lines are matched with the facts known
    /// when they stream by; failures with all of them.
    pub fn run_with_facts(
        &mut self,
        reader: &mut LineReader,
    ) -> Result<(Extraction, Matches, Facts), IngestError> {
        self.pass(reader, true)
    }

    /// Extraction only (`crashdoc extract`).
    pub fn extract(&mut self, reader: &mut LineReader) -> Result<Extraction, IngestError> {
        Ok(self.pass(reader, false)?.0)
    }

    /// The one pass over a log; `matching` off gives extraction only.
    fn pass(
        &mut self,
        reader: &mut LineReader,
        matching: bool,
    ) -> Result<(Extraction, Matches, Facts), IngestError> {
        let x = Extractor::new(self.extract_options());
        let mut st = PassState {
            x: if self.fast { x.with_replay() } else { x },
            steps: Steps::new(),
            m: Matches::default(),
            scan: Scanner::new(&format!("{} (log)", reader.name())),
            matching,
            paste: Paste::default(),
            replayed: Replayed::default(),
        };
        // lines a terminal or a paste cut at a fixed width are read as the line they were
        let reader = &mut Rejoiner::new(reader);
        let mut parallel = false;
        while let Some(raw) = reader.next_raw()? {
            let number = raw.number;
            if number == DFA_AFTER_LINES {
                self.matcher.prefilter().upgrade_in_background();
            }
            let pre = if self.fast {
                let pf = self.matcher.prefilter();
                raw.clean().and_then(|t| Quiet::of(pf, t, &mut self.key))
            } else {
                None
            };
            st.paste
                .push(number, || crate::engine::ingest::clean_text(raw.bytes));
            self.line(raw, pre, &mut st);
            // never before a short paste's bound: the paste sees every line it may hold
            if self.fast && number >= self.parallel_after && number > PASTE_PHYSICAL {
                st.paste.end();
                parallel = true;
                break;
            }
        }
        if parallel {
            self.pass_parallel(reader, &mut st)?;
        }
        let PassState {
            x,
            mut m,
            scan,
            steps,
            paste,
            ..
        } = st;
        let mut x = x.finish();
        x.failing_block = steps.block();
        x.paste = paste.finish();
        x.lines = x.lines.max(reader.physical_lines());
        let mut facts = scan.finish();
        facts.merge(self.given.clone());
        if matching {
            self.matcher.match_failures(&x, &mut m, &facts);
            crate::engine::matcher::layers::apply(&mut self.matcher, &x, &mut m, &facts);
        }
        Ok((x, m, facts))
    }

    /// One line, in order. `pre` is what [`Quiet::of`] found (the fast path's stateless
    /// half); the stateful half is decided here: the line is skipped when its stream has
    /// no block open.
    fn line(&mut self, raw: RawLine<'_>, pre: Option<Quiet>, st: &mut PassState) {
        let number = raw.number;
        let line_shape = (!st.steps.frozen()).then(|| LineShape::of(raw.bytes));
        if let Some(q) = pre {
            if st.x.idle() || !st.x.stream_busy_hash(q.key_hash) {
                if let Some(line_shape) = line_shape {
                    st.steps.quiet(number, line_shape, raw.bytes);
                }
                if q.env || st.scan.in_report() {
                    if let Some(text) = raw.clean() {
                        st.scan.push_without_literals(number, &text[q.message..]);
                    }
                }
                st.x.skip_hashed(number, q.worker);
                return;
            }
        }
        if self.fast {
            // a line of a block this attempt already reassembled, repeated, is noted
            // ([`crate::engine::extract`]'s `replay`)
            if let Some((rec, id)) = raw
                .clean()
                .and_then(|t| st.x.replay(t, number, raw.truncated))
            {
                let (read, env) = st.replayed.get(id, &mut st.steps, rec);
                if env || st.scan.in_report() {
                    st.scan.push(number, &rec.message);
                }
                if let Some(line_shape) = line_shape {
                    st.steps.line_read(number, line_shape, read, raw.bytes);
                }
                return;
            }
        }
        let view = raw.clean().and_then(|t| normalize::view(t).map(|v| (t, v)));
        if let Some((_, v)) = view.as_ref().filter(|_| self.fast) {
            // a line of a shape this attempt already made a one-line failure of is
            // counted into it ([`crate::engine::extract::Shape`])
            v.key_into(&mut self.key);
            let shape = Shape {
                stream: &self.key,
                level: v.level,
                origin: v.origin,
                message: v.message,
            };
            if st.x.repeat(&shape, number, v.timestamp) {
                st.scan.push(number, v.message);
                if let Some(line_shape) = line_shape {
                    st.steps
                        .line(number, line_shape, v.message, v.level, raw.bytes);
                }
                return;
            }
        }
        let raw_bytes = raw.bytes;
        let rec = match view {
            Some((text, v)) => v.record(number, text, raw.truncated),
            None => normalize::normalize(raw.into_line()),
        };
        st.scan.push(rec.line, &rec.message);
        if let Some(line_shape) = line_shape {
            st.steps
                .line(rec.line, line_shape, &rec.message, rec.level, raw_bytes);
        }
        let attempt = st.x.current_attempt();
        if let Some(loose) = st.x.push(rec) {
            if st.matching {
                self.matcher
                    .match_loose(&loose, attempt, &mut st.m, &self.given);
            }
        }
    }

    /// The rest of a long input on two threads: one reads lines in batches and runs the
    /// fast path's stateless half ([`Quiet::of`]: view, level, automaton, stream gates)
    /// on its share of them ([`Share`]); this one runs it on the rest, and takes the
    /// lines in order for everything that depends on what came before (open blocks,
    /// workers, environment reports, the full path). The result is the same as on one
    /// thread (tests run every corpus log both ways; [`Quiet::of`] is a function of the
    /// line alone, whichever thread runs it); memory stays bounded (a few batches of at
    /// most 1 MiB plus one line in flight; emptied batches go back to the reader).
    fn pass_parallel(
        &mut self,
        reader: &mut Rejoiner<'_>,
        st: &mut PassState,
    ) -> Result<(), IngestError> {
        // the DFA is built once per compiled library, in the background
        let pf = self.matcher.prefilter();
        pf.upgrade_in_background();
        let share = Share::default();
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Batch, IngestError>>(4);
            let (back, returned) = std::sync::mpsc::sync_channel::<Batch>(8);
            let share = &share;
            s.spawn(move || read_batches(reader, pf, share, &tx, &returned));
            loop {
                let b = match rx.try_recv() {
                    Ok(b) => b,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
                    Err(std::sync::mpsc::TryRecvError::Empty) => {
                        // this thread waits for the reader: it takes more of the work
                        share.reader_behind();
                        match rx.recv() {
                            Ok(b) => b,
                            Err(_) => break,
                        }
                    }
                };
                let mut b = b?;
                for l in &b.lines {
                    let raw = RawLine {
                        number: l.number,
                        bytes: &b.bytes[l.start..l.end],
                        truncated: l.truncated,
                    };
                    let quiet = match l.quiet {
                        Some(q) => q,
                        None => raw
                            .clean()
                            .and_then(|t| Quiet::of(self.matcher.prefilter(), t, &mut self.key)),
                    };
                    self.line(raw, quiet, st);
                }
                b.bytes.clear();
                b.lines.clear();
                let _ = back.try_send(b);
            }
            Ok(())
        })
    }

    /// The whole diagnosis of one input.
    pub fn diagnose(
        &mut self,
        reader: &mut LineReader,
        opts: BuildOptions,
    ) -> Result<Diagnosis, IngestError> {
        let name = reader.name().to_string();
        let (x, m, facts) = self.run_with_facts(reader)?;
        let ranked = rank::aggregate(self.matcher.library(), &x, &m);
        let mut d =
            Diagnosis::build_with_facts(&name, self.matcher.library(), x, ranked, opts, facts);
        if let Some(rules) = self.rules {
            d.findings = crate::engine::findings::check(rules, &d.environment);
        }
        Ok(d)
    }

    /// Diagnoses text held in memory (signature examples, tests).
    pub fn diagnose_text(&mut self, name: &str, text: &str, opts: BuildOptions) -> Diagnosis {
        let bytes = text.as_bytes().to_vec();
        LineReader::from_reader(Box::new(std::io::Cursor::new(bytes)), name.to_string())
            .and_then(|mut r| self.diagnose(&mut r, opts))
            // reading memory cannot fail; an empty diagnosis is the safe answer if it did
            .unwrap_or_else(|_| {
                Diagnosis::build(
                    name,
                    self.matcher.library(),
                    Extraction::default(),
                    Vec::new(),
                    opts,
                )
            })
    }
}
