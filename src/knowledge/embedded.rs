//! The embedded library, written by `build.rs` into `OUT_DIR`: the files of
//! `signatures/` and `rules/` as text (a fresh install works with no files), and the same
//! files parsed and compiled at build time, frozen ([`super::frozen`]).
//!
//! `build.rs` compiles the rest of this layer to do that, with a stand-in for this one
//! module (empty lists: the frozen form does not exist yet while it is being made).

/// The files of `signatures/`: (path relative to it, text), sorted by path.
pub static SIGNATURE_FILES: &[(&str, &str)] =
    include!(concat!(env!("OUT_DIR"), "/embedded_signatures.rs"));

/// The files of `rules/`: (path relative to it, text), sorted by path.
pub static RULE_FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/embedded_rules.rs"));

/// The compiled signature library ([`super::frozen::freeze`]), or nothing when the files
/// did not compile at build time.
pub static FROZEN_SIGNATURES: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/signatures.frozen"));

/// The compiled rules, or nothing when they did not compile at build time.
pub static FROZEN_RULES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/rules.frozen"));

/// The category model trained at build time ([`super::model`]), or nothing when the
/// library did not compile.
pub static FROZEN_MODEL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/model.frozen"));
