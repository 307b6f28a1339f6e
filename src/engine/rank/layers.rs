//! Ranking adjustments of the layers: which layer found each cause, wrappers folded under
//! their inner cause, reverse links (`explains:`), fallbacks kept only for failures
//! nothing else explains (and below every signature), fuzzy matches capped at `medium`.

use std::collections::BTreeSet;

use super::Ranked;
use crate::engine::extract::{Extraction, Failure, FailureId};
use crate::engine::matcher::layers::Via;
use crate::engine::matcher::Matches;
use crate::knowledge::signature::table::Layer;
use crate::knowledge::signature::{Library, Severity, SigIndex};

/// The highest score of a fuzzy match (`medium` ends below 0.75).
pub const FUZZY_MAX_SCORE: f64 = super::WEIGHTS.fuzzy_max;
/// Folds followed from a consequence to its root cause.
const MAX_HOPS: usize = 8;
/// The highest score of a fallback (`low` ends below 0.5).
pub const FALLBACK_MAX_SCORE: f64 = super::WEIGHTS.fallback_max;

/// How a ranked cause was found: `None` when by its own conditions on the text.
fn via_of(m: &Matches, r: &Ranked) -> Option<Via> {
    let notes: Vec<_> = m
        .via
        .iter()
        .filter(|n| n.signature == r.signature)
        .collect();
    if notes.is_empty() {
        return None;
    }
    let failures_covered = r
        .failures
        .iter()
        .all(|f| notes.iter().any(|n| n.failure == Some(*f)));
    let loose_covered =
        !m.loose.contains_key(&r.signature) || notes.iter().any(|n| n.failure.is_none());
    if !(failures_covered && loose_covered) {
        return None;
    }
    notes.iter().map(|n| n.via).max_by_key(|v| match v {
        Via::Fuzzy { per_mille } => *per_mille,
        Via::Wrapper { .. } => u16::MAX,
    })
}

/// Applies every layer's rule to the ranked causes (after consequences are folded).
pub fn apply(lib: &Library, x: &Extraction, m: &Matches, ranked: &mut Vec<Ranked>) {
    for r in ranked.iter_mut() {
        r.via = via_of(m, r);
        if let Some(Via::Fuzzy { per_mille }) = r.via {
            let sim = f64::from(per_mille) / 1000.0;
            r.score = (r.score * sim).min(FUZZY_MAX_SCORE);
        }
    }
    fold_wrappers(ranked);
    link(lib, x, m, ranked);
    to_roots(ranked);
    fallbacks(lib, m, ranked);
}

/// A cause folded under a cause that is itself folded goes to the root (a cycle unfolds).
pub(super) fn to_roots(ranked: &mut [Ranked]) {
    for i in 0..ranked.len() {
        let mut hops = 0;
        while let Some(c) = ranked[i].folded_under {
            let next = ranked
                .iter()
                .find(|r| r.signature == c)
                .and_then(|r| r.folded_under);
            match next {
                Some(n) if n != ranked[i].signature && hops < MAX_HOPS => {
                    ranked[i].folded_under = Some(n);
                    hops += 1;
                }
                Some(_) => {
                    ranked[i].folded_under = None;
                    break;
                }
                None => break,
            }
        }
    }
}

/// A wrapper folds under the cause found in its inner text.
fn fold_wrappers(ranked: &mut [Ranked]) {
    let folds: Vec<(SigIndex, SigIndex)> = ranked
        .iter()
        .filter_map(|r| match r.via {
            Some(Via::Wrapper { wrapper }) => Some((wrapper, r.signature)),
            _ => None,
        })
        .collect();
    for (wrapper, inner) in folds {
        let inner_folded = ranked
            .iter()
            .find(|r| r.signature == inner)
            .and_then(|r| r.folded_under);
        if inner_folded == Some(wrapper) {
            // the inner cause had been folded under its own wrapper: undo that
            if let Some(r) = ranked.iter_mut().find(|r| r.signature == inner) {
                r.folded_under = None;
            }
        }
        if let Some(w) = ranked.iter_mut().find(|r| r.signature == wrapper) {
            w.folded_under = Some(inner);
        }
    }
}

