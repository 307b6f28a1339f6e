//! Scoring a corpus run: per-incident results and the summary table.
//!
//! [`IncidentResult`] is what a run keeps of one incident (the [`Outcome`] plus the
//! ranked signature ids); [`CorpusReport`] is the whole run — the results and the
//! [`Summary`] computed from them. The report is also the saved baseline (JSON), so it
//! holds nothing that changes between identical runs (no timings, no paths other than
//! incident names) and everything is sorted.
//!
//! Measures:
//! - top-1 / top-3 accuracy: the outcome's own verdicts (the expected category, or one of
//!   `also`, first / among the causes; for `none` no cause; for `other` no high-confidence
//!   cause);
//! - key-line hit rate: over incidents that name a key line and expect a failure category,
//!   the share whose matching cause shows that line in its evidence;
//! - per signature, as the top cause: precision is the share of incidents it ranked first
//!   on that were right; recall is the share of the incidents it *applies to* that it
//!   ranked first on and was right — it applies when the incident names it
//!   (`signature:`), or names no signature, accepts its category and it matched at all;
//! - confusions: expected category → the top cause's category (or `no cause`), for every
//!   incident whose top-1 is wrong.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Incident, Outcome};
use crate::engine::diagnosis::Diagnosis;
use crate::knowledge::signature::Library;

/// Version of the saved result format.
pub const FORMAT_VERSION: u32 = 1;

/// One incident of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncidentResult {
    pub name: String,
    /// The expected category.
    pub expected: String,
    /// The expected top signature, when the incident names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_signature: Option<String>,
    /// Other categories accepted as right.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// Categories of the causes, in rank order.
    pub got: Vec<String>,
    /// Signature ids of the causes, in rank order.
    pub signatures: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_confidence: Option<String>,
    /// The top cause's score (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_score: Option<f64>,
    /// The top cause's calibrated probability of being right, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_probability: Option<f64>,
    /// The layer of knowledge of the top cause, when not a signature file (`fuzzy`,
    /// `fallback`, `wrapper`, `table:<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_layer: Option<String>,
    pub top1: bool,
    pub top3: bool,
    pub key_line_hit: bool,
    /// The key line is inside the block the report leads with (`primary`).
    #[serde(default)]
    pub key_line_primary: bool,
    /// The incident names a key line (and expects a failure category).
    pub has_key_line: bool,
    pub ok: bool,
    pub problems: Vec<String>,
    /// The log could not be read (the incident counts as wrong).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its key line or a line of its failure is text inside a signature's examples
    /// ([`super::seen`]).
    #[serde(default)]
    pub seen: bool,
}

impl IncidentResult {
    pub fn new(inc: &Incident, o: &Outcome, d: &Diagnosis) -> Self {
        let e = &inc.expected;
        IncidentResult {
            name: o.name.clone(),
            expected: o.expected.clone(),
            expected_signature: e.signature.clone(),
            also: e.also.clone(),
            got: o.got.clone(),
            signatures: d.causes.iter().map(|c| c.signature.clone()).collect(),
            top_confidence: o.top_confidence.map(|c| c.as_str().to_string()),
            top_score: d.causes.first().map(|c| c.score),
            top_probability: d.causes.first().and_then(|c| c.probability),
            top_layer: d.causes.first().and_then(|c| c.layer.clone()),
            top1: o.top1,
            top3: o.top3,
            key_line_hit: o.key_line_hit,
            key_line_primary: o.key_line_primary,
            has_key_line: expects_failure(&e.category)
                && e.key_line.as_deref().is_some_and(|k| !k.is_empty()),
            ok: o.ok,
            problems: o.problems.clone(),
            error: None,
            seen: false,
        }
    }

    /// An incident whose log could not be diagnosed.
    pub fn failed(inc: &Incident, error: String) -> Self {
        IncidentResult {
            name: inc.name.clone(),
            expected: inc.expected.category.clone(),
            expected_signature: inc.expected.signature.clone(),
            also: inc.expected.also.clone(),
            got: Vec::new(),
            signatures: Vec::new(),
            top_confidence: None,
            top_score: None,
            top_probability: None,
            top_layer: None,
            top1: false,
            top3: false,
            key_line_hit: false,
            key_line_primary: false,
            has_key_line: false,
            ok: false,
            problems: vec![format!("cannot diagnose: {error}")],
            error: Some(error),
            seen: false,
        }
    }
}

fn expects_failure(category: &str) -> bool {
    category != "none" && category != "other"
}

