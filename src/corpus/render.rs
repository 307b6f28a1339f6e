//! Rendering a corpus run for people: an aligned text table (terminal, CI log) and
//! Markdown (the README's table, a pull-request comment). Both show the same sections
//! in the same order; neither includes timings, so the Markdown of a run is
//! reproducible and the README can be checked against it. JSON is the report itself
//! ([`super::baseline::to_json`]); JUnit is in [`crate::corpus::junit`].

use std::fmt::Write as _;

use super::baseline::Comparison;
use super::score::{CorpusReport, Summary};
use crate::knowledge::text::escape_control;

/// Rows of cells, the first the header.
type Table = Vec<Vec<String>>;

fn text_table(out: &mut String, t: &Table) {
    let cols = t.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            t.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in t {
        let mut line = String::from("  ");
        for (c, cell) in r.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            line.push_str(cell);
            if c + 1 < r.len() {
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// A table cell: control, bidi and zero-width characters escaped, and every character
/// CommonMark could read as a link, an image, HTML, code or emphasis backslash-escaped
/// (cells hold log text: incident names, messages).
fn md_cell(s: &str) -> String {
    let s = escape_control(s);
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '|' | '[' | ']' | '<' | '>' | '&' | '`' | '!' | '*' | '_' | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn md_table(out: &mut String, t: &Table) {
    for (i, r) in t.iter().enumerate() {
        let cells: Vec<String> = r.iter().map(|c| md_cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        if i == 0 {
            let _ = writeln!(out, "|{}", " --- |".repeat(r.len()));
        }
    }
}

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|s| s.to_string()).collect()
}

/// The overall measures, unseen first (the figure that says how crashdoc does on logs
/// the library has not met), then seen and all.
fn overall(s: &Summary) -> Table {
    let mut head = vec!["measure".to_string()];
    head.extend(
        s.splits
            .iter()
            .map(|p| format!("{} ({})", p.split, p.incidents)),
    );
    let line = |name: &str, f: fn(&super::score::SplitScore) -> super::score::Rate| {
        let mut r = vec![name.to_string()];
        r.extend(s.splits.iter().map(|p| f(p).show()));
        r
    };
    let mut t = vec![
        head,
        line("top-1 accuracy", |p| p.top1),
        line("top-3 accuracy", |p| p.top3),
        line("key-line hit rate", |p| p.key_line),
        line("key line in the primary block", |p| p.key_line_primary),
        line("all checks pass", |p| p.ok),
    ];
    // the layers' precision is measured on the whole corpus only
    for (layer, rate) in &s.layers {
        let mut r = vec![format!("precision of {layer} top causes")];
        r.extend(s.splits.iter().map(|p| {
            if p.split == "all" {
                rate.show()
            } else {
                "—".to_string()
            }
        }));
        t.push(r);
    }
    t
}

/// Confidence level of the top cause → how often that cause is right.
fn calibration(s: &Summary) -> Table {
    let mut t = vec![row(&[
        "top cause's confidence",
        "right (unseen)",
        "right (all)",
    ])];
    for c in &s.calibration {
        t.push(vec![c.confidence.clone(), c.unseen.show(), c.all.show()]);
    }
    t
}

/// Notes under the overall table.
const SPLIT_NOTE: &str = "unseen: neither the key line nor any line of the incident's \
failure is text inside a signature's examples; seen: one is (right answers there measure \
recall on the library's own examples)";

/// Notes under the calibration table.
const CALIBRATION_NOTE: &str = "right: the top cause's category is the expected one \
(a cause on a healthy log or on a code bug is never right)";

fn categories(s: &Summary) -> Table {
    let mut t = vec![row(&["category", "incidents", "top-1", "top-3"])];
    for c in &s.by_category {
        t.push(vec![
            c.category.clone(),
            c.top1.of.to_string(),
            c.top1.show(),
            c.top3.show(),
        ]);
    }
    t
}

fn signatures(s: &Summary) -> Table {
    let mut t = vec![row(&["signature", "category", "precision", "recall"])];
    for g in &s.signatures {
        t.push(vec![
            g.signature.clone(),
            g.category.clone(),
            g.precision.show(),
            g.recall.show(),
        ]);
    }
    t
}

fn confusions(s: &Summary) -> Table {
    let mut t = vec![row(&["expected", "got (top cause)", "incidents"])];
    for c in &s.confusions {
        t.push(vec![
            c.expected.clone(),
            c.got.clone(),
            c.incidents.join(", "),
        ]);
    }
    t
}

fn wrong(r: &CorpusReport) -> Table {
    let mut t = vec![row(&["incident", "expected", "top cause", "problems"])];
    for i in r.incidents.iter().filter(|i| !i.ok) {
        t.push(vec![
            i.name.clone(),
            i.expected.clone(),
            i.signatures
                .first()
                .cloned()
                .unwrap_or_else(|| "no cause".into()),
            i.problems.join("; "),
        ]);
    }
    t
}

/// Notes under the signature table.
const SIGNATURE_NOTE: &str = "precision: right among the incidents it ranked first on; \
recall: ranked first and right among the incidents it applies to (named by the incident, \
or of the expected category and matched)";

/// The aligned text table.
pub fn text(r: &CorpusReport, heading: &str) -> String {
    let s = &r.summary;
    let mut out = String::new();
    let _ = writeln!(out, "{heading}\n");
    text_table(&mut out, &overall(s));
    let _ = writeln!(out, "  ({SPLIT_NOTE})");
    let _ = writeln!(out, "\nCalibration ({CALIBRATION_NOTE})");
    text_table(&mut out, &calibration(s));
    for (title, column, points) in [
        (
            "Reliability of the top cause's score (predicted) against right (observed)",
            "score",
            super::score::reliability_points(&r.incidents),
        ),
        (
            "Reliability of the top cause's calibrated probability",
            "probability",
            super::score::probability_points(&r.incidents),
        ),
    ] {
        let table = super::calibration::render(title, column, &points);
        let _ = writeln!(out, "\n{}", table.trim_end());
    }
    let _ = writeln!(out, "\nBy category");
    text_table(&mut out, &categories(s));
    let _ = writeln!(out, "\nSignatures as the top cause ({SIGNATURE_NOTE})");
    text_table(&mut out, &signatures(s));
    let _ = writeln!(
        out,
        "\nConfusions (expected category → top cause's category)"
    );
    if s.confusions.is_empty() {
        let _ = writeln!(out, "  none");
    } else {
        text_table(&mut out, &confusions(s));
    }
    let _ = writeln!(out, "\nIncidents with no cause (a failure was expected)");
    if s.no_cause.is_empty() {
        let _ = writeln!(out, "  none");
    } else {
        for n in &s.no_cause {
            let _ = writeln!(out, "  {n}");
        }
    }
    let _ = writeln!(out, "\nWrong incidents");
    if r.incidents.iter().all(|i| i.ok) {
        let _ = writeln!(out, "  none");
    } else {
        text_table(&mut out, &wrong(r));
    }
    out
}

/// A reliability table of `points` in Markdown: bins of `what` (`axis` heading them),
/// predicted against observed, and the ECE.
fn md_reliability(out: &mut String, what: &str, axis: &str, points: &[(f64, bool)]) {
    let (bins, ece) = super::calibration::reliability(points);
    let _ = writeln!(
        out,
        "\n**Reliability** of {what}: {} causes, expected calibration error (ECE) {ece:.3}\n",
        points.len()
    );
    let mut t: Table = vec![row(&[axis, "causes", "predicted", "observed"])];
    for b in &bins {
        t.push(vec![
            format!("{:.1}–{:.1}", b.from, b.to),
            b.count.to_string(),
            format!("{:.2}", b.predicted),
            format!("{:.2}", b.observed),
        ]);
    }
    md_table(out, &t);
}

/// Markdown tables (what the README shows).
pub fn markdown(r: &CorpusReport) -> String {
    let s = &r.summary;
    let mut out = String::new();
    let _ = writeln!(out, "{} incidents.\n", s.incidents);
    md_table(&mut out, &overall(s));
    let _ = writeln!(out, "\n{SPLIT_NOTE}.");
    let _ = writeln!(out, "\n**Calibration** ({CALIBRATION_NOTE})\n");
    md_table(&mut out, &calibration(s));
    md_reliability(
        &mut out,
        "the top cause's score",
        "score",
        &super::score::reliability_points(&r.incidents),
    );
    md_reliability(
        &mut out,
        "the top cause's calibrated probability",
        "probability",
        &super::score::probability_points(&r.incidents),
    );
    let _ = writeln!(out, "\n**By category**\n");
    md_table(&mut out, &categories(s));
    let _ = writeln!(
        out,
        "\n**Signatures as the top cause** ({SIGNATURE_NOTE})\n"
    );
    md_table(&mut out, &signatures(s));
    let _ = writeln!(
        out,
        "\n**Confusions** (expected category → top cause's category)\n"
    );
    if s.confusions.is_empty() {
        let _ = writeln!(out, "None.");
    } else {
        md_table(&mut out, &confusions(s));
    }
    let _ = writeln!(
        out,
        "\n**Incidents with no cause** (a failure was expected)\n"
    );
    if s.no_cause.is_empty() {
        let _ = writeln!(out, "None.");
    } else {
        let _ = writeln!(out, "{}", s.no_cause.join(", "));
    }
    let _ = writeln!(out, "\n**Wrong incidents**\n");
    if r.incidents.iter().all(|i| i.ok) {
        let _ = writeln!(out, "None.");
    } else {
        md_table(&mut out, &wrong(r));
    }
    out
}

/// The comparison with a baseline, for people (stderr in the CLI).
pub fn comparison(c: &Comparison, baseline: &str) -> String {
    let mut out = String::new();
    let top = |s: &Option<String>| s.clone().unwrap_or_else(|| "no cause".into());
    for x in &c.regressions {
        let _ = writeln!(
            out,
            "REGRESSION {}: right in {baseline} (top cause {}), wrong now (top cause {}): {}",
            x.name,
            top(&x.before),
            top(&x.now),
            x.problems.join("; ")
        );
    }
    for x in &c.improvements {
        let _ = writeln!(
            out,
            "improved {}: wrong in {baseline}, right now (top cause {})",
            x.name,
            top(&x.now)
        );
    }
    for x in &c.top_changed {
        let _ = writeln!(
            out,
            "changed {}: still right, top cause {} → {}",
            x.name,
            top(&x.before),
            top(&x.now)
        );
    }
    for n in &c.added {
        let _ = writeln!(out, "new incident {n} (not in {baseline})");
    }
    for n in &c.removed {
        let _ = writeln!(out, "gone: {n} is in {baseline} but not in the corpus");
    }
    let _ = writeln!(
        out,
        "baseline {baseline}: {} regression(s), {} improvement(s)",
        c.regressions.len(),
        c.improvements.len()
    );
    out
}

fn invariance_table(v: &super::invariance::Invariance) -> Table {
    let mut t = vec![row(&["transformation", "pairs held", "not applicable"])];
    for r in &v.rows {
        let rate = super::score::Rate {
            hits: r.held.len(),
            of: r.total(),
        };
        t.push(vec![
            r.transform.clone(),
            rate.show(),
            r.not_applicable.len().to_string(),
        ]);
    }
    let (h, n) = v.totals();
    t.push(vec![
        "all".into(),
        super::score::Rate { hits: h, of: n }.show(),
        String::new(),
    ]);
    t
}

fn failing_pairs(v: &super::invariance::Invariance) -> Table {
    let mut t = vec![row(&["reason", "pairs (transformation: log)"])];
    for (reason, pairs) in super::invariance::by_reason(v) {
        let p: Vec<String> = pairs.iter().map(|(t, l)| format!("{t}: {l}")).collect();
        t.push(vec![reason, p.join(", ")]);
    }
    t
}

/// The metamorphic run as aligned text: held / total per transformation, then the
/// failing pairs by reason.
pub fn invariance_text(v: &super::invariance::Invariance, heading: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{heading}\n");
    text_table(&mut out, &invariance_table(v));
    let _ = writeln!(out, "\nFailing pairs by reason");
    if v.rows.iter().all(|r| r.failed.is_empty()) {
        let _ = writeln!(out, "  none");
    } else {
        text_table(&mut out, &failing_pairs(v));
    }
    out
}

/// The metamorphic run as Markdown (the README's table).
pub fn invariance_markdown(v: &super::invariance::Invariance) -> String {
    let mut out = String::new();
    md_table(&mut out, &invariance_table(v));
    let _ = writeln!(out, "\n**Failing pairs by reason**\n");
    if v.rows.iter().all(|r| r.failed.is_empty()) {
        let _ = writeln!(out, "None.");
    } else {
        md_table(&mut out, &failing_pairs(v));
    }
    out
}
