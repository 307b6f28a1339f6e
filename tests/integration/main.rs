//! The integration tests, in one binary (ripgrep's shape): one link step, one process,
//! shared helpers in [`util`]. Run one group with `cargo test --test integration hostile::`.

// a test stops at the first thing that is not as it expects, saying what
#![allow(clippy::expect_used)]
// a scenario test reads top to bottom (the 100-line limit is for the program's functions)
#![allow(clippy::too_many_lines)]

mod util;

mod cli_cases;
mod cli_ux;
mod contrib;
mod contrib_path;
mod corpus_cluster;
mod corpus_run;
mod diagnose;
mod env;
mod fast_path;
mod follow;
mod hardening;
mod hostile;
mod incidents;
mod inference;
mod layers;
mod library;
mod matching;
mod metamorphic;
mod newuser;
mod prefilter_oracle;
mod properties;
mod rejoin;
mod remediation_safety;
mod run;
mod schema;
mod security;
mod shell_exec;
mod sig_diff;
mod signature_errors;
mod sources;
mod trust3;
