//! Remediation, filled for one log: a signature's or a compatibility rule's steps with
//! their `{{capture}}`s, `{{unit}}` and `{{env.*}}` values put in, each value checked
//! against its pattern before it reaches a command ([`crate::knowledge::signature::template`]
//! refuses the rest), the steps whose `if` holds on the environment facts moved first.
//!
//! Diagnosis (for causes) and findings (for environment rules) both render steps here;
//! neither imports the other.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::knowledge::signature::lazy::LazyRegex;
use crate::knowledge::signature::template::RenderError;

/// A remediation step, filled for this log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedStep {
    pub description: String,
    /// The command, filled; absent when the step has none or it could not be filled.
    pub command: Option<String>,
    pub when: Option<String>,
    /// Why a command was not filled (a value missing from the log, or refused).
    pub note: Option<String>,
    /// The template, when it could not be filled.
    pub template: Option<String>,
    /// The step's `if` holds on the environment facts given: the fix that fits.
    pub fits: bool,
    /// The command as the signature writes it (placeholders unfilled): the same for
    /// every input, so what a report shared across inputs shows (SARIF rules).
    pub written: Option<String>,
}

/// Prose with its `{{capture}}`s filled from the values read from the log.
pub(crate) fn fill(text: &str, captures: &BTreeMap<String, String>) -> String {
    crate::knowledge::vars::fill_prose(text, |n| captures.get(n).cloned())
}

static UNIT_PATTERN: LazyLock<regex::Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    regex::Regex::new(r"^[A-Za-z0-9@._:\\-]+$").expect("unit pattern")
});

/// Renders steps (signatures and rules share it).
pub fn render_step_list(
    steps: &[crate::knowledge::signature::compile::Step],
    captures: &BTreeMap<String, String>,
    patterns: &BTreeMap<String, LazyRegex>,
    unit: Option<&str>,
    facts: &crate::env::Facts,
) -> Vec<RenderedStep> {
    let mut fitting = Vec::new();
    let mut rest = Vec::new();
    for s in steps {
        let t = s
            .condition
            .as_ref()
            .map_or(crate::knowledge::cond::Truth::Unknown, |c| {
                crate::env::eval::eval(c, facts, &mut Vec::new())
            });
        if t == crate::knowledge::cond::Truth::False {
            continue;
        }
        let mut r = render_step(s, captures, patterns, unit, facts);
        if t.holds() {
            r.fits = true;
            fitting.push(r);
        } else {
            rest.push(r);
        }
    }
    fitting.extend(rest);
    fitting
}

/// The note of a step that needs a unit the log does not establish.
const UNIT_UNKNOWN: &str = "needs `unit`: the log does not tie the failing process to a systemd unit (by _SYSTEMD_UNIT, its pid or its journald identifier); fill in the unit of the service";

fn render_step(
    s: &crate::knowledge::signature::compile::Step,
    captures: &BTreeMap<String, String>,
    patterns: &BTreeMap<String, LazyRegex>,
    unit: Option<&str>,
    facts: &crate::env::Facts,
) -> RenderedStep {
    let mut out = RenderedStep {
        description: fill(&s.description, captures),
        command: None,
        when: s.when.as_deref().map(|w| fill(w, captures)),
        note: None,
        template: None,
        fits: false,
        written: s.command.as_ref().map(|t| t.source.clone()),
    };
    if let Some(t) = &s.command {
        // env values are owned: look them up once, before rendering borrows them
        let env: BTreeMap<&str, String> = t
            .variables()
            .filter(|v| v.starts_with("env."))
            .filter_map(|v| facts.lookup(v).map(|x| (v, x)))
            .collect();
        let res = t.render(|name| {
            if let Some(v) = captures.get(name) {
                Some((v.as_str(), patterns.get(name).map(|r| &**r)))
            } else if name == "unit" {
                unit.map(|u| (u, Some(&*UNIT_PATTERN)))
            } else if let Some(v) = env.get(name) {
                Some((v.as_str(), Some(crate::knowledge::vars::pattern(name))))
            } else {
                None
            }
        });
        match res {
            Ok(c) => out.command = Some(c),
            Err(e) => {
                out.note = Some(match &e {
                    RenderError::Missing(n) if n == "unit" => UNIT_UNKNOWN.to_string(),
                    RenderError::Missing(_) | RenderError::Refused { .. } => e.to_string(),
                });
                out.template = Some(t.source.clone());
            }
        }
    }
    out
}
