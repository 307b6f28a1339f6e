//! Environment findings: the compatibility rules ([`crate::knowledge::rules`]) the facts
//! break.

use std::collections::BTreeMap;

use crate::engine::remedy::{render_step_list, RenderedStep};
use crate::env::eval::{eval, Seen};
use crate::env::Facts;
use crate::knowledge::cond::Truth;
use crate::knowledge::rules::{Rule, Rules};
use crate::knowledge::signature::{Category, Severity};

/// A rule the environment breaks.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule: String,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    /// The facts that show it, with where they were read.
    pub evidence: Vec<Seen>,
    pub explain: String,
    pub remediation: Vec<RenderedStep>,
    pub references: Vec<String>,
    /// The signature of the crash it leads to.
    pub signature: Option<String>,
}

impl Finding {
    /// Fatal and error findings fail preflight; warnings do not.
    pub fn fails(&self) -> bool {
        matches!(self.severity, Severity::Fatal | Severity::Error)
    }
}

fn finding(r: &Rule, facts: &Facts, mut evidence: Vec<Seen>) -> Finding {
    // the facts that chose a remediation step are evidence too (who pins a package)
    for s in &r.remediation {
        if let Some(c) = &s.condition {
            let mut seen = Vec::new();
            if eval(c, facts, &mut seen) == Truth::True {
                for x in seen {
                    if !evidence.contains(&x) {
                        evidence.push(x);
                    }
                }
            }
        }
    }
    let explain = crate::env::vars::fill_prose(&r.explain, facts).unwrap_or_else(|| {
        // a value the report does not give: keep the sentence, name the variable
        r.explain.clone()
    });
    Finding {
        rule: r.id.clone(),
        title: r.title.clone(),
        category: r.category,
        severity: r.severity,
        evidence,
        explain,
        remediation: render_step_list(
            &r.remediation,
            &BTreeMap::new(),
            &BTreeMap::new(),
            None,
            facts,
        ),
        references: r.references.clone(),
        signature: r.signature.clone(),
    }
}

/// Every rule that is true on the facts, most severe first (then by id).
pub fn check(rules: &Rules, facts: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in &rules.rules {
        let mut seen = Vec::new();
        if eval(&r.when, facts, &mut seen) == Truth::True {
            out.push(finding(r, facts, seen));
        }
    }
    out.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.rule.cmp(&b.rule)));
    out
}
