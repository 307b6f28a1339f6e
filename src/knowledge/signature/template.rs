//! Remediation command templates: parsed once, filled safely.
//!
//! A template is shell text with `{{name}}` placeholders. At compile time each
//! placeholder's *quoting context* is recorded (bare, inside `'…'`, inside `"…"`), so
//! that a value is quoted for the place it lands in:
//!
//! - bare: the value is wrapped in single quotes unless it is made only of characters
//!   that the shell never interprets (`[A-Za-z0-9._+:/=@%,^-]`);
//! - in double quotes: `\`, `$` and `"` are backslash-escaped; `!` and `` ` `` are put
//!   in single quotes of their own (`"'!'"`): `!` against history expansion (and `\!`
//!   keeps its backslash), `` ` `` because fish keeps the backslash of `` \` `` inside
//!   double quotes (found by executing every library command under fish,
//!   `tests/integration/shell_exec.rs`);
//! - in single quotes: `'` becomes `'\''`.
//!
//! A value is refused (the command is not printed, the step says why) when it holds a
//! control character or a newline, when it starts with `-` (it could turn into an
//! option), or when it does not match the pattern of the capture group that produced it.
//! So a crafted log can never make a command do more than its template says. Commands
//! are printed, never run.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Where a placeholder sits in the shell text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Quoting {
    Bare,
    Single,
    Double,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    Text(String),
    Var { name: String, quoting: Quoting },
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Template {
    pub source: String,
    pub pieces: Vec<Piece>,
}

/// A template that could not be parsed; `offset` is a byte offset into the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub offset: usize,
    pub message: String,
}

static NAME: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_][A-Za-z0-9_.-]*)*$").expect("name regex")
});

impl Template {
    pub fn parse(src: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut quoting = Quoting::Bare;
        if let Some((offset, c)) = src.char_indices().find(|&(_, c)| {
            (c.is_control() && c != '\n' && c != '\t') || crate::knowledge::text::is_invisible(c)
        }) {
            return Err(TemplateError {
                offset,
                message: format!(
                    "the template holds {} (a control, bidi or zero-width character: the command would read differently from what runs)",
                    c.escape_unicode()
                ),
            });
        }
        let bytes = src.as_bytes();
        let mut i = 0;
        while i < src.len() {
            if src[i..].starts_with("{{") {
                let Some(end) = src[i + 2..].find("}}") else {
                    return Err(TemplateError {
                        offset: i,
                        message: "`{{` without a closing `}}`".into(),
                    });
                };
                let name = src[i + 2..i + 2 + end].trim();
                if !NAME.is_match(name) {
                    return Err(TemplateError {
                        offset: i,
                        message: format!("`{name}` is not a variable name"),
                    });
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Var {
                    name: name.to_string(),
                    quoting,
                });
                i += 2 + end + 2;
                continue;
            }
            let c = src[i..].chars().next().unwrap_or(' ');
            match (quoting, c) {
                (Quoting::Bare, '\'') => quoting = Quoting::Single,
                (Quoting::Single, '\'') => quoting = Quoting::Bare,
                (Quoting::Bare, '"') => quoting = Quoting::Double,
                (Quoting::Double, '"') => quoting = Quoting::Bare,
                (Quoting::Bare | Quoting::Double, '\\') => {
                    // an escaped character keeps the context
                    text.push(c);
                    i += 1;
                    if let Some(n) = src[i..].chars().next() {
                        text.push(n);
                        i += n.len_utf8();
                    }
                    continue;
                }
                _ => {}
            }
            let _ = bytes;
            text.push(c);
            i += c.len_utf8();
        }
        if quoting != Quoting::Bare {
            return Err(TemplateError {
                offset: src.len(),
                message: "unterminated quote".into(),
            });
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template {
            source: src.to_string(),
            pieces,
        })
    }

    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Var { name, .. } => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// Fills the template. `lookup` gives a value and the pattern it must match fully.
    pub fn render<'a>(
        &self,
        lookup: impl Fn(&str) -> Option<(&'a str, Option<&'a Regex>)>,
    ) -> Result<String, RenderError> {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Var { name, quoting } => {
                    let Some((value, pattern)) = lookup(name) else {
                        return Err(RenderError::Missing(name.clone()));
                    };
                    check_value(name, value, pattern)?;
                    out.push_str(&quote(value, *quoting));
                }
            }
        }
        Ok(out)
    }
}

