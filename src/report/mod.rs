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

/// A remediation step's `when:` as a phrase: `when the unit runs under systemd`, but
/// `always first` and `only if …` as written (never `when always`, `when only if`).
pub fn when_phrase(w: &str) -> String {
    let t = w.trim();
    let lower = t.to_lowercase();
    let as_written = [
        "always", "when ", "if ", "only ", "unless ", "before ", "after ",
    ];
    if as_written.iter().any(|p| lower.starts_with(p)) {
        t.to_string()
    } else {
        format!("when {t}")
    }
}