/// A count out of a total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Rate {
    pub hits: usize,
    pub of: usize,
}

impl Rate {
    pub fn percent(self) -> String {
        if self.of == 0 {
            "—".to_string()
        } else {
            format!("{:.1}%", 100.0 * self.hits as f64 / self.of as f64)
        }
    }

    /// `hits/of (percent)`.
    pub fn show(self) -> String {
        format!("{}/{} ({})", self.hits, self.of, self.percent())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryScore {
    pub category: String,
    pub top1: Rate,
    pub top3: Rate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureScore {
    pub signature: String,
    pub category: String,
    /// Right among the incidents it ranked first on.
    pub precision: Rate,
    /// Ranked first (and right) among the incidents it applies to.
    pub recall: Rate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    pub expected: String,
    pub got: String,
    pub incidents: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Summary {
    pub incidents: usize,
    pub ok: Rate,
    pub top1: Rate,
    pub top3: Rate,
    pub key_line: Rate,
    pub by_category: Vec<CategoryScore>,
    pub signatures: Vec<SignatureScore>,
    pub confusions: Vec<Confusion>,
    /// Incidents expecting a failure for which no cause was found.
    pub no_cause: Vec<String>,
    /// Per layer of knowledge other than signature files (the table's id dropped): how
    /// often its top cause was right (the precision of fuzzy matches, of fallbacks…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<(String, Rate)>,
    /// The overall measures for unseen, seen and all incidents (in that order).
    #[serde(default)]
    pub splits: Vec<SplitScore>,
    /// Per confidence level of the top cause (high, medium, low): how often it is right.
    #[serde(default)]
    pub calibration: Vec<CalibrationRow>,
}

/// The overall measures on a part of the corpus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitScore {
    /// `unseen`, `seen` or `all`.
    pub split: String,
    pub incidents: usize,
    pub top1: Rate,
    pub top3: Rate,
    pub key_line: Rate,
    /// Incidents naming a key line whose primary block holds it.
    #[serde(default)]
    pub key_line_primary: Rate,
    pub ok: Rate,
}

/// One confidence level: incidents whose top cause has it, and how many of those are
/// right (the top cause's category is the expected one, or one of `also`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationRow {
    pub confidence: String,
    pub unseen: Rate,
    pub all: Rate,
}

/// A whole run: the saved result and baseline format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusReport {
    pub format: u32,
    pub summary: Summary,
    pub incidents: Vec<IncidentResult>,
}

fn rate(it: impl Iterator<Item = bool>) -> Rate {
    let mut r = Rate::default();
    for b in it {
        r.of += 1;
        r.hits += usize::from(b);
    }
    r
}

impl CorpusReport {
    /// Scores a run; `lib` gives each signature's category.
    pub fn new(lib: &Library, mut incidents: Vec<IncidentResult>) -> Self {
        incidents.sort_by(|a, b| a.name.cmp(&b.name));
        let summary = summarize(lib, &incidents);
        CorpusReport {
            format: FORMAT_VERSION,
            summary,
            incidents,
        }
    }

