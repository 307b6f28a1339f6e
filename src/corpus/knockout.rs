//! Knock-out: generalization measured without new data (`crashdoc corpus run --knockout`).
//!
//! The corpus's incidents were read while the signatures were written, so the plain
//! score is how well the library knows its own incidents, not how it does on the next
//! user's log (most of which no signature names yet). Knock-out stands in for that log:
//! for each signature that explains incidents of the corpus, the library *without* it —
//! and without every signature sharing one of its example texts (a sibling written from
//! the same lines) — diagnoses those incidents. What is left answering is the rest of
//! the library: more generic signatures, code tables, wrappers, the fuzzy layer, and
//! whatever infers a category from the words.
//!
//! Which signature explains an incident: the one its `expected.yaml` names
//! (`signature:`), else the top cause of the full library's run when that cause is right.
//! An incident nothing explains even with the full library keeps its full-library
//! outcome (it is a miss already, and stays one). Incidents are grouped by what is
//! knocked out, so each reduced library is compiled once.
//!
//! The category model is retrained for each fold ([`fold_library`]): without the
//! signatures left out and without the corpus key lines of the fold's incidents and of
//! every incident from the same thread. An incident the full library does not explain is
//! a fold of its own (nothing left out but its own key line and its thread's).
//!
//! Measures, over incidents expecting a failure category (not `none`, not `other`):
//! top-1 category, no cause at all, and confident wrong (a `high` top cause of another
//! category); code bugs (`other`) are reported apart: how many get a `high` cause.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rayon::prelude::*;

use super::seen::{is_seen, ExampleText};
use super::{check, evaluate, fits, Incident, Outcome};
use crate::engine::diagnosis::Diagnosis;
use crate::engine::matcher::{Compiled, EngineKind};
use crate::engine::pipeline::Engine;
use crate::engine::rank::Confidence;
use crate::knowledge::calibrate::{self, CalibrationFile};
use crate::knowledge::model::{featurize, Doc, Featured, Model, ModelRef};
use crate::knowledge::signature::docs::library_docs;
use crate::knowledge::signature::Library;

/// One incident under knock-out.
#[derive(Debug, Clone)]
pub struct KnockedIncident {
    pub name: String,
    pub expected: String,
    /// The signatures left out of the library for it (empty: diagnosed with all).
    pub removed: Vec<String>,
    pub outcome: Outcome,
    /// The top cause's layer (`inferred`, `fuzzy`, `table:<id>`…), when not a file.
    pub top_layer: Option<String>,
    /// The top cause's signature (a file's id, a table's code, `inferred`…).
    pub top_signature: Option<String>,
    /// The top cause's score, when there is one.
    pub top_score: Option<f64>,
    /// The top cause's probability, when it is inferred.
    pub top_probability: Option<f64>,
    /// The top cause is right (its category is expected or in `also`).
    pub right: bool,
    /// The inferred cause, wherever it ranks: the model's raw probability and whether its
    /// category is right (the points the calibration is fitted on: which incidents get
    /// one does not depend on the calibration, so the fit is stable).
    pub inferred: Option<(f64, bool)>,
    /// The thread the incident comes from (cross-fitting folds split by it).
    pub thread: String,
    /// The full library's top cause when a signature layer found it and the incident is
    /// unseen (no signature example holds its lines): its layer
    /// ([`calibrate::score_layer`]), score and whether it is right (as `corpus run`
    /// counts: a cause on a healthy log is wrong). One of the points the signature
    /// layers' calibration is fitted on.
    pub plain: Option<(&'static str, f64, bool)>,
}

impl KnockedIncident {
    /// A failure category is expected (not `none`, not `other`).
    pub fn expects_category(&self) -> bool {
        self.expected != "none" && self.expected != "other"
    }

    pub fn no_cause(&self) -> bool {
        self.outcome.got.is_empty()
    }

