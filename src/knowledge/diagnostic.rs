//! Located, coded diagnostics for knowledge files (in the manner of yara-x), and the
//! located string they point at: signatures, code tables, guides and rules share them.
//!
//! Every problem the loader, the compiler or the linter finds is a [`Diagnostic`]: a
//! code, the file, the line and column of the offending text, a message and the source
//! line with a caret. Codes are stable and documented in CONTRIBUTING.md.
//!
//! Signatures, rules, conditions and the file sources all report through these types,
//! so they live here, below all of them (they once lived under `signature/`, which made
//! `cond`, `rules` and `reading` import the module that imports them). The signature
//! layer re-exports this module as `signature::error`.

use std::fmt;

use serde::Serialize;

/// A located string: a value of a knowledge file with the line and column it was read
/// at, for an error that names them.
pub type Text = serde_saphyr::Spanned<String>;

/// A problem's severity: errors stop the library from loading, warnings are lint advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Warning,
    Error,
}

/// Every diagnostic code: stable, documented in CONTRIBUTING.md (a test compares the
/// table there with [`Code::ALL`]).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
pub enum Code {
    E001,
    E002,
    E003,
    E004,
    E005,
    E006,
    E007,
    E008,
    E009,
    E010,
    E011,
    E013,
    E014,
    E015,
    E016,
    E017,
    E018,
    E019,
    E020,
    E021,
    E022,
    E023,
    E024,
    W001,
    W002,
    W005,
}

impl Code {
    /// Every code, in declaration order.
    pub const ALL: &'static [Code] = <Code as strum::VariantArray>::VARIANTS;

    /// `E001`… (the variant's name).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Errors stop a library from loading (E019–E024, CI's rules on a signature file,
    /// are reported by `sig lint` only and fail it, as CI would); warnings are lint advice.
    pub fn level(self) -> Level {
        if self.as_str().starts_with('E') {
            Level::Error
        } else {
            Level::Warning
        }
    }

    /// What the code means (the documentation table's text).
    pub fn title(self) -> &'static str {
        match self {
            Code::E001 => "YAML syntax, an unknown or missing field, a wrong type, the YAML budget exceeded, not UTF-8",
            Code::E002 => "the id is not kebab-case",
            Code::E003 => "the id does not equal the file name",
            Code::E004 => "duplicate id (another file, or the embedded library, defines it)",
            Code::E005 => "invalid regex, or a regex too big once compiled",
            Code::E006 => "no usable atom (no literal of 3+ characters every match must contain), or a given atom shorter than 3",
            Code::E007 => "bad command template, or a `{{variable}}` that is neither a capture nor a context value (`unit`); in prose (title, explain, a step's description or `when`, filled from the captures), one that is not a capture",
            Code::E008 => "`consequence_of` names a signature no loaded library defines",
            Code::E009 => "an `exception:` that is not a type name, or an unknown `kind:`",
            Code::E010 => "a file that is not a signature in a library folder",
            Code::E011 => "a file larger than 1 MiB",
            Code::E013 => "a folder or file that cannot be read",
            Code::E014 => "a fact condition that does not compile (a bad version specifier, package name or table row)",
            Code::E015 => "a rule without `references:`, or without examples it must `fail` and `pass`",
            Code::E016 => "a code-table entry that no rendering of its table applies to (its keys name no rendering's placeholders)",
            Code::E017 => "`wraps:` names no capture of the signature's match",
            Code::E018 => "`completes: true` on a signature that is not `severity: benign`",
            Code::E019 => "no `references:` (lint only: CI's rule for every signature)",
            Code::E020 => "fewer than 2 positive examples (1 with `rare: true`), or no near-miss (`examples.no_match`) (lint only: CI's rule)",
            Code::E021 => "a `command:` holds an unfilled `<placeholder>` (it would be printed as a runnable command): put such guidance in `description:`, or fill the value from a capture (`{{name}}`) (lint only: CI's rule)",
            Code::E022 => "a `command:` that changes the environment (pip/uv/conda/apt install or uninstall, `--force-reinstall`, `--index-url`, `rm -`, `chown`, `chmod`, `usermod`, `modprobe`/`rmmod`, `dkms`, `reboot`, `apt-mark`, `add-apt-repository`, `nvidia-ctk runtime configure`) with neither an `if:` fact condition nor a read-only check before it (an earlier step's command such as `pip show X`, `nvidia-smi`, `python -c \"import torch; …\"`, `docker info`, `ls -ld`, or a check earlier in the same command) (lint only: CI's rule)",
            Code::E023 => "the file does not start with the `yaml-language-server` modeline (lint only: CI's rule)",
            Code::E024 => "an example does not behave as its list says: a `match` log that does not produce the signature (as the top cause with `top: true`), a near-miss that does (`sig test` through the real pipeline; lint only: CI's rule)",
            Code::W001 => "weak atom: shorter than 5 characters, or one of the common tokens below",
            Code::W002 => "capture never used: inside `not:` (never yields a value), or a name an earlier regex of an `all:` already captures (the first value wins)",
            Code::W005 => "a Unicode class (`\\d`, `\\w`, `\\b`…) where ASCII (`[0-9]`, `[A-Za-z0-9_]`, `(?-u:\\b)`) would do",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One located problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub level: Level,
    /// `E001`… for errors, `W001`… for lint warnings.
    pub code: Code,
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
    /// A problem of `code` (its level is the code's).
    pub fn new(code: Code, file: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            level: code.level(),
            code,
            file: file.to_string(),
            line: 0,
            column: 0,
            message: message.into(),
            snippet: None,
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
        // a file name can hold anything a folder can (a newline, a bidi override)
        let file = crate::knowledge::text::escape_control(&self.file);
        if self.line > 0 {
            write!(f, "{file}:{}:{}: ", self.line, self.column)?;
        } else {
            write!(f, "{file}: ")?;
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