/// Why a command was not printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// The log did not tell this value.
    Missing(String),
    /// The value was refused for safety.
    Refused { name: String, reason: String },
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::Missing(n) => write!(f, "needs `{n}`, which the log does not show"),
            RenderError::Refused { name, reason } => {
                write!(
                    f,
                    "the value of `{name}` read from the log was refused: {reason}"
                )
            }
        }
    }
}

fn check_value(name: &str, value: &str, pattern: Option<&Regex>) -> Result<(), RenderError> {
    let refuse = |reason: &str| RenderError::Refused {
        name: name.to_string(),
        reason: reason.to_string(),
    };
    if value.is_empty() {
        return Err(refuse("it is empty"));
    }
    if value.chars().any(|c| c.is_control()) {
        return Err(refuse("it holds a control character or a line break"));
    }
    if value.chars().any(crate::knowledge::text::is_invisible) {
        return Err(refuse(
            "it holds an invisible or format character (Unicode Default_Ignorable_Code_Point or Cf: it would read differently from what runs)",
        ));
    }
    if value.starts_with('-') {
        return Err(refuse("it starts with `-` and could be taken as an option"));
    }
    if let Some(p) = pattern {
        if !p.is_match(value) {
            return Err(refuse("it does not match its capture pattern"));
        }
    }
    if let Some(reason) = dangerous_backslash(value).or_else(|| dangerous_path(value)) {
        return Err(refuse(reason));
    }
    Ok(())
}

/// fish reads `\\` and `\'` inside single quotes (and a value ending in `\` escapes
/// the closing quote): such a value cannot be quoted for every shell.
fn dangerous_backslash(value: &str) -> Option<&'static str> {
    let b = value.as_bytes();
    let bad = b.last() == Some(&b'\\')
        || b.windows(2)
            .any(|w| w[0] == b'\\' && matches!(w[1], b'\\' | b'\''));
    bad.then_some(
        "a backslash before a quote or a backslash (or at its end) is read differently by fish",
    )
}

/// System locations a printed command must never change or expose: the root alone,
/// the top-level folders alone, and everything under the folders of the system itself.
const SYSTEM_ROOTS: &[&str] = &[
    "/etc",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/var/lib/dpkg",
    "/var/lib/rpm",
];
const SYSTEM_ALONE: &[&str] = &[
    "/",
    "/root",
    "/home",
    "/usr",
    "/var",
    "/opt",
    "/tmp",
    "/srv",
    "/mnt",
    "/media",
    "/run",
    "/usr/local",
    "/var/log",
    "/var/lib",
];

/// A path value (or one holding a `/`-separated `..`) that leaves where it was read
/// from or names a system location; `None` for a harmless value.
fn dangerous_path(value: &str) -> Option<&'static str> {
    if value.contains('/') && value.split('/').any(|c| c == "..") {
        return Some("it climbs out of its folder with `..`");
    }
    if !value.starts_with('/') {
        return None;
    }
    // normalised: `//`, `/./` and a trailing `/` removed
    let parts: Vec<&str> = value
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let norm = format!("/{}", parts.join("/"));
    let under = |root: &str| norm == root || norm.starts_with(&format!("{root}/"));
    if SYSTEM_ALONE.contains(&norm.as_str()) || SYSTEM_ROOTS.iter().any(|r| under(r)) {
        return Some("it names a system location");
    }
    None
}

fn is_plain(value: &str) -> bool {
    // a leading `=` is expanded by zsh (`=ls` → /bin/ls), a leading `~` by every shell,
    // a leading `%` by fish 2 (process expansion); `^`, `[`, `{` are globs or braces in
    // zsh (EXTENDED_GLOB), bash, fish: none of them is plain
    !value.starts_with(['=', '~', '%'])
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+:/=@%,-".contains(c))
}

