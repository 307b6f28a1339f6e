//! Rank: from confirmed matches to ranked causes, consequences and explained noise.
//!
//! Each signature that matched becomes one candidate cause, aggregated over every
//! failure and line it matched (attempts, streams, occurrences). Its score is the
//! product of:
//!
//! - **place**: the primary exception of the first failure of a crash (1.0) outranks a
//!   later failure, a chained exception, a one-line failure, a warning and a loose line;
//! - **severity**: fatal > error > warning;
//! - **specificity**: regexes with captures count more than keywords;
//! - **consequence**: a failure the log shows following another one, or a signature
//!   whose `consequence_of` cause also matched, is folded under that cause instead of
//!   ranking as one; a consequence whose cause is unknown ranks, discounted;
//! - plus a small bonus for streams and attempts showing it.
//!
//! Benign signatures never rank: they are explained noise. Ties break on the first
//! line, then the signature id, so the order is deterministic. Confidence is `high`
//! from 0.75, `medium` from 0.5, else `low`. Every weight, cap and threshold is in one
//! named table, [`WEIGHTS`].

pub mod layers;

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::extract::{Extraction, Failure, FailureId};
use crate::engine::matcher::{Matches, Place};
use crate::knowledge::signature::model::ConfidenceCap;
use crate::knowledge::signature::table::Layer;
use crate::knowledge::signature::{Category, Library, Severity, SigIndex, Signature};

/// How sure a cause is (serialized as the corpus's outcomes print it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn of(score: f64) -> Self {
        if score >= WEIGHTS.high_from {
            Confidence::High
        } else if score >= WEIGHTS.medium_from {
            Confidence::Medium
        } else {
            Confidence::Low
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// One line of evidence, by number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceLine {
    pub line: usize,
    pub text: String,
    pub stream: String,
}

/// A signature's aggregated match, before ordering.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub signature: SigIndex,
    pub score: f64,
    pub place: Place,
    /// Failures it matched (ids), in log order.
    pub failures: Vec<FailureId>,
    pub evidence: Vec<EvidenceLine>,
    pub captures: BTreeMap<String, String>,
    pub first_line: usize,
    pub attempts: BTreeSet<usize>,
    pub streams: Vec<String>,
    pub occurrences: usize,
    /// The cause (signature index) it was folded under, for a consequence.
    pub folded_under: Option<SigIndex>,
    /// The layer that found it, when not the signature's own conditions ([`layers`]).
    pub via: Option<crate::engine::matcher::layers::Via>,
    /// Folded under a cause that `explains:` it.
    pub linked: bool,
    /// The more specific cause (signature index) resting on the same evidence lines it
    /// is shown under ("also matches"), instead of ranking on its own.
    pub also_of: Option<SigIndex>,
}

impl Ranked {
    /// A signature's aggregate before its first match is folded in.
    fn new(
        signature: SigIndex,
        place: Place,
        first_line: usize,
        captures: BTreeMap<String, String>,
    ) -> Self {
        Ranked {
            signature,
            score: 0.0,
            place,
            failures: Vec::new(),
            evidence: Vec::new(),
            captures,
            first_line,
            attempts: BTreeSet::new(),
            streams: Vec::new(),
            occurrences: 0,
            folded_under: None,
            via: None,
            linked: false,
            also_of: None,
        }
    }
}

