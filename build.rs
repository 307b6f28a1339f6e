//! Embeds `signatures/` and `rules/` into the binary (a fresh install works with no
//! files) and freezes them: the same files parsed and compiled now, with crashdoc's own
//! `src/knowledge` layer (it imports nothing else of crashdoc), and serialized, so that a
//! run does not parse YAML at start-up (see `src/knowledge/frozen.rs`).
use std::path::{Path, PathBuf};

/// `src/knowledge`, compiled into this build script. The module list is `src/knowledge/
/// mod.rs`'s (a test compares them), but for `embedded`: its stand-in holds nothing, since
/// what it embeds is being written here.
#[allow(dead_code, unused_imports, clippy::all)]
#[path = "src/knowledge"]
mod knowledge {
    pub mod cache;
    pub mod calibrate;
    pub mod cond;
    pub mod diagnostic;
    pub mod failure_kind;
    pub mod files;
    pub mod frozen;
    pub mod links;
    pub mod model;
    pub mod reading;
    pub mod rules;
    pub mod signature;
    pub mod sources;
    pub mod text;
    pub mod vars;
    pub mod version;
    /// Stand-in of `src/knowledge/embedded.rs`.
    pub mod embedded {
        pub fn signature_files() -> &'static [(&'static str, &'static str)] {
            &[]
        }
        pub fn rule_files() -> &'static [(&'static str, &'static str)] {
            &[]
        }
        pub static FROZEN_SIGNATURES: &[u8] = &[];
        pub static FROZEN_RULES: &[u8] = &[];
        pub static FROZEN_MODEL: &[u8] = &[];
        pub static FROZEN_SCORES: &[u8] = &[];
    }
}

use knowledge::reading::{Kind, LibraryFile};

/// Every file under `dir`, sorted: the layer's own bounded walk; a folder it cannot read
/// is named in a warning.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let found = knowledge::files::walk(dir, &|_| true);
    for (path, why) in &found.errors {
        println!("cargo:warning={}: {why}", path.display());
    }
    found.files
}

fn root_dir() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
}

fn out_dir() -> PathBuf {
    PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default())
}

fn write(name: &str, bytes: &[u8]) {
    let out = out_dir().join(name);
    if let Err(e) = std::fs::write(&out, bytes) {
        panic!("cannot write {}: {e}", out.display());
    }
}

fn main() {
    build_id();
    let signatures = embed("signatures", "signatures.yaml.deflate", Kind::Signatures);
    let rules = embed("rules", "rules.yaml.deflate", Kind::Rules);
    let library = knowledge::signature::load::compile_files(&signatures);
    let cal = calibration(&root_dir().join("corpus").join("calibration.json"));
    write("model.frozen", &model(library.as_ref().ok(), cal.inferred));
    write(
        "scores.frozen",
        &knowledge::frozen::freeze(&cal.scores)
            .unwrap_or_else(|e| panic!("cannot serialize the score calibration: {e}")),
    );
    write("signatures.frozen", &frozen("signatures", library));
    write(
        "rules.frozen",
        &frozen("rules", knowledge::rules::compile_files(&rules)),
    );
}

/// `CRASHDOC_BUILD_ID`: a hash of `src/knowledge` and `Cargo.lock` (the code and the
/// crates that decide what a frozen library's bytes mean), part of the name of a cached
/// library (`src/knowledge/frozen.rs`): another build never reads an entry it did not
/// write.
fn build_id() {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let root = root_dir();
    let mut files = walk(&root.join("src/knowledge"));
    files.push(root.join("Cargo.lock"));
    files.sort();
    let mut h = DefaultHasher::new();
    for f in &files {
        f.strip_prefix(&root).unwrap_or(f).hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    println!("cargo:rerun-if-changed=src/knowledge");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rustc-env=CRASHDOC_BUILD_ID={:016x}", h.finish());
}

/// The category model, trained on the embedded library's examples and literals and on
/// the corpus's key lines (`src/knowledge/model.rs`), frozen; nothing when the library
/// does not compile.
fn model(library: Option<&knowledge::signature::Library>, calibration: Vec<(f64, f64)>) -> Vec<u8> {
    let Some(lib) = library else {
        return Vec::new();
    };
    let root = root_dir();
    println!("cargo:rerun-if-changed=corpus");
    let mut docs = knowledge::signature::docs::library_docs(lib);
    docs.extend(knowledge::model::corpus_docs(&root.join("corpus")));
    let mut m = knowledge::model::Model::train(&docs);
    m.calibration = calibration;
    knowledge::frozen::freeze(&m)
        .unwrap_or_else(|e| panic!("cannot serialize the category model: {e}"))
}

/// The frozen form of a compiled library, or nothing (with a warning) when it does not
/// compile: a run then parses the YAML and reports the errors, located.
/// The calibrations (`corpus/calibration.json`, written by `crashdoc corpus bless`): the
/// inferred layer's and the signature layers'; none (raw probabilities, no probability
/// for a signature's cause) when the file is missing, and a warning naming it when it
/// cannot be read.
fn calibration(path: &Path) -> knowledge::calibrate::CalibrationFile {
    println!("cargo:rerun-if-changed={}", path.display());
    if !path.exists() {
        return Default::default();
    }
    let read = std::fs::read_to_string(path).map_err(|e| e.to_string());
    match read.and_then(|t| {
        serde_saphyr::from_str::<knowledge::calibrate::CalibrationFile>(&t)
            .map_err(|e| e.to_string())
    }) {
        Ok(f) => f,
        Err(e) => {
            println!(
                "cargo:warning={}: {e} (probabilities left raw)",
                path.display()
            );
            Default::default()
        }
    }
}

fn frozen<T: serde::Serialize>(
    what: &str,
    compiled: Result<T, knowledge::signature::LoadErrors>,
) -> Vec<u8> {
    match compiled {
        Ok(v) => knowledge::frozen::freeze(&v)
            .unwrap_or_else(|e| panic!("cannot serialize the embedded {what}: {e}")),
        Err(errors) => {
            println!(
                "cargo:warning=the embedded {what} do not compile ({} errors; `crashdoc sig lint` / `crashdoc rules list` locate them): not frozen, parsed at run time",
                errors.0.len()
            );
            Vec::new()
        }
    }
}

/// Writes `out_name`: `folder`'s YAML files, packed (`src/knowledge/embedded.rs` reads
/// them back) and deflated, the one copy of their text in the binary; returns them as
/// the files a run would load.
fn embed(folder: &str, out_name: &str, kind: Kind) -> Vec<LibraryFile> {
    use std::io::Write as _;
    let root = root_dir().join(folder);
    println!("cargo:rerun-if-changed={folder}");
    let files = walk(&root);
    let mut packed = Vec::new();
    let mut loaded = Vec::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(f)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
        for part in [rel.as_bytes(), text.as_bytes()] {
            let len = u32::try_from(part.len())
                .unwrap_or_else(|_| panic!("{} is over 4 GB", f.display()));
            packed.extend(len.to_le_bytes());
            packed.extend(part);
        }
        loaded.push(kind.builtin_file(&rel, &text));
    }
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    let deflated = z.write_all(&packed).and_then(|()| z.finish());
    write(
        out_name,
        &deflated.unwrap_or_else(|e| panic!("cannot deflate {folder}: {e}")),
    );
    loaded
}
