//! Located, coded diagnostics for signature files (in the manner of yara-x).
//!
//! Every problem the loader, the compiler or the linter finds is a [`Diagnostic`]: a
//! code, the file, the line and column of the offending text, a message and the source
//! line with a caret. Codes are stable and documented in CONTRIBUTING.md.

use std::fmt;

use serde::Serialize;

/// A problem's severity: errors stop the library from loading, warnings are lint advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Warning,
    Error,
}

/// One located problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub level: Level,
    /// `E001`… for errors, `W001`… for lint warnings.
    pub code: &'static str,
    pub file: String,
    /// 1-based; 0 when unknown.
    pub line: usize,
    /// 1-based; 0 when unknown.
    pub column: usize,
    pub message: String,
    /// The source line the position is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, file: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            level: Level::Error,
            code,
            file: file.to_string(),
            line: 0,
            column: 0,
            message: message.into(),
            snippet: None,
        }
    }

    pub fn warning(code: &'static str, file: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            level: Level::Warning,
            ..Diagnostic::error(code, file, message)
        }
    }

    /// Sets the position and takes the snippet from the file's text.
    pub fn at(mut self, source: &str, line: usize, column: usize) -> Self {
        self.line = line;
        self.column = column;
        if line > 0 {
            self.snippet = source.lines().nth(line - 1).map(|s| s.to_string());
        }
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        write!(f, "{level}[{}]: {}", self.code, self.message)?;
        if let Some(s) = &self.snippet {
            let s = crate::knowledge::text::escape_control(s);
            write!(f, "\n  | {s}")?;
            if self.column > 0 {
                let pad: String = s
                    .chars()
                    .take(self.column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                write!(f, "\n  | {pad}^")?;
            }
        }
        Ok(())
    }
}

/// All errors found while loading libraries (loading goes on after the first, so that an
/// author sees every problem at once).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LoadErrors(pub Vec<Diagnostic>);

impl fmt::Display for LoadErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}
