//! Parse environment reports into [`Facts`], line by line.
//!
//! One [`Scanner`] recognizes every supported report by its own lines, so the same code
//! reads a report given apart (`--env FILE`) and a report pasted into a log (each log
//! line's message, prefixes peeled, is pushed as it streams by). Reports:
//!
//! - [`pip`]: `pip list` / `uv pip list` tables, `pip freeze`, `pip list --format json`,
//!   `pip show` (Requires / Required-by), collect_env's `[pip3] name==version` lines;
//! - [`torch`]: `python -m torch.utils.collect_env` (both the old `Key: value` and the
//!   new `Key    : value` layout), `vllm collect-env`, `python -m flashinfer.collect_env`,
//!   SGLang's environment block, and torch's own lines (`torch.cuda.get_arch_list()`,
//!   the "not compatible with the current PyTorch installation" warning);
//! - [`nvidia`]: the `nvidia-smi` table and `nvidia-smi --query-gpu=… --format=csv`.
//!
//! Multi-line reports (tables, `pip show` blocks, GPU lists) keep a small [`Mode`]; a
//! line that does not continue the mode ends it and is then read on its own. Nothing
//! here fails: an unrecognized line is simply not a fact.

pub mod nvidia;
pub mod pip;
pub mod torch;

use super::facts::{Facts, Origin};

/// What the previous lines started.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    None,
    /// Saw `Package  Version` and expects the dashes line.
    PipHeader,
    /// Inside a `pip list` table.
    PipTable,
    /// Inside a `pip show` block for this package.
    PipShow { name: String },
    /// Inside `nvidia-smi --query-gpu` CSV with these columns.
    SmiCsv { columns: Vec<String> },
    /// After `GPU models and configuration:` (collect_env lists `GPU n: NAME` below).
    GpuList,
}

/// Streams lines of one report (or log) into facts.
#[derive(Debug, Default)]
pub struct Scanner {
    source: String,
    mode: Mode,
    facts: Facts,
}

impl Scanner {
    pub fn new(source: &str) -> Self {
        Scanner {
            source: source.to_string(),
            ..Scanner::default()
        }
    }

    pub(crate) fn origin(&self, line: usize) -> Origin {
        Origin {
            source: self.source.clone(),
            line,
        }
    }

    pub(crate) fn report(&mut self, kind: &str, line: usize) {
        let r = format!("{kind} at {}", self.origin(line));
        if !self.facts.reports.iter().any(|x| x.starts_with(kind)) {
            self.facts.reports.push(r);
        }
    }

    /// Reads one line (`line` is its 1-based number in the source).
    pub fn push(&mut self, line: usize, text: &str) {
        self.push_gated(line, text, may_report);
    }

    /// Whether a report spanning several lines is open: then every line must be pushed.
    pub fn in_report(&self) -> bool {
        !matches!(self.mode, Mode::None)
    }

    /// Whether [`Scanner::push`] could read anything of this line when no report is
    /// open ([`Scanner::in_report`]): otherwise pushing it does nothing.
    pub fn may_read(text: &str) -> bool {
        let t = text.trim_end_matches(['\r', '\n']).trim();
        !t.is_empty() && may_report(t)
    }

    /// Whether [`Scanner::push_without_literals`] could read anything of this line when
    /// no report is open ([`Scanner::in_report`]): otherwise pushing it does nothing.
    pub fn may_read_without_literals(text: &str) -> bool {
        let t = text.trim();
        !t.is_empty() && may_report_without_literals(t)
    }

    /// Reads one line known to contain none of [`GATE_LITERALS`] (the pipeline's fast
    /// path knows this from its automaton): the same as [`Scanner::push`], with a
    /// cheaper gate.
    pub fn push_without_literals(&mut self, line: usize, text: &str) {
        self.push_gated(line, text, may_report_without_literals);
    }

