//! Load: signature libraries from the embedded default and from folders.
//!
//! A library is a folder tree of `<id>.yaml` files. Besides signatures it may hold
//! `frames.yaml` (traceback knowledge), `schema.json` and Markdown files; any other file
//! is an error (E010), so nothing is skipped silently. Every file is parsed with
//! serde-saphyr under a budget (size, nodes, aliases) and compiled; loading collects
//! every error of every file before it fails, each located.

use super::compile::{self, Signature};
use super::error::{Code, Diagnostic, LoadErrors};
use super::ids::Signatures;
use super::model::{FramesFile, SignatureFile};
use super::table::{self, Layer, TableFile};
use crate::knowledge::reading::{
    file_stem, is_ignored, is_yaml, parse_yaml, read_sources, Ids, Kind,
};
pub use crate::knowledge::reading::{read_dir_files, LibraryFile, MAX_FILE_BYTES};

/// Where signatures come from (the embedded library, folders).
pub type LibrarySource = crate::knowledge::reading::Source;

/// The loaded, compiled signatures.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Library {
    pub signatures: Signatures,
    /// Frame path fragments skipped when locating a crash site.
    pub plumbing: Vec<String>,
    /// Category guides (`categories/<category>.yaml`), sorted by category.
    #[serde(default)]
    pub guides: Vec<super::guide::Guide>,
    /// The category model ([`crate::knowledge::model`]): trained at build time on the
    /// embedded library and the corpus, attached to every loaded library
    /// ([`with_model`]; its nearest signatures name only the
    /// loaded library's); `None` in a library built otherwise (a knock-out fold before
    /// it retrains one).
    #[serde(skip)]
    pub model: Option<crate::knowledge::model::ModelRef>,
}

impl Library {
    pub fn get(&self, id: &str) -> Option<&Signature> {
        self.signatures.iter().find(|s| s.id == id)
    }

    /// The library with only the signatures `keep` accepts (the rest of it unchanged,
    /// but no model: it was trained on the signatures left out): the reduced libraries of
    /// a knock-out run.
    pub fn subset(&self, keep: impl Fn(&Signature) -> bool) -> Library {
        let kept = self
            .signatures
            .iter()
            .filter(|s| keep(s))
            .cloned()
            .collect();
        Library {
            signatures: Signatures::new(kept),
            plumbing: self.plumbing.clone(),
            guides: self.guides.clone(),
            model: None,
        }
    }

    /// The guide of a category, if the library has one.
    pub fn guide(&self, c: super::model::Category) -> Option<&super::guide::Guide> {
        self.guides.iter().find(|g| g.category == c)
    }
}

/// The embedded library's files: (path relative to `signatures/`, text).
pub fn builtin_files() -> &'static [(&'static str, &'static str)] {
    crate::knowledge::embedded::signature_files()
}

/// Parses one signature file.
pub fn parse_signature(name: &str, text: &str) -> Result<SignatureFile, Diagnostic> {
    parse_yaml(name, text, Kind::Signatures.files())
}

enum FileRole {
    Signature,
    /// A code table (`tables/<id>.yaml`): entries compiled into signatures.
    Table,
    Frames,
    /// A category guide (`categories/<category>.yaml`).
    Guide,
    Ignored,
    Unexpected,
}

/// Is this library file a code table? (It lies in a `tables/` folder of the library.)
pub fn is_table(name: &str) -> bool {
    name.starts_with("tables/") || name.contains("/tables/")
}

fn role(name: &str) -> FileRole {
    let base = name.rsplit('/').next().unwrap_or(name);
    if base == "frames.yaml" {
        FileRole::Frames
    } else if is_yaml(base) && super::guide::is_guide(name) {
        FileRole::Guide
    } else if is_yaml(base) && is_table(name) {
        FileRole::Table
    } else if is_yaml(base) {
        FileRole::Signature
    } else if is_ignored(name) {
        FileRole::Ignored
    } else {
        FileRole::Unexpected
    }
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
    let t: TableFile = match parse_yaml(&f.name, &f.text, "table files") {
        Ok(t) => t,
        Err(d) => return Prepared::Units(Vec::new(), vec![d]),
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
        FileRole::Frames => match parse_yaml::<FramesFile>(&f.name, &f.text, "frames files") {
            Ok(fr) => lib.plumbing.extend(fr.plumbing),
            Err(d) => errors.push(d),
        },
        FileRole::Guide => fold_guide(f, lib, errors),
        _ => {}
    }
}

