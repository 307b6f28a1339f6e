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
//! parsed with the embedded files as before (their compiled form is cached with the same
//! format, [`super::cache`]), and `sig lint` and `sig test` parse the YAML they check.
//!
//! This module is the format alone: it knows no library type. Each kind thaws its own
//! embedded form ([`super::signature::load::load`], [`super::rules::load`],
//! [`super::model::embedded`]), so nothing here imports the modules that use it.
//!
//! A library that does not compile at build time is frozen as nothing, with a
//! `cargo:warning`; the run then parses the YAML and reports its located errors (exit 3)
//! exactly as without a frozen form.

use serde::de::DeserializeOwned;
use serde::Serialize;

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
/// foreign header, bytes that do not decode, or bytes left over once the value is read
/// (an entry padded or overwritten past its end is not the value that was frozen).
pub fn thaw<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    let body = bytes.strip_prefix(MAGIC)?;
    match postcard::take_from_bytes(body) {
        Ok((value, [])) => Some(value),
        _ => None,
    }
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
