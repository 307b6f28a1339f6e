//! Property tests (proptest) over random logs built from fragments of real ones.
//!
//! The fragments are the lines of the incident corpus (`corpus/*/log.txt`, copied from
//! public issue threads), the scenario journal, and the lines of every signature
//! example. A generated log is a random sequence of those lines (CONSTRUCTED data: the
//! lines are real, their order and mix are random), sometimes with blank lines and
//! repeated blocks.
//!
//! Properties:
//! - extraction never loses a line: each non-blank line comes back loose from
//!   `Extractor::push`, is kept in a failure's lines or starts an occurrence, unless the
//!   extraction reports that it condensed (merged duplicates, elided lines, dropped
//!   failures) at or before that line;
//! - the prefilter never misses what the brute-force engine finds (12 cases in the plain
//!   `cargo test`, 96 in the `#[ignore]`d variant CI runs);
//! - output is byte-identical across runs: a reused engine and a fresh one, a reader
//!   that delivers the bytes in random chunks and one that delivers them whole, the
//!   gzip of a log and the log, and (through the CLI) separate processes — each with its
//!   own hash seeds — under different `RAYON_NUM_THREADS`.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::LazyLock;

use crashdoc::engine::diagnosis::BuildOptions;
use crashdoc::engine::extract::{ExtractOptions, Extractor};
use crashdoc::engine::ingest::LineReader;
use crashdoc::engine::matcher::{EngineKind, Matches};
use crashdoc::engine::normalize::normalize;
use crashdoc::engine::pipeline::{Engine, PARALLEL_AFTER_LINES};
use crashdoc::knowledge::signature::Library;
use crashdoc::report::{self, text::Style};
use proptest::prelude::*;

static LIB: LazyLock<&Library> = LazyLock::new(crate::util::library);

static FRAGMENTS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .expect("corpus")
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        if let Ok(t) = std::fs::read_to_string(d.join("log.txt")) {
            texts.push(t);
        }
    }
    texts.push(
        std::fs::read_to_string(root.join("tests/data/scenario/journal.txt")).expect("scenario"),
    );
    for s in &LIB.signatures {
        for ex in s.examples.matches.iter().chain(&s.examples.no_match) {
            texts.push(ex.log.clone());
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for t in &texts {
        for l in t.lines() {
            if seen.insert(l.to_string()) {
                out.push(l.to_string());
            }
        }
    }
    assert!(out.len() > 500, "too few fragments: {}", out.len());
    out
});

/// A random log: runs of consecutive real lines (so tracebacks stay whole often
/// enough), single random lines, blank lines, and repeats of an earlier run.
fn log_strategy() -> impl Strategy<Value = String> {
    let n = FRAGMENTS.len();
    let piece = prop_oneof![
        4 => (0..n, 1usize..30).prop_map(|(s, len)| (s, len, 0u8)),
        2 => (0..n).prop_map(|s| (s, 1, 0u8)),
        1 => Just((0, 0, 1u8)),
        1 => (0usize..8).prop_map(|k| (k, 0, 2u8)),
    ];
    prop::collection::vec(piece, 1..40).prop_map(move |pieces| {
        let mut lines: Vec<&str> = Vec::new();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (s, len, what) in pieces {
            match what {
                0 => {
                    let end = (s + len).min(n);
                    runs.push((s, end));
                    lines.extend(FRAGMENTS[s..end].iter().map(String::as_str));
                }
                1 => lines.push(""),
                _ => {
                    if let Some(&(a, b)) = runs.get(s % runs.len().max(1)) {
                        lines.extend(FRAGMENTS[a..b].iter().map(String::as_str));
                    }
                }
            }
        }
        let mut log = lines.join("\n");
        log.push('\n');
        log
    })
}

fn reader(bytes: Vec<u8>) -> LineReader {
    LineReader::from_reader(Box::new(std::io::Cursor::new(bytes)), "gen".into()).expect("open")
}