/// A cause that `explains:` a later failure takes it as its consequence. A benign
/// signature that `explains:` (a teardown marker: a requested shutdown, a finished run,
/// a suppressed error) folds a failure only where every occurrence of it follows one of
/// the marker's own places closely ([`follows_marker`]): the spurious traceback of a
/// shutdown is its consequence, a real crash before the shutdown is not.
fn link(lib: &Library, x: &Extraction, m: &Matches, ranked: &mut [Ranked]) {
    let mut folds = Vec::new();
    for (i, later) in ranked.iter().enumerate() {
        let ls = &lib.signatures[later.signature];
        if ls.severity == Severity::Benign {
            continue;
        }
        let cause = ranked.iter().find(|c| {
            let cs = &lib.signatures[c.signature];
            if c.signature == later.signature {
                return false;
            }
            if cs.completes && precedes_completion(&marks(x, m, c.signature), x, m, later) {
                return true;
            }
            cs.explains.contains(&ls.id)
                && if cs.severity == Severity::Benign {
                    follows_marker(&marks(x, m, c.signature), x, m, later)
                } else {
                    c.first_line <= later.first_line
                }
        });
        if let Some(c) = cause {
            folds.push((i, c.signature));
        }
    }
    for &(i, c) in &folds {
        ranked[i].folded_under = Some(c);
        ranked[i].linked = true;
        if lib.signatures[c].severity == Severity::Benign {
            release_followers(ranked, ranked[i].signature);
        }
    }
}

/// What was folded under a failure that a benign marker now explains as noise was folded
/// there by position alone (a failure after an unrelated one of the same attempt): unless
/// the marker `explains:` it too, it ranks on its own again.
fn release_followers(ranked: &mut [Ranked], noise: SigIndex) {
    for r in ranked.iter_mut() {
        if r.folded_under == Some(noise) && !r.linked {
            r.folded_under = None;
        }
    }
}

/// How many lines after a benign marker a failure it `explains:` may start and still be
/// its consequence (room for a long traceback soft-wrapped in a paste): the shutdown
/// sequence of a server (its own lines and the spurious tracebacks of its processes,
/// vLLM's `EngineDeadError` of issue #48745 a dozen lines after `trigger received
/// signal=SIGTERM`) or the traceback of a suppressed error that its warning heads
/// (Dynamo's `WON'T CONVERT … due to:`), not a later run.
pub const TEARDOWN_WINDOW: usize = 500;

/// Every place, `(line, attempt)`, where signature `s` matched: its loose lines and the
/// occurrences of the failures it matched.
fn marks(x: &Extraction, m: &Matches, s: SigIndex) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = m
        .loose
        .get(&s)
        .map(|lh| lh.marks.iter().copied().collect())
        .unwrap_or_default();
    for h in m.failures.iter().filter(|h| h.signature == s) {
        if let Some(f) = x.failures.iter().find(|f| f.id == h.failure) {
            // a marker matched on a later line of the failure's text (a message that went
            // on over the lines after it) is at that line, in every occurrence
            let shift = h
                .lines
                .first()
                .map_or(0, |&l| l.saturating_sub(f.first.line));
            out.extend(
                occurrence_lines(f)
                    .into_iter()
                    .map(|l| (l + shift, f.attempt)),
            );
        }
    }
    out.sort_unstable();
    out
}

/// The first line of every occurrence of a failure (its first when none are listed).
fn occurrence_lines(f: &Failure) -> Vec<usize> {
    if f.occurrences.is_empty() {
        vec![f.first.line]
    } else {
        f.occurrences.iter().map(|o| o.line).collect()
    }
}

/// Whether every place `later` was seen starts within [`TEARDOWN_WINDOW`] lines after a
/// marker of the same crash attempt.
fn follows_marker(marks: &[(usize, usize)], x: &Extraction, m: &Matches, later: &Ranked) -> bool {
    everywhere(x, m, later, |line, attempt| {
        marks
            .iter()
            .any(|&(ml, ma)| ma == attempt && ml <= line && line - ml <= TEARDOWN_WINDOW)
    })
}

