//! A probable bug: structural evidence that the software itself failed, not its
//! environment.
//!
//! Some failures say, by their shape, that no setting of the machine is at fault: the
//! code took a path nobody wrote, a library's own invariant broke, a package's modules
//! disagree with each other. The category model reads words, and a bare
//! `NotImplementedError` has none: it guessed an environment class at random (a GPU
//! unavailable, a port in use) and the guess changed with how the log was captured. A
//! person reading the traceback knows better: it is a bug in the program or in a
//! library, or a use the library does not support, and the place to look is the
//! project's issue tracker.
//!
//! Read here ([`probable`]), from the final exception and its raise site (the innermost
//! frame):
//! - `NotImplementedError`, anywhere: an abstract method a subclass does not override
//!   (`torch.nn.Module.forward`), a path not written for this input, model or platform;
//! - a bare `AssertionError` (no message) raised inside an installed package (a
//!   `site-packages` or `dist-packages` frame): the library's own invariant failed — a
//!   bug in it, or a use it does not check for. An assertion *with* a message was written
//!   for its users, and libraries state environment facts that way (torch's
//!   `AssertionError: Torch not compiled with CUDA enabled`, older torch's `The NVIDIA
//!   driver on your system is too old`): the model reads those words;
//! - `ImportError: cannot import name 'X' from 'P.m'` raised inside package `P` itself:
//!   the installed package's modules disagree (a partial upgrade, a broken install or a
//!   bug).
//!
//! [`crate::engine::infer`] gives such a failure category `other` at `low` (never
//! more: a structure, not a message anyone wrote a signature for) when no signature
//! explains it and the model does not place it at `medium`; the cause names the package
//! and the function, prints the query for the package's issues (a URL, printed, never
//! opened; every value in it percent-encoded) and `pip show` for its version. A
//! package name enters a command only when it is a Python import name (letters, digits,
//! `_`), read from the frame's path under `site-packages/`.

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

use crate::engine::extract::{top_package, Failure};

/// Characters of a message kept in a title and a search query.
const MESSAGE_CHARS: usize = 120;
/// Characters of a function's name kept.
const FUNCTION_CHARS: usize = 80;

/// Which structure says the software failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `NotImplementedError`.
    Unimplemented,
    /// A bare `AssertionError` raised inside an installed package.
    Assertion,
    /// `ImportError` between two modules of the installed package that raised it.
    SelfImport,
}

/// A failure that is probably a bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bug {
    pub shape: Shape,
    /// The installed package whose code raised it (a Python import name); none: the
    /// program's own code (a frame outside `site-packages`).
    pub package: Option<String>,
    /// The exception's type, without its module (`NotImplementedError`).
    pub exception: String,
    /// The message's first non-blank line, cut at [`MESSAGE_CHARS`] (empty for a bare
    /// `raise`).
    pub message: String,
    /// The function that raised it (identifier characters only).
    pub function: String,
    /// Where: `base.py:459`.
    pub site: String,
}

/// The probable bug a failure's final exception and raise site show, if any.
pub fn probable(f: &Failure) -> Option<Bug> {
    let e = f.primary()?;
    let exception = e
        .exception_type
        .rsplit('.')
        .next()
        .unwrap_or(&e.exception_type);
    let raise = f.raise_site.as_ref();
    let package = raise
        .and_then(|s| top_package(&s.file))
        .filter(|p| import_name(p));
    let message: String = e
        .message
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .chars()
        .take(MESSAGE_CHARS)
        .collect();
    let shape = match exception {
        "NotImplementedError" => Shape::Unimplemented,
        "AssertionError" if package.is_some() && e.message.trim().is_empty() => Shape::Assertion,
        "ImportError"
            if package
                .as_deref()
                .is_some_and(|p| imports_from_itself(&message, p)) =>
        {
            Shape::SelfImport
        }
        _ => return None,
    };
    let function: String = raise
        .map(|s| s.function.as_str())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '<' | '>'))
        .take(FUNCTION_CHARS)
        .collect();
    Some(Bug {
        shape,
        package,
        exception: exception.to_string(),
        message,
        function,
        site: raise.map(|s| s.short()).unwrap_or_default(),
    })
}

