//! Signatures: the knowledge base.
//!
//! - [`model`]: the serialized format authors write (serde, JSON Schema);
//! - [`compile`]: validation and compilation into runtime signatures;
//! - [`atoms`]: the necessary literals the prefilter looks for;
//! - [`template`]: remediation commands, filled and quoted safely;
//! - [`table`]: code tables (one entry per error code, every rendering);
//! - [`load`]: the embedded library and library folders;
//! - [`error`]: located, coded diagnostics;
//! - [`lint`], [`draft`], [`schema`]: the contributor's tools (lint, `sig new`, JSON Schema).

pub mod atoms;
pub mod compile;
pub mod draft;
pub mod error;
pub mod lazy;
pub mod lint;
pub mod load;
pub mod model;
pub mod schema;
pub mod table;
pub mod template;

pub use compile::{Cond, Signature};
pub use error::{Diagnostic, LoadErrors};
pub use load::{load, Library, LibrarySource};
pub use model::{Category, Severity};
