//! Filing a new incident: `corpus/<name>/log.txt` (the log, byte for byte) and
//! `expected.yaml` proposed from the current diagnosis.
//!
//! The proposal is only a starting point: the top cause's category and signature, and
//! its first evidence line as the key line. When nothing matched, `--category` is
//! required: an unexplained crash filed as `none` would count as a healthy log scored
//! right. A person
//! checks it against the source thread before committing — the header of the file says
//! so — otherwise the corpus would only ever confirm what crashdoc already says. The
//! written file is read back through the same loader `corpus run` uses, so a filed
//! incident always loads.

use std::path::{Path, PathBuf};

use super::{CorpusError, Expected};
use crate::engine::diagnosis::Diagnosis;
use crate::knowledge::files;

/// Errors filing an incident.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    #[error("{0}: already exists; choose another --name")]
    Exists(String),
    #[error("{name:?} is not a usable incident name (letters, digits, '-', '_' and '.' only)")]
    BadName { name: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write expected.yaml: {0}")]
    Yaml(String),
    #[error(transparent)]
    Load(#[from] CorpusError),
    #[error(
        "no known cause matched this log: give its category with --category \
         (`none` only for a healthy log, `other` for a code bug); an unexplained crash is not healthy"
    )]
    NeedsCategory,
}

/// What to file.
#[derive(Debug, Clone)]
pub struct NewIncident<'a> {
    pub corpus: &'a Path,
    pub log: &'a Path,
    pub source: &'a str,
    /// The category, when known better than the diagnosis.
    pub category: Option<&'a str>,
    pub name: Option<&'a str>,
    /// How the log was read from its source ([`Via`]), recorded in `expected.yaml`.
    pub via: Via,
}

/// How an incident's log was read from its source. A public thread's log is copied
/// through the search tool's look-up verbs (a fetched snapshot is for reading only, never
/// committed); a team's own log (its CI archive, its machines) is its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The search tool's `read_file`: a repository's committed file, paged.
    ReadFile,
    /// The search tool's `search` (or `find_string`): an excerpt of a public page or file.
    Search,
    /// A log of your own: your CI archive, your machine's journal.
    Own,
}

impl Via {
    /// The word `expected.yaml` records.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::ReadFile => "read_file",
            Via::Search => "search",
            Via::Own => "own",
        }
    }
}

/// Lowercase, `-` for runs of anything that is not a letter or digit.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n != "."
        && n != ".."
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The expectation proposed from a diagnosis.
pub fn propose(d: &Diagnosis, source: &str, category: Option<&str>, via: Via) -> Expected {
    let top = d.causes.first();
    let diagnosed = top.map_or("none", |c| c.category.as_str());
    let category = category.unwrap_or(diagnosed).to_string();
    // the signature and key line only when the diagnosis agrees with the category
    let agree = top.filter(|c| c.category.as_str() == category);
    Expected {
        source: source.to_string(),
        via: Some(via.as_str().to_string()),
        project: None,
        category,
        signature: agree.map(|c| c.signature.clone()),
        also: Vec::new(),
        key_line: agree
            .and_then(|c| c.evidence.first())
            .map(|e| e.text.trim().to_string()),
        root_cause: None,
        fix: None,
        evidence: None,
        noise: Vec::new(),
        must_not: Vec::new(),
    }
}

/// The default folder name: the category and the log file's stem (its folder's name
/// when the stem says nothing, as in `job-42/log.txt`).
pub fn default_name(log: &Path, e: &Expected) -> String {
    let name_of = |p: Option<&std::ffi::OsStr>| p.map(|s| s.to_string_lossy().to_string());
    let mut stem = name_of(log.file_stem()).unwrap_or_default();
    stem = stem.strip_suffix(".log").unwrap_or(&stem).to_string();
    if matches!(
        stem.as_str(),
        "" | "log" | "logs" | "output" | "stdout" | "stderr"
    ) {
        if let Some(parent) = name_of(log.parent().and_then(Path::file_name)) {
            stem = parent;
        }
    }
    let s = slug(&format!("{}-{}", e.category, stem));
    if s.is_empty() {
        "incident".to_string()
    } else {
        s
    }
}

const HEADER: &str = "# Proposed by `crashdoc corpus add` from the current diagnosis.\n\
# Check every field against the source thread before committing (the corpus must record\n\
# what really happened, not what crashdoc says).\n";

/// Files the incident; returns its folder.
pub fn add(n: &NewIncident<'_>, d: &Diagnosis) -> Result<PathBuf, AddError> {
    // nothing matched: the log may be an unexplained crash as well as a healthy run,
    // and only a person who read the thread can tell
    if d.causes.is_empty() && n.category.is_none() {
        return Err(AddError::NeedsCategory);
    }
    let expected = propose(d, n.source, n.category, n.via);
    let name = match n.name {
        Some(s) => s.to_string(),
        None => default_name(n.log, &expected),
    };
    if !valid_name(&name) {
        return Err(AddError::BadName { name });
    }
    let dir = n.corpus.join(&name);
    if dir.exists() {
        return Err(AddError::Exists(dir.display().to_string()));
    }
    let yaml = serde_saphyr::to_string(&expected).map_err(|e| AddError::Yaml(e.to_string()))?;
    std::fs::create_dir_all(&dir).map_err(|source| AddError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let filed = file_into(n, &dir, &yaml, &name);
    if filed.is_err() {
        // a failed `corpus add` leaves nothing behind
        let _ = std::fs::remove_dir_all(&dir);
    }
    filed.map(|()| dir)
}

/// Writes the incident's two files into its (new) folder and reads it back.
fn file_into(n: &NewIncident<'_>, dir: &Path, yaml: &str, name: &str) -> Result<(), AddError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |source| AddError::Io { path, source }
    };
    let mut log = files::open_regular(n.log).map_err(io(n.log))?;
    let mut copy = files::AtomicFile::create(&dir.join("log.txt")).map_err(io(dir))?;
    std::io::copy(&mut log, &mut copy).map_err(io(n.log))?;
    copy.commit().map_err(io(dir))?;
    let exp = dir.join("expected.yaml");
    files::write_atomic(&exp, format!("{HEADER}{yaml}").as_bytes()).map_err(io(&exp))?;
    // read it back as `corpus run` will
    let all = super::load_dir(n.corpus)?;
    if !all.iter().any(|i| i.name == name) {
        return Err(AddError::Io {
            path: exp.display().to_string(),
            source: std::io::Error::other("the filed incident does not load back"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_names() {
        assert_eq!(slug("GPU OOM: vllm/serve.log"), "gpu-oom-vllm-serve-log");
        assert!(valid_name("vllm-gpu-oom_2"));
        assert!(!valid_name("../x"));
        assert!(!valid_name(""));
        let e = Expected {
            source: "s".into(),
            via: None,
            project: None,
            category: "host-oom".into(),
            signature: None,
            also: vec![],
            key_line: None,
            root_cause: None,
            fix: None,
            evidence: None,
            noise: vec![],
            must_not: vec![],
        };
        assert_eq!(
            default_name(Path::new("/tmp/Job 12.log.txt"), &e),
            "host-oom-job-12"
        );
        assert_eq!(
            default_name(Path::new("runs/job-42/log.txt"), &e),
            "host-oom-job-42"
        );
    }
}