/// Quotes a value for the shell context it lands in.
pub fn quote(value: &str, quoting: Quoting) -> String {
    match quoting {
        Quoting::Bare if is_plain(value) => value.to_string(),
        Quoting::Bare => format!("'{}'", value.replace('\'', r"'\''")),
        Quoting::Single => value.replace('\'', r"'\''"),
        Quoting::Double => {
            let mut s = String::with_capacity(value.len());
            for c in value.chars() {
                if c == '!' || c == '`' {
                    // history expansion acts inside double quotes in interactive shells
                    // and `\!` keeps its backslash; fish reads `\`` inside double quotes
                    // as a backslash and a backquote: close the quotes around a
                    // single-quoted `!` or `` ` ``
                    s.push('"');
                    s.push('\'');
                    s.push(c);
                    s.push('\'');
                    s.push('"');
                    continue;
                }
                if matches!(c, '\\' | '$' | '"') {
                    s.push('\\');
                }
                s.push(c);
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(t: &str, v: &str) -> Result<String, RenderError> {
        let t = Template::parse(t).expect("template");
        let any = Regex::new(r"^(?:.+)$").expect("re");
        let leaked: &'static str = Box::leak(v.to_string().into_boxed_str());
        let re: &'static Regex = Box::leak(Box::new(any));
        t.render(|_| Some((leaked, Some(re))))
    }

    #[test]
    fn contexts() {
        assert_eq!(
            fill(r#"pip install "flashinfer-cubin=={{v}}""#, "0.6.4").as_deref(),
            Ok(r#"pip install "flashinfer-cubin==0.6.4""#)
        );
        assert_eq!(
            fill("systemctl restart {{v}}", "vllm.service").as_deref(),
            Ok("systemctl restart vllm.service")
        );
        assert_eq!(
            fill("systemctl restart {{v}}", "a b").as_deref(),
            Ok("systemctl restart 'a b'")
        );
        assert_eq!(
            fill("echo '{{v}}'", "it's").as_deref(),
            Ok(r"echo 'it'\''s'")
        );
    }

    #[test]
    fn hostile_values_are_quoted_or_refused() {
        assert_eq!(
            fill(
                r#"pip install "flashinfer-cubin=={{v}}""#,
                "0.6.4; rm -rf ~"
            )
            .as_deref(),
            Ok(r#"pip install "flashinfer-cubin==0.6.4; rm -rf ~""#)
        );
        assert_eq!(
            fill(r#"pip install "x=={{v}}""#, "$(curl x)").as_deref(),
            Ok(r#"pip install "x==\$(curl x)""#)
        );
        assert_eq!(
            fill("pip install {{v}}", "$(curl x)").as_deref(),
            Ok("pip install '$(curl x)'")
        );
        assert_eq!(
            fill("pip install {{v}}", "`id`;x").as_deref(),
            Ok("pip install '`id`;x'")
        );
        assert!(matches!(
            fill("pip install {{v}}", "--index-url=http://evil"),
            Err(RenderError::Refused { .. })
        ));
        assert!(matches!(
            fill("pip install {{v}}", "a\nrm -rf /"),
            Err(RenderError::Refused { .. })
        ));
        assert!(matches!(
            fill("pip install {{v}}", "a\u{1b}[2J"),
            Err(RenderError::Refused { .. })
        ));
    }

    #[test]
    fn backquote_in_double_quotes_is_single_quoted_for_fish() {
        // fish keeps the backslash of `\`` inside double quotes: the value would change
        assert_eq!(
            fill(r#"grep -Fx "{{v}}""#, "a`id`b").as_deref(),
            Ok(r#"grep -Fx "a"'`'"id"'`'"b""#)
        );
    }

    #[test]
    fn pattern_is_enforced() {
        let t = Template::parse("pip install x=={{v}}").expect("t");
        let re = Regex::new(r"^(?:[0-9][0-9A-Za-z.+-]*)$").expect("re");
        assert!(matches!(
            t.render(|_| Some(("0.6.4;id", Some(&re)))),
            Err(RenderError::Refused { .. })
        ));
        assert_eq!(
            t.render(|_| Some(("0.6.4", Some(&re)))).as_deref(),
            Ok("pip install x==0.6.4")
        );
    }

    #[test]
    fn parse_errors() {
        assert!(Template::parse("echo {{v").is_err());
        assert!(Template::parse("echo {{ v w }}").is_err());
        assert!(Template::parse("echo \"{{v}}").is_err());
        assert_eq!(
            Template::parse("a {{ x }} b")
                .map(|t| t.variables().map(String::from).collect::<Vec<_>>()),
            Ok(vec!["x".to_string()])
        );
    }
}