/// Every number a score is made of, in one table. A cause's score is
/// `place × order × consequence × severity × specificity × layer`, plus the spread bonus,
/// capped (see the module documentation); [`Confidence::of`] reads it. Changing a weight
/// moves the corpus figures: run `crashdoc corpus run corpus/ --baseline
/// corpus/baseline.json` and explain every change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Place: the primary exception of a traceback or exception failure.
    pub primary_exception: f64,
    /// Place: another exception of the chain.
    pub chain_exception: f64,
    /// Place: a failure without an exception (signal, systemd, NCCL block, error line).
    pub failure_line: f64,
    /// Place: a warning.
    pub warning_place: f64,
    /// Place: a line of a failure read as text (the parse did not match, the text did).
    pub failure_text: f64,
    /// Place: a line that is part of no failure.
    pub loose_line: f64,
    /// Order: a failure that is not the first of its crash attempt.
    pub later_failure: f64,
    /// A failure the log shows following another one.
    pub consequence: f64,
    /// Severity `fatal`.
    pub fatal: f64,
    /// Severity `error`.
    pub error: f64,
    /// Severity `warning`.
    pub warning: f64,
    /// Severity `benign` (never ranked: explained noise).
    pub benign: f64,
    /// Specificity: `base + step × specificity`, at most 1 (regexes with captures count
    /// more than keywords).
    pub specificity_base: f64,
    pub specificity_step: f64,
    /// Layer: an entry of a code table knows the code, not the context (a signature on
    /// the same failure ranks first). Signatures and fallbacks weigh 1.
    pub table_entry: f64,
    /// Spread bonus per stream beyond the first, and its most.
    pub per_stream: f64,
    pub max_stream_bonus: f64,
    /// Spread bonus per crash attempt beyond the first, and its most.
    pub per_attempt: f64,
    pub max_attempt_bonus: f64,
    /// A consequence whose cause is unknown (not folded under it) is discounted.
    pub unknown_cause: f64,
    /// `max_confidence: low`: the highest score (just under `medium_from`).
    pub cap_low: f64,
    /// `max_confidence: medium`: the highest score (just under `high_from`).
    pub cap_medium: f64,
    /// The highest score of a fuzzy match (`medium` at most).
    pub fuzzy_max: f64,
    /// The highest score of a fallback (`low`).
    pub fallback_max: f64,
    /// A fallback ranks at least this far below every signature cause.
    pub below_signatures: f64,
    /// Confidence `high` from this score.
    pub high_from: f64,
    /// Confidence `medium` from this score (else `low`).
    pub medium_from: f64,
}

/// The ranking weights.
pub const WEIGHTS: Weights = Weights {
    primary_exception: 1.0,
    chain_exception: 0.85,
    failure_line: 0.8,
    warning_place: 0.65,
    failure_text: 0.7,
    loose_line: 0.6,
    later_failure: 0.9,
    consequence: 0.6,
    fatal: 1.0,
    error: 0.9,
    warning: 0.75,
    benign: 0.0,
    specificity_base: 0.8,
    specificity_step: 0.05,
    table_entry: 0.85,
    per_stream: 0.01,
    max_stream_bonus: 0.03,
    per_attempt: 0.02,
    max_attempt_bonus: 0.04,
    unknown_cause: 0.75,
    cap_low: 0.49,
    cap_medium: 0.74,
    fuzzy_max: 0.74,
    fallback_max: 0.45,
    below_signatures: 0.01,
    high_from: 0.75,
    medium_from: 0.5,
};

fn place_weight(p: Place, first: bool, consequence: bool) -> f64 {
    let w = &WEIGHTS;
    let base = match p {
        Place::PrimaryException => w.primary_exception,
        Place::ChainException => w.chain_exception,
        Place::FailureLine => w.failure_line,
        Place::Warning => w.warning_place,
        Place::FailureText => w.failure_text,
        Place::LooseLine => w.loose_line,
    };
    let order = if first { 1.0 } else { w.later_failure };
    let conseq = if consequence { w.consequence } else { 1.0 };
    base * order * conseq
}

fn severity_weight(s: Severity) -> f64 {
    match s {
        Severity::Fatal => WEIGHTS.fatal,
        Severity::Error => WEIGHTS.error,
        Severity::Warning => WEIGHTS.warning,
        Severity::Benign => WEIGHTS.benign,
    }
}

fn specificity_weight(sig: &Signature) -> f64 {
    (WEIGHTS.specificity_base + WEIGHTS.specificity_step * f64::from(sig.specificity)).min(1.0)
        * layer_weight(&sig.layer)
}