/// Hands out its bytes in the given chunk sizes (cycled): a pipe that delivers a log
/// in pieces.
struct Chunked {
    data: Vec<u8>,
    pos: usize,
    sizes: Vec<usize>,
    i: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.data.len() {
            return Ok(0);
        }
        let want = self.sizes[self.i % self.sizes.len()].max(1);
        self.i += 1;
        let n = want.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn render(engine: &mut Engine<'_>, r: &mut LineReader) -> (String, String) {
    let d = engine
        .diagnose(r, BuildOptions::default())
        .expect("diagnose");
    (
        report::json(&d).expect("serializes"),
        report::text::render(
            &d,
            Style {
                color: false,
                width: None,
            },
        ),
    )
}

fn sorted(mut m: Matches) -> Matches {
    m.failures.sort_by_key(|h| (h.failure, h.signature));
    m
}

/// Cases per property: 16 in a debug build (the plain `cargo test`), 48 with
/// `--release`; `PROPTEST_CASES` overrides both.
fn cases() -> u32 {
    let default = if cfg!(debug_assertions) { 16 } else { 48 };
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn extraction_never_loses_a_line(log in log_strategy()) {
        let mut r = reader(log.clone().into_bytes());
        let mut x = Extractor::new(ExtractOptions { plumbing: LIB.plumbing.clone() });
        let mut accounted = BTreeSet::new();
        let mut blank = BTreeSet::new();
        let mut read = 0;
        while let Some(line) = r.next_line().expect("read") {
            read += 1;
            prop_assert_eq!(line.number, read);
            let rec = normalize(line);
            if rec.message.trim().is_empty() {
                blank.insert(rec.line);
            }
            if let Some(loose) = x.push(rec) {
                prop_assert!(accounted.insert(loose.line), "line {} loose twice", loose.line);
            }
        }
        prop_assert_eq!(read, log.lines().count());
        let ex = x.finish();
        let mut condensed_from = if ex.dropped_failures > 0 { 0 } else { usize::MAX };
        for f in &ex.failures {
            accounted.extend(f.lines.iter().map(|l| l.line));
            accounted.extend(f.occurrences.iter().map(|o| o.line));
            if f.count > 1 || f.elided_lines > 0 {
                condensed_from = condensed_from.min(f.first.line);
            }
        }
        for n in 1..=read {
            if !accounted.contains(&n) && !blank.contains(&n) {
                prop_assert!(
                    n > condensed_from,
                    "line {} ({:?}) was neither loose nor kept, and nothing was reported condensed before it",
                    n, log.lines().nth(n - 1)
                );
            }
        }
    }

    #[test]
    fn output_is_identical_across_runs_chunkings_and_gzip(
        log in log_strategy(),
        before in log_strategy(),
        sizes in prop::collection::vec(1usize..5000, 1..8),
    ) {
        let mut fresh = Engine::new(crate::util::compiled(), EngineKind::Prefilter);
        let whole = render(&mut fresh, &mut reader(log.clone().into_bytes()));

        // an engine that diagnosed another log first: no state leaks between inputs
        let mut used = Engine::new(crate::util::compiled(), EngineKind::Prefilter);
        let _ = render(&mut used, &mut reader(before.into_bytes()));
        prop_assert_eq!(&render(&mut used, &mut reader(log.clone().into_bytes())), &whole);

        // the two-thread pass (normally from line 10,000 on) from the first line
        let mut parallel = Engine::new(crate::util::compiled(), EngineKind::Prefilter).with_parallel_after(0);
        prop_assert_eq!(&render(&mut parallel, &mut reader(log.clone().into_bytes())), &whole);

        // the same bytes delivered in random chunks
        let chunked = Chunked { data: log.clone().into_bytes(), pos: 0, sizes, i: 0 };
        let mut r = LineReader::from_reader(Box::new(chunked), "gen".into()).expect("open");
        prop_assert_eq!(&render(&mut fresh, &mut r), &whole);

        // gzip, as one member and split in two concatenated members
        let gz = |b: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(b).expect("gzip");
            e.finish().expect("gzip")
        };
        let bytes = log.as_bytes();
        prop_assert_eq!(&render(&mut fresh, &mut reader(gz(bytes))), &whole);
        let mid = bytes.len() / 2;
        let mut two = gz(&bytes[..mid]);
        two.extend(gz(&bytes[mid..]));
        prop_assert_eq!(&render(&mut fresh, &mut reader(two)), &whole);
    }
}

