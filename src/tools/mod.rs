//! The contributor's tools, built on the engine: drafting a signature from a log
//! ([`draft`]), linting ([`lint`]), explaining a miss ([`explain`]), the JSON Schema of
//! the file format ([`schema`]), the examples of signatures and rules run as tests
//! ([`examples`]) and the
//! benchmark log generator ([`bench`]).

pub mod bench;
pub mod draft;
pub mod examples;
pub mod explain;
pub mod lint;
pub mod lint_ci;
pub mod lint_content;
pub mod schema;
