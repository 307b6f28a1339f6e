//! The embedded library, written by `build.rs` into `OUT_DIR`: the files of
//! `signatures/` and `rules/` compressed (a fresh install works with no files), and the
//! same files parsed and compiled at build time, frozen ([`super::frozen`]).
//!
//! The binary holds one readable copy of the library: its frozen form, which every run
//! thaws. The YAML text is needed only by what reads files (`sig lint`, `sig test`, a
//! folder library that overrides embedded files, `sig show`'s source): it is stored
//! deflated (`flate2`, 2 MB of text in about a fifth of that) and inflated once, on
//! first use. Holding it as text as well as frozen was half of the binary's data.
//!
//! `build.rs` compiles the rest of this layer to do that, with a stand-in for this one
//! module (empty lists: the frozen form does not exist yet while it is being made).

use std::io::Read as _;
use std::sync::OnceLock;

/// `signatures/`, packed and deflated by `build.rs`.
static SIGNATURES_DEFLATED: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/signatures.yaml.deflate"));

/// `rules/`, packed and deflated by `build.rs`.
static RULES_DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/rules.yaml.deflate"));

/// The files of `signatures/`: (path relative to it, text), sorted by path.
pub fn signature_files() -> &'static [(&'static str, &'static str)] {
    static FILES: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    FILES.get_or_init(|| unpack(SIGNATURES_DEFLATED))
}

/// The files of `rules/`: (path relative to it, text), sorted by path.
pub fn rule_files() -> &'static [(&'static str, &'static str)] {
    static FILES: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    FILES.get_or_init(|| unpack(RULES_DEFLATED))
}

/// The files `build.rs` packed: per file, its path then its text, each a little-endian
/// `u32` length and that many bytes of UTF-8. Inflated once per process and kept for
/// its life (the text is leaked on purpose: every file borrows from it). The bytes are
/// the build's own, so nothing here fails short of a corrupted binary; a test reads the
/// list back and compares it with `signatures/` and `rules/`.
fn unpack(deflated: &[u8]) -> Vec<(&'static str, &'static str)> {
    let mut raw = Vec::new();
    if flate2::read::DeflateDecoder::new(deflated)
        .read_to_end(&mut raw)
        .is_err()
    {
        return Vec::new();
    }
    let mut rest: &'static [u8] = Box::leak(raw.into_boxed_slice());
    let mut parts = Vec::new();
    while let Some((part, after)) = take(rest) {
        parts.push(part);
        rest = after;
    }
    parts.chunks_exact(2).map(|p| (p[0], p[1])).collect()
}

/// One length-prefixed part of `b`, and what follows it; `None` at the end (or at bytes
/// that are not a whole part of UTF-8).
fn take(b: &[u8]) -> Option<(&str, &[u8])> {
    let len: [u8; 4] = b.get(..4)?.try_into().ok()?;
    let end = 4 + usize::try_from(u32::from_le_bytes(len)).ok()?;
    let part = std::str::from_utf8(b.get(4..end)?).ok()?;
    Some((part, b.get(end..)?))
}

/// The compiled signature library ([`super::frozen::freeze`]), or nothing when the files
/// did not compile at build time.
pub static FROZEN_SIGNATURES: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/signatures.frozen"));

/// The compiled rules, or nothing when they did not compile at build time.
pub static FROZEN_RULES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/rules.frozen"));

/// The category model trained at build time ([`super::model`]), or nothing when the
/// library did not compile.
pub static FROZEN_MODEL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/model.frozen"));

/// The signature layers' score calibration (`corpus/calibration.json`'s `scores`), frozen
/// apart from the model so that a run whose causes all come from signatures never thaws
/// the model ([`super::calibrate::shipped_probability`]).
pub static FROZEN_SCORES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scores.frozen"));

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded files are exactly the YAML files of the source tree's folders.
    #[test]
    fn the_packed_files_are_the_source_trees_yaml_files() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (folder, files) in [("signatures", signature_files()), ("rules", rule_files())] {
            let dir = root.join(folder);
            let mut want: Vec<(String, String)> = crate::knowledge::files::walk(&dir, &|_| true)
                .files
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .map(|p| {
                    let rel = p.strip_prefix(&dir).unwrap_or(p).to_string_lossy();
                    let text = std::fs::read_to_string(p).unwrap_or_default();
                    (rel.replace('\\', "/"), text)
                })
                .collect();
            want.sort();
            let got: Vec<(String, String)> = files
                .iter()
                .map(|(n, t)| ((*n).to_string(), (*t).to_string()))
                .collect();
            assert!(got.len() > 1, "{folder}: {} files", got.len());
            assert_eq!(got, want, "{folder}");
        }
    }

    #[test]
    fn a_part_cut_short_ends_the_list() {
        assert_eq!(take(b"\x01\0\0\0ab"), Some(("a", &b"b"[..])));
        assert_eq!(take(b"\x05\0\0\0ab"), None);
        assert_eq!(take(b"\x01\0"), None);
        assert_eq!(take(b"\x01\0\0\0\xff"), None);
    }
}
