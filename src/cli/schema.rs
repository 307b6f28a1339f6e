//! `crashdoc schema <diagnosis|signature|rules>`: the JSON Schemas of crashdoc's formats,
//! generated from the serde types, so they cannot drift from what is written or read.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::EXIT_FOUND;

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// The format whose JSON Schema is printed.
    #[arg(value_enum)]
    pub of: SchemaOf,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaOf {
    /// The output of `--format json` (one line of `--format jsonl`); committed as
    /// docs/schema/diagnosis.schema.json.
    Diagnosis,
    /// A signature file (the same as `crashdoc sig schema`; committed as
    /// signatures/schema.json).
    Signature,
    /// A compatibility rule file (`rules/<area>/<id>.yaml`).
    Rules,
}

pub fn run_schema(a: &SchemaArgs) -> anyhow::Result<ExitCode> {
    let text = match a.of {
        SchemaOf::Diagnosis => crate::report::wire::diagnosis_schema()?,
        SchemaOf::Signature => crate::tools::schema::schema_json(),
        SchemaOf::Rules => crate::tools::schema::rules_schema_json()?,
    };
    super::print(&text)?;
    Ok(ExitCode::from(EXIT_FOUND))
}
