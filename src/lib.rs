//! crashdoc: a knowledge-base driven diagnosis engine for crash logs.
//!
//! The pipeline runs in one direction:
//!
//! ```text
//! bytes ─ ingest ─▶ lines ─ normalize ─▶ records ─ extract ─▶ failures ─ matcher ─▶ evidence ─ rank ─▶ diagnosis ─ report
//!                                                                ▲
//!                 signatures/*.yaml ─ signature::load ─▶ signature::compile (one Aho-Corasick automaton)
//! ```
//!
//! Each stage is a module of its own; [`pipeline`] wires them for one input.

pub mod bench;
pub mod cli;
pub mod corpus;
pub mod env;
pub mod explain;
pub mod extract;
pub mod ingest;
pub mod layers;
pub mod matcher;
pub mod normalize;
pub mod pipeline;
pub mod rank;
pub mod report;
pub mod rules;
pub mod signature;