/// A code table's entry knows the code, not the context: a signature on the same
/// failure is more specific and ranks first.
fn layer_weight(layer: &Layer) -> f64 {
    match layer {
        Layer::Signature => 1.0,
        Layer::Table(_) => WEIGHTS.table_entry,
        Layer::Fallback => 1.0,
    }
}

/// The highest score a signature's confidence cap allows (just under the next level).
fn score_cap(cap: Option<ConfidenceCap>) -> f64 {
    match cap {
        Some(ConfidenceCap::Low) => WEIGHTS.cap_low,
        Some(ConfidenceCap::Medium) => WEIGHTS.cap_medium,
        Some(ConfidenceCap::High) | None => 1.0,
    }
}

/// The bonus of several streams or attempts showing the same failure.
fn spread_bonus(streams: usize, attempts: usize) -> f64 {
    let w = &WEIGHTS;
    (streams.saturating_sub(1) as f64 * w.per_stream).min(w.max_stream_bonus)
        + (attempts.saturating_sub(1) as f64 * w.per_attempt).min(w.max_attempt_bonus)
}

/// Evidence lines kept per cause.
pub const MAX_EVIDENCE: usize = 8;

/// Aggregates and scores every matched signature.
pub fn aggregate(lib: &Library, x: &Extraction, m: &Matches) -> Vec<Ranked> {
    let by_id: BTreeMap<FailureId, &Failure> = x.failures.iter().map(|f| (f.id, f)).collect();
    let mut out: BTreeMap<SigIndex, Ranked> = BTreeMap::new();
    for h in &m.failures {
        let Some(f) = by_id.get(&h.failure) else {
            continue;
        };
        let sig = &lib.signatures[h.signature];
        let w = place_weight(h.place, f.first_in_attempt, f.consequence_of.is_some());
        let score = w * severity_weight(sig.severity) * specificity_weight(sig);
        let r = out
            .entry(h.signature)
            .or_insert_with(|| Ranked::new(h.signature, h.place, f.first.line, BTreeMap::new()));
        if score > r.score {
            r.score = score;
            r.place = h.place;
        }
        if r.captures.is_empty() {
            r.captures = h.captures.clone();
        }
        r.failures.push(f.id);
        r.first_line = r.first_line.min(f.first.line);
        r.attempts.insert(f.attempt);
        r.occurrences += f.count;
        for s in &f.streams {
            if !r.streams.contains(s) {
                r.streams.push(s.clone());
            }
        }
        for (l, text) in h.lines.iter().flat_map(|&l| evidence_lines(f, l)) {
            if r.evidence.len() >= MAX_EVIDENCE || r.evidence.iter().any(|e| e.line == l) {
                continue;
            }
            r.evidence.push(EvidenceLine {
                line: l,
                text,
                stream: f.first.stream.clone(),
            });
        }
    }
    for (&s, lh) in &m.loose {
        let sig = &lib.signatures[s];
        let score = place_weight(Place::LooseLine, false, false)
            * severity_weight(sig.severity)
            * specificity_weight(sig);
        let first_line = lh.first.as_ref().map_or(0, |o| o.line);
        let r = out
            .entry(s)
            .or_insert_with(|| Ranked::new(s, Place::LooseLine, first_line, lh.captures.clone()));
        if score > r.score {
            r.score = score;
            r.place = Place::LooseLine;
        }
        if r.captures.is_empty() {
            r.captures = lh.captures.clone();
        }
        r.first_line = r.first_line.min(first_line);
        r.occurrences += lh.count;
        r.attempts.extend(lh.attempts.iter().copied());
        for st in &lh.streams {
            if !r.streams.contains(st) {
                r.streams.push(st.clone());
            }
        }
        for (bl, stream) in &lh.evidence {
            if r.evidence.len() < MAX_EVIDENCE && !r.evidence.iter().any(|e| e.line == bl.line) {
                r.evidence.push(EvidenceLine {
                    line: bl.line,
                    text: bl.text.clone(),
                    stream: stream.clone(),
                });
            }
        }
    }
    let mut ranked: Vec<Ranked> = out.into_values().collect();
    for r in &mut ranked {
        r.evidence.sort_by_key(|e| e.line);
        // several streams or attempts showing the same failure make it surer
        let spread = spread_bonus(r.streams.len(), r.attempts.len());
        let cap = score_cap(lib.signatures[r.signature].max_confidence);
        r.score = (r.score + spread).min(1.0).min(cap);
    }
    fold_refined_codes(lib, &mut ranked);
    fold_consequences(lib, x, &mut ranked);
    layers::apply(lib, x, m, &mut ranked);
    fold_same_evidence(lib, &mut ranked);
    ranked
}