/// A Python import name (what `site-packages/<name>/` holds): safe as one argument.
fn import_name(p: &str) -> bool {
    let mut chars = p.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `cannot import name 'X' from 'P.m'` names a module of package `p`.
fn imports_from_itself(message: &str, p: &str) -> bool {
    let Some(rest) = message.split_once(" from '").map(|(_, r)| r) else {
        return false;
    };
    message.starts_with("cannot import name ")
        && rest.split(['\'', '.']).next().is_some_and(|top| top == p)
}

impl Bug {
    /// `vllm`, in backquotes, or "the program's own code".
    fn whose(&self) -> String {
        self.package.as_ref().map_or_else(
            || "the program's own code".to_string(),
            |p| format!("`{p}`"),
        )
    }

    /// `compute_score (reward.py:37)`, or the site alone.
    fn place(&self) -> String {
        match (self.function.is_empty(), self.site.is_empty()) {
            (false, false) => format!("`{}` ({})", self.function, self.site),
            (false, true) => format!("`{}`", self.function),
            (true, false) => self.site.clone(),
            (true, true) => "its last frame".to_string(),
        }
    }

    /// The cause's title.
    pub fn title(&self) -> String {
        let whose = self.whose();
        let place = self.place();
        let what = match self.shape {
            Shape::Unimplemented if self.package.is_none() => format!(
                "probably a bug in the program: {place} raised NotImplementedError, a code path it does not implement"
            ),
            Shape::Unimplemented => format!(
                "probably a bug in {whose} or a use it does not support: {place} raised NotImplementedError"
            ),
            Shape::Assertion => format!(
                "probably a bug in {whose} or a use it does not check for: an assertion in {place} failed"
            ),
            Shape::SelfImport => format!(
                "probably a broken install of {whose} or a bug in it: one of its modules cannot import a name from another"
            ),
        };
        format!("{what} (read from the traceback's structure)")
    }

    /// What the structure says, before the category's guide.
    pub fn explain(&self) -> String {
        let whose = self.whose();
        let first = match self.shape {
            Shape::Unimplemented => format!(
                "NotImplementedError was raised in {whose}: the code took a path nobody wrote — an abstract method that the class in use does not override (a model or a store without `forward` or the method called), or a feature not implemented for this input, model or platform."
            ),
            Shape::Assertion => format!(
                "An `assert` inside {whose} failed: the library's own expectation about its state or its arguments does not hold. Either the library has a bug, or it is used in a way it does not check for with a readable message (a shape, a dtype, a size its caller chose)."
            ),
            Shape::SelfImport => format!(
                "A module of {whose} imports a name from another of its own modules and the name is not there: the installed files are from different releases (an interrupted or partial upgrade, a source tree on the path in front of the installed package) or the release itself is broken."
            ),
        };
        format!("{first} No setting of the machine explains this shape; the project's issue tracker, searched for the exception and the function, is where it is known.")
    }

    /// The query for the package's issues on GitHub (printed, never opened): the
    /// package, the exception and the function or the message, percent-encoded.
    pub fn search_url(&self) -> Option<String> {
        let package = self.package.as_ref()?;
        let what = if self.message.is_empty() {
            format!("{} {}", self.exception, self.function)
        } else {
            format!("\"{}: {}\"", self.exception, self.message)
        };
        let q = format!("{package} {}", what.trim());
        Some(format!(
            "https://github.com/search?type=issues&q={}",
            utf8_percent_encode(&q, NON_ALPHANUMERIC)
        ))
    }

    /// The steps: (description, command).
    pub fn steps(&self) -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        match &self.package {
            Some(p) => {
                out.push((
                    format!("Show the installed version of `{p}` (to quote in an issue, and to try the release before or after it)"),
                    Some(format!("pip show {p}")),
                ));
                out.push((
                    format!("Search the issues of `{p}` for the exception and the function (the query is under References); a fix may be in a newer release"),
                    None,
                ));
            }
            None => out.push((
                format!("Read the code that raised it: {}", self.place()),
                None,
            )),
        }
        out
    }
}

#[cfg(test)]
mod tests;
