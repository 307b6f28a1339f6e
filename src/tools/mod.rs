//! The contributor's tools, built on the engine: drafting a signature from a log
//! ([`draft`]), linting ([`lint`]), explaining a miss ([`explain`]), the JSON Schema of
//! the file format ([`schema`]), the rules' self-tests ([`rules_test`]) and the
//! benchmark log generator ([`bench`]).

pub mod bench;
pub mod draft;
pub mod explain;
pub mod lint;
pub mod lint_content;
pub mod rules_test;
pub mod schema;
