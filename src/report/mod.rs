//! Renderers of a diagnosis ([`crate::engine::diagnosis::Diagnosis`]): text, Markdown,
//! JSON, SARIF, GitHub annotations.

pub mod fit;
pub mod github;
pub mod markdown;
pub mod provenance;
pub mod sarif;
pub mod text;
pub mod wire;

use std::io::Write;

use crate::engine::diagnosis::Diagnosis;

/// Rendering a report failed: serializing it, or writing it.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot serialize the report: {0}")]
    Json(#[from] serde_json::Error),
    /// The writer failed (its `source` is the I/O error: a closed pipe is told apart).
    #[error("cannot write the report")]
    Io(#[from] std::io::Error),
}

/// One output format of diagnoses, as a lifecycle over a writer (as ripgrep's `Sink`
/// and ast-grep's `Printer`): [`Render::begin`] once, [`Render::diagnosis`] for each
/// input as soon as it is diagnosed, [`Render::finish`] once. Every format implements
/// all four methods (none has a default that would print nothing): a per-input format
/// writes each diagnosis as it comes; a collecting format ([`Render::collects`]) keeps
/// them and writes one document of every input at the end.
pub trait Render {
    /// Whether the format writes every input in one document at [`Render::finish`]
    /// (`--follow` refuses those: it never ends).
    /// The default: a per-input format, which writes as each diagnosis comes.
    fn collects(&self) -> bool {
        false
    }
    /// Before the first diagnosis (the default writes nothing).
    fn begin(&mut self, _out: &mut dyn Write) -> Result<(), RenderError> {
        Ok(())
    }
    /// One input's diagnosis, in input order.
    fn diagnosis(&mut self, out: &mut dyn Write, d: Diagnosis) -> Result<(), RenderError>;
    /// After the last diagnosis (there may have been none: every input failed to read;
    /// the default writes nothing).
    fn finish(&mut self, _out: &mut dyn Write) -> Result<(), RenderError> {
        Ok(())
    }
}

/// What a per-input format keeps between diagnoses: how many it wrote, to put its
/// separator between two of them.
#[derive(Debug, Default)]
pub struct Written(usize);

impl Written {
    /// Writes one rendering, `separator` before it when it is not the first.
    pub fn write(
        &mut self,
        out: &mut dyn Write,
        separator: &str,
        text: &str,
    ) -> Result<(), RenderError> {
        if self.0 > 0 {
            out.write_all(separator.as_bytes())?;
        }
        self.0 += 1;
        out.write_all(text.as_bytes())?;
        Ok(())
    }
}

/// JSON per the contract of [`wire`] (README.md, `crashdoc schema diagnosis`),
/// pretty-printed: the document of one input ([`JsonArray`] for several).
#[derive(Debug, Default)]
pub struct Json(Written);

impl Render for Json {
    fn diagnosis(&mut self, out: &mut dyn Write, d: Diagnosis) -> Result<(), RenderError> {
        self.0.write(out, "", &(json(&d)? + "\n"))
    }
}

/// JSON of several inputs: one array of their diagnoses, in input order, so that the
/// output is one JSON value (`jq`, `json.load`); one input keeps its single object.
#[derive(Debug, Default)]
pub struct JsonArray(Vec<wire::Diagnosis>);

impl Render for JsonArray {
    fn collects(&self) -> bool {
        true
    }
    fn diagnosis(&mut self, _out: &mut dyn Write, d: Diagnosis) -> Result<(), RenderError> {
        self.0.push(wire::Diagnosis::from(&d));
        Ok(())
    }
    fn finish(&mut self, out: &mut dyn Write) -> Result<(), RenderError> {
        out.write_all((serde_json::to_string_pretty(&self.0)? + "\n").as_bytes())?;
        Ok(())
    }
}

/// One compact JSON diagnosis per line (batch work).
#[derive(Debug, Default)]
pub struct Jsonl(Written);

impl Render for Jsonl {
    fn diagnosis(&mut self, out: &mut dyn Write, d: Diagnosis) -> Result<(), RenderError> {
        let line = serde_json::to_string(&wire::Diagnosis::from(&d))? + "\n";
        self.0.write(out, "", &line)
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
