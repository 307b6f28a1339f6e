use super::*;
use crate::engine::ingest::{LineReader, Source};
use crate::engine::normalize::normalize;

pub(crate) fn extract_file(path: &str) -> Extraction {
    let mut r = LineReader::open(&Source::Path(path.into())).expect("open");
    let mut x = Extractor::new(ExtractOptions {
        plumbing: vec![
            "vllm/model_executor/layers/".into(),
            "vllm/attention/".into(),
            "vllm/utils/".into(),
        ],
    });
    while let Some(l) = r.next_line().expect("read") {
        let _ = x.push(normalize(l));
    }
    x.finish()
}

fn scenario() -> Extraction {
    extract_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/scenario/journal.txt"
    ))
}

#[test]
fn scenario_has_two_attempts_with_one_worker_failure_each() {
    let x = scenario();
    assert_eq!(x.attempts.len(), 2, "{:#?}", x.attempts);
    assert_eq!(x.attempts[0].restart_counter, Some(1));
    assert_eq!(x.attempts[1].restart_counter, Some(2));
    assert_eq!(x.unit.as_deref(), Some("vllm-kimi-k25.service"));
    for (a, first_worker) in [(1, "Worker_TP4"), (2, "Worker_TP2")] {
        let firsts: Vec<_> = x
            .failures
            .iter()
            .filter(|f| f.attempt == a && f.first_in_attempt)
            .collect();
        assert_eq!(firsts.len(), 1);
        let f = firsts[0];
        assert_eq!(f.kind, FailureKind::Traceback);
        assert!(f.headline.starts_with("RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer version (0.6.4)."), "{}", f.headline);
        assert!(
            f.first.stream.starts_with(first_worker),
            "{}",
            f.first.stream
        );
        assert_eq!(f.importing.as_deref(), Some("flashinfer"));
        assert_eq!(
            f.crash_site.as_ref().map(|s| s.short()).as_deref(),
            Some("deepseek_v2.py:932")
        );
        assert_eq!(
            f.raise_site.as_ref().map(|s| s.short()).as_deref(),
            Some("env.py:58")
        );
        assert_eq!(f.preamble.as_deref(), Some("WorkerProc failed to start."));
        if a == 1 {
            assert_eq!(f.streams.len(), 8, "{:?}", f.streams);
            assert_eq!(f.count, 8);
        }
        let consequences: Vec<_> = x
            .failures
            .iter()
            .filter(|c| c.consequence_of == Some(f.id))
            .map(|c| c.headline.as_str())
            .collect();
        assert!(
            consequences
                .iter()
                .any(|h| h.starts_with("Exception: WorkerProc initialization failed")),
            "{consequences:?}"
        );
        assert!(
            consequences
                .iter()
                .any(|h| h.starts_with("RuntimeError: Engine core initialization failed")),
            "{consequences:?}"
        );
        assert!(
            consequences
                .iter()
                .any(|h| h.contains("WorkerProc was terminated")),
            "{consequences:?}"
        );
        assert!(
            consequences
                .iter()
                .any(|h| h.contains("Main process exited, code=exited, status=1/FAILURE")),
            "{consequences:?}"
        );
    }
}
