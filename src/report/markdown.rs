//! Markdown, for pasting into an issue.

use std::fmt::Write as _;

use crate::engine::diagnosis::Diagnosis;
use crate::knowledge::text::escape_control;

fn code(s: &str) -> String {
    let s = escape_control(s);
    let ticks = if s.contains('`') { "``" } else { "`" };
    format!("{ticks}{}{ticks}", s.replace('\n', " "))
}

/// The Markdown format, for pasting into an issue.
pub struct Markdown;

impl super::Render for Markdown {
    fn one(&self, d: &Diagnosis) -> Result<String, super::RenderError> {
        Ok(render(d))
    }
}

pub fn render(d: &Diagnosis) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## crashdoc diagnosis of `{}`\n",
        escape_control(&d.input)
    );
    if d.causes.is_empty() {
        let _ = writeln!(out, "No known cause found.");
        if let Some(u) = &d.unexplained {
            let _ = writeln!(out, "\nFirst failure: {}", code(u));
        }
    }
    for c in &d.causes {
        let _ = writeln!(
            out,
            "### {}. {} — `{}` ({}, {} confidence, score {:.2})\n",
            c.rank,
            escape_control(&c.title),
            c.signature,
            c.category,
            c.confidence.as_str(),
            c.score
        );
        let _ = writeln!(out, "{}\n", escape_control(&c.explain));
        if let Some(s) = &c.crash_site {
            let _ = writeln!(
                out,
                "- Crash site: `{}:{}` ({})",
                escape_control(&s.file),
                s.line,
                escape_control(&s.function)
            );
        }
        if let Some(m) = &c.importing {
            let _ = writeln!(out, "- While importing: `{}`", escape_control(m));
        }
        if c.attempts > 1 {
            let _ = writeln!(out, "- Seen in {} crash attempts", c.attempts);
        }
        if c.streams.len() > 1 {
            let _ = writeln!(out, "- Seen in {} streams", c.streams.len());
        }
        let _ = writeln!(out, "\n**Evidence**\n\n```text");
        for e in &c.evidence {
            let _ = writeln!(
                out,
                "{:>6} | {}",
                e.line,
                escape_control(&e.text).replace("```", "`\u{200b}``")
            );
        }
        let _ = writeln!(out, "```\n");
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
                    let _ = writeln!(out, "   ```sh\n   {}\n   ```", escape_control(cmd));
                }
            }
            out.push('\n');
        }
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
    if !d.noise.is_empty() {
        let _ = writeln!(out, "### Explained noise\n");
        for n in &d.noise {
            let _ = writeln!(
                out,
                "- ×{} `{}` — {}",
                n.count,
                n.signature,
                escape_control(&n.title)
            );
        }
    }
    out
}
