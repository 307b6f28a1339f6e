//! Micro-benchmarks of the pipeline stages, one by one (divan).
//!
//! ```text
//! cargo bench --bench micro                      # everything
//! cargo bench --bench micro -- --sample-count 5  # a quick run
//! cargo bench --bench micro -- diagnose          # only the benchmarks matching a filter
//! ```
//!
//! Inputs, all held in memory so that no disk is measured:
//! - `generated_4MB`: `crashdoc::tools::bench::write_log(4_000_000, seed 1)`, the deterministic
//!   journald/vLLM log of `benches/run.sh` (constructed data, see `src/bench.rs`);
//! - `generated_200KB`: its first ~200 KB, cut at a line end (for the brute-force engine);
//! - `journal`: the real scenario journal, `tests/data/scenario/journal.txt`.
//!
//! The line-level stages (normalize, the fast-path view, the prefilter) run over owned
//! [`Line`]s read by the ingest stage: the first 4,000 lines of the generated log, and
//! every line of the journal. Every benchmark counts bytes (divan prints throughput); the
//! line-level ones count lines too. The library is the embedded one, loaded as the CLI
//! loads it (`signature::load(&[LibrarySource::Builtin])`), once, outside any timing.
//!
//! `benches/run.sh` is the end-to-end comparison against ripgrep/grep; this file is for
//! seeing which stage moved.

// a benchmark whose set-up fails has nothing to measure: it stops there
#![allow(clippy::expect_used)]

use std::fmt;
use std::hint::black_box;
use std::io::Cursor;
use std::sync::LazyLock;

use crashdoc::engine::diagnosis::BuildOptions;
use crashdoc::engine::ingest::{Line, LineReader};
use crashdoc::engine::matcher::{Compiled, EngineKind, Prefilter};
use crashdoc::engine::normalize as norm;
use crashdoc::engine::pipeline::Engine;
use crashdoc::knowledge::signature::{self, Library, LibrarySource};
use divan::counter::{BytesCount, ItemsCount};
use divan::Bencher;

fn main() {
    divan::main();
}

/// Size of the generated log.
const LOG_BYTES: u64 = 4_000_000;
/// Size of the slice the brute-force engine reads.
const SLICE_BYTES: usize = 200_000;
/// Lines of the generated log the line-level stages read.
const GENERATED_LINES: usize = 4_000;

static JOURNAL: &[u8] = include_bytes!("../tests/data/scenario/journal.txt");

static LOG: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut v = Vec::with_capacity(LOG_BYTES as usize + 4096);
    crashdoc::tools::bench::write_log(&mut v, LOG_BYTES, 1).expect("writing to memory cannot fail");
    v
});

/// The first [`SLICE_BYTES`] of [`LOG`], up to the last whole line.
static SLICE: LazyLock<&'static [u8]> = LazyLock::new(|| {
    let log: &'static [u8] = &LOG;
    let head = &log[..SLICE_BYTES.min(log.len())];
    let end = head
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(head.len(), |i| i + 1);
    &log[..end]
});

static LIBRARY: LazyLock<Library> = LazyLock::new(|| {
    signature::load(&[LibrarySource::Builtin])
        .unwrap_or_else(|e| panic!("the embedded library does not load:\n{e}"))
});
static COMPILED: LazyLock<Compiled<'static>> =
    LazyLock::new(|| Compiled::new(&LIBRARY).expect("the prefilter automaton"));

static GENERATED: LazyLock<Vec<Line>> = LazyLock::new(|| read_lines(&LOG, GENERATED_LINES));
static JOURNAL_LINES: LazyLock<Vec<Line>> = LazyLock::new(|| read_lines(JOURNAL, usize::MAX));

/// A whole log, for the stages that read one.
#[derive(Clone, Copy)]
enum Log {
    Generated4MB,
    Generated200KB,
    Journal,
}

impl Log {
    fn bytes(self) -> &'static [u8] {
        match self {
            Log::Generated4MB => &LOG,
            Log::Generated200KB => &SLICE,
            Log::Journal => JOURNAL,
        }
    }

    /// A fresh reader over the log, as `crashdoc diagnose` opens a file.
    fn reader(self) -> LineReader {
        LineReader::from_reader(Box::new(Cursor::new(self.bytes())), self.to_string())
            .expect("reading memory cannot fail")
    }

    fn bytes_count(self) -> BytesCount {
        BytesCount::of_slice(self.bytes())
    }
}

impl fmt::Display for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Log::Generated4MB => "generated_4MB",
            Log::Generated200KB => "generated_200KB",
            Log::Journal => "journal",
        })
    }
}

/// Owned lines, for the line-level stages.
#[derive(Clone, Copy)]
enum Lines {
    Generated,
    Journal,
}

impl Lines {
    fn lines(self) -> &'static [Line] {
        match self {
            Lines::Generated => &GENERATED,
            Lines::Journal => &JOURNAL_LINES,
        }
    }

    /// Bytes and lines read, for the counters.
    fn counters(self) -> (BytesCount, ItemsCount) {
        let lines = self.lines();
        let bytes: usize = lines.iter().map(|l| l.text.len()).sum();
        (BytesCount::new(bytes), ItemsCount::new(lines.len()))
    }
}

