//! The engine: one input from bytes to a diagnosis. Imports from [`crate::knowledge`] and
//! [`crate::env`] only; its stages depend one way, in this order:
//!
//! [`ingest`] → [`normalize`] → [`rejoin`] → [`steps`] → [`extract`] → [`matcher`] → [`rank`] →
//! [`infer`], [`remedy`] → [`findings`] → [`diagnosis`] → [`pipeline`] (which wires them for
//! one input).

pub mod ingest;

pub mod normalize;

/// Lines cut at a fixed width put back together (read before [`normalize`] in the
/// pipeline; it uses [`normalize`] to tell a new record from a continuation).
pub mod rejoin;

/// Where a CI step ends and whether it failed; the failing block of lines.
pub mod steps;

pub mod extract;

pub mod matcher;

pub mod rank;

pub mod infer;
pub mod remedy;

pub mod findings;

pub mod diagnosis;

pub mod pipeline;
