//! The human report: what to read first, on one screen.

use std::fmt::Write as _;

use crate::engine::diagnosis::{Cause, Diagnosis, RenderedStep};
use crate::engine::extract::Extraction;
use crate::engine::findings::Finding;
use crate::engine::rank::Confidence;
use crate::knowledge::text::{clip, escape_control};

/// Terminal styling; off when not a terminal or when `NO_COLOR` is set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    fn conf(&self, c: Confidence, s: &str) -> String {
        match c {
            Confidence::High => self.paint("1;32", s),
            Confidence::Medium => self.paint("1;33", s),
            Confidence::Low => self.paint("1;31", s),
        }
    }
    fn cmd(&self, s: &str) -> String {
        self.paint("36", s)
    }
}

const WIDTH: usize = 150;

fn spread_text(c: &Cause) -> Option<String> {
    if c.spread.is_empty() {
        return None;
    }
    let per: Vec<String> = c
        .spread
        .iter()
        .map(|(_, s, w)| {
            if *w > 1 && *s > 1 {
                format!("{s}/{w} workers")
            } else if *s > 1 {
                format!("{s} streams")
            } else {
                String::new()
            }
        })
        .collect();
    let all_same = per.windows(2).all(|w| w[0] == w[1]);
    let n = c.spread.len();
    let mut out = String::new();
    if n > 1 {
        if all_same && !per[0].is_empty() {
            let _ = write!(out, "{} in each of {n} attempts (a crash loop)", per[0]);
        } else {
            let _ = write!(out, "in {n} attempts (a crash loop)");
            let detail: Vec<&str> = per
                .iter()
                .map(String::as_str)
                .filter(|s| !s.is_empty())
                .collect();
            if !detail.is_empty() {
                let _ = write!(out, ": {}", detail.join(", "));
            }
        }
    } else if !per[0].is_empty() {
        out.push_str(&per[0]);
    } else if c.occurrences > 1 {
        let _ = write!(out, "{} times", c.occurrences);
    } else {
        return None;
    }
    Some(out)
}

fn cause(out: &mut String, c: &Cause, st: Style) {
    let _ = writeln!(
        out,
        "{}. {}  {}",
        c.rank,
        st.bold(&escape_control(&c.title)),
        st.conf(
            c.confidence,
            &format!(
                "[{} · {} · {} {:.2}]",
                c.category,
                c.severity.as_str(),
                c.confidence.as_str(),
                c.score
            )
        )
    );
    match &c.layer {
        Some(layer) => {
            let _ = writeln!(out, "   {}", st.dim(&format!("{} ({layer})", c.signature)));
        }
        None => {
            let _ = writeln!(out, "   {}", st.dim(&c.signature));
        }
    }
    if let Some(note) = layer_note(c) {
        let _ = writeln!(out, "   {}", escape_control(&note));
    }
    if !c.captures.is_empty() {
        let caps: Vec<String> = c
            .captures
            .iter()
            .map(|(k, v)| format!("{k}={}", escape_control(v)))
            .collect();
        let _ = writeln!(out, "   Read from the log: {}", caps.join("  "));
    }
    let mut seen = Vec::new();
    if let Some(s) = spread_text(c) {
        seen.push(s);
    }
    if let Some(f) = &c.first {
        let who = if f.stream.is_empty() {
            String::new()
        } else {
            format!("{} ", escape_control(&f.stream))
        };
        let when = f
            .timestamp
            .as_deref()
            .map(|t| format!("at {} ", escape_control(t)))
            .unwrap_or_default();
        seen.push(format!("first: {who}{when}(line {})", f.line));
    }
    if !seen.is_empty() {
        let _ = writeln!(out, "   Seen: {}", seen.join("; "));
    }
    let mut wh = Vec::new();
    if let Some(m) = &c.importing {
        wh.push(format!("while importing {}", escape_control(m)));
    }
    if let Some(s) = &c.crash_site {
        let src = s
            .source
            .as_deref()
            .map(|x| format!(" `{}`", clip(&escape_control(x), 60)))
            .unwrap_or_default();
        wh.push(format!(
            "crash site {} in {}{src}",
            escape_control(&s.short()),
            escape_control(&s.function)
        ));
    }
    if let (Some(r), Some(cs)) = (&c.raise_site, &c.crash_site) {
        if r != cs {
            wh.push(format!("raised at {}", escape_control(&r.short())));
        }
    }
    if !wh.is_empty() {
        let _ = writeln!(out, "   Where: {}", wh.join("; "));
    }
    let _ = writeln!(out, "   Evidence:");
    for e in c.evidence.iter().take(3) {
        let _ = writeln!(
            out,
            "   {:>6} │ {}",
            e.line,
            clip(&escape_control(&e.text), WIDTH)
        );
    }
    if c.evidence.len() > 3 {
        let _ = writeln!(
            out,
            "   {:>6} │ {}",
            "",
            st.dim(&format!(
                "… {} more (--format json for all)",
                c.evidence.len() - 3
            ))
        );
    }
    let _ = writeln!(
        out,
        "   Why: {}",
        clip(&escape_control(&c.explain.replace('\n', " ")), 400)
    );
    for e in &c.environment {
        let _ = writeln!(out, "   In this environment: {}", escape_control(e));
    }
    fix_block(out, &c.remediation, st);
    if !c.consequences.is_empty() {
        let _ = writeln!(
            out,
            "   Consequences (follow from this cause, not separate causes):"
        );
        for q in c.consequences.iter().take(6) {
            let times = if q.count > 1 {
                format!(" ×{}", q.count)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "     - line {}: {}{times}",
                q.line,
                clip(&escape_control(&q.text), 110)
            );
        }
        if c.consequences.len() > 6 {
            let _ = writeln!(out, "     - … {} more", c.consequences.len() - 6);
        }
    }
    for a in &c.also_matches {
        let _ = writeln!(
            out,
            "   Also matches (same evidence, less specific): {} — {} {}",
            escape_control(&a.signature),
            clip(&escape_control(&a.title), 90),
            st.dim(&format!("[{} · {:.2}]", a.category.as_str(), a.score))
        );
    }
    if let Some(r) = c.references.first() {
        let _ = writeln!(out, "   See: {}", escape_control(r));
    }
}

