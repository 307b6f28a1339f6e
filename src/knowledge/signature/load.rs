//! Load: signature libraries from the embedded default and from folders.
//!
//! A library is a folder tree of `<id>.yaml` files. Besides signatures it may hold
//! `frames.yaml` (traceback knowledge), `schema.json` and Markdown files; any other file
//! is an error (E010), so nothing is skipped silently. Every file is parsed with
//! serde-saphyr under a budget (size, nodes, aliases) and compiled; loading collects
//! every error of every file before it fails, each located.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::knowledge::files;

use super::compile::{self, Signature};
use super::error::{Code, Diagnostic, LoadErrors};
use super::model::{FramesFile, SignatureFile};
use super::table::{self, Layer, TableFile};

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
    /// A code table (`tables/<id>.yaml`): entries compiled into signatures.
    Table,
    Frames,
    Ignored,
    Unexpected,
}

fn is_yaml(base: &str) -> bool {
    base.ends_with(".yaml") || base.ends_with(".yml")
}

/// Is this library file a code table? (It lies in a `tables/` folder of the library.)
pub fn is_table(name: &str) -> bool {
    name.starts_with("tables/") || name.contains("/tables/")
}

fn role(name: &str) -> FileRole {
    let base = name.rsplit('/').next().unwrap_or(name);
    if base == "frames.yaml" {
        FileRole::Frames
    } else if is_yaml(base) && is_table(name) {
        FileRole::Table
    } else if is_yaml(base) {
        FileRole::Signature
    } else if base == "schema.json" || base.ends_with(".md") {
        FileRole::Ignored
    } else {
        FileRole::Unexpected
    }
}

/// Reads a library folder (recursively, in sorted order; symlink loops are skipped and
/// the depth is bounded). Only regular files are read, each checked against
/// [`MAX_FILE_BYTES`] once opened; a symlink named `*.yaml` must lead to a YAML file, so
/// that no line of another file (`x.yaml -> /etc/shadow`) is ever quoted in an error.
pub fn read_dir_files(dir: &Path) -> (Vec<LibraryFile>, Vec<Diagnostic>) {
    if !dir.is_dir() {
        let d = Diagnostic::new(
            Code::E013,
            &dir.display().to_string(),
            "not a directory (--signatures takes a folder of <id>.yaml files)",
        );
        return (Vec::new(), vec![d]);
    }
    let walk = files::walk(dir, &|p: &Path| {
        !matches!(role(&p.display().to_string()), FileRole::Ignored)
    });
    let mut errors: Vec<Diagnostic> = walk
        .errors
        .iter()
        .map(|(p, e)| Diagnostic::new(Code::E013, &p.display().to_string(), e.clone()))
        .collect();
    let mut out = Vec::new();
    for p in walk.files {
        match read_library_file(&p) {
            Ok(f) => out.push(f),
            Err(d) => errors.push(d),
        }
    }
    (out, errors)
}

/// Reads one library file (a regular file, a YAML file if reached through a symlink,
/// at most [`MAX_FILE_BYTES`]).
pub fn read_library_file(p: &Path) -> Result<LibraryFile, Diagnostic> {
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
            format!("file is {size} bytes; signature files are limited to {MAX_FILE_BYTES}"),
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
    (!is_yaml(&base)).then(|| crate::knowledge::text::escape_control(&target.display().to_string()))
}

/// One signature of a file, parsed and compiled (an entry of a table is one too).
type Unit = (SignatureFile, Result<Signature, Vec<Diagnostic>>);

/// What parsing and compiling one file gives, before the files are folded together.
enum Prepared {
    /// Not a signature or a table (frames, ignored and unexpected files).
    Other,
    /// The file's signatures, or the error that stopped it from parsing.
    Units(Vec<Unit>, Vec<Diagnostic>),
}

fn prepare_signature(f: &LibraryFile) -> Prepared {
    match parse_signature(&f.name, &f.text) {
        Ok(p) => {
            let c = compile::compile(&p, &f.name, &f.text, file_stem(&f.name));
            Prepared::Units(vec![(p, c)], Vec::new())
        }
        Err(d) => Prepared::Units(Vec::new(), vec![d]),
    }
}

