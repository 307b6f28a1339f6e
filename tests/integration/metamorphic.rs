//! Presentation invariance of the signature examples, and the README's metamorphic table.
//!
//! Every transformation of `crashdoc::corpus::metamorph` is applied to every positive
//! example of the embedded library (burying in 1,000 lines of the corpus's healthy logs
//! instead of 10,000, to keep the test fast); the pairs that held are recorded in
//! `tests/data/metamorphic/examples.json`, and a pair that held there and fails now
//! fails the test. The plain `cargo test` checks each example under every
//! [`ROTATION`]th transformation (example `i` under transformation `j` when
//! `(i + j) % ROTATION == 0`, so every example and every transformation take part); the
//! `#[ignore]`d heavy test (CI: `cargo test --release -- --ignored`) checks every pair.
//! After an intended change (an engine fix that makes more pairs hold, a new signature),
//! regenerate the record with the heavy test,
//! `CRASHDOC_UPDATE_METAMORPHIC=1 cargo test --release --test integration metamorphic:: -- --include-ignored`,
//! and commit it.

use crashdoc::corpus::invariance::{self, Subject};
use crashdoc::corpus::metamorph::{self, Ctx};
use crashdoc::corpus::{self, render};

use crate::util::root;

/// Burying depth for the examples (the corpus run uses `metamorph::BURY_LINES`).
const EXAMPLE_BURY_LINES: usize = invariance::EXAMPLE_BURY_LINES;

/// The default test's share of the pairs: one in `ROTATION`.
const ROTATION: usize = 3;

/// Every positive example of the embedded library, as a metamorphic subject.
fn example_subjects() -> Vec<Subject> {
    invariance::example_subjects(crate::util::library())
}

/// Runs the examples under the transformations (all pairs with `rotation` 1, one in
/// `rotation` otherwise) and fails on a pair that held in the committed record and
/// fails now. With every pair and `CRASHDOC_UPDATE_METAMORPHIC` set, rewrites the record.
fn check_examples(rotation: usize) {
    let compiled = crate::util::compiled();
    let incidents = corpus::load_dir(&root().join("corpus")).expect("corpus");
    let (healthy, noise) = invariance::healthy_lines(&incidents);
    assert!(
        !healthy.is_empty() && !noise.is_empty(),
        "no healthy corpus log"
    );
    let subjects = example_subjects();
    let ctx = Ctx {
        seed: invariance::SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: EXAMPLE_BURY_LINES,
    };
    let path = root().join("tests/data/metamorphic/examples.json");
    if rotation == 1 && std::env::var_os("CRASHDOC_UPDATE_METAMORPHIC").is_some() {
        let now = invariance::run(compiled, &subjects, &ctx, metamorph::ALL);
        std::fs::write(&path, invariance::to_json(&now)).expect("write");
        return;
    }
    let before = invariance::read(&path).expect("the committed record");
    let (mut regressions, mut held, mut total) = (Vec::new(), 0, 0);
    for g in 0..rotation {
        let group: Vec<Subject> = subjects
            .iter()
            .enumerate()
            .filter(|(i, _)| i % rotation == g)
            .map(|(_, s)| s.clone())
            .collect();
        let ts: Vec<metamorph::Transform> = metamorph::ALL
            .iter()
            .enumerate()
            .filter(|(j, _)| (g + j) % rotation == 0)
            .map(|(_, t)| *t)
            .collect();
        let now = invariance::run(compiled, &group, &ctx, &ts);
        regressions.extend(invariance::regressions(&before, &now));
        let (h, t) = now.totals();
        held += h;
        total += t;
    }
    eprintln!("signature examples: {held}/{total} pairs held");
    assert!(total > 0, "no pair checked");
    assert!(
        regressions.is_empty(),
        "{} pair(s) held in {} and fail now:\n{}\n(after an intended change: \
         CRASHDOC_UPDATE_METAMORPHIC=1 cargo test --release --test integration metamorphic:: -- --include-ignored)",
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
fn signature_examples_keep_their_diagnosis_under_every_transformation() {
    check_examples(ROTATION);
}

#[test]
#[ignore = "heavy (every pair): cargo test --release -- --ignored"]
fn signature_examples_keep_their_diagnosis_under_every_transformation_every_pair() {
    check_examples(1);
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

/// Issue 15: no healthy corpus log (`category: none`), plain or buried at a random place
/// in the corpus's healthy noise (`bury-in-noise`, the depth `corpus run --metamorphic`
/// uses), gets a `medium` or `high` cause. (A healthy log may keep a `low` one: a run
/// that survived a warning-level failure.)
#[test]
fn no_healthy_log_plain_or_buried_gets_a_medium_or_high_cause() {
    use crashdoc::engine::diagnosis::BuildOptions;
    use crashdoc::engine::matcher::EngineKind;
    use crashdoc::engine::pipeline::Engine;
    use crashdoc::engine::rank::Confidence;

    let compiled = crate::util::compiled();
    let incidents = corpus::load_dir(&root().join("corpus")).expect("corpus");
    let (healthy, noise) = invariance::healthy_lines(&incidents);
    let ctx = Ctx {
        seed: invariance::SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: metamorph::BURY_LINES,
    };
    let bury = metamorph::get("bury-in-noise").expect("the transformation");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for s in invariance::subjects(&incidents) {
        let expected = incidents.iter().find(|i| i.name == s.name);
        if expected.is_none_or(|i| i.expected.category != "none") {
            continue;
        }
        let buried = (bury.apply)(&s.text, &ctx).expect("buried");
        for (how, text) in [("plain", &s.text), ("buried", &buried)] {
            let mut engine = Engine::new(compiled, EngineKind::Prefilter);
            let d = engine.diagnose_text(&s.name, text, BuildOptions::default());
            checked += 1;
            if let Some(c) = d
                .causes
                .first()
                .filter(|c| c.confidence >= Confidence::Medium)
            {
                wrong.push(format!(
                    "{} ({how}): {} {:?}",
                    s.name, c.signature, c.confidence
                ));
            }
        }
    }
    assert!(checked >= 80, "only {checked} healthy diagnoses");
    assert!(
        wrong.is_empty(),
        "healthy logs with a medium or high cause:\n{}",
        wrong.join("\n")
    );
}
