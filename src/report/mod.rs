//! Renderers of a diagnosis ([`crate::engine::diagnosis::Diagnosis`]): text, Markdown,
//! JSON, SARIF, GitHub annotations.

pub mod github;
pub mod markdown;
pub mod sarif;
pub mod text;

use crate::engine::diagnosis::Diagnosis;

/// The JSON report (pretty-printed).
pub fn json(d: &Diagnosis) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(d)
}