    pub fn get(&self, name: &str) -> Option<&IncidentResult> {
        self.incidents.iter().find(|i| i.name == name)
    }
}

fn split(name: &str, inc: &[&IncidentResult]) -> SplitScore {
    SplitScore {
        split: name.to_string(),
        incidents: inc.len(),
        top1: rate(inc.iter().map(|i| i.top1)),
        top3: rate(inc.iter().map(|i| i.top3)),
        key_line: rate(
            inc.iter()
                .filter(|i| i.has_key_line)
                .map(|i| i.key_line_hit),
        ),
        key_line_primary: rate(
            inc.iter()
                .filter(|i| i.has_key_line)
                .map(|i| i.key_line_primary),
        ),
        ok: rate(inc.iter().map(|i| i.ok)),
    }
}

fn splits(inc: &[IncidentResult]) -> Vec<SplitScore> {
    let unseen: Vec<&IncidentResult> = inc.iter().filter(|i| !i.seen).collect();
    let seen: Vec<&IncidentResult> = inc.iter().filter(|i| i.seen).collect();
    let all: Vec<&IncidentResult> = inc.iter().collect();
    vec![
        split("unseen", &unseen),
        split("seen", &seen),
        split("all", &all),
    ]
}

/// The top cause is right: its category is the expected one or one of `also` (a cause
/// on a healthy log or a code bug is never right).
fn top_right(i: &IncidentResult) -> bool {
    i.got
        .first()
        .is_some_and(|c| *c == i.expected || i.also.contains(c))
}

/// (score, right) of every incident's top cause: the reliability table's points.
pub fn reliability_points(inc: &[IncidentResult]) -> Vec<(f64, bool)> {
    inc.iter()
        .filter_map(|i| i.top_score.map(|s| (s, top_right(i))))
        .collect()
}

/// (probability, right) of every incident's top cause that has a probability.
pub fn probability_points(inc: &[IncidentResult]) -> Vec<(f64, bool)> {
    inc.iter()
        .filter_map(|i| i.top_probability.map(|p| (p, top_right(i))))
        .collect()
}

/// The calibration table, levels from high to low.
pub fn calibration(inc: &[IncidentResult]) -> Vec<CalibrationRow> {
    ["high", "medium", "low"]
        .iter()
        .map(|level| {
            let at = |i: &&IncidentResult| i.top_confidence.as_deref() == Some(*level);
            CalibrationRow {
                confidence: level.to_string(),
                unseen: rate(inc.iter().filter(|i| !i.seen).filter(at).map(top_right)),
                all: rate(inc.iter().filter(at).map(top_right)),
            }
        })
        .collect()
}

fn summarize(lib: &Library, inc: &[IncidentResult]) -> Summary {
    let mut cats: BTreeMap<&str, Vec<&IncidentResult>> = BTreeMap::new();
    for i in inc {
        cats.entry(i.expected.as_str()).or_default().push(i);
    }
    let by_category = cats
        .iter()
        .map(|(c, v)| CategoryScore {
            category: c.to_string(),
            top1: rate(v.iter().map(|i| i.top1)),
            top3: rate(v.iter().map(|i| i.top3)),
        })
        .collect();

    let category_of = |id: &str| {
        lib.get(id)
            .map_or_else(|| "?".to_string(), |s| s.category.as_str().to_string())
    };
    let mut ids: Vec<&str> = inc
        .iter()
        .flat_map(|i| i.signatures.iter().map(String::as_str))
        .chain(inc.iter().filter_map(|i| i.expected_signature.as_deref()))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut signatures = Vec::new();
    for id in ids {
        let cat = category_of(id);
        let first = |i: &IncidentResult| i.signatures.first().is_some_and(|s| s == id);
        let applies = |i: &IncidentResult| match &i.expected_signature {
            Some(s) => s == id,
            None => {
                (i.expected == cat || i.also.contains(&cat)) && i.signatures.iter().any(|s| s == id)
            }
        };
        let precision = rate(inc.iter().filter(|i| first(i)).map(|i| i.top1));
        let recall = rate(
            inc.iter()
                .filter(|i| applies(i))
                .map(|i| first(i) && i.top1),
        );
        if precision.of == 0 && recall.of == 0 {
            continue; // matched only below the top and never applies
        }
        signatures.push(SignatureScore {
            signature: id.to_string(),
            category: cat,
            precision,
            recall,
        });
    }

    let mut conf: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for i in inc.iter().filter(|i| !i.top1) {
        let got = i
            .got
            .first()
            .cloned()
            .unwrap_or_else(|| "no cause".to_string());
        conf.entry((i.expected.clone(), got))
            .or_default()
            .push(i.name.clone());
    }
    let confusions = conf
        .into_iter()
        .map(|((expected, got), incidents)| Confusion {
            expected,
            got,
            incidents,
        })
        .collect();

    Summary {
        incidents: inc.len(),
        ok: rate(inc.iter().map(|i| i.ok)),
        top1: rate(inc.iter().map(|i| i.top1)),
        top3: rate(inc.iter().map(|i| i.top3)),
        key_line: rate(
            inc.iter()
                .filter(|i| i.has_key_line)
                .map(|i| i.key_line_hit),
        ),
        by_category,
        signatures,
        confusions,
        no_cause: inc
            .iter()
            .filter(|i| expects_failure(&i.expected) && i.got.is_empty())
            .map(|i| i.name.clone())
            .collect(),
        layers: layer_precision(inc),
        splits: splits(inc),
        calibration: calibration(inc),
    }
}

/// The precision of each layer's top causes.
fn layer_precision(inc: &[IncidentResult]) -> Vec<(String, Rate)> {
    let mut by: BTreeMap<String, Rate> = BTreeMap::new();
    for i in inc {
        let Some(l) = &i.top_layer else {
            continue;
        };
        let key = l.split(':').next().unwrap_or(l).to_string();
        let r = by.entry(key).or_default();
        r.of += 1;
        r.hits += usize::from(i.top1);
    }
    by.into_iter().collect()
}