impl fmt::Display for Lines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lines::Generated => write!(f, "generated_{GENERATED_LINES}_lines"),
            Lines::Journal => f.write_str("journal"),
        }
    }
}

/// The first `max` lines of `bytes`, read by the ingest stage.
fn read_lines(bytes: &'static [u8], max: usize) -> Vec<Line> {
    let mut r = LineReader::from_reader(Box::new(Cursor::new(bytes)), "lines".to_string())
        .expect("reading memory cannot fail");
    let mut out = Vec::new();
    while out.len() < max {
        match r.next_line().expect("reading memory cannot fail") {
            Some(l) => out.push(l),
            None => break,
        }
    }
    out
}

/// Ingest: `LineReader` over an in-memory log, every line read with `next_raw` (the
/// pipeline's way: no copy).
#[divan::bench(args = [Log::Generated4MB, Log::Journal])]
fn ingest(b: Bencher, log: Log) {
    let bytes = log.bytes();
    b.counter(log.bytes_count()).bench_local(|| {
        let mut r = log.reader();
        let mut n = 0usize;
        while let Some(raw) = r.next_raw().expect("reading memory cannot fail") {
            n += black_box(raw.bytes).len();
        }
        debug_assert!(n <= bytes.len());
        n
    });
}

mod normalize {
    use super::*;

    /// The full path: every line peeled into a `Record` (allocates).
    #[divan::bench(args = [Lines::Generated, Lines::Journal])]
    fn normalize(b: Bencher, lines: Lines) {
        let (bytes, items) = lines.counters();
        b.counter(bytes)
            .counter(items)
            .with_inputs(|| lines.lines().to_vec())
            .bench_local_values(|lines: Vec<Line>| {
                lines.into_iter().map(norm::normalize).collect::<Vec<_>>()
            });
    }

    /// The fast path: `norm::view` on the same lines (no allocation; `None` for
    /// the lines that need the full path).
    #[divan::bench(args = [Lines::Generated, Lines::Journal])]
    fn view(b: Bencher, lines: Lines) {
        let (bytes, items) = lines.counters();
        let lines = lines.lines();
        b.counter(bytes).counter(items).bench_local(|| {
            let mut viewed = 0usize;
            for l in lines {
                if let Some(v) = norm::view(black_box(&l.text)) {
                    black_box(v);
                    viewed += 1;
                }
            }
            viewed
        });
    }
}

/// Extraction only (`crashdoc extract`): ingest, the fast path, normalize and extract.
#[divan::bench(args = [Log::Generated4MB, Log::Journal])]
fn extract(b: Bencher, log: Log) {
    let mut engine = Engine::new(&COMPILED, EngineKind::Prefilter);
    b.counter(log.bytes_count()).bench_local(|| {
        engine
            .extract(&mut log.reader())
            .expect("reading memory cannot fail")
    });
}

mod prefilter {
    use super::*;

    static PREFILTER: LazyLock<Prefilter> =
        LazyLock::new(|| Prefilter::new(&LIBRARY).expect("automaton"));

    /// The signatures whose atoms occur in each line.
    #[divan::bench(args = [Lines::Generated, Lines::Journal])]
    fn candidates(b: Bencher, lines: Lines) {
        let (bytes, items) = lines.counters();
        let (pf, lines) = (&*PREFILTER, lines.lines());
        let mut out = Vec::new();
        b.counter(bytes).counter(items).bench_local(|| {
            let mut found = 0usize;
            for l in lines {
                out.clear();
                pf.candidates(black_box(&l.text), &mut out);
                found += out.len();
            }
            found
        });
    }

    /// Whether any atom occurs in each line.
    #[divan::bench(args = [Lines::Generated, Lines::Journal])]
    fn any(b: Bencher, lines: Lines) {
        let (bytes, items) = lines.counters();
        let (pf, lines) = (&*PREFILTER, lines.lines());
        b.counter(bytes)
            .counter(items)
            .bench_local(|| lines.iter().filter(|l| pf.any(black_box(&l.text))).count());
    }
}

/// The whole diagnosis of one log (ingest → … → rank → `Diagnosis`), engine built once.
mod diagnose {
    use super::*;

    fn run(b: Bencher, log: Log, kind: EngineKind) {
        let mut engine = Engine::new(&COMPILED, kind);
        b.counter(log.bytes_count()).bench_local(|| {
            engine
                .diagnose(&mut log.reader(), BuildOptions::default())
                .expect("reading memory cannot fail")
        });
    }

    /// The default engine: one Aho-Corasick pass, then confirmation of candidates.
    #[divan::bench(args = [Log::Generated4MB, Log::Generated200KB, Log::Journal])]
    fn prefilter(b: Bencher, log: Log) {
        run(b, log, EngineKind::Prefilter);
    }

    /// The oracle: every signature on every failure and line (smaller inputs).
    #[divan::bench(args = [Log::Generated200KB, Log::Journal])]
    fn brute(b: Bencher, log: Log) {
        run(b, log, EngineKind::Brute);
    }
}