    /// A `high` top cause that is wrong.
    pub fn confident_wrong(&self) -> bool {
        self.outcome.top_confidence == Some(Confidence::High) && !self.right
    }
}

/// The signatures to leave out with `id`: itself and every signature sharing one of its
/// example texts (trimmed, exact).
pub fn knocked_with(lib: &Library, id: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::from([id.to_string()]);
    let Some(sig) = lib.get(id) else {
        return out;
    };
    let texts: BTreeSet<&str> = sig
        .examples
        .matches
        .iter()
        .map(|e| e.log.trim())
        .filter(|t| !t.is_empty())
        .collect();
    for s in &lib.signatures {
        if s.examples
            .matches
            .iter()
            .any(|e| texts.contains(e.log.trim()))
        {
            out.insert(s.id.clone());
        }
    }
    out
}

/// The library without `removed`.
pub fn without(lib: &Library, removed: &BTreeSet<String>) -> Library {
    lib.subset(|s| !removed.contains(&s.id))
}

/// The signature that explains an incident with the full library, if any.
fn explaining(inc: &Incident, full: &Diagnosis) -> Option<String> {
    if let Some(s) = &inc.expected.signature {
        return Some(s.clone());
    }
    let e = &inc.expected;
    if e.category == "none" || e.category == "other" {
        return None;
    }
    let top = full.causes.first()?;
    if top.layer.as_deref() == Some("inferred") {
        return None;
    }
    fits(e, top.category.as_str()).then(|| top.signature.clone())
}

fn knocked(inc: &Incident, d: &Diagnosis, removed: Vec<String>) -> KnockedIncident {
    let outcome = check(inc, d);
    let top = d.causes.first();
    let right_category = |cat: &str| {
        inc.expected.category != "none"
            && inc.expected.category != "other"
            && fits(&inc.expected, cat)
    };
    let right = top.is_some_and(|c| right_category(c.category.as_str()));
    let inferred = d
        .causes
        .iter()
        .find_map(|c| Some((c.raw_probability?, right_category(c.category.as_str()))));
    KnockedIncident {
        name: inc.name.clone(),
        expected: inc.expected.category.clone(),
        removed,
        top_layer: top.and_then(|c| c.layer.clone()),
        top_signature: top.map(|c| c.signature.clone()),
        top_score: top.map(|c| c.score),
        top_probability: top.and_then(|c| c.probability),
        right,
        inferred,
        thread: thread(&inc.expected.source).to_string(),
        outcome,
        plain: None,
    }
}

/// An unseen incident's calibration point from the full library's run: its top cause's
/// layer, score and rightness, when a signature layer found it.
fn plain_point(
    examples: &ExampleText,
    inc: &Incident,
    d: &Diagnosis,
) -> Option<(&'static str, f64, bool)> {
    let e = &inc.expected;
    if is_seen(examples, e.signature.as_deref(), e.key_line.as_deref(), d) {
        return None;
    }
    let top = d.causes.first()?;
    let layer = calibrate::score_layer(top.layer.as_deref())?;
    Some((layer, top.score, fits(e, top.category.as_str())))
}

/// Diagnoses `incidents` with `compiled`; an unreadable log gives `None`.
fn diagnose_all<'a>(
    compiled: &Compiled<'_>,
    kind: EngineKind,
    incidents: &[&'a Incident],
) -> Vec<(&'a Incident, Option<Diagnosis>)> {
    let mut engine = Engine::new(compiled, kind);
    incidents
        .iter()
        .map(|inc| (*inc, evaluate(&mut engine, inc).ok().map(|(_, d)| d)))
        .collect()
}

/// The thread an incident comes from (its source without a fragment): folds split by it.
fn thread(source: &str) -> &str {
    source.split('#').next().unwrap_or(source)
}

/// The library a fold diagnoses with: without `removed`, and, when the library has a
/// category model, one retrained without those signatures and without the corpus
/// documents of `held_out` incidents (and every incident of their threads), so the model
/// never saw what it is asked about. `docs` are the full library's and the corpus's.
fn fold_library(
    lib: &Library,
    removed: &BTreeSet<String>,
    held_out: &[&Incident],
    docs: &[Featured<'_>],
    sources: &BTreeMap<String, String>,
) -> Library {
    let mut reduced = without(lib, removed);
    if lib.model.is_some() {
        let threads: BTreeSet<&str> = held_out
            .iter()
            .map(|i| thread(&i.expected.source))
            .collect();
        let keep = |d: &Doc| match (&d.signature, &d.incident) {
            (Some(s), _) => !removed.contains(s),
            (None, Some(name)) => {
                !sources
                    .get(name)
                    .is_some_and(|s| threads.contains(thread(s)))
                    && !held_out.iter().any(|i| &i.name == name)
            }
            (None, None) => true,
        };
        let kept: Vec<Featured<'_>> = docs.iter().filter(|d| keep(d.doc)).cloned().collect();
        let mut model = Model::train_featured(&kept);
        // the shipped calibration: the ordering (a `medium` inferred cause first) is the
        // one a user's run makes; the points it is fitted on do not depend on it
        if let Some(m) = lib.model.as_ref().and_then(|m| m.get()) {
            model.calibration = m.calibration.clone();
        }
        reduced.model = Some(ModelRef::Trained(Arc::new(model)));
    }
    reduced
}

/// Runs the knock-out over a corpus (`dir` holds it: its key lines train the folds'
/// models). Incidents whose log cannot be read are left out.
pub fn run(
    lib: &Library,
    kind: EngineKind,
    incidents: &[Incident],
    dir: &std::path::Path,
) -> Vec<KnockedIncident> {
    let Ok(full) = Compiled::new(lib) else {
        return Vec::new();
    };
    let all: Vec<&Incident> = incidents.iter().collect();
    let full_runs: Vec<(&Incident, Option<Diagnosis>)> = all
        .par_iter()
        .map(|inc| diagnose_all(&full, kind, &[*inc]).remove(0))
        .collect();
    // a fold: the signatures left out, and the incidents it diagnoses
    let mut groups: BTreeMap<BTreeSet<String>, Vec<&Incident>> = BTreeMap::new();
    let mut alone: Vec<&Incident> = Vec::new();
    for (inc, d) in &full_runs {
        if d.is_none() {
            continue;
        }
        match d.as_ref().and_then(|d| explaining(inc, d)) {
            Some(id) => groups.entry(knocked_with(lib, &id)).or_default().push(inc),
            None => alone.push(inc),
        }
    }
    let mut folds: Vec<(BTreeSet<String>, Vec<&Incident>)> = groups.into_iter().collect();
    folds.extend(alone.into_iter().map(|i| (BTreeSet::new(), vec![i])));
    let mut docs = library_docs(lib);
    docs.extend(crate::knowledge::model::corpus_docs(dir));
    let featured = featurize(&docs);
    let sources: BTreeMap<String, String> = incidents
        .iter()
        .map(|i| (i.name.clone(), i.expected.source.clone()))
        .collect();
    let mut out: Vec<KnockedIncident> = folds
        .par_iter()
        .flat_map_iter(|(removed, incs)| {
            let reduced = fold_library(lib, removed, incs, &featured, &sources);
            let removed: Vec<String> = removed.iter().cloned().collect();
            let Ok(compiled) = Compiled::new(&reduced) else {
                return Vec::new();
            };
            diagnose_all(&compiled, kind, incs)
                .into_iter()
                .filter_map(|(inc, d)| d.map(|d| knocked(inc, &d, removed.clone())))
                .collect::<Vec<_>>()
        })
        .collect();
    let examples = ExampleText::of(lib);
    let plain: BTreeMap<&str, (&'static str, f64, bool)> = full_runs
        .iter()
        .filter_map(|(inc, d)| Some((inc.name.as_str(), plain_point(&examples, inc, d.as_ref()?)?)))
        .collect();
    for k in &mut out {
        k.plain = plain.get(k.name.as_str()).copied();
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Cross-fitting folds of the calibration's measure.
const FOLDS: usize = 5;

/// The points the inferred layer's calibration is fitted on: for every incident expecting
/// a failure category that got an inferred cause (at any rank), its raw probability and
/// whether its category is right.
pub fn calibration_points(ks: &[KnockedIncident]) -> Vec<(f64, bool)> {
    ks.iter()
        .filter(|k| k.expects_category())
        .filter_map(|k| k.inferred)
        .collect()
}

/// A point the signature layers' calibration is fitted on (`(layer, score, right)`), with
/// the thread it comes from.
type ScorePoint<'a> = ((&'static str, f64, bool), &'a str);

/// The points the signature layers' calibration is fitted on: the knock-out run's top
/// causes a signature layer found (incidents expecting a failure category), and the full
/// library's top causes of the unseen incidents — the two kinds of held-out outcome, apart.
pub fn score_points(ks: &[KnockedIncident]) -> (Vec<ScorePoint<'_>>, Vec<ScorePoint<'_>>) {
    let knocked = ks
        .iter()
        .filter(|k| k.expects_category())
        .filter_map(|k| {
            let layer = calibrate::score_layer(k.top_layer.as_deref())?;
            Some(((layer, k.top_score?, k.right), k.thread.as_str()))
        })
        .collect();
    let plain = ks
        .iter()
        .filter_map(|k| Some((k.plain?, k.thread.as_str())))
        .collect();
    (knocked, plain)
}

/// The calibration `corpus bless` writes (`corpus/calibration.json`).
pub fn calibration_file(ks: &[KnockedIncident]) -> CalibrationFile {
    let points = calibration_points(ks);
    let (knocked, plain) = score_points(ks);
    let scores: Vec<(&'static str, f64, bool)> =
        knocked.into_iter().chain(plain).map(|(p, _)| p).collect();
    CalibrationFile {
        about: "The calibrations: the inferred layer's (the category model's raw \
                probability, its calibrated probability), fitted by Platt scaling on the \
                knock-out run's inferred causes; the signature layers' (a cause's score, \
                its calibrated probability), one fit per layer on the knock-out run's top \
                causes and the unseen incidents' (crashdoc corpus run --knockout). Written \
                by crashdoc corpus bless; the build freezes them into the model."
            .to_string(),
        points: points.len(),
        inferred: calibrate::fit(&points),
        score_points: scores.len(),
        scores: calibrate::fit_layers(&scores),
    }
}

/// A thread's cross-fitting fold.
fn fold_of(thread: &str) -> usize {
    thread.bytes().fold(0usize, |h, b| {
        h.wrapping_mul(31).wrapping_add(usize::from(b))
    })
}

/// The calibration's measure: the inferred causes' raw probabilities and, cross-fitted
/// (each fold of threads mapped by a fit on the others), the calibrated ones.
fn render_calibration(ks: &[KnockedIncident]) -> String {
    let with: Vec<&KnockedIncident> = ks
        .iter()
        .filter(|k| k.expects_category() && k.inferred.is_some())
        .collect();
    let points = calibration_points(ks);
    let folds: Vec<usize> = with.iter().map(|k| fold_of(&k.thread)).collect();
    let cross = calibrate::cross_fitted(&points, &folds, FOLDS);
    format!(
        "\n{}\n{}",
        super::calibration::render(
            "inferred causes: the model's raw probability",
            "probability",
            &points
        ),
        super::calibration::render(
            &format!(
                "inferred causes: calibrated probability (Platt, cross-fitted over {FOLDS} folds of threads)"
            ),
            "probability",
            &cross
        )
    )
}

/// The signature layers' calibration measured: their raw scores, and the calibrated
/// probabilities cross-fitted (each fold of threads mapped by its layer's fit on the
/// others), pooled and on each kind of held-out outcome — the corpus's unseen incidents
/// (the library knows the class) and the knock-out's (it does not).
fn render_score_calibration(ks: &[KnockedIncident]) -> String {
    let (knocked, plain) = score_points(ks);
    let points: Vec<ScorePoint<'_>> = knocked.iter().chain(&plain).copied().collect();
    let layered: Vec<(&'static str, f64, bool)> = points.iter().map(|(p, _)| *p).collect();
    let folds: Vec<usize> = points.iter().map(|(_, t)| fold_of(t)).collect();
    let cross = calibrate::cross_fitted_layers(&layered, &folds, FOLDS);
    let knocked = knocked.len();
    let raw: Vec<(f64, bool)> = layered.iter().map(|p| (p.1, p.2)).collect();
    let title = format!("cross-fitted over {FOLDS} folds of threads");
    let shipped: Vec<(f64, bool)> = ks
        .iter()
        .filter(|k| k.expects_category())
        .filter_map(|k| k.top_probability.map(|p| (p, k.right)))
        .collect();
    format!(
        "\n{}\n{}\n{}\n{}\n{}",
        super::calibration::render(
            "signature layers: the top cause's score (knock-out and unseen incidents)",
            "score",
            &raw
        ),
        super::calibration::render(
            &format!("signature layers: calibrated probability (Platt per layer, {title}), pooled"),
            "probability",
            &cross
        ),
        super::calibration::render(
            "signature layers: calibrated probability, knock-out part",
            "probability",
            &cross[..knocked]
        ),
        super::calibration::render(
            "signature layers: calibrated probability, unseen corpus part",
            "probability",
            &cross[knocked..]
        ),
        super::calibration::render(
            "reliability of the top cause's probability (the shipped calibrations)",
            "probability",
            &shipped
        )
    )
}

/// Counts of one group of incidents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub incidents: usize,
    pub top1: usize,
    pub no_cause: usize,
    pub confident_wrong: usize,
}

impl Tally {
    fn add(&mut self, k: &KnockedIncident) {
        self.incidents += 1;
        self.top1 += usize::from(k.right);
        self.no_cause += usize::from(k.no_cause());
        self.confident_wrong += usize::from(k.confident_wrong());
    }
}

/// The overall tally and one per expected category (incidents expecting a category).
pub fn tally(ks: &[KnockedIncident]) -> (Tally, BTreeMap<String, Tally>) {
    let mut all = Tally::default();
    let mut by: BTreeMap<String, Tally> = BTreeMap::new();
    for k in ks.iter().filter(|k| k.expects_category()) {
        all.add(k);
        by.entry(k.expected.clone()).or_default().add(k);
    }
    (all, by)
}

fn pct(n: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

/// How often the top cause is right at each confidence (issue 28: `high` ≥ 95 % right
/// under knock-out too): `top causes by confidence: high R/N right, medium …, low …`.
fn by_confidence(failing: &[&KnockedIncident]) -> String {
    let parts: Vec<String> = [Confidence::High, Confidence::Medium, Confidence::Low]
        .iter()
        .map(|c| {
            let at: Vec<_> = failing
                .iter()
                .filter(|k| k.outcome.top_confidence == Some(*c))
                .collect();
            let right = at.iter().filter(|k| k.right).count();
            format!(
                "{} {right}/{} right ({:.1} %)",
                c.as_str(),
                at.len(),
                pct(right, at.len())
            )
        })
        .collect();
    format!("top causes by confidence: {}", parts.join(", "))
}

/// The knock-out line, the per-category table, code bugs, and the misses by reason.
pub fn render(ks: &[KnockedIncident]) -> String {
    use std::fmt::Write as _;
    let (all, by) = tally(ks);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "knock-out: top-1 category {}/{} ({:.1} %), no cause {}, confident wrong {}",
        all.top1,
        all.incidents,
        pct(all.top1, all.incidents),
        all.no_cause,
        all.confident_wrong
    );
    let knocked = ks
        .iter()
        .filter(|k| k.expects_category() && !k.removed.is_empty())
        .count();
    let _ = writeln!(
        s,
        "  ({knocked} of them diagnosed without the signature that explains them and its siblings; the rest are misses of the full library)"
    );
    let _ = writeln!(
        s,
        "\n  {:<32} {:>9} {:>8} {:>9} {:>15}",
        "category", "incidents", "top-1", "no cause", "confident wrong"
    );
    for (c, t) in &by {
        let _ = writeln!(
            s,
            "  {c:<32} {:>9} {:>8} {:>9} {:>15}",
            t.incidents, t.top1, t.no_cause, t.confident_wrong
        );
    }
    let bugs: Vec<&KnockedIncident> = ks.iter().filter(|k| k.expected == "other").collect();
    let high = bugs
        .iter()
        .filter(|k| k.outcome.top_confidence == Some(Confidence::High))
        .count();
    let _ = writeln!(
        s,
        "\n  code bugs (other): {high}/{} with a high cause",
        bugs.len()
    );
    let failing: Vec<&KnockedIncident> = ks.iter().filter(|k| k.expects_category()).collect();
    let points: Vec<(f64, bool)> = failing
        .iter()
        .filter_map(|k| k.top_score.map(|p| (p, k.right)))
        .collect();
    let _ = write!(
        s,
        "\n{}",
        super::calibration::render("reliability of the top cause's score", "score", &points)
    );
    s.push_str(&render_calibration(ks));
    s.push_str(&render_score_calibration(ks));
    let medium: Vec<&&KnockedIncident> = failing
        .iter()
        .filter(|k| {
            k.top_layer.as_deref() == Some("inferred")
                && k.top_probability.is_some()
                && k.outcome.top_confidence == Some(Confidence::Medium)
        })
        .collect();
    let _ = writeln!(
        s,
        "  inferred top causes at medium (probability ≥ {}, an exception or a fatal shape read): {}/{} right",
        crate::engine::infer::MEDIUM_FROM,
        medium.iter().filter(|k| k.right).count(),
        medium.len()
    );
    let _ = writeln!(s, "  {}", by_confidence(&failing));
    let _ = writeln!(s, "\nmisses:");
    for k in ks.iter().filter(|k| k.expects_category() && !k.right) {
        let reason = if k.no_cause() {
            "no cause".to_string()
        } else {
            format!(
                "got {} ({}{}){}",
                k.outcome.got.first().map_or("?", String::as_str),
                k.outcome.top_confidence.map_or("?", Confidence::as_str),
                k.top_layer
                    .as_deref()
                    .map(|l| format!(", {l}"))
                    .unwrap_or_default(),
                k.top_signature
                    .as_deref()
                    .filter(|_| k.top_layer.is_none())
                    .map(|s| format!(" from {s}"))
                    .unwrap_or_default()
            )
        };
        let _ = writeln!(s, "  {:<60} expected {:<30} {reason}", k.name, k.expected);
    }
    s
}