/// Whether every place `later` was seen comes before a completion marker (`completes:`)
/// of the same crash attempt: the run went on and finished after it.
fn precedes_completion(
    marks: &[(usize, usize)],
    x: &Extraction,
    m: &Matches,
    later: &Ranked,
) -> bool {
    everywhere(x, m, later, |line, attempt| {
        marks.iter().any(|&(ml, ma)| ma == attempt && line < ml)
    })
}

/// Whether `covered(line, attempt)` holds for every place `later` was seen (its failures'
/// occurrences, its loose evidence lines). Any place unaccounted for (an occurrence past
/// the list kept, a loose line past the evidence kept) keeps it a cause.
fn everywhere(
    x: &Extraction,
    m: &Matches,
    later: &Ranked,
    covered: impl Fn(usize, usize) -> bool,
) -> bool {
    let mut seen = false;
    for fid in &later.failures {
        let Some(f) = x.failures.iter().find(|f| f.id == *fid) else {
            return false;
        };
        let lines = occurrence_lines(f);
        if f.count > lines.len() || !lines.iter().all(|&l| covered(l, f.attempt)) {
            return false;
        }
        seen = true;
    }
    if let Some(lh) = m.loose.get(&later.signature) {
        let [attempt] = lh.attempts[..] else {
            return false;
        };
        if lh.count > lh.evidence.len()
            || !lh.evidence.iter().all(|(bl, _)| covered(bl.line, attempt))
        {
            return false;
        }
        seen = true;
    }
    seen
}

/// A fallback is dropped where another signature explains its failures, and never ranks
/// above a signature.
fn fallbacks(lib: &Library, m: &Matches, ranked: &mut Vec<Ranked>) {
    let is_fallback = |s: SigIndex| lib.signatures[s].layer == Layer::Fallback;
    let explained: BTreeSet<FailureId> = m
        .failures
        .iter()
        .filter(|h| !is_fallback(h.signature))
        .map(|h| h.failure)
        .collect();
    ranked.retain(|r| {
        !is_fallback(r.signature)
            || r.failures.is_empty()
            || r.failures.iter().any(|f| !explained.contains(f))
    });
    let floor = ranked
        .iter()
        .filter(|r| !is_fallback(r.signature) && r.folded_under.is_none())
        .filter(|r| lib.signatures[r.signature].severity != Severity::Benign)
        .map(|r| r.score)
        .fold(f64::INFINITY, f64::min);
    for r in ranked.iter_mut().filter(|r| is_fallback(r.signature)) {
        r.score = r
            .score
            .min(FALLBACK_MAX_SCORE)
            .min(floor - super::WEIGHTS.below_signatures)
            .max(0.0);
    }
}

/// What a cause's output says about the layer that found it.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerInfo {
    /// `None` for a signature file; `table:<id>`, `fallback`, `wrapper` or `fuzzy`.
    pub layer: Option<String>,
    /// For a fuzzy match: the similarity to the closest example.
    pub similarity: Option<f64>,
    /// For an inner cause: the id of the wrapper it was found in.
    pub wrapped_by: Option<String>,
}

/// The layer of a ranked cause.
pub fn describe(
    lib: &crate::knowledge::signature::Library,
    r: &crate::engine::rank::Ranked,
) -> LayerInfo {
    let sig = &lib.signatures[r.signature];
    match r.via {
        Some(Via::Fuzzy { per_mille }) => LayerInfo {
            layer: Some("fuzzy".to_string()),
            similarity: Some(f64::from(per_mille) / 1000.0),
            wrapped_by: None,
        },
        Some(Via::Wrapper { wrapper }) => LayerInfo {
            layer: Some("wrapper".to_string()),
            similarity: None,
            wrapped_by: lib.signatures.get(wrapper).map(|w| w.id.clone()),
        },
        None => LayerInfo {
            layer: match &sig.layer {
                Layer::Signature => None,
                Layer::Table(t) => Some(format!("table:{t}")),
                Layer::Fallback => Some("fallback".to_string()),
            },
            similarity: None,
            wrapped_by: None,
        },
    }
}
