//! Reading knowledge files, whatever they hold (signatures, code tables, rules): where
//! they come from (the tree embedded at build time, folders), how they are read and
//! parsed (one YAML budget, every error located and coded) and the checks every file
//! shares (the id's shape and file name, duplicate ids).
//!
//! This module sits below `signature` and `rules` (both read their files through it) and
//! imports neither; assembling a library out of these files (the embedded one, folders
//! over it, the cache) is [`super::sources`], above them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::diagnostic::{Code, Diagnostic, Text};
use super::files;

/// Largest knowledge file accepted.
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// Where knowledge comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The files compiled into the binary (`signatures/`, `rules/` of the source tree).
    Builtin,
    Dir(PathBuf),
}

/// What a set of files holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Signatures, code tables and `frames.yaml` (`signatures/`, `--signatures DIR`).
    Signatures,
    /// Compatibility rules (`rules/`, `--rules DIR`).
    Rules,
}

impl Kind {
    /// Its files, as messages name them.
    pub fn files(self) -> &'static str {
        match self {
            Kind::Signatures => "signature files",
            Kind::Rules => "rule files",
        }
    }

    /// The option that names a folder of them.
    fn option(self) -> &'static str {
        match self {
            Kind::Signatures => "--signatures",
            Kind::Rules => "--rules",
        }
    }

    /// The embedded files: (path relative to the source tree's folder, text).
    pub fn builtin(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Kind::Signatures => super::embedded::signature_files(),
            Kind::Rules => super::embedded::rule_files(),
        }
    }

    /// The embedded files' names: `<builtin>/<prefix><path>`.
    fn builtin_prefix(self) -> &'static str {
        match self {
            Kind::Signatures => "",
            Kind::Rules => "rules/",
        }
    }

    /// One embedded file to load, named as every embedded file is named (`build.rs`
    /// names the files it freezes with it too).
    pub fn builtin_file(self, path: &str, text: &str) -> LibraryFile {
        LibraryFile {
            name: format!("<builtin>/{}{path}", self.builtin_prefix()),
            text: text.to_string(),
        }
    }
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

/// serde's "unknown variant `X`, expected one of A, B, …" (or "unknown field") gets the
/// closest of the expected names (`gpu-oomm` → `gpu-oom`).
fn variant_hint(msg: &str) -> String {
    let Some(rest) = msg
        .strip_prefix("unknown variant `")
        .or_else(|| msg.strip_prefix("unknown field `"))
    else {
        return String::new();
    };
    let Some((word, expected)) = rest.split_once('`') else {
        return String::new();
    };
    let Some(list) = expected.split_once("expected one of ").map(|(_, l)| l) else {
        return String::new();
    };
    let names = list.split(", ").map(|n| n.trim_matches('`'));
    crate::knowledge::text::did_you_mean(&crate::knowledge::text::closest(word, names))
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
    let msg = msg.to_string() + &variant_hint(msg);
    let d = Diagnostic::new(Code::E001, name, msg);
    match e.location() {
        Some(l) => d.at(text, l.line() as usize, l.column() as usize),
        None => d,
    }
}

/// Parses one YAML file of `what` (`signature files`…) under the size limit (E011)
/// and the budget (E001, located).
pub fn parse_yaml<T: DeserializeOwned>(
    name: &str,
    text: &str,
    what: &str,
) -> Result<T, Diagnostic> {
    if text.len() > MAX_FILE_BYTES {
        return Err(Diagnostic::new(
            Code::E011,
            name,
            format!(
                "file is {} bytes; {what} are limited to {MAX_FILE_BYTES}",
                text.len()
            ),
        ));
    }
    serde_saphyr::from_str_with_options::<T>(text, yaml_options())
        .map_err(|e| yaml_error(name, text, &e))
}

/// A file name without its folder and `.yaml`/`.yml`.
pub(crate) fn file_stem(name: &str) -> &str {
    let base = name.rsplit('/').next().unwrap_or(name);
    base.strip_suffix(".yaml")
        .or_else(|| base.strip_suffix(".yml"))
        .unwrap_or(base)
}

/// Whether a file name ends in `.yaml` or `.yml`.
pub(crate) fn is_yaml(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml")
}

/// Files a knowledge folder may hold that are not knowledge: `schema.json`, Markdown.
pub fn is_ignored(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    base == "schema.json" || base.ends_with(".md")
}

/// Whether an id is kebab-case: lowercase ASCII letters and digits in dash-separated words.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 80
        && id.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The id's shape (E002) and that it equals the file's stem (E003), located at the id.
pub(crate) fn check_id(id: &Text, stem: &str, file: &str, source: &str) -> Option<Diagnostic> {
    let v = &id.value;
    let d = if !valid_id(v) {
        let msg =
            format!("id `{v}` is not kebab-case (lowercase letters, digits and single dashes)");
        Diagnostic::new(Code::E002, file, msg)
    } else if v != stem {
        let msg = format!("id `{v}` does not match the file name `{stem}.yaml`");
        Diagnostic::new(Code::E003, file, msg)
    } else {
        return None;
    };
    Some(d.at(
        source,
        id.referenced.line() as usize,
        id.referenced.column() as usize,
    ))
}

