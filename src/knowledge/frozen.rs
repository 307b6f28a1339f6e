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

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::rules::Rules;
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

/// The embedded rules, as compiled at build time.
pub fn rules() -> Option<Rules> {
    thaw(super::embedded::FROZEN_RULES)
}

#[cfg(test)]
mod tests {
    use super::*;

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
