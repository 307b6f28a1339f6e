//! SARIF 2.1.0 (`crashdoc diagnose --format sarif`), for code-scanning dashboards and
//! any tool that reads static-analysis results.
//!
//! One `run` for all inputs: `tool.driver` is crashdoc with one rule per signature that
//! produced a cause (`id` = signature id, short description = title, full description =
//! explanation, help = the remediation steps as templates, the same for every input,
//! `helpUri` = its first reference); one `result` per cause with `ruleId`/`ruleIndex`, a
//! `level` from the signature's severity (fatal and error → `error`, warning →
//! `warning`, benign → `note`), a message with the commands filled for its own input
//! (also in `properties.remediation`, with notes where a value was refused), and one
//! location per evidence line: the log as `artifactLocation.uri` and the line as
//! `region.startLine` (with the line's text as the snippet). The types below are the
//! subset of the SARIF object model crashdoc fills; field names follow the standard.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::diagnosis::Diagnosis;
use crate::knowledge::signature::Severity;
use crate::knowledge::text::escape_control;

pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
pub const VERSION: &str = "2.1.0";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    results: Vec<SarifResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column_kind: Option<&'static str>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: String,
    version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    short_description: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    full_description: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_configuration: Option<Configuration>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    properties: BTreeMap<&'static str, serde_json::Value>,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    properties: BTreeMap<&'static str, serde_json::Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snippet: Option<Text>,
}

/// The SARIF level of a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Fatal | Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Benign => "note",
    }
}

/// A path as a URI reference (RFC 3986): `/` separators, and every byte outside the
/// unreserved set and `/` percent-encoded. Standard input is `stdin`.
pub fn uri(path: &str) -> String {
    if path == "<stdin>" {
        return "stdin".to_string();
    }
    let p = path.replace('\\', "/");
    let mut out = String::with_capacity(p.len());
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A rule's help: the remediation steps as the signature writes them (templates, the
/// same for every input; each result carries its own filled commands, [`fixes`]).
fn help(c: &crate::engine::diagnosis::Cause) -> String {
    let mut s = String::new();
    for (i, st) in c.remediation.iter().enumerate() {
        s.push_str(&format!("{}. {}", i + 1, escape_control(&st.description)));
        if let Some(w) = &st.when {
            s.push_str(&format!(" ({})", escape_control(&super::when_phrase(w))));
        }
        if let Some(cmd) = &st.written {
            s.push_str(&format!("\n   $ {}", escape_control(cmd)));
        }
        s.push('\n');
    }
    if s.is_empty() {
        s = escape_control(c.explain.trim());
    }
    s.trim_end().to_string()
}

/// A result's remediation for its own input: each step's filled command, or its
/// template with the note saying why it could not be filled.
fn fixes(c: &crate::engine::diagnosis::Cause) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = c
        .remediation
        .iter()
        .map(|st| {
            let mut o = serde_json::Map::new();
            o.insert("description".into(), escape_control(&st.description).into());
            if let Some(cmd) = &st.command {
                o.insert("command".into(), escape_control(cmd).into());
            }
            if let Some(t) = &st.template {
                o.insert("template".into(), escape_control(t).into());
            }
            if let Some(n) = &st.note {
                o.insert("note".into(), escape_control(n).into());
            }
            serde_json::Value::Object(o)
        })
        .collect();
    serde_json::Value::Array(steps)
}

/// The result's message: the cause, its first evidence line, and its filled commands.
fn message(c: &crate::engine::diagnosis::Cause) -> String {
    let first = c.evidence.first().map_or(String::new(), |e| {
        format!(" Line {}: {}", e.line, escape_control(&e.text))
    });
    let mut m = format!(
        "{} ({}, {} confidence).{first}",
        escape_control(&c.title),
        c.category.as_str(),
        c.confidence.as_str()
    );
    let cmds: Vec<&String> = c
        .remediation
        .iter()
        .filter_map(|s| s.command.as_ref())
        .collect();
    if !cmds.is_empty() {
        m.push_str("\nFix:");
        for cmd in cmds {
            m.push_str(&format!("\n  $ {}", escape_control(cmd)));
        }
    }
    m
}

/// SARIF 2.1.0: one result per cause, every input in one log, written at the end
/// ([`render`]).
#[derive(Debug, Default)]
pub struct Sarif(Vec<Diagnosis>);

impl super::Render for Sarif {
    fn collects(&self) -> bool {
        true
    }
    fn diagnosis(
        &mut self,
        _out: &mut dyn std::io::Write,
        d: Diagnosis,
    ) -> Result<(), super::RenderError> {
        self.0.push(d);
        Ok(())
    }
    fn finish(&mut self, out: &mut dyn std::io::Write) -> Result<(), super::RenderError> {
        out.write_all(render(&self.0)?.as_bytes())?;
        Ok(())
    }
}

