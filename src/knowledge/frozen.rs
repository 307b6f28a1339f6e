//! The frozen library: the embedded signatures and rules, compiled when crashdoc is built.
//!
//! Parsing the embedded YAML and compiling it (regex syntax checks, atoms, templates,
//! fact conditions) was most of a short run's time: 46 ms of the 80 ms the 836-line
//! scenario journal took, for a library that is the same on every run. So `build.rs`
//! compiles this layer (it imports nothing else of crashdoc, `docs/architecture.md`),
//! loads `signatures/` and `rules/` with the very functions a run uses
//! ([`crate::knowledge::signature::load::compile_files`],
//! [`crate::knowledge::rules::compile_files`]) and writes what [`freeze`] makes of them
//! (postcard); a run reads it back with [`thaw`]. What comes back equals the YAML's
//! compiled form (a test compares the two): regexes come back deferred, built on first
//! use as always ([`crate::knowledge::signature::lazy`]), since the build checked them.
//!
//! Only the embedded library alone is frozen. Folders (`--signatures`, `--rules`) are
//! parsed with the embedded files as before, and `sig lint` and `sig test` parse the YAML
//! they check. A library that does not compile at build time is frozen as nothing, with a
//! `cargo:warning`; the run then parses the YAML and reports its located errors (exit 3)
//! exactly as without a frozen form.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::rules::Rules;
use super::signature::error::LoadErrors;
use super::signature::load::{compile_files, LibraryFile};
use super::signature::Library;

/// The first bytes of a frozen value, then its format's version: a value from another
/// format is not read (a build writes and embeds its own, so this is a guard, not a path).
const MAGIC: &[u8] = b"crashdoc-frozen-1\n";

/// The frozen form of `value`.
pub fn freeze<T: Serialize>(value: &T) -> Result<Vec<u8>, postcard::Error> {
    let mut out = MAGIC.to_vec();
    out.extend(postcard::to_stdvec(value)?);
    Ok(out)
}

/// A value read back from its frozen form; `None` for no bytes (nothing was frozen), a
/// foreign header or bytes that do not decode.
pub fn thaw<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    let body = bytes.strip_prefix(MAGIC)?;
    postcard::from_bytes(body).ok()
}

/// The embedded signature library, as compiled at build time.
pub fn signatures() -> Option<Library> {
    thaw(super::embedded::FROZEN_SIGNATURES)
}

/// The category model trained at build time, read once.
pub fn model() -> Option<std::sync::Arc<super::model::Model>> {
    static MODEL: std::sync::OnceLock<Option<std::sync::Arc<super::model::Model>>> =
        std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| thaw(super::embedded::FROZEN_MODEL).map(std::sync::Arc::new))
        .clone()
}

/// `lib` with the embedded category model attached (a library that includes the
/// embedded one).
pub fn with_model(mut lib: Library) -> Library {
    lib.model = model();
    lib
}

/// The embedded rules, as compiled at build time.
pub fn rules() -> Option<Rules> {
    thaw(super::embedded::FROZEN_RULES)
}

/// What the frozen form depends on besides the files: this layer's code, hashed by
/// `build.rs` (empty while `build.rs` itself runs, which never caches).
const BUILD_ID: &str = match option_env!("CRASHDOC_BUILD_ID") {
    Some(id) => id,
    None => "",
};

/// The name of a cached library: 128 bits of two hashes over the build and every file's
/// name and text, in order.
fn cache_key(files: &[LibraryFile]) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let digest = |salt: &str| {
        let mut h = DefaultHasher::new();
        (salt, BUILD_ID, env!("CARGO_PKG_VERSION"), files.len()).hash(&mut h);
        for f in files {
            (&f.name, &f.text).hash(&mut h);
        }
        h.finish()
    };
    format!("{:016x}{:016x}", digest("a"), digest("b"))
}

