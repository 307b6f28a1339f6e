//! The prefilter may report false positives, never false negatives: on every log the
//! tests have (the corpus, the scenario, every signature example), the prefiltered
//! matcher must find exactly what the brute-force matcher (every signature's conditions
//! on every failure and line) finds. So must the two-thread pass, which the pipeline
//! uses on long inputs and these tests force on every log.

use std::path::Path;

use crashdoc::engine::ingest::LineReader;
use crashdoc::engine::matcher::{EngineKind, Matches};
use crashdoc::engine::pipeline::Engine;

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
    let mut fast = Engine::new(lib, EngineKind::Prefilter);
    let mut brute = Engine::new(lib, EngineKind::Brute);
    // the two-thread path (normally past 10,000 lines) from the first line on
    let mut parallel = Engine::new(lib, EngineKind::Prefilter).with_parallel_after(0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut logs: Vec<(String, Vec<u8>)> = Vec::new();
    for e in std::fs::read_dir(root.join("corpus"))
        .expect("corpus")
        .flatten()
    {
        let p = e.path().join("log.txt");
        if p.exists() {
            logs.push((p.display().to_string(), std::fs::read(&p).expect("read")));
        }
    }
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
    let mut hits = 0;
    for (name, bytes) in logs {
        let a = run(&mut fast, &name, bytes.clone());
        let p = run(&mut parallel, &name, bytes.clone());
        let b = run(&mut brute, &name, bytes);
        hits += b.failures.len() + b.loose.len();
        assert_eq!(a, b, "prefilter and brute force differ on {name}");
        assert_eq!(p, b, "two threads and brute force differ on {name}");
    }
    assert!(hits > 100, "the oracle compared too few matches: {hits}");
}

/// The same on transformed logs (`crashdoc::corpus::metamorph`): every transformation of
/// every corpus log and of a sample of signature examples (every tenth), burying in 300
/// lines of noise rather than 10,000 (brute force is slow on long logs in a debug build).
#[test]
fn prefilter_equals_brute_force_on_transformed_logs() {
    use crashdoc::corpus::{self, invariance, metamorph};
    let lib = crate::util::library();
    let mut fast = Engine::new(lib, EngineKind::Prefilter);
    let mut brute = Engine::new(lib, EngineKind::Brute);
    let mut parallel = Engine::new(lib, EngineKind::Prefilter).with_parallel_after(0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let incidents = corpus::load_dir(&root.join("corpus")).expect("corpus");
    let (healthy, noise) = invariance::healthy_lines(&incidents);
    let ctx = metamorph::Ctx {
        seed: invariance::SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: 300,
    };
    let mut texts: Vec<(String, String)> = invariance::subjects(&incidents)
        .into_iter()
        .map(|s| (s.name, s.text))
        .collect();
    let examples = lib.signatures.iter().flat_map(|s| {
        s.examples
            .matches
            .iter()
            .enumerate()
            .map(move |(i, e)| (format!("{}#{i}", s.id), e.log.clone()))
    });
    texts.extend(examples.step_by(10));
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
    assert!(compared > 1000, "too few transformed logs: {compared}");
}
