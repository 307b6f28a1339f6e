//! `{{env.…}}` template variables: which exist and the pattern a value must match before
//! it enters a command (filling them from facts is [`crate::knowledge::vars`]).
//!
//! Variables: `env.packages.NAME` (installed version), `env.required_by.NAME` and
//! `env.requires.NAME` (from `pip show`, comma-separated), `env.driver`,
//! `env.driver_cuda`, `env.torch_cuda`, `env.cuda_runtime`, `env.gpu`,
//! `env.gpu_capability`, `env.gpu_sm`, `env.arch_list`.

use std::sync::LazyLock;

use regex::Regex;

const SCALARS: &[&str] = &[
    "driver",
    "driver_cuda",
    "torch_cuda",
    "cuda_runtime",
    "gpu",
    "gpu_capability",
    "gpu_sm",
    "arch_list",
];
const PER_PACKAGE: &[&str] = &["packages.", "required_by.", "requires."];

#[allow(clippy::expect_used)]
static VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:[0-9][0-9A-Za-z.+!_-]*)$").expect("version pattern"));
#[allow(clippy::expect_used)]
static NAMES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*(?:, [A-Za-z0-9][A-Za-z0-9._-]*)*)$")
        .expect("names pattern")
});
#[allow(clippy::expect_used)]
static TEXT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:[A-Za-z0-9 ._()+-]+)$").expect("text pattern"));

/// Whether `var` (with its `env.` prefix) is a known environment variable.
pub fn is_known(var: &str) -> bool {
    let Some(rest) = var.strip_prefix("env.") else {
        return false;
    };
    SCALARS.contains(&rest)
        || PER_PACKAGE
            .iter()
            .any(|p| rest.strip_prefix(p).is_some_and(|n| !n.is_empty()))
}

/// The full-match pattern a value of `var` must satisfy to enter a command.
pub fn pattern(var: &str) -> &'static Regex {
    let rest = var.strip_prefix("env.").unwrap_or(var);
    if rest.starts_with("required_by.") || rest.starts_with("requires.") {
        &NAMES
    } else if rest.starts_with("packages.")
        || matches!(
            rest,
            "driver" | "driver_cuda" | "torch_cuda" | "cuda_runtime" | "gpu_capability" | "gpu_sm"
        )
    {
        &VERSION
    } else {
        &TEXT
    }
}

/// The list of known variables, for error messages.
pub fn known_list() -> String {
    let mut v: Vec<String> = SCALARS.iter().map(|s| format!("env.{s}")).collect();
    v.extend(PER_PACKAGE.iter().map(|p| format!("env.{p}NAME")));
    v.join(", ")
}

/// Every `{{name}}` in a prose template.
pub fn prose_variables(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else { break };
        out.push(after[..j].trim().to_string());
        rest = &after[j + 2..];
    }
    out
}

/// Fills every `{{name}}` of prose (a title, an explanation, a step's description or
/// `when`) with `value(name)`, control characters escaped; a name without a value (an
/// optional group that did not take part) reads `…`. The loader refuses a name that is
/// not a capture (E007), so nothing is printed as written.
pub fn fill_prose(text: &str, value: impl Fn(&str) -> Option<String>) -> String {
    if !text.contains("{{") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else { break };
        out.push_str(&rest[..i]);
        match value(after[..j].trim()) {
            Some(v) => out.push_str(&crate::knowledge::text::escape_control(&v)),
            None => out.push('…'),
        }
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    out
}
