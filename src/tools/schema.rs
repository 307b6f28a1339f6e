//! The JSON Schema of the signature format, generated from the serde types of
//! [`model`](crate::knowledge::signature::model) with schemars, so it cannot drift from what the loader
//! accepts. It is committed as `signatures/schema.json` (a test checks it is current);
//! every signature file names it in its `yaml-language-server` modeline, so editors
//! complete and validate signatures as they are typed.

use crate::knowledge::signature::model::SignatureFile;

/// The schema as pretty-printed JSON, with a final newline.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(SignatureFile);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}

/// The JSON Schema of a compatibility rule file
/// ([`RuleFile`](crate::knowledge::rules::RuleFile)), pretty-printed with a final newline.
pub fn rules_schema_json() -> Result<String, serde_json::Error> {
    let schema = schemars::schema_for!(crate::knowledge::rules::RuleFile);
    Ok(serde_json::to_string_pretty(&schema)? + "\n")
}
