//! Signatures: the knowledge base.
//!
//! - [`model`]: the serialized format authors write (serde, JSON Schema);
//! - [`compile`]: validation and compilation into runtime signatures;
//! - [`atoms`]: the necessary literals the prefilter looks for;
//! - [`template`]: remediation commands, filled and quoted safely;
//! - [`table`]: code tables (one entry per error code, every rendering);
//! - [`load`]: the embedded library and library folders;
//! - `error`: located, coded diagnostics (re-exported from [`crate::knowledge::diagnostic`]);
//! - [`docs`]: the category model's training documents, the embedded model attached;
//! - [`guide`]: category guides (`categories/<category>.yaml`) for inferred causes;
//!
//! The contributor's tools (lint, `sig new`, JSON Schema) are in [`crate::tools`].

pub mod atoms;
pub mod compile;
pub mod docs;
/// Located, coded diagnostics ([`crate::knowledge::diagnostic`], shared with rules).
pub use crate::knowledge::diagnostic as error;
pub mod guide;
pub mod ids;
pub mod lazy;
pub mod load;
pub mod model;
pub mod table;
pub mod template;

pub use compile::{Cond, Signature};
pub use error::{Code, Diagnostic, LoadErrors};
pub use ids::{SigIndex, Signatures};
pub use load::{load, Library, LibrarySource};
pub use model::{Category, Severity};