/// A category guide: parsed, compiled, and refused when its category has one already.
fn fold_guide(f: &LibraryFile, lib: &mut Library, errors: &mut Vec<Diagnostic>) {
    let g: super::guide::GuideFile = match parse_yaml(&f.name, &f.text, "category guides") {
        Ok(g) => g,
        Err(d) => return errors.push(d),
    };
    match super::guide::compile(&g, &f.name, &f.text, file_stem(&f.name)) {
        Ok(guide) => {
            if let Some(other) = lib.guides.iter().find(|o| o.category == guide.category) {
                let msg = format!(
                    "category `{}` has a guide already, in {}",
                    guide.category.as_str(),
                    other.file
                );
                let (l, c) = (
                    g.category.referenced.line() as usize,
                    g.category.referenced.column() as usize,
                );
                errors.push(Diagnostic::new(Code::E004, &f.name, msg).at(&f.text, l, c));
            } else {
                lib.guides.push(guide);
                lib.guides.sort_by_key(|g| g.category);
            }
        }
        Err(mut es) => errors.append(&mut es),
    }
}

/// Where each id was first defined, and the `consequence_of` links to check at the end.
#[derive(Default)]
struct Fold {
    seen: Ids,
    links: Vec<(String, String, usize, usize, String, &'static str)>,
}

impl Fold {
    fn unit(
        &mut self,
        f: &LibraryFile,
        unit: Unit,
        signatures: &mut Vec<Signature>,
        errors: &mut Vec<Diagnostic>,
    ) {
        let (parsed, compiled) = unit;
        if let Err(d) = self.seen.define(&parsed.id, &f.name, &f.text) {
            errors.push(d);
            return;
        }
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
            Ok(sig) => signatures.push(sig),
            Err(mut es) => errors.append(&mut es),
        }
    }

    fn check_links(self, errors: &mut Vec<Diagnostic>) {
        for (file, target, line, col, text, field) in self.links {
            if !self.seen.contains(&target) {
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
    let mut signatures = Vec::new();
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
                    fold.unit(f, u, &mut signatures, &mut errors);
                }
            }
        }
    }
    fold.check_links(&mut errors);
    if errors.is_empty() {
        lib.signatures = Signatures::new(signatures);
        Ok(lib)
    } else {
        Err(LoadErrors(errors))
    }
}

/// Loads the given sources, in order, as one library. The embedded library alone is
/// read from its frozen form, compiled when crashdoc was built
/// ([`crate::knowledge::frozen`]); anything else is parsed and compiled ([`load_yaml`]).
pub fn load(sources: &[LibrarySource]) -> Result<Library, LoadErrors> {
    if let [LibrarySource::Builtin] = sources {
        if let Some(lib) = frozen_builtin() {
            return Ok(with_model(lib));
        }
    }
    load_yaml(sources)
}

/// `lib` with the embedded category model attached (a library that includes the
/// embedded one).
pub fn with_model(mut lib: Library) -> Library {
    lib.model = Some(crate::knowledge::model::ModelRef::Embedded);
    lib
}

/// The embedded signature library, as compiled at build time
/// ([`crate::knowledge::frozen`]); `None` when it did not compile then.
pub fn frozen_builtin() -> Option<Library> {
    crate::knowledge::frozen::thaw(crate::knowledge::embedded::FROZEN_SIGNATURES)
}

/// Parses and compiles the given sources' files, in order, as one library (every error
/// of every file located).
pub fn load_yaml(sources: &[LibrarySource]) -> Result<Library, LoadErrors> {
    let (files, mut errors) = read_sources(sources, Kind::Signatures);
    // files that could be read are compiled even when others could not, so that every
    // error of every file is reported at once
    match compile_files(&files) {
        Ok(lib) if errors.is_empty() => Ok(with_model(lib)),
        Ok(_) => Err(LoadErrors(errors)),
        Err(LoadErrors(mut more)) => {
            errors.append(&mut more);
            Err(LoadErrors(errors))
        }
    }
}