/// The evidence a matched line `l` of failure `f` gives: the line as kept; for an
/// exception whose message spans several lines (`ValueError: To serve at least one
/// request…` / `22.5 GiB KV cache is needed…`), the message's other lines too; and for an
/// exception past the lines a long traceback keeps (its chain outlives them), the
/// exception as parsed, `Type: message`.
fn evidence_lines(f: &Failure, l: usize) -> Vec<(usize, String)> {
    let kept = |n: usize| f.lines.iter().find(|b| b.line == n).map(|b| b.text.clone());
    let exception = f.chain.iter().find(|e| e.line == l);
    let Some(first) = kept(l) else {
        return exception
            .map(|e| {
                vec![(
                    l,
                    e.headline().lines().next().unwrap_or_default().to_string(),
                )]
            })
            .unwrap_or_default();
    };
    let mut out = vec![(l, first)];
    let more = exception.map_or(0, |e| e.message.lines().count().saturating_sub(1));
    // the message's next lines, by place and not by number: a logical line that absorbed
    // cut physical lines leaves a gap in the numbers after it ([`crate::engine::rejoin`])
    let mut after: Vec<&crate::engine::extract::BlockLine> =
        f.lines.iter().filter(|b| b.line > l).collect();
    after.sort_by_key(|b| b.line);
    out.extend(
        after
            .into_iter()
            .take(more)
            .map(|b| (b.line, b.text.clone())),
    );
    out
}

/// A code table's entry whose every evidence line is also evidence of a signature (one
/// that refines the code in context) folds under that signature: the same lines are
/// one failure, explained once.
fn fold_refined_codes(lib: &Library, ranked: &mut [Ranked]) {
    for i in 0..ranked.len() {
        let r = &ranked[i];
        if r.folded_under.is_some()
            || r.evidence.is_empty()
            || !matches!(lib.signatures[r.signature].layer, Layer::Table(_))
        {
            continue;
        }
        let refining = ranked.iter().position(|o| {
            let s = &lib.signatures[o.signature];
            o.signature != r.signature
                && s.layer == Layer::Signature
                && s.severity != Severity::Benign
                && r.evidence
                    .iter()
                    .all(|e| o.evidence.iter().any(|oe| oe.line == e.line))
        });
        let Some(o) = refining else {
            continue;
        };
        let code = ranked[i].signature;
        // the refining signature may have been folded under this code entry (it follows
        // the same failure): the signature is the cause, the code entry goes under it
        if ranked[o].folded_under == Some(code) {
            ranked[o].folded_under = None;
        }
        ranked[i].folded_under = Some(ranked[o].folded_under.unwrap_or(ranked[o].signature));
    }
}