/// Compiles `files` into a library, through a cache of compiled libraries in `cache` (a
/// folder; `None`: no cache). A library from folders (`--signatures DIR`) is parsed and
/// compiled again on every run otherwise: 10,000 signature files take about a second. The
/// entry is named by a hash of the build and of every file's name and text, so an edited
/// file, an added or removed one, or another crashdoc build compiles afresh; only a
/// library that compiles is kept (errors are reported, located, on every run). An entry
/// is read as any file crashdoc reads (a regular file, at most
/// [`super::files::MAX_REPORT_BYTES`]); one that cannot be read back is compiled again,
/// one that cannot be written is not kept (the run goes on). `crashdoc` passes
/// `$CRASHDOC_CACHE_DIR`, else `$XDG_CACHE_HOME/crashdoc`, else `~/.cache/crashdoc`
/// (README, "Team setup").
pub fn compile_cached(files: &[LibraryFile], cache: Option<&Path>) -> Result<Library, LoadErrors> {
    let Some(dir) = cache else {
        return compile_files(files);
    };
    let path = dir.join(format!("library-{}.frozen", cache_key(files)));
    let entry = super::files::read_capped(&path, super::files::MAX_REPORT_BYTES);
    if let Some(lib) = entry.ok().and_then(|b| thaw(&b)) {
        return Ok(lib);
    }
    let lib = compile_files(files)?;
    if let Ok(bytes) = freeze(&lib) {
        let written =
            std::fs::create_dir_all(dir).and_then(|()| super::files::write_atomic(&path, &bytes));
        if written.is_ok() {
            prune(dir, CACHE_KEEP);
        }
    }
    Ok(lib)
}

/// Compiled libraries kept in the cache: each edit of a folder makes a new entry (10 MB
/// for 10,000 signatures), so the least recently written beyond these are removed.
pub const CACHE_KEEP: usize = 8;

/// Removes the cache's entries (`library-*.frozen`) but the `keep` most recently written.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("library-") && name.ends_with(".frozen")
        })
        .filter_map(|e| {
            let m = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((m.modified().ok()?, e.path()))
        })
        .collect();
    found.sort();
    let extra = found.len().saturating_sub(keep);
    for (_, p) in found.into_iter().take(extra) {
        let _ = std::fs::remove_file(p);
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
    fn the_cache_keeps_its_most_recent_entries_and_nothing_else_is_touched() {
        let d = tempfile::tempdir().expect("tmp");
        let at =
            |i: u64| std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i);
        for i in 0..5u64 {
            let p = d.path().join(format!("library-{i}.frozen"));
            std::fs::write(&p, b"x").expect("write");
            let f = std::fs::File::options().write(true).open(&p).expect("open");
            f.set_modified(at(i)).expect("mtime");
        }
        std::fs::write(d.path().join("notes.txt"), b"mine").expect("write");
        prune(d.path(), 2);
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["library-3.frozen", "library-4.frozen", "notes.txt"]);
    }

    #[test]
    fn a_cache_key_changes_with_any_name_or_text() {
        let one = [file("a.yaml", "x"), file("b.yaml", "y")];
        assert_eq!(cache_key(&one), cache_key(&one));
        assert_eq!(cache_key(&one).len(), 32);
        for other in [
            vec![file("a.yaml", "x"), file("b.yaml", "z")],
            vec![file("a.yaml", "x"), file("c.yaml", "y")],
            vec![file("a.yaml", "x")],
            vec![file("b.yaml", "y"), file("a.yaml", "x")],
            vec![file("a.yaml", "xb.yaml"), file("", "y")],
        ] {
            assert_ne!(
                cache_key(&one),
                cache_key(&other),
                "{:?}",
                other.iter().map(|f| &f.name).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn nothing_a_foreign_header_or_garbage_thaws_to_none() {
        let bytes = freeze(&vec!["a".to_string(), "b".to_string()]).expect("freezes");
        assert_eq!(
            thaw::<Vec<String>>(&bytes),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(thaw::<Vec<String>>(&[]), None);
        assert_eq!(thaw::<Vec<String>>(b"crashdoc-frozen-0\n\x01\x01a"), None);
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 1);
        assert_eq!(thaw::<Vec<String>>(&cut), None);
    }
}
