//! Knowledge: what crashdoc knows, as files and as compiled data. Imports nothing from
//! the layers above it.
//!
//! - [`signature`]: failure signatures (file model, compile, atoms, templates, load,
//!   located diagnostics);
//! - [`rules`]: compatibility rules on environments;
//! - [`diagnostic`]: located, coded diagnostics (`Code`, `Diagnostic`, `LoadErrors`) and
//!   located strings (every file kind's);
//! - [`reading`]: what signatures and rules share: sources, reading, YAML parsing, ids;
//! - [`sources`]: the one loader of a library ([`sources::load`]: the embedded
//!   library, folders over it, the cache; what replaced what, where each signature
//!   came from);
//! - [`cond`]: the condition tree of signatures and rules (compiled form, three-valued
//!   logic), and conditions on facts (file model, compiled leaves);
//! - [`vars`]: the `{{env.…}}` variables templates may use;
//! - [`embedded`], [`frozen`]: the embedded library, as text and compiled at build time;
//! - [`cache`]: folder libraries compiled once and kept, in the frozen format;
//! - [`model`]: the category model of failures no signature explains (trained at build time);
//! - [`failure_kind`]: the failure shapes a signature's `kind:` names;
//! - [`links`]: which categories of failure can explain which (the causal order of causes);
//! - [`version`]: package names and versions (PEP 503 / PEP 440);
//! - [`text`]: text shown to a person (escaping, clipping);
//! - [`files`]: files read (regular files only, bounded) and written (atomically).

pub mod cache;
pub mod calibrate;
pub mod cond;
pub mod diagnostic;
pub mod embedded;
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
