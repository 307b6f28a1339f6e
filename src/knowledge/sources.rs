//! The one loader of a signature library: [`load`] turns a [`Spec`] (the embedded
//! library or not, folders over it, which form of the embedded files, the cache) into a
//! [`Loaded`] library with what it replaced and where each signature came from. Every
//! command that needs a library goes through it, so a folder overrides, a broken file is
//! reported and a cache is used the same way in `diagnose`, `follow`, `run`, `explain`,
//! `sig *` and `corpus *`.
//!
//! Design:
//! - the embedded library alone comes from its frozen form, compiled when crashdoc was
//!   built ([`super::frozen`]), unless the spec asks for its YAML ([`Form::Yaml`]: `sig
//!   test` checks the files themselves);
//! - a folder's `<id>.yaml` replaces the embedded file of the same stem ([`overlay`]): an
//!   edited copy of a built-in signature just works, and a checkout's own identical
//!   `signatures/` replaces nothing worth a note ([`Loaded::replaced`] lists only files
//!   whose text differs);
//! - a folder that cannot be read, a file that does not parse or compile: every error of
//!   every file, located, in one [`LoadErrors`] (the files that could be read are still
//!   compiled, so one run says everything);
//! - nothing is printed here: what a caller should say (a cache entry not used) comes
//!   back in [`Loaded::notes`].
//!
//! Reading the files themselves (budgets, ids, symlinks) is [`super::reading`], below
//! `signature`; this module is above it and above [`super::cache`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::diagnostic::LoadErrors;
use super::reading::{file_stem, read_paths, Kind, LibraryFile};
use super::signature::Library;

/// Which form of the embedded files a load reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// The frozen library compiled at build time (every command but `sig test`).
    #[default]
    Frozen,
    /// The YAML files, parsed and compiled now (`sig test` checks the files themselves).
    Yaml,
}

/// What to load.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The embedded library first (`--no-builtin` turns it off).
    pub builtin: bool,
    /// Folders (or single files) over it, in order.
    pub dirs: Vec<PathBuf>,
    pub form: Form,
    /// The folder of compiled libraries kept between runs
    /// ([`super::cache::compile_cached`]); `None`: compiled every time.
    pub cache: Option<PathBuf>,
}

impl Spec {
    /// The embedded library alone, frozen.
    pub fn builtin() -> Spec {
        Spec {
            builtin: true,
            ..Spec::default()
        }
    }
}

/// Where a signature of a loaded library came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub id: String,
    /// The file it was read from (`<builtin>/…` for an embedded one).
    pub file: String,
    /// The folder of the spec that holds that file; `None` for an embedded one.
    pub folder: Option<PathBuf>,
}

/// A loaded library and how it was assembled.
#[derive(Debug)]
pub struct Loaded {
    pub library: Library,
    /// The stems of the embedded files a folder's file of the same stem replaced with
    /// other text, sorted.
    pub replaced: Vec<String>,
    /// The names of the files read from the folders, in reading order.
    pub folder_files: Vec<String>,
    /// What the caller should say (a cache entry or folder not used, and why).
    pub notes: Vec<String>,
    /// The folders of the spec (to name each signature's origin).
    dirs: Vec<PathBuf>,
}

impl Loaded {
    /// Where each signature came from, in the library's order.
    pub fn origins(&self) -> Vec<Origin> {
        self.library
            .signatures
            .iter()
            .map(|s| Origin {
                id: s.id.clone(),
                file: s.file.clone(),
                folder: self.folder_of(&s.file).map(Path::to_path_buf),
            })
            .collect()
    }

    /// The signatures read from a folder: (id, file), in the library's order.
    pub fn folder_signatures(&self) -> Vec<(String, String)> {
        self.library
            .signatures
            .iter()
            .filter(|s| !s.file.starts_with("<builtin>/"))
            .map(|s| (s.id.clone(), s.file.clone()))
            .collect()
    }

    /// The spec's folder a file name was read from (the longest that is its prefix).
    fn folder_of(&self, file: &str) -> Option<&Path> {
        if file.starts_with("<builtin>/") {
            return None;
        }
        self.dirs
            .iter()
            .filter(|d| Path::new(file).starts_with(d))
            .max_by_key(|d| d.as_os_str().len())
            .map(PathBuf::as_path)
    }
}

/// The embedded files and a folder's files, the embedded files a folder file replaces
/// left out.
pub struct Overlay {
    /// The embedded files kept, then the folders' files.
    pub files: Vec<LibraryFile>,
    /// The stems of the embedded files replaced with other text, sorted.
    pub replaced: Vec<String>,
}

