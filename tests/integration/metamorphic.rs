//! Presentation invariance of the signature examples, and the README's metamorphic table.
//!
//! Every transformation of `crashdoc::corpus::metamorph` is applied to every positive
//! example of the embedded library (burying in 1,000 lines of the corpus's healthy logs
//! instead of 10,000, to keep the test fast); the pairs that held are recorded in
//! `tests/data/metamorphic/examples.json`, and a pair that held there and fails now
//! fails the test. After an intended change (an engine fix that makes more pairs hold, a
//! new signature), regenerate the record with
//! `CRASHDOC_UPDATE_METAMORPHIC=1 cargo test --test integration metamorphic::` and commit it.

use crashdoc::corpus::invariance::{self, Subject};
use crashdoc::corpus::metamorph::{self, Ctx};
use crashdoc::corpus::{self, render};

use crate::util::root;

/// Burying depth for the examples (the corpus run uses `metamorph::BURY_LINES`).
const EXAMPLE_BURY_LINES: usize = 1_000;

#[test]
fn signature_examples_keep_their_diagnosis_under_every_transformation() {
    let compiled = crate::util::compiled();
    let lib = compiled.library;
    let incidents = corpus::load_dir(&root().join("corpus")).expect("corpus");
    let (healthy, noise) = invariance::healthy_lines(&incidents);
    assert!(
        !healthy.is_empty() && !noise.is_empty(),
        "no healthy corpus log"
    );
    let subjects: Vec<Subject> = lib
        .signatures
        .iter()
        .flat_map(|s| {
            s.examples
                .matches
                .iter()
                .enumerate()
                .map(move |(i, e)| Subject {
                    name: format!("{}#{i}", s.id),
                    text: e.log.clone(),
                    key_line: None,
                })
        })
        .collect();
    let ctx = Ctx {
        seed: invariance::SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: EXAMPLE_BURY_LINES,
    };
    let now = invariance::run(compiled, &subjects, &ctx, metamorph::ALL);
    let path = root().join("tests/data/metamorphic/examples.json");
    if std::env::var_os("CRASHDOC_UPDATE_METAMORPHIC").is_some() {
        std::fs::write(&path, invariance::to_json(&now)).expect("write");
        return;
    }
    let before = invariance::read(&path).expect("the committed record");
    let regressions = invariance::regressions(&before, &now);
    let (held, total) = now.totals();
    eprintln!("signature examples: {held}/{total} pairs held");
    assert!(
        regressions.is_empty(),
        "{} pair(s) held in {} and fail now:\n{}\n(after an intended change: \
         CRASHDOC_UPDATE_METAMORPHIC=1 cargo test --test integration metamorphic::)",
        regressions.len(),
        path.display(),
        regressions
            .iter()
            .map(|(t, f)| format!("  {t} on {}: {}", f.log, f.reason))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn readme_shows_the_committed_metamorphic_table() {
    let saved = invariance::read(&root().join("corpus/metamorphic.json")).expect("baseline");
    let want = render::invariance_markdown(&saved);
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let (start, end) = ("<!-- metamorphic:start -->\n", "<!-- metamorphic:end -->");
    let a = readme.find(start).expect("start marker") + start.len();
    let b = readme.find(end).expect("end marker");
    assert_eq!(
        &readme[a..b],
        want,
        "README's metamorphic table is not corpus/metamorphic.json's: regenerate it with \
         `crashdoc corpus run corpus --metamorphic --format markdown`"
    );
}
