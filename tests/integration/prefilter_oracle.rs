//! The prefilter may report false positives, never false negatives: on every log the
//! tests have (the corpus, the scenario, every signature example), the prefiltered
//! matcher must find exactly what the brute-force matcher (every signature's conditions
//! on every failure and line) finds. So must the two-thread pass, which the pipeline
//! uses on long inputs and these tests force on every log.
//!
//! Brute force evaluates every signature on every line (about a second of CPU per
//! megabyte of log in a release build with 960 signatures), so the plain `cargo test --release` compares a documented
//! sample: every signature example, the scenario, every corpus log up to [`SMALL_LOG`]
//! and every [`SAMPLE_STRIDE`]th longer one up to [`LONG_LOG`] (in name order), and one
//! transformation per sampled log in turn. The full comparisons (every corpus log of any
//! size, every transformation of every sampled log) are `#[ignore]`d tests that CI runs
//! (`cargo test --release -- --ignored`, in `.ci/run`): about 160 s of CPU.

use std::path::Path;

use crashdoc::engine::ingest::LineReader;
use crashdoc::engine::matcher::{EngineKind, Matches};
use crashdoc::engine::pipeline::Engine;

/// Corpus logs up to this size are all compared by the default test.
const SMALL_LOG: usize = 16 * 1024;

/// Corpus logs above this size are compared only by the full (ignored) test.
const LONG_LOG: usize = 128 * 1024;

/// The default test compares every `SAMPLE_STRIDE`th corpus log between [`SMALL_LOG`]
/// and [`LONG_LOG`] bytes (in name order).
const SAMPLE_STRIDE: usize = 8;

/// Every corpus log (name order) with its bytes.
fn corpus_logs() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut entries: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .expect("corpus")
        .flatten()
        .map(|e| e.path().join("log.txt"))
        .filter(|p| p.exists())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read");
            (p.display().to_string(), bytes)
        })
        .collect()
}

/// The default sample of the corpus logs: every small one, every [`SAMPLE_STRIDE`]th
/// of the middle-sized ones, no long one.
fn sampled_corpus_logs() -> Vec<(String, Vec<u8>)> {
    let (small, middle): (Vec<_>, Vec<_>) = corpus_logs()
        .into_iter()
        .filter(|(_, b)| b.len() <= LONG_LOG)
        .partition(|(_, b)| b.len() <= SMALL_LOG);
    let mut logs = small;
    logs.extend(middle.into_iter().step_by(SAMPLE_STRIDE));
    logs
}

/// The scenario journal and every signature example (positive and near-miss).
fn scenario_and_examples() -> Vec<(String, Vec<u8>)> {
    let lib = crate::util::library();
    let scenario = crate::util::repo("tests/data/scenario/journal.txt");
    let mut logs = vec![(
        scenario.display().to_string(),
        std::fs::read(&scenario).expect("read"),
    )];
    for s in &lib.signatures {
        for (i, ex) in s
            .examples
            .matches
            .iter()
            .chain(&s.examples.no_match)
            .enumerate()
        {
            logs.push((format!("{}#{i}", s.id), ex.log.clone().into_bytes()));
        }
    }
    logs
}

fn compare(logs: Vec<(String, Vec<u8>)>) -> usize {
    let compiled = crate::util::compiled();
    let mut fast = Engine::new(compiled, EngineKind::Prefilter);
    let mut brute = Engine::new(compiled, EngineKind::Brute);
    // the two-thread path (normally past 10,000 lines) from the first line on
    let mut parallel = Engine::new(compiled, EngineKind::Prefilter).with_parallel_after(0);
    let mut hits = 0;
    for (name, bytes) in logs {
        let a = run(&mut fast, &name, bytes.clone());
        let p = run(&mut parallel, &name, bytes.clone());
        let b = run(&mut brute, &name, bytes);
        hits += b.failures.len() + b.loose.len();
        assert_eq!(a, b, "prefilter and brute force differ on {name}");
        assert_eq!(p, b, "two threads and brute force differ on {name}");
    }
    hits
}