/// When two causes rest on the same evidence lines (the less specific one's lines all
/// among the other's), the more specific one ranks (on its own score) and the other is
/// shown under it as "also matches".
fn fold_same_evidence(lib: &Library, ranked: &mut [Ranked]) {
    let open = |r: &Ranked| {
        lib.signatures[r.signature].severity != Severity::Benign
            && r.folded_under.is_none()
            && !r.evidence.is_empty()
    };
    // a signature before a code table's entry (it refines the code in context, as in
    // `fold_refined_codes`), then the most specific, the better score, the id
    let table = |i: usize| matches!(lib.signatures[ranked[i].signature].layer, Layer::Table(_));
    let mut order: Vec<usize> = (0..ranked.len()).filter(|&i| open(&ranked[i])).collect();
    order.sort_by(|&a, &b| {
        let (sa, sb) = (
            &lib.signatures[ranked[a].signature],
            &lib.signatures[ranked[b].signature],
        );
        table(a)
            .cmp(&table(b))
            .then(sb.specificity.cmp(&sa.specificity))
            .then(
                ranked[b]
                    .score
                    .partial_cmp(&ranked[a].score)
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            .then(sa.id.cmp(&sb.id))
    });
    for (k, &j) in order.iter().enumerate() {
        let lines: BTreeSet<usize> = ranked[j].evidence.iter().map(|e| e.line).collect();
        let winner = order[..k].iter().copied().find(|&i| {
            ranked[i].also_of.is_none()
                && lines
                    .iter()
                    .all(|l| ranked[i].evidence.iter().any(|e| e.line == *l))
        });
        let Some(i) = winner else {
            continue;
        };
        let (from, to) = (ranked[j].signature, ranked[i].signature);
        ranked[j].also_of = Some(to);
        // what was folded under the one now shown as "also matches" folds under the winner
        for r in ranked.iter_mut() {
            if r.folded_under == Some(from) {
                r.folded_under = Some(to);
            }
        }
    }
}

/// Folds consequences under their causes (see the module docs).
fn fold_consequences(lib: &Library, x: &Extraction, ranked: &mut [Ranked]) {
    let by_id: BTreeMap<FailureId, &Failure> = x.failures.iter().map(|f| (f.id, f)).collect();
    // which signatures explain each failure (non-benign only)
    let mut explains: BTreeMap<FailureId, Vec<SigIndex>> = BTreeMap::new();
    for r in ranked.iter() {
        if lib.signatures[r.signature].severity == Severity::Benign || r.folded_under.is_some() {
            continue;
        }
        for &f in &r.failures {
            explains.entry(f).or_default().push(r.signature);
        }
    }
    let present: BTreeSet<SigIndex> = ranked
        .iter()
        .filter(|r| lib.signatures[r.signature].severity != Severity::Benign)
        .filter(|r| r.folded_under.is_none())
        .map(|r| r.signature)
        .collect();
    let index_of = |id: &str| lib.signatures.position(id);
    let mut folds: Vec<(usize, SigIndex)> = Vec::new();
    for (i, r) in ranked.iter().enumerate() {
        let sig = &lib.signatures[r.signature];
        if sig.severity == Severity::Benign || r.folded_under.is_some() {
            continue;
        }
        // (a) the signature names its causes and one of them matched
        let by_link = sig
            .consequence_of
            .iter()
            .filter_map(|c| index_of(c))
            .find(|c| present.contains(c) && *c != r.signature);
        // (b) every failure it matched follows a failure another signature explains
        let by_order = if r.failures.is_empty() {
            None
        } else {
            let mut cause = None;
            let mut all = true;
            for fid in &r.failures {
                let root = by_id.get(fid).and_then(|f| f.consequence_of);
                match root
                    .and_then(|root| explains.get(&root))
                    .and_then(|v| v.iter().find(|&&s| s != r.signature))
                {
                    Some(&s) => cause = cause.or(Some(s)),
                    None => {
                        all = false;
                        break;
                    }
                }
            }
            if all {
                cause
            } else {
                None
            }
        };
        if let Some(c) = by_link.or(by_order) {
            folds.push((i, c));
        }
    }
    for (i, c) in folds {
        ranked[i].folded_under = Some(c);
    }
    layers::to_roots(ranked);
    // a consequence of an unknown cause is discounted
    for r in ranked.iter_mut() {
        let sig = &lib.signatures[r.signature];
        if r.folded_under.is_none() && !sig.consequence_of.is_empty() {
            r.score *= WEIGHTS.unknown_cause;
        }
    }
}

/// Deterministic order: failures (fatal or error) before warnings — a warning repeated
/// ten thousand times still explains less than the one error that stopped the run —,
/// then score, first line and id.
pub fn order(lib: &Library, x: &Extraction, ranked: &mut [Ranked]) {
    let warning = |r: &Ranked| lib.signatures[r.signature].severity == Severity::Warning;
    ranked.sort_by(|a, b| {
        warning(a)
            .cmp(&warning(b))
            .then(
                b.score
                    .partial_cmp(&a.score)
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            .then(a.first_line.cmp(&b.first_line))
            .then(
                lib.signatures[a.signature]
                    .id
                    .cmp(&lib.signatures[b.signature].id),
            )
    });
    causal(lib, x, ranked);
}

/// Whether every failure a cause rests on only follows from another: a signal, an abort
/// or exit status, a systemd exit, a launcher's summary, a "see root cause above"
/// wrapper (the failure's consequence shape or the extraction's consequence link).
fn consequence_like(x: &Extraction, r: &Ranked) -> bool {
    use crate::engine::extract::FailureKind;
    !r.failures.is_empty()
        && r.failures.iter().all(|id| {
            x.failures.iter().find(|f| f.id == *id).is_some_and(|f| {
                matches!(f.kind, FailureKind::Signal | FailureKind::Systemd)
                    || f.consequence_shape
                    || f.consequence_of.is_some()
            })
        })
}

/// The crash attempt a cause's first line lies in.
fn attempt_of(x: &Extraction, r: &Ranked) -> usize {
    x.attempt_at(r.first_line)
}

/// Whether `root` explains `effect`: both of one crash attempt, `root` printed first,
/// and `effect` either only follows from another failure (while `root` does not) or of a
/// category the link table says `root`'s can cause ([`crate::knowledge::links`]).
fn explains(lib: &Library, x: &Extraction, root: &Ranked, effect: &Ranked) -> bool {
    let (rs, es) = (
        &lib.signatures[root.signature],
        &lib.signatures[effect.signature],
    );
    if rs.severity == Severity::Benign
        || root.failures.is_empty()
        || root.first_line >= effect.first_line
        || attempt_of(x, root) != attempt_of(x, effect)
    {
        return false;
    }
    // a warning is never the failure a consequence follows from; it may explain one
    // through the link table
    (consequence_like(x, effect) && !consequence_like(x, root) && rs.severity != Severity::Warning)
        || (crate::knowledge::links::explains(rs.category, es.category)
            && !(rs.severity == Severity::Warning && es.category == Category::Other))
}

/// Root before consequence: a cause moves before the first cause it explains
/// ([`explains`]), the earliest root first. Bounded: each move puts an earlier-printed
/// cause before a later one, so no pair swaps back.
fn causal(lib: &Library, x: &Extraction, ranked: &mut [Ranked]) {
    let n = ranked.len();
    let mut i = 0;
    let mut moves = 0;
    while i < n && moves < n * n {
        let root = (i + 1..n)
            .filter(|&j| explains(lib, x, &ranked[j], &ranked[i]))
            .min_by_key(|&j| ranked[j].first_line);
        match root {
            Some(j) => {
                ranked[i..=j].rotate_right(1);
                moves += 1;
            }
            None => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Confidence, WEIGHTS};

    /// Each cap ends just under the confidence level it keeps a cause below.
    #[test]
    fn caps_sit_under_the_confidence_levels() {
        let w = WEIGHTS;
        assert_eq!(Confidence::of(w.cap_low), Confidence::Low);
        assert_eq!(Confidence::of(w.cap_medium), Confidence::Medium);
        assert_eq!(Confidence::of(w.fuzzy_max), Confidence::Medium);
        assert_eq!(Confidence::of(w.fallback_max), Confidence::Low);
        assert_eq!(
            Confidence::of(w.primary_exception * w.fatal),
            Confidence::High
        );
        assert!(w.medium_from < w.high_from);
    }
}
