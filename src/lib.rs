//! crashdoc: a knowledge-base driven diagnosis engine for crash logs.
//!
//! The pipeline runs in one direction, and so do the layers (each folder imports only
//! from the layers before it; `tests/integration/layers.rs` checks it):
//!
//! ```text
//! knowledge ← env ← engine ← report ← tools, corpus ← cli
//!
//! bytes ─ ingest ─▶ lines ─ normalize ─▶ records ─ extract ─▶ failures ─ matcher ─▶ evidence ─ rank ─▶ diagnosis ─ report
//!                                                                ▲
//!       signatures/*.yaml ─ knowledge::signature::load ─▶ compile (one Aho-Corasick automaton)
//! ```
//!
//! - [`knowledge`]: signature and rule files, conditions, compilation, loading, located
//!   diagnostics;
//! - [`env`]: facts about an environment and conditions evaluated on them;
//! - [`engine`]: one input from bytes to a [`engine::diagnosis::Diagnosis`];
//! - [`report`]: renderers of a diagnosis;
//! - [`tools`]: the contributor's tools (draft, lint, explain, schema, rules tests, bench);
//! - [`corpus`]: replaying past incidents;
//! - [`cli`]: the command line.

pub mod knowledge;

pub mod env;

pub mod engine;

pub mod report;

pub mod corpus;
pub mod tools;

pub mod cli;
