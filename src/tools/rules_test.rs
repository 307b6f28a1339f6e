//! The compatibility rules' self-tests (`crashdoc rules test`).

use crate::env::eval::eval;
use crate::env::parse_text;
use crate::knowledge::cond::Truth;
use crate::knowledge::rules::Rules;

/// The outcome of `crashdoc rules test`.
#[derive(Debug, Default)]
pub struct RulesTestReport {
    pub passed: usize,
    pub failed: usize,
    pub messages: Vec<String>,
}

/// Runs every rule's examples: each `fail` report must break it, each `pass` report
/// must not, and every report must yield facts (a report the parsers cannot read
/// proves nothing).
pub fn test_rules(rules: &Rules, filter: Option<&str>) -> RulesTestReport {
    let mut rep = RulesTestReport::default();
    for r in &rules.rules {
        if filter.is_some_and(|f| !r.id.contains(f)) {
            continue;
        }
        for (kind, list, want) in [
            ("fail", &r.examples.fail, true),
            ("pass", &r.examples.pass, false),
        ] {
            for (i, ex) in list.iter().enumerate() {
                let name = format!("{}#{kind}{}", r.id, i + 1);
                let facts = parse_text(&name, &ex.env);
                if facts.is_empty() {
                    rep.failed += 1;
                    rep.messages.push(format!(
                        "FAIL {} ({}): example {kind} #{} yields no facts",
                        r.id,
                        r.file,
                        i + 1
                    ));
                    continue;
                }
                let t = eval(&r.when, &facts, &mut Vec::new());
                let ok = if want {
                    t == Truth::True
                } else {
                    t != Truth::True
                };
                if ok {
                    rep.passed += 1;
                } else {
                    rep.failed += 1;
                    rep.messages.push(format!(
                        "FAIL {} ({}): example {kind} #{} evaluates to {t:?}",
                        r.id,
                        r.file,
                        i + 1
                    ));
                }
            }
        }
    }
    rep
}