/// The "Fix" block of a cause or a finding: each step, when it applies, whether it fits
/// the environment, and its command (or why it has none). Written here only.
fn fix_block(out: &mut String, steps: &[RenderedStep], st: Style) {
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "   Fix (printed, never run):");
    for (i, s) in steps.iter().enumerate() {
        let when = s
            .when
            .as_deref()
            .map(|w| st.dim(&format!(" — when {}", escape_control(w))))
            .unwrap_or_default();
        let fits = if s.fits {
            st.bold(" [fits this environment]")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "     {}. {}{when}{fits}",
            i + 1,
            escape_control(&s.description)
        );
        if let Some(cmd) = &s.command {
            let _ = writeln!(
                out,
                "        {}",
                st.cmd(&format!("$ {}", escape_control(cmd)))
            );
        } else if let (Some(t), Some(n)) = (&s.template, &s.note) {
            let _ = writeln!(
                out,
                "        {}",
                st.dim(&format!("({}: {})", escape_control(t), escape_control(n)))
            );
        }
    }
}

/// Environment findings (compatibility rules the facts break), as text.
pub fn findings(findings: &[Finding]) -> String {
    let st = Style { color: false };
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. [{}] {} ({}, rule {})",
            i + 1,
            f.severity.as_str(),
            escape_control(&f.title),
            f.category.as_str(),
            f.rule
        );
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "   {}  ({})",
                escape_control(&e.what),
                escape_control(&e.origin.to_string())
            );
        }
        let _ = writeln!(
            out,
            "   Why: {}",
            escape_control(&f.explain.replace('\n', " "))
        );
        fix_block(&mut out, &f.remediation, st);
        if let Some(r) = f.references.first() {
            let _ = writeln!(out, "   See: {}", escape_control(r));
        }
    }
    out
}

/// The text format: for people, colour on a terminal; environment findings after the
/// causes.
pub struct Text {
    pub style: Style,
}

impl super::Render for Text {
    fn one(&self, d: &Diagnosis) -> Result<String, super::RenderError> {
        let mut out = render(d, self.style);
        if !d.findings.is_empty() {
            out.push_str("Environment problems (compatibility rules on the facts given):\n");
            out.push_str(&findings(&d.findings));
        }
        Ok(out)
    }
}

/// Renders a diagnosis.
pub fn render(d: &Diagnosis, st: Style) -> String {
    let mut out = String::new();
    let attempts = d.attempts.iter().filter(|a| a.failures > 0).count();
    let mut head = format!("crashdoc: {} — {} lines", escape_control(&d.input), d.lines);
    if attempts > 1 {
        let unit = d
            .unit
            .as_deref()
            .map(|u| format!(" of {}", escape_control(u)))
            .unwrap_or_default();
        let _ = write!(head, ", {attempts} crash attempts{unit}");
        if let Some(n) = d.attempts.iter().filter_map(|a| a.restart_counter).max() {
            let _ = write!(head, " (restart counter at {n})");
        }
    }
    let _ = writeln!(out, "{}\n", st.bold(&head));
    if d.causes.is_empty() {
        let _ = writeln!(out, "No known cause found.");
        if let Some(u) = &d.unexplained {
            let _ = writeln!(
                out,
                "The first failure is: {}",
                clip(&escape_control(u), WIDTH)
            );
            if let Some(f) = d
                .failures
                .iter()
                .find(|f| f.first_in_attempt)
                .or(d.failures.first())
            {
                let _ = writeln!(
                    out,
                    "  at line {}{}",
                    f.first.line,
                    f.crash_site
                        .as_ref()
                        .map(|s| format!(", crash site {}", escape_control(&s.short())))
                        .unwrap_or_default()
                );
            }
            let _ = writeln!(out, "To teach crashdoc this failure: crashdoc sig new --from <log> (see CONTRIBUTING.md).");
        } else {
            let _ = writeln!(out, "No failure was found in the log either.");
        }
    }
    if let Some(f) = &d.first_failure {
        let _ = writeln!(
            out,
            "{} line {}: {}\n",
            st.bold("The first failure, which no cause below explains (the top cause follows from another failure), is at"),
            f.line,
            clip(&escape_control(&f.headline), WIDTH)
        );
    }
    for c in &d.causes {
        cause(&mut out, c, st);
        out.push('\n');
    }
    if !d.noise.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            st.bold("Explained noise (harmless; not the cause):")
        );
        for n in d.noise.iter().take(8) {
            let line = n
                .evidence
                .first()
                .map(|e| format!(" (first: line {})", e.line))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "   ×{:<4} {} — {}{line}",
                n.count,
                n.signature,
                escape_control(&n.title)
            );
        }
        if d.noise.len() > 8 {
            let _ = writeln!(out, "   … {} more", d.noise.len() - 8);
        }
    }
    out
}

