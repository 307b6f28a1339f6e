//! Load: signature libraries from the embedded default and from folders.
//!
//! A library is a folder tree of `<id>.yaml` files. Besides signatures it may hold
//! `frames.yaml` (traceback knowledge), `schema.json` and Markdown files; any other file
//! is an error (E010), so nothing is skipped silently. Every file is parsed with
//! serde-saphyr under a budget (size, nodes, aliases) and compiled; loading collects
//! every error of every file before it fails, each located.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::compile::{self, Signature};
use super::error::{Code, Diagnostic, LoadErrors};
use super::model::{FramesFile, SignatureFile};

/// Largest signature file accepted.
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// Where signatures come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LibrarySource {
    /// The library compiled into the binary (`signatures/` of the source tree).
    Builtin,
    Dir(PathBuf),
}

/// The loaded, compiled signatures.
#[derive(Debug, Clone, Default)]
pub struct Library {
    pub signatures: Vec<Signature>,
    /// Frame path fragments skipped when locating a crash site.
    pub plumbing: Vec<String>,
}

impl Library {
    pub fn get(&self, id: &str) -> Option<&Signature> {
        self.signatures.iter().find(|s| s.id == id)
    }
}

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_signatures.rs"));
}

/// The embedded library's files: (path relative to `signatures/`, text).
pub fn builtin_files() -> &'static [(&'static str, &'static str)] {
    embedded::FILES
}

/// One file to load: a display name, its text.
pub struct LibraryFile {
    pub name: String,
    pub text: String,
}

pub(crate) fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_aliases = 100;
    budget.max_anchors = 100;
    budget.max_nodes = 20_000;
    budget.max_depth = 32;
    budget.max_total_scalar_bytes = MAX_FILE_BYTES;
    budget.max_documents = 1;
    let mut o = serde_saphyr::Options::default();
    o.budget = Some(budget);
    o
}

pub(crate) fn yaml_error(name: &str, text: &str, e: &serde_saphyr::Error) -> Diagnostic {
    let full = e.to_string();
    // the first line is the message; serde-saphyr adds its own snippet after it
    let mut msg = full.lines().next().unwrap_or(&full).trim();
    msg = msg.strip_prefix("error: ").unwrap_or(msg);
    // drop serde-saphyr's own "line N column M: " (the diagnostic carries the position)
    if let Some(rest) = msg.strip_prefix("line ") {
        if let Some(i) = rest.find(": ") {
            if rest[..i]
                .split(' ')
                .all(|w| w == "column" || w.bytes().all(|b| b.is_ascii_digit()))
            {
                msg = &rest[i + 2..];
            }
        }
    }
    let msg = msg.to_string();
    let d = Diagnostic::new(Code::E001, name, msg);
    match e.location() {
        Some(l) => d.at(text, l.line() as usize, l.column() as usize),
        None => d,
    }
}

/// Parses one signature file.
pub fn parse_signature(name: &str, text: &str) -> Result<SignatureFile, Diagnostic> {
    if text.len() > MAX_FILE_BYTES {
        return Err(Diagnostic::new(
            Code::E011,
            name,
            format!(
                "file is {} bytes; signature files are limited to {MAX_FILE_BYTES}",
                text.len()
            ),
        ));
    }
    serde_saphyr::from_str_with_options::<SignatureFile>(text, yaml_options())
        .map_err(|e| yaml_error(name, text, &e))
}

pub(crate) fn file_stem(name: &str) -> &str {
    let base = name.rsplit('/').next().unwrap_or(name);
    base.strip_suffix(".yaml")
        .or_else(|| base.strip_suffix(".yml"))
        .unwrap_or(base)
}

enum FileRole {
    Signature,
    Frames,
    Ignored,
    Unexpected,
}

fn role(name: &str) -> FileRole {
    let base = name.rsplit('/').next().unwrap_or(name);
    if base == "frames.yaml" {
        FileRole::Frames
    } else if base.ends_with(".yaml") || base.ends_with(".yml") {
        FileRole::Signature
    } else if base == "schema.json" || base.ends_with(".md") {
        FileRole::Ignored
    } else {
        FileRole::Unexpected
    }
}

/// Reads a library folder (recursively, in sorted order).
pub fn read_dir_files(dir: &Path) -> (Vec<LibraryFile>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    if !dir.is_dir() {
        let d = Diagnostic::new(
            Code::E013,
            &dir.display().to_string(),
            "not a directory (--signatures takes a folder of <id>.yaml files)",
        );
        return (Vec::new(), vec![d]);
    }
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => {
                errors.push(Diagnostic::new(
                    Code::E013,
                    &d.display().to_string(),
                    format!("cannot read folder: {e}"),
                ));
                continue;
            }
        };
        for entry in entries {
            match entry {
                Ok(e) => {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else {
                        files.push(p);
                    }
                }
                Err(e) => errors.push(Diagnostic::new(
                    Code::E013,
                    &d.display().to_string(),
                    format!("cannot read folder: {e}"),
                )),
            }
        }
    }
    files.sort();
    for p in files {
        let name = p.display().to_string();
        if matches!(role(&name), FileRole::Ignored) {
            continue;
        }
        match std::fs::metadata(&p) {
            Ok(m) if m.len() as usize > MAX_FILE_BYTES => {
                errors.push(Diagnostic::new(
                    Code::E011,
                    &name,
                    format!(
                        "file is {} bytes; signature files are limited to {MAX_FILE_BYTES}",
                        m.len()
                    ),
                ));
                continue;
            }
            Err(e) => {
                errors.push(Diagnostic::new(
                    Code::E013,
                    &name,
                    format!("cannot read: {e}"),
                ));
                continue;
            }
            _ => {}
        }
        match std::fs::read(&p) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => out.push(LibraryFile { name, text }),
                Err(e) => errors.push(Diagnostic::new(
                    Code::E001,
                    &name,
                    format!(
                        "not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                )),
            },
            Err(e) => errors.push(Diagnostic::new(
                Code::E013,
                &name,
                format!("cannot read: {e}"),
            )),
        }
    }
    (out, errors)
}

