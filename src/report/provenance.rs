//! Where a report's knowledge came from: the libraries a run used (the embedded one,
//! each folder, each config file that named folders) and, for a signature read from a
//! folder, its file.
//!
//! A folder or a `crashdoc.toml` can add a signature with a new id or replace a
//! built-in one, and what it says becomes the printed fix. So every report names its
//! libraries (the text footer, the JSON `sources` list) and marks a cause whose
//! signature came from a folder (text: `from …`, JSON: the cause's `origin`): a reader
//! sees who chose a command. The command line records them once per process ([`set`],
//! after loading the library) and every renderer reads them; a run that never calls it
//! (a library user rendering its own diagnosis) reports nothing of them.

use std::collections::HashMap;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::Serialize;

/// One library a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Source {
    /// `builtin` (the signatures embedded in crashdoc), `folder` (a signature folder) or
    /// `config` (a `crashdoc.toml` that named folders).
    pub kind: String,
    /// The folder or file (absent for `builtin`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// For a folder: what named it (`--signatures`, `CRASHDOC_SIGNATURES`, or the
    /// config file's path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// What a run recorded.
#[derive(Debug, Default)]
pub struct Provenance {
    pub sources: Vec<Source>,
    /// Signature id → the folder file it was read from (embedded signatures are not
    /// listed).
    pub files: HashMap<String, String>,
}

static CURRENT: OnceLock<Provenance> = OnceLock::new();

/// Records the run's libraries (the first call wins: one library per process).
pub fn set(p: Provenance) {
    let _ = CURRENT.set(p);
}

/// The libraries the run used (empty when none were recorded).
pub fn sources() -> &'static [Source] {
    CURRENT.get().map_or(&[], |p| p.sources.as_slice())
}

/// The folder file a signature was read from; `None` for an embedded one.
pub fn origin(signature: &str) -> Option<&'static str> {
    CURRENT
        .get()
        .and_then(|p| p.files.get(signature))
        .map(String::as_str)
}

/// The text report's footer: `Libraries: built-in; folder ops/sigs (via crashdoc.toml
/// /srv/team/crashdoc.toml)`.
pub fn footer() -> Option<String> {
    let s = sources();
    if s.is_empty() {
        return None;
    }
    let parts: Vec<String> = s
        .iter()
        .map(|x| match (&x.path, &x.via) {
            (None, _) => "built-in".to_string(),
            (Some(p), Some(v)) => format!("{} {p} (via {v})", x.kind),
            (Some(p), None) => format!("{} {p}", x.kind),
        })
        .collect();
    Some(crate::knowledge::text::escape_control(&format!(
        "Libraries: {}",
        parts.join("; ")
    )))
}