    fn push_gated(&mut self, line: usize, text: &str, gate: fn(&str) -> bool) {
        let t = text.trim_end_matches(['\r', '\n']);
        let trimmed = t.trim();
        // continue a multi-line report, or end it and read the line afresh
        let mode = std::mem::take(&mut self.mode);
        let consumed = match mode {
            Mode::None => false,
            Mode::PipHeader => pip::table_dashes(self, trimmed),
            Mode::PipTable => pip::table_row(self, line, trimmed),
            Mode::PipShow { name } => pip::show_field(self, line, &name, trimmed),
            Mode::SmiCsv { columns } => nvidia::csv_row(self, line, &columns, trimmed),
            Mode::GpuList => torch::gpu_list_row(self, line, trimmed),
        };
        if consumed || trimmed.is_empty() {
            return;
        }
        if !gate(trimmed) {
            return;
        }
        let _ = pip::line(self, line, trimmed)
            || nvidia::line(self, line, trimmed)
            || torch::line(self, line, trimmed);
    }

    pub(crate) fn facts_mut(&mut self) -> &mut Facts {
        &mut self.facts
    }

    pub(crate) fn set_mode(&mut self, m: Mode) {
        self.mode = m;
    }

    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    pub fn finish(self) -> Facts {
        self.facts
    }
}

/// Parses a whole report held in memory. A file that is one JSON document
/// (`pip list --format json` pretty-printed by a tool) is read as such.
pub fn parse_text(source: &str, text: &str) -> Facts {
    let mut s = Scanner::new(source);
    if pip::whole_json(&mut s, text) {
        return s.finish();
    }
    for (i, l) in text.lines().enumerate() {
        s.push(i + 1, l);
    }
    s.finish()
}

/// Literals one of which a line needs for some recognizers (ASCII case-insensitive
/// superset: pip freeze's `==`, the nvidia-smi banner, torch's capability warnings).
pub const GATE_LITERALS: &[&str] = &["==", "nvidia-smi", "cuda capabilit"];

/// The cheap gate before the line recognizers (every log line passes through here): a
/// superset of what [`pip::line`], [`nvidia::line`] and [`torch::line`] accept, read
/// without a regex. Each clause names the recognizers it stands for.
fn may_report(t: &str) -> bool {
    // pip freeze (`==`, `===`); nvidia-smi banner; torch's capability warnings ("with
    // CUDA capability sm_…", "supports CUDA capabilities …")
    memchr::memmem::find(t.as_bytes(), b"==").is_some()
        || t.contains("NVIDIA-SMI")
        || t.contains("CUDA capabilit")
        || may_report_without_literals(t)
}

/// [`may_report`] for a line without any of [`GATE_LITERALS`].
fn may_report_without_literals(t: &str) -> bool {
    let Some(&first) = t.as_bytes().first() else {
        return false;
    };
    // pip JSON, `[pip3] x==1` (collect_env), torch arch lists; nvidia-smi table rows
    if first == b'[' || first == b'|' {
        return true;
    }
    // pip list header, pip show
    if t.starts_with("Package") || t.starts_with("Name:") {
        return true;
    }
    let colon = memchr::memchr(b':', t.as_bytes()).is_some();
    // nvidia-smi --query-gpu CSV header (a `name` or `compute_cap` column)
    if !colon
        && memchr::memchr(b',', t.as_bytes()).is_some()
        && (t.contains("name") || t.contains("compute_cap"))
    {
        return true;
    }
    // collect_env `Key: value` lines
    colon && key_value(t).is_some_and(|(k, _)| torch::is_key(k))
}

/// `key : value` with any spacing around the colon (both collect_env layouts).
pub(crate) fn key_value(t: &str) -> Option<(&str, &str)> {
    let (k, v) = t.split_once(':')?;
    let k = k.trim();
    if k.is_empty() || k.len() > 60 {
        return None;
    }
    Some((k, v.trim()))
}

/// A value collect_env prints when it does not know.
pub(crate) fn unknown_value(v: &str) -> bool {
    let v = v.trim();
    v.is_empty()
        || v.eq_ignore_ascii_case("N/A")
        || v.eq_ignore_ascii_case("None")
        || v.eq_ignore_ascii_case("Could not collect")
        || v.eq_ignore_ascii_case("Not Set")
}

#[cfg(test)]
mod tests;
