//! The real incidents of `corpus/` through the whole pipeline with the embedded library.
//!
//! The 20 incidents copied from `../shared/incidents/` (listed below) carry the
//! acceptance checks of the extraction and knowledge-base issues: the key line is part
//! of an extracted failure, no noise line is taken as the first failure, the truth
//! category is the top cause with the key line in its evidence, and a code bug
//! (`other`) gets no high-confidence cause.

use std::path::Path;

use crashdoc::corpus::{self, Incident};
use crashdoc::engine::matcher::EngineKind;
use crashdoc::engine::pipeline::Engine;

const SHARED: &[&str] = &[
    "deepspeed-other",
    "facechain-version-mismatch",
    "flash-attention-undefined-symbol-abi",
    "inkypi-host-oom",
    "llamafactory-disk-full",
    "llamafactory-gpu-oom",
    "pointnet2-pytorch-unsupported-compute-capability",
    "pytorch-permission-denied",
    "sglang-missing-shared-library",
    "stable-diffusion-webui-n-unsupported-compute-capability",
    "transformers-permission-denied",
    "vllm-disk-full",
    "vllm-gpu-oom",
    "vllm-hang-timeout",
    "vllm-host-oom",
    "vllm-import-error",
    "vllm-kv-cache-insufficient",
    "vllm-other",
    "vllm-unsupported-compute-capability",
    "vllm-version-mismatch",
];

fn incidents() -> Vec<Incident> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    corpus::load_dir(&dir).expect("corpus loads")
}

#[test]
fn the_shared_incidents_are_all_in_the_corpus() {
    let all = incidents();
    for name in SHARED {
        assert!(
            all.iter().any(|i| i.name == *name),
            "corpus/{name} is missing"
        );
    }
}

#[test]
fn key_lines_are_extracted_and_noise_is_never_the_first_failure() {
    let mut engine = Engine::new(crate::util::compiled(), EngineKind::Prefilter);
    let mut problems = Vec::new();
    for inc in incidents()
        .iter()
        .filter(|i| SHARED.contains(&i.name.as_str()))
    {
        let mut r = crashdoc::engine::ingest::LineReader::open(
            &crashdoc::engine::ingest::Source::Path(inc.log.clone()),
        )
        .expect("open");
        let x = engine.extract(&mut r).expect("extract");
        let key = inc.expected.key_line.clone().unwrap_or_default();
        // In a code-bug incident the thread's key line can be the misleading INFO line
        // itself (listed as noise too): it is no failure, and must not be one.
        let key_is_noise = inc.expected.noise.contains(&key);
        if !key_is_noise
            && !x
                .failures
                .iter()
                .any(|f| f.lines.iter().any(|l| l.text.contains(&key)))
        {
            problems.push(format!(
                "{}: key line not in any extracted failure: {key}",
                inc.name
            ));
        }
        for noise in &inc.expected.noise {
            if *noise == key {
                continue; // the thread's key line is itself the misleading one
            }
            // a hint printed inside the real error's own line is not a separate line
            let raw = std::fs::read_to_string(&inc.log).unwrap_or_default();
            if raw
                .lines()
                .any(|l| l.contains(key.as_str()) && l.contains(noise.as_str()))
            {
                continue;
            }
            for f in x.failures.iter().filter(|f| f.first_in_attempt) {
                if f.headline.contains(noise.as_str()) {
                    problems.push(format!(
                        "{}: noise taken as the first failure: {noise}",
                        inc.name
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn shared_incidents_are_diagnosed_with_their_truth_category() {
    let mut engine = Engine::new(crate::util::compiled(), EngineKind::Prefilter);
    let mut problems = Vec::new();
    for inc in incidents()
        .iter()
        .filter(|i| SHARED.contains(&i.name.as_str()))
    {
        let (o, _) = corpus::evaluate(&mut engine, inc).expect("diagnose");
        if !(o.top1 && o.key_line_hit) {
            problems.push(format!(
                "{}: {} (got {:?})",
                inc.name,
                o.problems.join("; "),
                o.top_signature
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