fn run(engine: &mut Engine<'_>, name: &str, bytes: Vec<u8>) -> Matches {
    let mut r = LineReader::from_reader(Box::new(std::io::Cursor::new(bytes)), name.to_string())
        .expect("open");
    let (_, mut m) = engine.run(&mut r).expect("run");
    m.failures.sort_by_key(|h| (h.failure, h.signature));
    m
}

#[test]
fn prefilter_equals_brute_force_on_every_example_and_a_corpus_sample() {
    let mut logs = scenario_and_examples();
    let sample = sampled_corpus_logs();
    assert!(sample.len() > 150, "too few corpus logs: {}", sample.len());
    logs.extend(sample);
    let hits = compare(logs);
    assert!(hits > 100, "the oracle compared too few matches: {hits}");
}

/// Every corpus log, the long ones included (about a minute and a half of CPU): run by
/// CI with `cargo test --release -- --ignored`.
#[test]
#[ignore = "heavy (brute force on every corpus log): cargo test --release -- --ignored"]
fn prefilter_equals_brute_force_on_every_corpus_log() {
    let logs = corpus_logs();
    assert!(logs.iter().any(|(_, b)| b.len() > LONG_LOG), "no long log");
    let hits = compare(logs);
    assert!(hits > 100, "the oracle compared too few matches: {hits}");
}

/// The same on transformed logs (`crashdoc::corpus::metamorph`): a sample of the corpus
/// logs (every eighth up to [`LONG_LOG`]) and of the signature examples (every
/// eightieth), burying in 300 lines of noise rather than 10,000 (brute force evaluates
/// every signature on every line). With `every_transformation`, each sampled log under
/// every transformation (about a minute of CPU); without, sampled log `k` under
/// transformation `k mod N` only, so every transformation still runs on some logs.
/// Returns how many transformed logs were compared.
fn compare_transformed(every_transformation: bool) -> usize {
    use crashdoc::corpus::{self, invariance, metamorph};
    let compiled = crate::util::compiled();
    let lib = compiled.library;
    let mut fast = Engine::new(compiled, EngineKind::Prefilter);
    let mut brute = Engine::new(compiled, EngineKind::Brute);
    let mut parallel = Engine::new(compiled, EngineKind::Prefilter).with_parallel_after(0);
    let incidents = corpus::load_dir(&crate::util::repo("corpus")).expect("corpus");
    let (healthy, noise) = invariance::healthy_lines(&incidents);
    let ctx = metamorph::Ctx {
        seed: invariance::SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: 300,
    };
    let mut texts: Vec<(String, String)> = invariance::subjects(&incidents)
        .into_iter()
        .filter(|s| s.text.len() <= LONG_LOG)
        .step_by(8)
        .map(|s| (s.name, s.text))
        .collect();
    let examples = lib.signatures.iter().flat_map(|s| {
        s.examples
            .matches
            .iter()
            .enumerate()
            .map(move |(i, e)| (format!("{}#{i}", s.id), e.log.clone()))
    });
    texts.extend(examples.step_by(80));
    let n = metamorph::ALL.len();
    let mut compared = 0;
    for (k, (name, text)) in texts.iter().enumerate() {
        for (j, t) in metamorph::ALL.iter().enumerate() {
            if !every_transformation && j != k % n {
                continue;
            }
            let Some(x) = (t.apply)(text, &ctx) else {
                continue;
            };
            let name = format!("{name} ({})", t.name);
            let a = run(&mut fast, &name, x.clone().into_bytes());
            let p = run(&mut parallel, &name, x.clone().into_bytes());
            let b = run(&mut brute, &name, x.into_bytes());
            assert_eq!(a, b, "prefilter and brute force differ on {name}");
            assert_eq!(p, b, "two threads and brute force differ on {name}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn prefilter_equals_brute_force_on_transformed_logs() {
    let compared = compare_transformed(false);
    assert!(compared > 25, "too few transformed logs: {compared}");
}

/// Every transformation of every sampled log: run by CI with
/// `cargo test --release -- --ignored`.
#[test]
#[ignore = "heavy (brute force on every transformation): cargo test --release -- --ignored"]
fn prefilter_equals_brute_force_on_every_transformation() {
    let compared = compare_transformed(true);
    assert!(compared > 200, "too few transformed logs: {compared}");
}
