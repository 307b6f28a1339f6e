//! The cache of compiled folder libraries (`--signatures DIR`): a library compiled once
//! is written in the frozen format ([`super::frozen`]) and read back on the next run
//! whose files are the same. See [`compile_cached`] for what makes an entry usable.

use std::path::Path;

use super::diagnostic::LoadErrors;
use super::frozen::{freeze, thaw};
use super::signature::load::{compile_files, LibraryFile};
use super::signature::Library;

/// What the frozen form depends on besides the files: this layer's code, hashed by
/// `build.rs` (empty while `build.rs` itself runs, which never caches).
const BUILD_ID: &str = match option_env!("CRASHDOC_BUILD_ID") {
    Some(id) => id,
    None => "",
};

/// A 128-bit digest: two SipHash passes with different salts over the build and `parts`.
/// It detects an entry that is corrupt, cut, padded or copied under another entry's name;
/// it is no signature (anyone who can write an entry can compute it), which is why the
/// cache's folder and entries must also pass the owner checks
/// ([`super::files::check_trusted`]).
fn digest<'a>(parts: impl Iterator<Item = &'a [u8]> + Clone) -> [u8; 16] {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let pass = |salt: &str| {
        let mut h = DefaultHasher::new();
        (salt, BUILD_ID, env!("CARGO_PKG_VERSION")).hash(&mut h);
        for p in parts.clone() {
            p.hash(&mut h);
        }
        h.finish()
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&pass("a").to_le_bytes());
    out[8..].copy_from_slice(&pass("b").to_le_bytes());
    out
}

/// The digest of a library's source files: every file's name and text, in order.
fn source_digest(files: &[LibraryFile]) -> [u8; 16] {
    let count = files.len().to_le_bytes();
    let parts = std::iter::once(&count[..]).chain(
        files
            .iter()
            .flat_map(|f| [f.name.as_bytes(), f.text.as_bytes()]),
    );
    digest(parts)
}

/// The name of a cached library: its [`source_digest`], in hex.
fn cache_key(files: &[LibraryFile]) -> String {
    source_digest(files)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The first bytes of a cache entry; then the digest of its source files, the digest of
/// the rest, and the frozen library ([`freeze`]).
const ENTRY_MAGIC: &[u8] = b"crashdoc-cache-1\n";

/// A cache entry for the library compiled from `files`.
fn entry_bytes(files: &[LibraryFile], lib: &Library) -> Option<Vec<u8>> {
    let body = freeze(lib).ok()?;
    let mut out = ENTRY_MAGIC.to_vec();
    out.extend(source_digest(files));
    out.extend(digest(std::iter::once(&body[..])));
    out.extend(body);
    Some(out)
}

/// The library in a cache entry, or why the entry is not used.
fn read_entry(bytes: &[u8], files: &[LibraryFile]) -> Result<Library, &'static str> {
    let rest = bytes
        .strip_prefix(ENTRY_MAGIC)
        .ok_or("not a crashdoc cache entry")?;
    if rest.len() < 32 {
        return Err("cut short");
    }
    let (sources, rest) = rest.split_at(16);
    let (sum, body) = rest.split_at(16);
    if sources != source_digest(files) {
        return Err("made from other signature files");
    }
    if sum != digest(std::iter::once(body)) {
        return Err("its bytes do not match its digest");
    }
    thaw(body).ok_or("does not decode to a library (or has bytes past its end)")
}

/// The cache folder, created (mode 0700) when missing; `Err` says why it is not used: not
/// a folder, or [`super::files::check_trusted`] refuses it.
fn open_cache_dir(dir: &Path) -> Result<(), String> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir).map_err(|e| e.to_string())?;
    let meta = std::fs::metadata(dir).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err("not a folder".into());
    }
    super::files::check_trusted(&meta)
}

/// Compiles `files` into a library, through a cache of compiled libraries in `cache` (a
/// folder; `None`: no cache). A library from folders (`--signatures DIR`) is parsed and
/// compiled again on every run otherwise: 10,000 signature files take about a second.
///
/// The cache is a cache, never an authority: what it holds is used only when it is
/// exactly what compiling the files would give. The entry is named by the digest of the
/// build and of every file's name and text (an edited, added or removed file, or another
/// crashdoc build compiles afresh) and carries that digest and one of its own bytes,
/// both checked on read; the folder is created 0700, entries 0600, and a folder or entry
/// another user owns or could write is not used ([`super::files::check_trusted`]). A
/// regex's compile-time size limit comes from this build, never from the entry
/// ([`crate::knowledge::signature::lazy`]). An entry that fails a check is compiled
/// again, and `note` says why; only a library that compiles is kept (errors are
/// reported, located, on every run). `crashdoc` passes `$CRASHDOC_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/crashdoc`, else `~/.cache/crashdoc` (README, "Team setup").
pub fn compile_cached(
    files: &[LibraryFile],
    cache: Option<&Path>,
    note: &mut dyn FnMut(String),
) -> Result<Library, LoadErrors> {
    let Some(dir) = cache else {
        return compile_files(files);
    };
    if let Err(why) = open_cache_dir(dir) {
        note(format!(
            "the cache folder {} is not used ({why}); the library is compiled without it",
            dir.display()
        ));
        return compile_files(files);
    }
    let path = dir.join(format!("library-{}.frozen", cache_key(files)));
    match super::files::read_trusted(&path, super::files::MAX_REPORT_BYTES) {
        Ok(bytes) => match read_entry(&bytes, files) {
            Ok(lib) => return Ok(lib),
            Err(why) => note(format!(
                "cache entry {} not used ({why}): compiled again",
                path.display()
            )),
        },
        Err(super::files::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => note(format!(
            "cache entry {} not used ({e}): compiled again",
            path.display()
        )),
    }
    let lib = compile_files(files)?;
    if let Some(bytes) = entry_bytes(files, &lib) {
        if super::files::write_atomic_private(&path, &bytes).is_ok() {
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
}
