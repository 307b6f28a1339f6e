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