/// Parses and compiles a set of files into one library.
pub fn compile_files(files: &[LibraryFile]) -> Result<Library, LoadErrors> {
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut lib = Library::default();
    let mut seen: HashMap<String, (String, usize, usize)> = HashMap::new();
    let mut links: Vec<(&str, String, String, usize, usize, String)> = Vec::new();
    // Parsing and compiling a file depend on that file alone: done on every core first,
    // then folded in file order below (duplicates, links and errors as if sequential).
    let prepared: Vec<_> = {
        use rayon::prelude::*;
        files
            .par_iter()
            .map(|f| {
                if !matches!(role(&f.name), FileRole::Signature) {
                    return None;
                }
                let parsed = parse_signature(&f.name, &f.text);
                let compiled = parsed
                    .as_ref()
                    .ok()
                    .map(|p| compile::compile(p, &f.name, &f.text, file_stem(&f.name)));
                Some((parsed, compiled))
            })
            .collect()
    };
    for (f, prep) in files.iter().zip(prepared) {
        match role(&f.name) {
            FileRole::Ignored => continue,
            FileRole::Unexpected => {
                errors.push(Diagnostic::new(
                    Code::E010,
                    &f.name,
                    "not a signature file: a library folder holds <id>.yaml signatures, frames.yaml, schema.json and Markdown only",
                ));
                continue;
            }
            FileRole::Frames => {
                if f.text.len() > MAX_FILE_BYTES {
                    errors.push(Diagnostic::new(
                        Code::E011,
                        &f.name,
                        "frames.yaml is too large",
                    ));
                    continue;
                }
                match serde_saphyr::from_str_with_options::<FramesFile>(&f.text, yaml_options()) {
                    Ok(fr) => lib.plumbing.extend(fr.plumbing),
                    Err(e) => errors.push(yaml_error(&f.name, &f.text, &e)),
                }
                continue;
            }
            FileRole::Signature => {}
        }
        let Some((parsed, compiled)) = prep else {
            continue;
        };
        let parsed = match parsed {
            Ok(p) => p,
            Err(d) => {
                errors.push(d);
                continue;
            }
        };
        let line = parsed.id.referenced.line() as usize;
        let col = parsed.id.referenced.column() as usize;
        if let Some((other, l, c)) = seen.get(&parsed.id.value) {
            errors.push(
                Diagnostic::new(
                    Code::E004,
                    &f.name,
                    format!(
                        "duplicate id `{}`: also defined at {other}:{l}:{c}",
                        parsed.id.value
                    ),
                )
                .at(&f.text, line, col),
            );
            continue;
        }
        seen.insert(parsed.id.value.clone(), (f.name.clone(), line, col));
        let fields = parsed
            .consequence_of
            .iter()
            .map(|t| ("consequence_of", t))
            .chain(
                parsed
                    .overrides_benign
                    .iter()
                    .map(|t| ("overrides_benign", t)),
            );
        for (field, t) in fields {
            links.push((
                field,
                f.name.clone(),
                t.value.clone(),
                t.referenced.line() as usize,
                t.referenced.column() as usize,
                f.text.clone(),
            ));
        }
        let compiled = compiled
            .unwrap_or_else(|| compile::compile(&parsed, &f.name, &f.text, file_stem(&f.name)));
        match compiled {
            Ok(sig) => lib.signatures.push(sig),
            Err(mut es) => errors.append(&mut es),
        }
    }
    for (field, file, target, line, col, text) in links {
        if !seen.contains_key(&target) {
            errors.push(
                Diagnostic::new(
                    Code::E008,
                    &file,
                    format!("{field} names `{target}`, which no loaded signature defines"),
                )
                .at(&text, line, col),
            );
        }
    }
    if errors.is_empty() {
        lib.signatures.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(lib)
    } else {
        Err(LoadErrors(errors))
    }
}

/// Loads and compiles the given sources, in order, as one library.
pub fn load(sources: &[LibrarySource]) -> Result<Library, LoadErrors> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for s in sources {
        match s {
            LibrarySource::Builtin => {
                files.extend(builtin_files().iter().map(|(n, t)| LibraryFile {
                    name: format!("<builtin>/{n}"),
                    text: (*t).to_string(),
                }))
            }
            LibrarySource::Dir(d) => {
                let (mut f, mut e) = read_dir_files(d);
                files.append(&mut f);
                errors.append(&mut e);
            }
        }
    }
    // files that could be read are compiled even when others could not, so that every
    // error of every file is reported at once
    match compile_files(&files) {
        Ok(lib) if errors.is_empty() => Ok(lib),
        Ok(_) => Err(LoadErrors(errors)),
        Err(LoadErrors(mut more)) => {
            errors.append(&mut more);
            Err(LoadErrors(errors))
        }
    }
}
