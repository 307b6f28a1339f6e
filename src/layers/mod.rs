//! Knowledge layers beyond one regex per message, applied after matching and during
//! ranking:
//!
//! - [`wrap`]: a signature whose message wraps an inner error (`wraps: <capture>`) has
//!   the inner text diagnosed through the whole library; the inner cause takes the
//!   wrapper's evidence and the wrapper folds under it (recursively, bounded);
//! - [`adjust`]: reverse links (`explains:` — an earlier failure explains a later one),
//!   structural fallbacks (`fallback: true`, only when nothing else explains a failure,
//!   at `low` confidence) and the caps of fuzzy matches;
//! - [`fuzzy`]: a failure no rule explains is compared with the signatures' real example
//!   messages (volatile tokens masked); the closest one above a threshold is reported as
//!   a resemblance, at most `medium`.
//!
//! Each cause says which layer found it ([`Via`], `layer` in the output).

pub mod adjust;
pub mod fuzzy;
pub mod wrap;

use crate::extract::Extraction;
use crate::matcher::{Matcher, Matches};
use crate::signature::table::Layer;

/// How a match was found when it was not by a signature's own conditions on the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The inner error of a wrapper (the wrapper's signature index).
    Wrapper { wrapper: usize },
    /// A resemblance to the signature's examples (similarity in thousandths).
    Fuzzy { per_mille: u16 },
}

/// A note on one match: the signature, the failure (`None` for loose lines) and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViaNote {
    pub signature: usize,
    pub failure: Option<usize>,
    pub via: Via,
}

/// Runs the layers that add matches: wrappers, then fuzzy similarity on the failures
/// still unexplained.
pub fn apply(matcher: &mut Matcher<'_>, x: &Extraction, m: &mut Matches) {
    wrap::unwrap_failures(matcher, x, m);
    wrap::unwrap_loose(matcher, m);
    fuzzy::match_unexplained(matcher.library, x, m);
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
pub fn describe(lib: &crate::signature::Library, r: &crate::rank::Ranked) -> LayerInfo {
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

/// One sentence saying how a cause was found, when not by a signature's own conditions.
pub fn note(c: &crate::report::Cause) -> Option<String> {
    let layer = c.layer.as_deref().unwrap_or("signature");
    match (layer, c.similarity, &c.wrapped_by) {
        ("fuzzy", Some(s), _) => Some(format!(
            "layer fuzzy: resembles {} (similarity {s:.2}), not an exact match",
            c.signature
        )),
        ("wrapper", _, Some(w)) => Some(format!(
            "layer wrapper: found in the error wrapped by {w}"
        )),
        ("fallback", _, _) => Some(
            "layer fallback: no signature matched; a structural fallback (exception type, raising module) at low confidence".to_string(),
        ),
        _ => None,
    }
}

/// What `explain` says about the layer of one signature on a log: the layer that matched
/// (`none` on a miss), notes (wrapper, similarity, links), and the fuzzy similarity of
/// the closest failure to the signature's examples.
pub fn explain_layer(
    lib: &crate::signature::Library,
    index: usize,
    x: &Extraction,
    m: &Matches,
) -> (String, Vec<String>, Option<f64>) {
    let sig = &lib.signatures[index];
    let ix = lib.fuzzy.get_or_init(|| fuzzy::FuzzyIndex::build(lib));
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
    lib: &crate::signature::Library,
    m: &Matches,
    h: &crate::matcher::FailureHit,
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
