//! What a library change does to the corpus, incident by incident (`crashdoc sig diff`).
//!
//! In the manner of Socorro's signature-change reports: the corpus is replayed with the
//! library before and after the change, and every incident whose result moved is shown
//! as before / after, with whether it was right and is right now. Incidents whose top
//! cause and verdict did not move are counted as *same*. The comparison is on reports,
//! so it is pure and deterministic; running the corpus is the caller's business.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::score::{CorpusReport, IncidentResult};

/// One incident's result, as the diff shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The top cause's signature; `None` when nothing matched.
    pub top: Option<String>,
    /// Every check of the incident passes (category, key line, signature, must-not).
    pub right: bool,
}

impl Outcome {
    fn of(r: &IncidentResult) -> Outcome {
        Outcome {
            top: r.signatures.first().cloned(),
            right: r.ok,
        }
    }

    fn show(&self) -> String {
        format!(
            "{} ({})",
            self.top.as_deref().unwrap_or("no cause"),
            if self.right { "right" } else { "wrong" }
        )
    }
}

/// How an incident moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Right before, wrong after.
    Broken,
    /// Wrong before, right after.
    Fixed,
    /// Another top cause, the verdict unchanged.
    Moved,
    /// Only in the corpus after (or only before).
    Added,
    Removed,
}

/// One incident that moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub incident: String,
    pub change: Change,
    pub before: Option<Outcome>,
    pub after: Option<Outcome>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// Incidents that moved: broken first, then fixed, moved, added, removed; by name.
    pub changed: Vec<Row>,
    /// Incidents with the same top cause and verdict.
    pub same: usize,
}

impl Diff {
    /// Whether an incident that was right is wrong now.
    pub fn breaks(&self) -> bool {
        self.changed.iter().any(|r| r.change == Change::Broken)
    }

    fn count(&self, c: Change) -> usize {
        self.changed.iter().filter(|r| r.change == c).count()
    }
}

/// Compares two runs of the same corpus.
pub fn compare(before: &CorpusReport, after: &CorpusReport) -> Diff {
    let old: BTreeMap<&str, Outcome> = before
        .incidents
        .iter()
        .map(|r| (r.name.as_str(), Outcome::of(r)))
        .collect();
    let new: BTreeMap<&str, Outcome> = after
        .incidents
        .iter()
        .map(|r| (r.name.as_str(), Outcome::of(r)))
        .collect();
    let mut changed = Vec::new();
    let mut same = 0;
    for (name, a) in &new {
        let change = match old.get(name) {
            None => Some(Change::Added),
            Some(b) if b.right && !a.right => Some(Change::Broken),
            Some(b) if !b.right && a.right => Some(Change::Fixed),
            Some(b) if b.top != a.top => Some(Change::Moved),
            Some(_) => None,
        };
        match change {
            Some(change) => changed.push(Row {
                incident: name.to_string(),
                change,
                before: old.get(name).cloned(),
                after: Some(a.clone()),
            }),
            None => same += 1,
        }
    }
    for (name, b) in old.iter().filter(|(n, _)| !new.contains_key(*n)) {
        changed.push(Row {
            incident: name.to_string(),
            change: Change::Removed,
            before: Some(b.clone()),
            after: None,
        });
    }
    changed.sort_by(|a, b| a.change.cmp(&b.change).then(a.incident.cmp(&b.incident)));
    Diff { changed, same }
}

/// The diff as text: one line per incident that moved, then the counts.
pub fn render_text(d: &Diff, before: &str, after: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "before: {before}\nafter:  {after}\n");
    let show = |o: &Option<Outcome>| o.as_ref().map_or("—".to_string(), Outcome::show);
    for r in &d.changed {
        let tag = match r.change {
            Change::Broken => "BROKEN",
            Change::Fixed => "fixed",
            Change::Moved => "moved",
            Change::Added => "added",
            Change::Removed => "removed",
        };
        let _ = writeln!(
            out,
            "{tag:<8} {}: {} → {}",
            r.incident,
            show(&r.before),
            show(&r.after)
        );
    }
    if !d.changed.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} broken, {} fixed, {} moved, {} added, {} removed, {} same",
        d.count(Change::Broken),
        d.count(Change::Fixed),
        d.count(Change::Moved),
        d.count(Change::Added),
        d.count(Change::Removed),
        d.same
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, top: Option<&str>, ok: bool) -> IncidentResult {
        let mut r: IncidentResult = serde_json::from_value(serde_json::json!({
            "name": name, "expected": "gpu-oom", "got": [], "signatures": [],
            "top1": ok, "top3": ok, "key_line_hit": ok, "has_key_line": false, "ok": ok,
            "problems": []
        }))
        .expect("an incident result");
        r.signatures = top.map(|t| vec![t.to_string()]).unwrap_or_default();
        r
    }

    fn report(rs: Vec<IncidentResult>) -> CorpusReport {
        CorpusReport {
            format: 1,
            summary: Default::default(),
            incidents: rs,
        }
    }

    #[test]
    fn each_kind_of_move_is_told_apart_and_same_is_counted() {
        let before = report(vec![
            result("a", Some("x"), true),
            result("b", None, false),
            result("c", Some("x"), false),
            result("d", Some("y"), true),
            result("gone", Some("y"), true),
        ]);
        let after = report(vec![
            result("a", Some("z"), false),
            result("b", Some("x"), true),
            result("c", Some("w"), false),
            result("d", Some("y"), true),
            result("new", None, true),
        ]);
        let d = compare(&before, &after);
        let kinds: Vec<(&str, Change)> = d
            .changed
            .iter()
            .map(|r| (r.incident.as_str(), r.change))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("a", Change::Broken),
                ("b", Change::Fixed),
                ("c", Change::Moved),
                ("new", Change::Added),
                ("gone", Change::Removed),
            ]
        );
        assert_eq!(d.same, 1);
        assert!(d.breaks());
        let text = render_text(&d, "HEAD", "working tree");
        assert!(text.contains("BROKEN   a: x (right) → z (wrong)"), "{text}");
        assert!(text.contains("1 broken, 1 fixed, 1 moved, 1 added, 1 removed, 1 same"));
    }

    #[test]
    fn no_change_is_all_same() {
        let r = report(vec![result("a", Some("x"), true)]);
        let d = compare(&r, &r.clone());
        assert!(d.changed.is_empty() && !d.breaks());
        assert_eq!(d.same, 1);
    }
}