/// Corpus logs up to this size, and every longer one the two-thread pass reads (past
/// [`PARALLEL_AFTER_LINES`] lines), go to the processes of
/// [`output_is_byte_identical_across_processes_and_thread_counts`]; the other long logs
/// add bytes, not code paths (13 MB of the corpus's 17).
const SMALL_LOG: u64 = 128 * 1024;

/// The prefilter finds what brute force finds on one generated log.
fn prefilter_agrees(log: String) -> Result<(), TestCaseError> {
    let mut fast = Engine::new(crate::util::compiled(), EngineKind::Prefilter);
    let mut brute = Engine::new(crate::util::compiled(), EngineKind::Brute);
    let (_, a) = fast
        .run(&mut reader(log.clone().into_bytes()))
        .expect("run");
    let (_, b) = brute.run(&mut reader(log.into_bytes())).expect("run");
    prop_assert_eq!(sorted(a), sorted(b));
    Ok(())
}

/// Cases of the brute-force property in the plain `cargo test` (brute force costs about
/// 0.15 s of CPU per generated log; `prefilter_oracle` compares the real logs).
/// `PROPTEST_CASES` does not change it.
const BRUTE_CASES: u32 = 12;

/// Cases of its heavy variant (`cargo test --release -- --ignored`, run by CI).
const BRUTE_CASES_HEAVY: u32 = 96;

proptest! {
    #![proptest_config(ProptestConfig { cases: BRUTE_CASES, ..ProptestConfig::default() })]

    #[test]
    fn prefilter_never_misses_what_brute_force_finds(log in log_strategy()) {
        prefilter_agrees(log)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: BRUTE_CASES_HEAVY, ..ProptestConfig::default() })]

    #[test]
    #[ignore = "heavy (brute force on 96 generated logs): cargo test --release -- --ignored"]
    fn prefilter_never_misses_what_brute_force_finds_on_many_logs(log in log_strategy()) {
        prefilter_agrees(log)?;
    }
}

#[test]
fn output_is_byte_identical_across_processes_and_thread_counts() {
    // separate processes get separate hash seeds, so any dependence on HashMap order
    // shows here; RAYON_NUM_THREADS guards a future parallel pipeline
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut logs: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .expect("corpus")
        .flatten()
        .map(|e| e.path().join("log.txt"))
        .filter(|p| {
            p.metadata().is_ok_and(|m| m.len() <= SMALL_LOG)
                || std::fs::read(p)
                    .is_ok_and(|b| memchr::memchr_iter(b'\n', &b).count() > PARALLEL_AFTER_LINES)
        })
        .collect();
    logs.sort();
    assert!(logs.len() > 200, "{} logs", logs.len());
    logs.push(root.join("tests/data/scenario/journal.txt"));
    let bin = assert_cmd::cargo::cargo_bin("crashdoc");
    for format in ["json", "text"] {
        let mut outputs = Vec::new();
        // 1 vs 2 threads, and two processes (two hash seeds) with 1
        for threads in ["1", "2", "1"] {
            let o = std::process::Command::new(&bin)
                .args(["--format", format, "--color", "never"])
                .args(&logs)
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .expect("run");
            assert!(o.status.code().is_some_and(|c| c <= 1), "{o:?}");
            outputs.push(o.stdout);
        }
        assert!(!outputs[0].is_empty());
        for o in &outputs[1..] {
            assert!(o == &outputs[0], "{format} output differs between runs");
        }
    }
}