/// The folders' files by stem: their texts (a stem may come twice: that is E004 later).
/// A map, not a scan per embedded file: with 10,000 files that scan was most of a run.
fn stems(ours: &[LibraryFile]) -> HashMap<&str, Vec<&str>> {
    let mut m: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in ours {
        m.entry(file_stem(&f.name))
            .or_default()
            .push(f.text.as_str());
    }
    m
}

/// The embedded files of `kind` minus those `ours` replaces (same stem), then `ours`:
/// testing or loading a working copy of `signatures/` sees the edited version.
pub fn overlay(kind: Kind, ours: Vec<LibraryFile>) -> Overlay {
    let mut o = builtin_context(kind, &ours);
    o.files.extend(ours);
    o
}

/// The embedded files of `kind` minus those `ours` replaces (same stem), and which
/// ones it replaces with other text: what `ours` is checked against (`sig lint`).
pub fn builtin_context(kind: Kind, ours: &[LibraryFile]) -> Overlay {
    let by_stem = stems(ours);
    let builtin = kind.builtin();
    let files = builtin
        .iter()
        .filter(|(n, _)| !by_stem.contains_key(file_stem(n)))
        .map(|(n, t)| kind.builtin_file(n, t))
        .collect();
    // an identical copy (a checkout's `signatures/`) replaces nothing worth a note
    let mut replaced: Vec<String> = builtin
        .iter()
        .filter(|(n, t)| {
            by_stem
                .get(file_stem(n))
                .is_some_and(|texts| texts.iter().any(|text| text != t))
        })
        .map(|(n, _)| file_stem(n).to_string())
        .collect();
    replaced.sort();
    Overlay { files, replaced }
}

/// Loads the library `spec` names (module docs): every error of every file, located,
/// when it does not load.
pub fn load(spec: &Spec) -> Result<Loaded, LoadErrors> {
    let mut notes = Vec::new();
    if spec.builtin && spec.dirs.is_empty() && spec.form == Form::Frozen {
        if let Some(lib) = super::signature::load::frozen_builtin() {
            return Ok(Loaded {
                library: super::signature::load::with_model(lib),
                replaced: Vec::new(),
                folder_files: Vec::new(),
                notes,
                dirs: Vec::new(),
            });
        }
    }
    let (ours, mut errors) = read_paths(&spec.dirs, Kind::Signatures);
    let folder_files: Vec<String> = ours.iter().map(|f| f.name.clone()).collect();
    let Overlay { files, replaced } = if spec.builtin {
        overlay(Kind::Signatures, ours)
    } else {
        Overlay {
            files: ours,
            replaced: Vec::new(),
        }
    };
    // files that could be read are compiled even when others could not, so that every
    // error of every file is reported at once; a partial library is never cached
    let cache = spec.cache.as_deref().filter(|_| errors.is_empty());
    let compiled = super::cache::compile_cached(&files, cache, &mut |n| notes.push(n));
    match compiled {
        Ok(lib) if errors.is_empty() => Ok(Loaded {
            library: super::signature::load::with_model(lib),
            replaced,
            folder_files,
            notes,
            dirs: spec.dirs.clone(),
        }),
        Ok(_) => Err(LoadErrors(errors)),
        Err(LoadErrors(mut more)) => {
            errors.append(&mut more);
            Err(LoadErrors(errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> LibraryFile {
        LibraryFile {
            name: name.into(),
            text: text.into(),
        }
    }

    #[test]
    fn an_overlay_replaces_by_stem_and_names_only_changed_files() {
        let builtin = Kind::Signatures.builtin();
        let Some((first, text)) = builtin.first() else {
            return; // the build script's stand-in embeds nothing
        };
        let stem = file_stem(first).to_string();
        let same = overlay(
            Kind::Signatures,
            vec![file(&format!("team/{stem}.yaml"), text)],
        );
        assert!(
            same.replaced.is_empty(),
            "an identical copy replaces nothing"
        );
        assert_eq!(same.files.len(), builtin.len());
        let edited = overlay(
            Kind::Signatures,
            vec![file(&format!("team/{stem}.yaml"), "id: x\n")],
        );
        assert_eq!(edited.replaced, vec![stem.clone()]);
        assert_eq!(
            edited
                .files
                .iter()
                .filter(|f| file_stem(&f.name) == stem)
                .count(),
            1
        );
    }

    #[test]
    fn a_folder_that_cannot_be_read_is_a_located_error_with_the_others() {
        let spec = Spec {
            builtin: false,
            dirs: vec![PathBuf::from("/nonexistent/crashdoc-signatures")],
            ..Spec::default()
        };
        let errors = load(&spec).expect_err("a missing folder does not load");
        assert_eq!(errors.0.len(), 1);
        assert!(errors.0[0].file.contains("crashdoc-signatures"));
    }
}
