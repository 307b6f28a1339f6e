//! Category guides: what to read and check for a failure class when no signature names
//! the failure (`categories/<category>.yaml` in a library).
//!
//! A failure nothing explains may still be recognised by its words
//! ([`crate::knowledge::model`]): "the GPU ran out of memory", "a library is missing". The
//! cause the engine then gives (layer `inferred`) carries the category's guide: a short
//! explanation of the class and read-only checks a person runs to confirm it. A guide is
//! knowledge like a signature — a file per category, reviewed, loaded and linted by the
//! same loader (an unknown field is E001, a file named otherwise than its category
//! E003, an unknown category E002, a command template that does not parse E007).
//!
//! Its checks' commands are printed as written: they hold no `{{placeholder}}` (a
//! template variable is E007), so nothing from a log can enter them; they only read
//! (`nvidia-smi`, `df -h`, `pip show …`), since the guide does not know the cause.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{command_template, Step};
use super::error::{Code, Diagnostic};
use super::model::{Category, Text};

/// A guide file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuideFile {
    /// The category (kebab-case), equal to the file name.
    #[schemars(with = "String")]
    pub category: Text,
    /// The class in a few words ("GPU out of memory").
    pub title: String,
    /// What failures of this class are and what usually causes them.
    pub explain: String,
    /// Read-only checks that confirm or rule out the class.
    pub checks: Vec<Check>,
    /// Where the class is documented.
    #[serde(default)]
    pub references: Vec<String>,
}

/// One check.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub description: String,
    /// A read-only command, printed as written (no `{{placeholder}}`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub command: Option<Text>,
}

/// A compiled guide.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Guide {
    pub category: Category,
    pub title: String,
    pub explain: String,
    pub checks: Vec<Step>,
    pub references: Vec<String>,
    /// The file it was loaded from.
    pub file: String,
}

/// Is this library file a category guide? (It lies in a `categories/` folder.)
pub fn is_guide(name: &str) -> bool {
    name.starts_with("categories/") || name.contains("/categories/")
}

/// Compiles one parsed guide; `stem` is its file name without `.yaml`.
pub fn compile(
    g: &GuideFile,
    file: &str,
    source: &str,
    stem: &str,
) -> Result<Guide, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let at = |t: &Text| (t.referenced.line() as usize, t.referenced.column() as usize);
    let category = Category::parse(&g.category.value);
    let (l, c) = at(&g.category);
    if category.is_none() {
        let known: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
        let msg = format!(
            "`{}` is not a category (one of: {})",
            g.category.value,
            known.join(", ")
        );
        errors.push(Diagnostic::new(Code::E002, file, msg).at(source, l, c));
    } else if g.category.value != stem {
        let msg = format!(
            "category `{}` does not match the file name `{stem}.yaml`",
            g.category.value
        );
        errors.push(Diagnostic::new(Code::E003, file, msg).at(source, l, c));
    }
    let mut checks = Vec::new();
    for ch in &g.checks {
        let command = ch.command.as_ref().and_then(|t| {
            command_template(t, file, source, &mut errors, |v| {
                Some(format!("a category's check is printed as written: `{{{{{v}}}}}` has no value here (nothing from a log enters it)"))
            })
        });
        checks.push(Step {
            description: ch.description.clone(),
            command,
            when: None,
            condition: None,
        });
    }
    match category {
        Some(category) if errors.is_empty() => Ok(Guide {
            category,
            title: g.title.clone(),
            explain: g.explain.clone(),
            checks,
            references: g.references.clone(),
            file: file.to_string(),
        }),
        _ => Err(errors),
    }
}
