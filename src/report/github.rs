//! GitHub Actions workflow commands (`crashdoc diagnose --format github`): each cause
//! becomes an annotation on the job's summary page.
//!
//! `::error file=F,line=N,title=T::MESSAGE` (`::warning` for a warning-severity cause,
//! `::notice` when an input has no known cause). GitHub shows at most 10 annotations of
//! each kind per step, so at most [`MAX_ANNOTATIONS`] are written in all, in input and
//! rank order; a plain log line says how many were left out. Values are escaped per the
//! workflow-command rules (as in `@actions/core`'s `command.ts`): in the message `%`,
//! CR and LF become `%25`, `%0D`, `%0A`; in property values also `:` and `,` become
//! `%3A`, `%2C`. Other control characters are escaped first, so text from a log can
//! never form a second command.

use std::fmt::Write as _;

use crate::engine::diagnosis::Diagnosis;
use crate::knowledge::signature::Severity;
use crate::knowledge::text::escape_control;

/// GitHub's per-step limit.
pub const MAX_ANNOTATIONS: usize = 10;

/// Escapes a command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property's value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(kind: &str, props: &[(&str, String)], message: &str) -> String {
    let props: Vec<String> = props
        .iter()
        .map(|(k, v)| format!("{k}={}", escape_property(v)))
        .collect();
    let sep = if props.is_empty() { "" } else { " " };
    format!(
        "::{kind}{sep}{}::{}\n",
        props.join(","),
        escape_data(message)
    )
}

/// GitHub Actions workflow commands (annotations), for every input at once, written
/// at the end ([`render`]: the cap on annotations counts every input).
#[derive(Debug, Default)]
pub struct Github(Vec<Diagnosis>);

impl super::Render for Github {
    fn collects(&self) -> bool {
        true
    }
    fn diagnosis(
        &mut self,
        _out: &mut dyn std::io::Write,
        d: Diagnosis,
    ) -> Result<(), super::RenderError> {
        self.0.push(d);
        Ok(())
    }
    fn finish(&mut self, out: &mut dyn std::io::Write) -> Result<(), super::RenderError> {
        out.write_all(render(&self.0).as_bytes())?;
        Ok(())
    }
}

/// The annotations of some diagnoses.
pub fn render(ds: &[Diagnosis]) -> String {
    let mut out = String::new();
    let mut written = 0usize;
    let mut left = 0usize;
    for d in ds {
        let file = if d.input == "<stdin>" {
            None
        } else {
            Some(d.input.clone())
        };
        if d.causes.is_empty() {
            if written >= MAX_ANNOTATIONS {
                left += 1;
                continue;
            }
            let mut msg = format!("crashdoc found no known cause in {}", d.input);
            if let Some(u) = &d.unexplained {
                msg.push_str(&format!("; first failure: {u}"));
            }
            let props: Vec<(&str, String)> = file
                .iter()
                .map(|f| ("file", f.clone()))
                .chain(std::iter::once((
                    "title",
                    "crashdoc: no known cause".to_string(),
                )))
                .collect();
            out.push_str(&command("notice", &props, &escape_control(&msg)));
            written += 1;
            continue;
        }
        for c in &d.causes {
            if written >= MAX_ANNOTATIONS {
                left += 1;
                continue;
            }
            let kind = match c.severity {
                Severity::Fatal | Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Benign => "notice",
            };
            let mut props: Vec<(&str, String)> = Vec::new();
            if let Some(f) = &file {
                props.push(("file", f.clone()));
                if let Some(e) = c.evidence.first() {
                    props.push(("line", e.line.to_string()));
                }
            }
            props.push((
                "title",
                escape_control(&format!("crashdoc #{}: {}", c.rank, c.title)),
            ));
            let mut msg = format!(
                "{} [{} · {} confidence]",
                c.signature,
                c.category.as_str(),
                c.confidence.as_str()
            );
            for e in c.evidence.iter().take(3) {
                let _ = write!(
                    msg,
                    "\nline {}: {}",
                    e.line,
                    crate::knowledge::text::clip(&e.text, 300)
                );
            }
            if let Some(step) = c.remediation.first() {
                let _ = write!(msg, "\nFix: {}", step.description);
                if let Some(cmd) = &step.command {
                    let _ = write!(msg, "\n  $ {cmd}");
                }
            }
            // escape controls line by line, keeping the line breaks we put in
            let msg: Vec<String> = msg.split('\n').map(escape_control).collect();
            out.push_str(&command(kind, &props, &msg.join("\n")));
            written += 1;
        }
    }
    if left > 0 {
        let _ = writeln!(
            out,
            "crashdoc: {left} more cause(s) not annotated (GitHub shows at most {MAX_ANNOTATIONS} per step); run with --format text for all"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_workflow_command_rules() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%\nd"), "a%3Ab%2Cc%25%0Ad");
        assert_eq!(
            command(
                "error",
                &[("file", "x,y.log".into()), ("line", "3".into())],
                "m::n"
            ),
            "::error file=x%2Cy.log,line=3::m::n\n"
        );
        assert_eq!(command("notice", &[], "hi"), "::notice::hi\n");
    }
}