fn prepare_table(f: &LibraryFile) -> Prepared {
    if f.text.len() > MAX_FILE_BYTES {
        let msg = format!(
            "file is {} bytes; table files are limited to {MAX_FILE_BYTES}",
            f.text.len()
        );
        return Prepared::Units(Vec::new(), vec![Diagnostic::new(Code::E011, &f.name, msg)]);
    }
    let t: TableFile = match serde_saphyr::from_str_with_options(&f.text, yaml_options()) {
        Ok(t) => t,
        Err(e) => return Prepared::Units(Vec::new(), vec![yaml_error(&f.name, &f.text, &e)]),
    };
    let mut errors = Vec::new();
    if t.id.value != file_stem(&f.name) {
        let msg = format!(
            "table id `{}` does not match the file name `{}.yaml`",
            t.id.value,
            file_stem(&f.name)
        );
        let (l, c) = (
            t.id.referenced.line() as usize,
            t.id.referenced.column() as usize,
        );
        errors.push(Diagnostic::new(Code::E003, &f.name, msg).at(&f.text, l, c));
    }
    let (files, mut more) = table::entries(&t, &f.name, &f.text);
    errors.append(&mut more);
    let units = files
        .into_iter()
        .map(|sf| {
            let stem = sf.id.value.clone();
            let c = compile::compile(&sf, &f.name, &f.text, &stem).map(|mut s| {
                s.layer = Layer::Table(t.id.value.clone());
                s
            });
            (sf, c)
        })
        .collect();
    Prepared::Units(units, errors)
}

fn prepare(f: &LibraryFile) -> Prepared {
    match role(&f.name) {
        FileRole::Signature => prepare_signature(f),
        FileRole::Table => prepare_table(f),
        _ => Prepared::Other,
    }
}

/// A file that is not a signature or a table: frames are read, others are errors.
fn fold_other(f: &LibraryFile, lib: &mut Library, errors: &mut Vec<Diagnostic>) {
    match role(&f.name) {
        FileRole::Unexpected => errors.push(Diagnostic::new(Code::E010,
            &f.name,
            "not a signature file: a library folder holds <id>.yaml signatures, tables/<id>.yaml code tables, frames.yaml, schema.json and Markdown only",
        )),
        FileRole::Frames if f.text.len() > MAX_FILE_BYTES => {
            errors.push(Diagnostic::new(Code::E011, &f.name, "frames.yaml is too large"))
        }
        FileRole::Frames => {
            match serde_saphyr::from_str_with_options::<FramesFile>(&f.text, yaml_options()) {
                Ok(fr) => lib.plumbing.extend(fr.plumbing),
                Err(e) => errors.push(yaml_error(&f.name, &f.text, &e)),
            }
        }
        _ => {}
    }
}

/// Where each id was first defined, and the `consequence_of` links to check at the end.
#[derive(Default)]
struct Fold {
    seen: HashMap<String, (String, usize, usize)>,
    links: Vec<(String, String, usize, usize, String, &'static str)>,
}

impl Fold {
    fn unit(
        &mut self,
        f: &LibraryFile,
        unit: Unit,
        lib: &mut Library,
        errors: &mut Vec<Diagnostic>,
    ) {
        let (parsed, compiled) = unit;
        let line = parsed.id.referenced.line() as usize;
        let col = parsed.id.referenced.column() as usize;
        if let Some((other, l, c)) = self.seen.get(&parsed.id.value) {
            let msg = format!(
                "duplicate id `{}`: also defined at {other}:{l}:{c}",
                parsed.id.value
            );
            errors.push(Diagnostic::new(Code::E004, &f.name, msg).at(&f.text, line, col));
            return;
        }
        self.seen
            .insert(parsed.id.value.clone(), (f.name.clone(), line, col));
        let fields = parsed
            .consequence_of
            .iter()
            .map(|t| (t, "consequence_of"))
            .chain(parsed.explains.iter().map(|t| (t, "explains")))
            .chain(
                parsed
                    .overrides_benign
                    .iter()
                    .map(|t| (t, "overrides_benign")),
            );
        for (t, field) in fields {
            self.links.push((
                f.name.clone(),
                t.value.clone(),
                t.referenced.line() as usize,
                t.referenced.column() as usize,
                f.text.clone(),
                field,
            ));
        }
        match compiled {
            Ok(sig) => lib.signatures.push(sig),
            Err(mut es) => errors.append(&mut es),
        }
    }

    fn check_links(self, errors: &mut Vec<Diagnostic>) {
        for (file, target, line, col, text, field) in self.links {
            if !self.seen.contains_key(&target) {
                let msg = format!("{field} names `{target}`, which no loaded signature defines");
                errors.push(Diagnostic::new(Code::E008, &file, msg).at(&text, line, col));
            }
        }
    }
}

/// Parses and compiles a set of files into one library.
pub fn compile_files(files: &[LibraryFile]) -> Result<Library, LoadErrors> {
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut lib = Library::default();
    // Parsing and compiling a file depend on that file alone: done on every core first,
    // then folded in file order below (duplicates, links and errors as if sequential).
    let prepared: Vec<Prepared> = {
        use rayon::prelude::*;
        files.par_iter().map(prepare).collect()
    };
    let mut fold = Fold::default();
    for (f, prep) in files.iter().zip(prepared) {
        match prep {
            Prepared::Other => fold_other(f, &mut lib, &mut errors),
            Prepared::Units(units, mut es) => {
                errors.append(&mut es);
                for u in units {
                    fold.unit(f, u, &mut lib, &mut errors);
                }
            }
        }
    }
    fold.check_links(&mut errors);
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
