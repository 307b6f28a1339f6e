//! Knowledge layers beyond one regex per message, applied after matching and during
//! ranking:
//!
//! - [`wrap`](super::wrap): a signature whose message wraps an inner error (`wraps: <capture>`) has
//!   the inner text diagnosed through the whole library; the inner cause takes the
//!   wrapper's evidence and the wrapper folds under it (recursively, bounded);
//! - ranking ([`crate::engine::rank::layers`]): reverse links (`explains:` — an earlier failure explains a later one),
//!   structural fallbacks (`fallback: true`, only when nothing else explains a failure,
//!   at `low` confidence) and the caps of fuzzy matches;
//! - [`fuzzy`](super::fuzzy): a failure no rule explains is compared with the signatures' real example
//!   messages (volatile tokens masked); the closest one above a threshold is reported as
//!   a resemblance, at most `medium`.
//!
//! Each cause says which layer found it ([`Via`], `layer` in the output).

use super::{fuzzy, wrap};

use super::{Matcher, Matches};
pub use super::{Via, ViaNote};
use crate::engine::extract::Extraction;
use crate::env::Facts;
use crate::knowledge::signature::table::Layer;
use crate::knowledge::signature::SigIndex;

/// Runs the layers that add matches: wrappers, then fuzzy similarity on the failures
/// still unexplained.
pub fn apply(matcher: &mut Matcher<'_>, x: &Extraction, m: &mut Matches, facts: &Facts) {
    wrap::unwrap_failures(matcher, x, m, facts);
    wrap::unwrap_loose(matcher, m, facts);
    let lib = matcher.library();
    let index = &matcher.compiled().fuzzy;
    fuzzy::match_unexplained(|| index.get_or_init(|| fuzzy::FuzzyIndex::build(lib)), x, m);
}

/// What `explain` says about the layer of one signature on a log: the layer that matched
/// (`none` on a miss), notes (wrapper, similarity, links), and the fuzzy similarity of
/// the closest failure to the signature's examples.
pub fn explain_layer(
    lib: &crate::knowledge::signature::Library,
    index: SigIndex,
    x: &Extraction,
    m: &Matches,
) -> (String, Vec<String>, Option<f64>) {
    let sig = &lib.signatures[index];
    let ix = fuzzy::FuzzyIndex::build(lib);
    let similarity = x
        .failures
        .iter()
        .filter_map(|f| ix.similarity_to(index, &f.headline))
        .fold(None, |acc: Option<f64>, v| {
            Some(acc.map_or(v, |a| a.max(v)))
        })
        .map(|s| (s * 1000.0).round() / 1000.0);
    let direct = m.failures.iter().any(|h| {
        h.signature == index
            && !m
                .via
                .iter()
                .any(|n| n.signature == index && n.failure == Some(h.failure))
    }) || (m.loose.contains_key(&index)
        && !m
            .via
            .iter()
            .any(|n| n.signature == index && n.failure.is_none()));
    let mut notes = Vec::new();
    let via = m.via.iter().find(|n| n.signature == index).map(|n| n.via);
    let layer = match (direct, via) {
        (true, _) => sig.layer.as_str(),
        (false, Some(Via::Wrapper { wrapper })) => {
            let w = lib.signatures.get(wrapper).map_or("?", |w| w.id.as_str());
            notes.push(format!("found in the inner error of wrapper {w}"));
            "wrapper"
        }
        (false, Some(Via::Fuzzy { per_mille })) => {
            let s = f64::from(per_mille) / 1000.0;
            notes.push(format!(
                "resembles {} (similarity {s:.2}), not an exact match",
                sig.id
            ));
            "fuzzy"
        }
        (false, None) => "none",
    };
    if let Some(w) = &sig.wraps {
        notes.push(format!(
            "wraps an inner error (capture `{w}`), diagnosed on its own"
        ));
    }
    for e in &sig.explains {
        let present = m
            .failures
            .iter()
            .any(|h| lib.signatures[h.signature].id == *e)
            || m.loose.keys().any(|&s| lib.signatures[s].id == *e);
        if present {
            notes.push(format!(
                "link: explains {e} (also in this log; folded under this cause)"
            ));
        }
    }
    (layer.to_string(), notes, similarity)
}

/// Whether a match explains its failure exactly: not a fuzzy resemblance, not a
/// structural fallback.
pub fn is_exact(
    lib: &crate::knowledge::signature::Library,
    m: &Matches,
    h: &crate::engine::matcher::FailureHit,
) -> bool {
    let fallback = lib
        .signatures
        .get(h.signature)
        .is_some_and(|s| s.layer == Layer::Fallback);
    let fuzzy = m.via.iter().any(|n| {
        n.signature == h.signature
            && n.failure == Some(h.failure)
            && matches!(n.via, Via::Fuzzy { .. })
    });
    !fallback && !fuzzy
}