/// The ids defined so far, each with where: a second definition is E004.
#[derive(Default)]
pub(crate) struct Ids {
    seen: HashMap<String, (String, usize, usize)>,
}

impl Ids {
    /// Records `id` of `file`, or the E004 naming where it was defined first.
    pub(crate) fn define(&mut self, id: &Text, file: &str, source: &str) -> Result<(), Diagnostic> {
        let line = id.referenced.line() as usize;
        let col = id.referenced.column() as usize;
        if let Some((other, l, c)) = self.seen.get(&id.value) {
            let msg = format!(
                "duplicate id `{}`: also defined at {other}:{l}:{c}",
                id.value
            );
            return Err(Diagnostic::new(Code::E004, file, msg).at(source, line, col));
        }
        self.seen
            .insert(id.value.clone(), (file.to_string(), line, col));
        Ok(())
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.seen.contains_key(id)
    }
}

/// The files of `sources`, in order: the embedded ones (named `<builtin>/…`), then each
/// folder's; and the errors of the folders that could not be read.
pub fn read_sources(sources: &[Source], kind: Kind) -> (Vec<LibraryFile>, Vec<Diagnostic>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for s in sources {
        match s {
            Source::Builtin => files.extend(
                kind.builtin()
                    .iter()
                    .map(|(path, text)| kind.builtin_file(path, text)),
            ),
            Source::Dir(d) => {
                let (mut f, mut e) = read_dir_files(d, kind);
                files.append(&mut f);
                errors.append(&mut e);
            }
        }
    }
    (files, errors)
}

/// The files of `paths`, in order: a folder is read as [`read_dir_files`] reads it, a
/// path that exists and is not a folder as one file (`sig lint FILE`, `sig test FILE`);
/// and the errors of those that could not be read.
pub fn read_paths(paths: &[PathBuf], kind: Kind) -> (Vec<LibraryFile>, Vec<Diagnostic>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        if !p.is_dir() && p.exists() {
            match read_library_file(p, kind) {
                Ok(f) => files.push(f),
                Err(e) => errors.push(e),
            }
            continue;
        }
        let (mut f, mut e) = read_dir_files(p, kind);
        files.append(&mut f);
        errors.append(&mut e);
    }
    (files, errors)
}

/// Reads a knowledge folder (recursively, in sorted order; symlink loops are skipped and
/// the depth is bounded), skipping `schema.json` and Markdown. Only regular files are
/// read, each checked against [`MAX_FILE_BYTES`] once opened; a symlink named `*.yaml`
/// must lead to a YAML file, so that no line of another file (`x.yaml -> /etc/shadow`)
/// is ever quoted in an error.
pub fn read_dir_files(dir: &Path, kind: Kind) -> (Vec<LibraryFile>, Vec<Diagnostic>) {
    if !dir.is_dir() {
        let d = Diagnostic::new(
            Code::E013,
            &dir.display().to_string(),
            format!(
                "not a directory ({} takes a folder of <id>.yaml files)",
                kind.option()
            ),
        );
        return (Vec::new(), vec![d]);
    }
    let walk = files::walk(dir, &|p: &Path| !is_ignored(&p.display().to_string()));
    let mut errors: Vec<Diagnostic> = walk
        .errors
        .iter()
        .map(|(p, e)| Diagnostic::new(Code::E013, &p.display().to_string(), e.clone()))
        .collect();
    let mut out = Vec::new();
    for p in walk.files {
        match read_library_file(&p, kind) {
            Ok(f) => out.push(f),
            Err(d) => errors.push(d),
        }
    }
    (out, errors)
}

/// Reads one knowledge file (a regular file, a YAML file if reached through a symlink,
/// at most [`MAX_FILE_BYTES`]).
pub fn read_library_file(p: &Path, kind: Kind) -> Result<LibraryFile, Diagnostic> {
    let name = p.display().to_string();
    if let Some(target) = symlink_to_non_yaml(p) {
        return Err(Diagnostic::new(
            Code::E013,
            &name,
            format!("is a symbolic link to {target}, which is not a YAML file: not read"),
        ));
    }
    match files::read_capped_string(p, MAX_FILE_BYTES) {
        Ok(text) => Ok(LibraryFile { name, text }),
        Err(files::ReadError::TooBig { size, .. }) => Err(Diagnostic::new(
            Code::E011,
            &name,
            format!(
                "file is {size} bytes; {} are limited to {MAX_FILE_BYTES}",
                kind.files()
            ),
        )),
        Err(files::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
            Err(Diagnostic::new(Code::E001, &name, e.to_string()))
        }
        Err(e) => Err(Diagnostic::new(
            Code::E013,
            &name,
            format!("cannot read: {e}"),
        )),
    }
}

/// The target of a symlink (any link in the chain resolved) when it does not name a
/// `.yaml`/`.yml` file.
fn symlink_to_non_yaml(p: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    let target = p.canonicalize().ok()?;
    let base = target.file_name()?.to_string_lossy().into_owned();
    (!is_yaml(&base)).then(|| super::text::escape_control(&target.display().to_string()))
}
