//! Markdown, for pasting into an issue.
//!
//! Text taken from a log is escaped for CommonMark, so nothing in a log can become a
//! live element of the comment: an inline code span is delimited by a backtick run
//! longer than any in its text; a fenced block by a fence longer than any backtick run
//! in it. Inside both, CommonMark reads nothing: no link, image, HTML or emphasis. Log
//! text (the input's name, crash site, importing module, evidence, consequences, filled
//! commands) is only ever placed there; the prose around it is the library's. Control,
//! bidi and zero-width characters are escaped first ([`escape_control`]). `tests/integration/hardening.rs` renders the output with a
//! CommonMark parser and checks that no injected element appears.

use std::fmt::Write as _;

use crate::engine::diagnosis::{Cause, Diagnosis};
use crate::knowledge::text::escape_control;

/// The longest run of backticks in a text.
fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        if c == '`' {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// An inline code span holding `s` verbatim (on one line).
pub fn code(s: &str) -> String {
    let s = escape_control(s).replace(['\n', '\r'], " ");
    let ticks = "`".repeat(longest_backtick_run(&s) + 1);
    // a space each side keeps a backtick at either end from joining the delimiter (and is
    // stripped again by CommonMark)
    let pad = if s.starts_with('`') || s.ends_with('`') || s.starts_with(' ') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

/// The fence for a code block holding these lines: longer than any backtick run in
/// them, at least three.
fn fence<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let n = lines.map(longest_backtick_run).max().unwrap_or(0);
    "`".repeat((n + 1).max(3))
}

/// The Markdown format, for pasting into an issue.
/// Two inputs' reports are set apart by a blank line.
#[derive(Debug, Default)]
pub struct Markdown(super::Written);

impl super::Render for Markdown {
    fn diagnosis(
        &mut self,
        out: &mut dyn std::io::Write,
        d: Diagnosis,
    ) -> Result<(), super::RenderError> {
        self.0.write(out, "\n", &render(&d))
    }
}

pub fn render(d: &Diagnosis) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## crashdoc diagnosis of {}\n", code(&d.input));
    if d.causes.is_empty() {
        let _ = writeln!(out, "No known cause found.");
        if let Some(u) = &d.unexplained {
            let _ = writeln!(out, "\nFirst failure: {}", code(u));
        }
    } else if !d.found() {
        let _ = writeln!(
            out,
            "No known cause found. {} (layer inferred):\n",
            super::text::suggests(d)
        );
    }
    for c in &d.causes {
        cause(&mut out, c);
    }
    if !d.noise.is_empty() {
        let _ = writeln!(out, "### Explained noise\n");
        for n in &d.noise {
            let _ = writeln!(
                out,
                "- ×{} {} — {}",
                n.count,
                code(&n.signature),
                escape_control(&n.title)
            );
        }
    }
    out
}

/// One cause: its heading, explanation, where, evidence, fix, consequences, the
/// signatures it also matches and its references.
fn cause(out: &mut String, c: &Cause) {
    let _ = writeln!(
        out,
        "### {}. {} — {} ({}, {} confidence, score {:.2}{})\n",
        c.rank,
        escape_control(&c.title),
        code(&c.signature),
        c.category,
        c.confidence.as_str(),
        c.score,
        c.probability
            .map(|p| format!(", likely {:.0} %", p * 100.0))
            .unwrap_or_default()
    );
    let _ = writeln!(out, "{}\n", escape_control(&c.explain));
    if let Some(s) = &c.crash_site {
        let _ = writeln!(
            out,
            "- Crash site: {} ({})",
            code(&format!("{}:{}", s.file, s.line)),
            code(&s.function)
        );
    }
    if let Some(m) = &c.importing {
        let _ = writeln!(out, "- While importing: {}", code(m));
    }
    if c.attempts > 1 {
        let _ = writeln!(out, "- Seen in {} crash attempts", c.attempts);
    }
    if c.streams.len() > 1 {
        let _ = writeln!(out, "- Seen in {} streams", c.streams.len());
    }
    let lines: Vec<String> = c.evidence.iter().map(|e| escape_control(&e.text)).collect();
    let f = fence(lines.iter().map(String::as_str));
    let _ = writeln!(out, "\n**Evidence**\n\n{f}text");
    for (e, l) in c.evidence.iter().zip(&lines) {
        let _ = writeln!(out, "{:>6} | {l}", e.line);
    }
    let _ = writeln!(out, "{f}\n");
    fix(out, c);
    if !c.consequences.is_empty() {
        let _ = writeln!(out, "**Consequences** (not separate causes)\n");
        for q in &c.consequences {
            let _ = writeln!(out, "- line {}: {}", q.line, code(&q.text));
        }
        out.push('\n');
    }
    if !c.also_matches.is_empty() {
        let _ = writeln!(out, "**Also matches** (same evidence, less specific)\n");
        for a in &c.also_matches {
            let _ = writeln!(
                out,
                "- {}: {}",
                code(&a.signature),
                escape_control(&a.title)
            );
        }
        out.push('\n');
    }
    if !c.references.is_empty() {
        let refs: Vec<String> = c.references.iter().map(|r| escape_control(r)).collect();
        let _ = writeln!(out, "References: {}\n", refs.join(", "));
    }
}

/// A cause's fix: its steps, each with its command in a fenced block (or why none).
fn fix(out: &mut String, c: &Cause) {
    if !c.remediation.is_empty() {
        let _ = writeln!(
            out,
            "**Fix** (commands are suggestions; review before running)\n"
        );
        for (i, s) in c.remediation.iter().enumerate() {
            let when = s
                .when
                .as_deref()
                .map(|w| format!(" _({})_", escape_control(&super::when_phrase(w))))
                .unwrap_or_default();
            let _ = writeln!(out, "{}. {}{when}", i + 1, escape_control(&s.description));
            if let Some(cmd) = &s.command {
                let cmd = escape_control(cmd);
                let f = fence(std::iter::once(cmd.as_str()));
                let _ = writeln!(out, "   {f}sh\n   {cmd}\n   {f}");
            } else if let Some(n) = &s.note {
                let _ = writeln!(out, "   (command not shown: {})", escape_control(n));
            }
        }
        out.push('\n');
    }
}
