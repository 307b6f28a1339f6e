//! Renderers of a diagnosis ([`crate::engine::diagnosis::Diagnosis`]): text, Markdown,
//! JSON, SARIF, GitHub annotations.

pub mod fit;
pub mod github;
pub mod markdown;
pub mod provenance;
pub mod sarif;
pub mod text;
pub mod wire;

use crate::engine::diagnosis::Diagnosis;

/// Serializing a report failed.
pub type RenderError = serde_json::Error;

/// One output format of diagnoses; every format implements it. A per-input format
/// renders each diagnosis as soon as it is ready ([`Render::one`]); a collecting format
/// renders every diagnosis at the end, in one document ([`Render::all`]).
pub trait Render {
    /// Whether the format renders all inputs together, at the end.
    fn collects(&self) -> bool {
        false
    }
    /// One diagnosis (a per-input format).
    fn one(&self, _d: &Diagnosis) -> Result<String, RenderError> {
        Ok(String::new())
    }
    /// Every diagnosis (a collecting format).
    fn all(&self, _ds: &[Diagnosis]) -> Result<String, RenderError> {
        Ok(String::new())
    }
    /// What separates the renderings of two inputs of a per-input format.
    fn separator(&self) -> &'static str {
        "\n"
    }
}

/// JSON per the contract of [`wire`] (README.md, `crashdoc schema diagnosis`),
/// pretty-printed: the document of one input ([`JsonArray`] for several).
pub struct Json;

impl Render for Json {
    fn one(&self, d: &Diagnosis) -> Result<String, RenderError> {
        Ok(json(d)? + "\n")
    }
    fn separator(&self) -> &'static str {
        ""
    }
}

/// JSON of several inputs: one array of their diagnoses, in input order, so that the
/// output is one JSON value (`jq`, `json.load`); one input keeps its single object.
pub struct JsonArray;

impl Render for JsonArray {
    fn collects(&self) -> bool {
        true
    }
    fn all(&self, ds: &[Diagnosis]) -> Result<String, RenderError> {
        let v: Vec<wire::Diagnosis> = ds.iter().map(wire::Diagnosis::from).collect();
        Ok(serde_json::to_string_pretty(&v)? + "\n")
    }
}

/// One compact JSON diagnosis per line (batch work).
pub struct Jsonl;

impl Render for Jsonl {
    fn one(&self, d: &Diagnosis) -> Result<String, RenderError> {
        Ok(serde_json::to_string(&wire::Diagnosis::from(d))? + "\n")
    }
    fn separator(&self) -> &'static str {
        ""
    }
}

/// The JSON report (pretty-printed): the [`wire::Diagnosis`] of `d`.
pub fn json(d: &Diagnosis) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(&wire::Diagnosis::from(d))
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
