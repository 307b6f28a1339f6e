//! The prefilter may report false positives, never false negatives: on every log the
//! tests have (the corpus, the scenario, every signature example), the prefiltered
//! matcher must find exactly what the brute-force matcher (every signature's conditions
//! on every failure and line) finds. So must the two-thread pass, which the pipeline
//! uses on long inputs and these tests force on every log.

use std::path::Path;

use crashdoc::engine::ingest::LineReader;
use crashdoc::engine::matcher::{EngineKind, Matches};
use crashdoc::engine::pipeline::Engine;

/// Corpus logs above this size are compared by [`prefilter_equals_brute_force_on_long_logs`]
/// (brute force runs every signature on every line: minutes per megabyte in a debug
/// build; CI runs that test on the release build).
const LONG_LOG: usize = 128 * 1024;

fn corpus_logs(long: bool) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut logs = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .expect("corpus")
        .flatten()
        .map(|e| e.path().join("log.txt"))
        .filter(|p| p.exists())
        .collect();
    entries.sort();
    for p in entries {
        let bytes = std::fs::read(&p).expect("read");
        if (bytes.len() > LONG_LOG) == long {
            logs.push((p.display().to_string(), bytes));
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
fn prefilter_equals_brute_force_on_every_log() {
    let lib = crate::util::library();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut logs = corpus_logs(false);
    let scenario = root.join("tests/data/scenario/journal.txt");
    logs.push((
        scenario.display().to_string(),
        std::fs::read(&scenario).expect("read"),
    ));
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
    assert!(logs.len() > 100, "too few logs: {}", logs.len());
    let hits = compare(logs);
    assert!(hits > 100, "the oracle compared too few matches: {hits}");
}

/// The corpus's long logs (over [`LONG_LOG`] bytes): `cargo test --release --test
/// integration prefilter_oracle` (CI runs it so).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "brute force on long logs: run with `cargo test --release --test integration prefilter_oracle`"
)]
fn prefilter_equals_brute_force_on_long_logs() {
    let logs = corpus_logs(true);
    assert!(!logs.is_empty(), "the corpus has no long log");
    let hits = compare(logs);
    assert!(hits > 0, "the oracle compared no match on the long logs");
}

/// The same on transformed logs (`crashdoc::corpus::metamorph`): every transformation of
/// a sample of the corpus logs and of the signature examples, burying in 300 lines of
/// noise rather than 10,000 (brute force evaluates every signature on every line).
/// Thousands of brute-force runs: release build only, with the long logs.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "brute force on thousands of transformed logs: run with `cargo test --release --test integration prefilter_oracle`"
)]
fn prefilter_equals_brute_force_on_transformed_logs() {
    use crashdoc::corpus::{self, invariance, metamorph};
    let compiled = crate::util::compiled();
    let lib = compiled.library;
    let mut fast = Engine::new(compiled, EngineKind::Prefilter);
    let mut brute = Engine::new(compiled, EngineKind::Brute);
    let mut parallel = Engine::new(compiled, EngineKind::Prefilter).with_parallel_after(0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let incidents = corpus::load_dir(&root.join("corpus")).expect("corpus");
    let (healthy, noise) = invariance::healthy_lines(&incidents);
    let ctx = metamorph::Ctx {
        seed: invariance::SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: 300,
    };
    // Long logs are compared untransformed (above); every eighth of the other corpus logs
    // and every eightieth example, under every transformation, keep this near a minute
    // of a release build (all of them take a quarter of an hour, on one core).
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
    let mut compared = 0;
    for (name, text) in &texts {
        for t in metamorph::ALL {
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
    assert!(compared > 200, "too few transformed logs: {compared}");
}