/// Renders an extraction: the signature author's debugging view.
pub fn render_extraction(input: &str, x: &Extraction, st: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        st.bold(&format!(
            "{} — {} lines, {} failures, {} attempt(s){}",
            escape_control(input),
            x.lines,
            x.failures.len(),
            x.attempts.len(),
            x.unit
                .as_deref()
                .map(|u| format!(", unit {}", escape_control(u)))
                .unwrap_or_default()
        ))
    );
    for a in &x.attempts {
        let restart = a
            .restart_counter
            .map(|n| format!(", then restart counter at {n}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\n{}",
            st.bold(&format!(
                "Attempt {} (lines {}–{}): {} failure(s), {} worker stream(s){restart}",
                a.index, a.first_line, a.last_line, a.failures, a.workers
            ))
        );
        for f in x.failures.iter().filter(|f| f.attempt == a.index) {
            let mark = if f.first_in_attempt {
                st.conf(Confidence::High, "FIRST ")
            } else if let Some(c) = f.consequence_of {
                st.dim(&format!("after #{c} "))
            } else {
                String::new()
            };
            let streams = if f.streams.len() > 1 {
                format!(
                    " in {} streams ({}…), ×{}",
                    f.streams.len(),
                    escape_control(&f.streams[0]),
                    f.count
                )
            } else if f.count > 1 {
                format!(" ×{}", f.count)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  #{} {mark}[{}] line {}{}{streams}",
                f.id,
                f.kind.as_str(),
                f.first.line,
                if f.first.stream.is_empty() {
                    String::new()
                } else {
                    format!(" {}", escape_control(&f.first.stream))
                },
            );
            let _ = writeln!(
                out,
                "      {}",
                clip(&escape_control(&f.headline.replace('\n', " ⏎ ")), WIDTH)
            );
            if let Some(p) = &f.preamble {
                let _ = writeln!(out, "      preamble: {}", escape_control(p));
            }
            if f.chain.len() > 1 {
                for e in &f.chain {
                    let _ = writeln!(
                        out,
                        "      chain: line {} {}{}",
                        e.line,
                        clip(&escape_control(&e.headline()), 100),
                        if e.wrapper { " (wrapper)" } else { "" }
                    );
                }
            }
            if let Some(m) = &f.importing {
                let _ = writeln!(out, "      importing: {}", escape_control(m));
            }
            if let Some(s) = &f.crash_site {
                let _ = writeln!(
                    out,
                    "      crash site: {} ({}) line {}",
                    escape_control(&s.file),
                    escape_control(&s.function),
                    s.line
                );
            }
            if let Some(s) = &f.raise_site {
                let _ = writeln!(
                    out,
                    "      raise site: {} ({}) line {}",
                    escape_control(&s.file),
                    escape_control(&s.function),
                    s.line
                );
            }
            if f.truncated {
                let _ = writeln!(out, "      (cut off)");
            }
        }
    }
    if x.dropped_failures > 0 {
        let _ = writeln!(
            out,
            "\n{} further distinct failures were counted but not kept (limit)",
            x.dropped_failures
        );
    }
    if x.evicted_streams > 0 {
        let _ = writeln!(
            out,
            "{} streams had their open block closed early (limit of open streams)",
            x.evicted_streams
        );
    }
    out
}

/// One sentence saying how a cause was found, when not by a signature's own conditions.
fn layer_note(c: &Cause) -> Option<String> {
    let layer = c.layer.as_deref().unwrap_or("signature");
    match (layer, c.similarity, &c.wrapped_by) {
        ("fuzzy", Some(s), _) => Some(format!(
            "layer fuzzy: resembles {} (similarity {s:.2}), not an exact match",
            c.signature
        )),
        ("wrapper", _, Some(w)) => Some(format!(
            "layer wrapper: found in the error wrapped by {w}"
        )),
        ("fallback", _, _) => Some(
            "layer fallback: no signature matched; a structural fallback (exception type, raising module) at low confidence".to_string(),
        ),
        _ => None,
    }
}