/// The SARIF log of some diagnoses (pretty JSON with a final newline).
pub fn render(ds: &[Diagnosis]) -> Result<String, serde_json::Error> {
    let mut rules: Vec<Rule> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut results = Vec::new();
    for d in ds {
        let file = uri(&d.input);
        for c in &d.causes {
            let rule_index = *index.entry(c.signature.clone()).or_insert_with(|| {
                let mut props = BTreeMap::new();
                props.insert("category", serde_json::json!(c.category.as_str()));
                props.insert("severity", serde_json::json!(c.severity.as_str()));
                rules.push(Rule {
                    id: c.signature.clone(),
                    short_description: Some(Text {
                        text: escape_control(&c.title),
                    }),
                    full_description: Some(Text {
                        text: escape_control(c.explain.trim()),
                    }),
                    help: Some(Text { text: help(c) }),
                    help_uri: c.references.first().cloned(),
                    default_configuration: Some(Configuration {
                        level: level(c.severity),
                    }),
                    properties: props,
                });
                rules.len() - 1
            });
            let mut locations: Vec<Location> = c
                .evidence
                .iter()
                .filter(|e| e.line >= 1)
                .map(|e| Location {
                    physical_location: PhysicalLocation {
                        artifact_location: ArtifactLocation { uri: file.clone() },
                        region: Some(Region {
                            start_line: e.line,
                            start_column: None,
                            snippet: Some(Text {
                                text: escape_control(&e.text),
                            }),
                        }),
                    },
                })
                .collect();
            if locations.is_empty() {
                locations.push(Location {
                    physical_location: PhysicalLocation {
                        artifact_location: ArtifactLocation { uri: file.clone() },
                        region: None,
                    },
                });
            }
            let mut props = BTreeMap::new();
            props.insert("rank", serde_json::json!(c.rank));
            props.insert("confidence", serde_json::json!(c.confidence.as_str()));
            props.insert("score", serde_json::json!(c.score));
            props.insert("category", serde_json::json!(c.category.as_str()));
            if !c.remediation.is_empty() {
                props.insert("remediation", fixes(c));
            }
            results.push(SarifResult {
                rule_id: c.signature.clone(),
                rule_index,
                level: level(c.severity),
                message: Text { text: message(c) },
                locations,
                properties: props,
            });
        }
    }
    write(Log::of(
        "crashdoc",
        rules,
        results,
        Some("unicodeCodePoints"),
    ))
}

impl Log {
    /// One run of `tool` (crashdoc or one of its commands).
    fn of(
        tool: &str,
        rules: Vec<Rule>,
        results: Vec<SarifResult>,
        column_kind: Option<&'static str>,
    ) -> Log {
        Log {
            schema: SCHEMA,
            version: VERSION,
            runs: vec![Run {
                tool: Tool {
                    driver: Driver {
                        name: tool.to_string(),
                        version: env!("CARGO_PKG_VERSION"),
                        rules,
                    },
                },
                results,
                column_kind,
            }],
        }
    }
}

/// A log as pretty JSON with a final newline.
fn write(log: Log) -> Result<String, serde_json::Error> {
    Ok(serde_json::to_string_pretty(&log)? + "\n")
}

/// One located problem of a checked file (a `sig lint` diagnostic).
pub struct FileProblem<'a> {
    /// Its code (`E001`), the SARIF rule.
    pub rule: &'a str,
    /// `error` or `warning`.
    pub level: &'static str,
    pub message: &'a str,
    pub file: &'a str,
    /// 1-based; 0 (unknown) is written as 1.
    pub line: usize,
    pub column: usize,
}

/// The SARIF log of a checker of files (`sig lint --format sarif`), in the same model
/// as the diagnosis's: one rule per code (its help at `help_uri`), one result per
/// problem, located at its line and column.
pub fn file_problems(
    tool: &str,
    help_uri: &str,
    problems: &[FileProblem<'_>],
) -> Result<String, serde_json::Error> {
    let mut codes: Vec<&str> = problems.iter().map(|p| p.rule).collect();
    codes.sort_unstable();
    codes.dedup();
    let rules = codes
        .iter()
        .map(|c| Rule {
            id: (*c).to_string(),
            short_description: None,
            full_description: None,
            help: None,
            help_uri: Some(help_uri.to_string()),
            default_configuration: None,
            properties: BTreeMap::new(),
        })
        .collect();
    let results = problems
        .iter()
        .map(|p| SarifResult {
            rule_id: p.rule.to_string(),
            rule_index: codes.binary_search(&p.rule).unwrap_or_default(),
            level: p.level,
            message: Text {
                text: p.message.to_string(),
            },
            locations: vec![Location {
                physical_location: PhysicalLocation {
                    artifact_location: ArtifactLocation {
                        uri: p.file.to_string(),
                    },
                    region: Some(Region {
                        start_line: p.line.max(1),
                        start_column: Some(p.column.max(1)),
                        snippet: None,
                    }),
                },
            }],
            properties: BTreeMap::new(),
        })
        .collect();
    write(Log::of(tool, rules, results, None))
}
