//! Code tables: one entry per error code, recognised in every rendering of that code.
//!
//! The same CUDA error is printed as `CUDA error: X`, `cuda runtime error (N) : X`,
//! `THCudaCheck FAIL … error=N : X`, NCCL's `Cuda failure N 'X'`, `Error N: X`, …; an
//! errno as `[Errno N] X`, `X (os error N)`, `errno: N - X`. A table file
//! (`signatures/tables/<id>.yaml`, or a `tables/` folder of any library) states the
//! renderings once, as regexes with `{key}` placeholders, and the codes as entries whose
//! `keys` give the values of each placeholder (every number, symbolic name and message
//! text the code has had across releases). Compiling a table expands, for each entry,
//! every rendering whose placeholders the entry has into one `message` condition, and
//! makes the entry an ordinary [`SignatureFile`]: the matcher, the prefilter (atoms come
//! from the expanded regexes), ranking, `sig test` and `sig list` need nothing new. The
//! compiled signature remembers it came from a table ([`Layer::Table`]) so the output
//! says which layer of knowledge matched, and ranking lets a signature that refines a
//! code in context outrank the table's generic entry.
//!
//! Errors are located in the table file: an entry's id at the entry, an expanded regex
//! at its rendering's pattern.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{Code, Diagnostic};
use super::model::{
    Category, Condition, ConfidenceCap, Examples, Severity, SignatureFile, Step, Text,
};

/// Which layer of knowledge a compiled signature comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Layer {
    /// A signature file: one failure class.
    #[default]
    Signature,
    /// An entry of a code table (the table's id).
    Table(String),
    /// A structural fallback (exception type and raising module), used only when no
    /// other signature explains a failure.
    Fallback,
}

impl Layer {
    pub fn as_str(&self) -> &'static str {
        match self {
            Layer::Signature => "signature",
            Layer::Table(_) => "table",
            Layer::Fallback => "fallback",
        }
    }
}

/// One table file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableFile {
    /// Kebab-case, equal to the file name.
    #[schemars(with = "String")]
    pub id: Text,
    /// What a code of this table is ("CUDA runtime error").
    pub title: String,
    #[serde(default)]
    pub projects: Vec<String>,
    /// Where the codes, names and texts are documented.
    #[serde(default)]
    pub references: Vec<String>,
    /// How programs print a code of this table.
    pub renderings: Vec<Rendering>,
    pub entries: Vec<Entry>,
}

/// One way a code is printed: a regex with `{key}` placeholders.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rendering {
    pub name: String,
    /// A regex; `{key}` (lowercase letters and `_`) stands for any value of the entry's
    /// `keys[key]`, matched literally. An entry without one of the keys skips the rendering.
    #[schemars(with = "String")]
    pub pattern: Text,
    /// The upstream code that prints it.
    #[serde(default)]
    pub source: Option<String>,
}

/// One code.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The id of the cause it gives (kebab-case, unique across the library; by convention
    /// `code-<table>-<code>-<name>`).
    #[schemars(with = "String")]
    pub id: Text,
    /// Placeholder values: every number, symbolic name and text the code is printed with.
    pub keys: BTreeMap<String, Vec<String>>,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    /// The code alone does not establish the cause: the confidence is capped.
    #[serde(default)]
    pub max_confidence: Option<ConfidenceCap>,
    pub explain: String,
    #[serde(default)]
    pub remediation: Vec<Step>,
    #[serde(default)]
    pub references: Vec<String>,
    #[serde(default)]
    pub examples: Examples,
}

/// Placeholder names in a rendering pattern: `{key}` not preceded by a backslash.
fn placeholders(pattern: &str) -> Vec<(usize, usize, &str)> {
    let b = pattern.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == b'{' {
            let body = b[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_lowercase() || **c == b'_')
                .count();
            if body > 0 && b.get(i + 1 + body) == Some(&b'}') {
                out.push((i, i + body + 2, &pattern[i + 1..i + 1 + body]));
                i += body + 2;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The rendering with every placeholder replaced by the entry's values (escaped, as an
/// alternation), or `None` when the entry lacks one of its keys.
pub fn expand(pattern: &str, keys: &BTreeMap<String, Vec<String>>) -> Option<String> {
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut last = 0;
    for (start, end, key) in placeholders(pattern) {
        let values = keys.get(key).filter(|v| !v.is_empty())?;
        out.push_str(&pattern[last..start]);
        out.push_str("(?:");
        let alts: Vec<String> = values.iter().map(|v| regex::escape(v)).collect();
        out.push_str(&alts.join("|"));
        out.push(')');
        last = end;
    }
    out.push_str(&pattern[last..]);
    Some(out)
}

/// Expands every entry of a parsed table into signature files; problems (an entry no
/// rendering applies to, a key no rendering uses) are located diagnostics.
pub fn entries(t: &TableFile, name: &str, text: &str) -> (Vec<SignatureFile>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for e in &t.entries {
        let mut alts = Vec::new();
        for r in &t.renderings {
            if let Some(p) = expand(&r.pattern.value, &e.keys) {
                alts.push(Condition::Message(Text {
                    value: p,
                    referenced: r.pattern.referenced,
                    defined: r.pattern.defined,
                }));
            }
        }
        if alts.is_empty() {
            errors.push(
                Diagnostic::new(
                    Code::E016,
                    name,
                    format!(
                        "entry `{}`: no rendering of table `{}` applies (its keys: {})",
                        e.id.value,
                        t.id.value,
                        e.keys.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                )
                .at(
                    text,
                    e.id.referenced.line() as usize,
                    e.id.referenced.column() as usize,
                ),
            );
            continue;
        }
        out.push(entry_file(t, e, alts));
    }
    (out, errors)
}

fn entry_file(t: &TableFile, e: &Entry, alts: Vec<Condition>) -> SignatureFile {
    let mut references = e.references.clone();
    references.extend(t.references.iter().cloned());
    references.extend(t.renderings.iter().filter_map(|r| r.source.clone()));
    references.dedup();
    SignatureFile {
        id: e.id.clone(),
        title: e.title.clone(),
        category: e.category,
        severity: e.severity,
        projects: t.projects.clone(),
        tags: vec!["code-table".to_string(), t.id.value.clone()],
        consequence_of: Vec::new(),
        overrides_benign: Vec::new(),
        info_evidence: false,
        condition: Condition::Any(alts),
        atoms: Vec::new(),
        explain: e.explain.clone(),
        explain_env: Vec::new(),
        remediation: e.remediation.clone(),
        references,
        examples: e.examples.clone(),
        max_confidence: e.max_confidence,
        wraps: None,
        explains: Vec::new(),
        completes: false,
        rare: false,
        fallback: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn placeholders_skip_escaped_braces_and_quantifiers() {
        let p = r"Os \{ code: {code}, kind: [A-Za-z]{2,}";
        let names: Vec<&str> = placeholders(p).into_iter().map(|(_, _, k)| k).collect();
        assert_eq!(names, vec!["code"]);
    }

    #[test]
    fn expand_escapes_values_and_skips_missing_keys() {
        let k = keys(&[
            ("code", &["700", "77"]),
            ("text", &["an illegal memory access (x)"]),
        ]);
        assert_eq!(
            expand(r"cuda runtime error \({code}\) : {text}", &k).as_deref(),
            Some(r"cuda runtime error \((?:700|77)\) : (?:an illegal memory access \(x\))")
        );
        assert_eq!(expand(r"\b{name}\b", &k), None);
    }
}
