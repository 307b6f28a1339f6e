//! Lead-in: the lines just above a failing block's headline that belong to its record.
//!
//! A tool often prints a failure's record as a header, then the error: a test runner
//! numbers its failures (`  1) test name (Module)` with the test's file under it, then
//! `** (MatchError) …` in ExUnit; `1) Foo does bar` then `Failure/Error:` in RSpec; JUnit's
//! `1) testName(Class)` then the exception), a JavaScript or Python runtime shows the
//! source it could not run (`/path/file.js:31`, the source line, a caret `^` under the
//! token, then `SyntaxError: …`), a linter lists a file's problems under its path (ESLint's
//! stylish report). The headline the tracker finds is the error line; a person reading the
//! record starts at its header, so the block does.
//!
//! Not a lead-in: GCC's and the linker's context lines (`file.c: In function 'main':`,
//! `In file included from …`). They say where, not what, and a person points at the
//! `error:` line under them (PyTorch's CI log classifier lands there too).
//!
//! Each rule names a format as its tool prints it. A rule looks only at the paragraph
//! just above the headline (the lines since the last blank, or the paragraph before the
//! blank lines that separate it from the headline) and at most [`REACH`] lines up.

use crate::engine::normalize::Prebuilt;

use regex::Regex;

/// Lines above the headline a header may be, at most.
const REACH: usize = 3;
/// Lines of the paragraph above a headline the rules can look at (one more than
/// [`REACH`] when blank lines separate it from the headline): what a track keeps.
pub const LINES: usize = REACH + 1;

// `re!` is the parent module's (steps.rs defines it before declaring this module)
// a test runner's numbered failure record: ExUnit, RSpec, Mocha, Jasmine, JUnit 3/4 text
re!(NUMBERED, r"^\s*[0-9]{1,5}\)\s+\S");
// a caret under the token a parser stopped at (Node, Python, Ruby, javac)
re!(CARET, r"^\s*[\^~]*\^[\^~]*\s*$");
// where that source comes from: `path:line` (Node), `File "path", line N` (Python)
re!(
    LOCATION,
    r#"^\s*(?:\S+:[0-9]+(?::[0-9]+)?\s*$|File ".+", line [0-9]+)"#
);

// ESLint's stylish report: a file's problems under its path, each row `line:column`,
// the severity and the message in aligned columns (`  35:18  error  Empty block statement`)
// (one pattern: the parent's SPECIFIC table reads the same row as a tool's shape)
pub const STYLISH_ROW_PATTERN: &str = r"^\s+[0-9]+:[0-9]+\s+error\s{2,}\S";
re!(STYLISH_ROW, STYLISH_ROW_PATTERN);
// the file a stylish report lists the problems of: a path alone on its line
re!(FILE_ALONE, r"^\S+\.[A-Za-z0-9]{1,8}$");

// pytest's banner over one test's record (`____ test_x ____`, `__ ERROR at setup of x __`)
re!(BANNER, r"^_{3,}\s.*\S\s_{3,}$");
// a session's summary after the records (`==== short test summary info ====`, `=== 2 failed`)
re!(SUMMARY, r"^={3,}");
// a location alone on its line: `path:line` (PHPUnit's list under a failed test)
re!(LOCATION_ALONE, r"^\S+\.\w+:[0-9]+$");

/// The line opens a test's record that runs until the next one.
pub fn record_banner(line: &str) -> bool {
    BANNER.is_match(line.trim_end())
}

/// The line starts another record or the session's summary.
pub fn record_end(line: &str) -> bool {
    record_banner(line) || SUMMARY.is_match(line)
}

/// The line is a source location alone (`/path/to/FooTest.php:37`).
pub fn location(line: &str) -> bool {
    LOCATION_ALONE.is_match(line.trim_end())
}

/// The line the block should start at instead of `head` (its text `head_text`), given the
/// paragraph just above it (`above`: consecutive non-blank lines, the last of which may be
/// separated from the headline by blank lines), or `None` when nothing above belongs to
/// its record.
pub fn lead_in(head: usize, head_text: &str, above: &[(usize, String)]) -> Option<usize> {
    let last = above.last()?.0;
    if last >= head {
        return None;
    }
    let touching = last + 1 == head;
    if touching && STYLISH_ROW.is_match(head_text) {
        return above
            .last()
            .filter(|(_, t)| FILE_ALONE.is_match(t.trim()))
            .map(|(l, _)| *l);
    }
    let near: Vec<&(usize, String)> = above
        .iter()
        .rev()
        .take_while(|(l, _)| head - l <= REACH + usize::from(!touching))
        .collect();
    if touching {
        if let Some(start) = numbered(&near) {
            return Some(start);
        }
    }
    // one blank line may separate a source excerpt from its error (Node prints one)
    (head - last <= 2).then(|| excerpt(&near)).flatten()
}

/// A numbered failure record's header within reach (closest first).
fn numbered(near: &[&(usize, String)]) -> Option<usize> {
    near.iter()
        .find(|(_, t)| NUMBERED.is_match(t))
        .map(|(l, _)| *l)
}

/// A source excerpt ending with a caret, from its location line.
fn excerpt(near: &[&(usize, String)]) -> Option<usize> {
    let (_, caret) = near.first()?;
    if !CARET.is_match(caret) {
        return None;
    }
    near.iter()
        .skip(1)
        .find(|(_, t)| LOCATION.is_match(t))
        .map(|(l, _)| *l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn para(first: usize, lines: &[&str]) -> Vec<(usize, String)> {
        lines
            .iter()
            .enumerate()
            .map(|(i, t)| (first + i, (*t).to_string()))
            .collect()
    }

    // each line below is constructed for the test, in the format the named tool prints

    #[test]
    fn a_numbered_test_record_starts_at_its_number() {
        // ExUnit
        let above = para(
            10,
            &[
                "  1) test greets (GreeterTest)",
                "     test/greeter_test.exs:5",
            ],
        );
        assert_eq!(lead_in(12, "", &above), Some(10));
        // not when a blank line separates them
        assert_eq!(lead_in(13, "", &above), None);
    }

    #[test]
    fn a_source_excerpt_starts_at_its_location() {
        // Node's uncaught exception, one blank line before the error
        let above = para(20, &["/app/src/serve.js:31", "  foo(a, );", "          ^"]);
        assert_eq!(lead_in(24, "", &above), Some(20));
        // Python
        let above = para(
            5,
            &["  File \"setup.py\", line 3", "    x = (", "        ^"],
        );
        assert_eq!(lead_in(8, "", &above), Some(5));
        // a caret with no location above it is no excerpt
        assert_eq!(lead_in(8, "", &para(6, &["    x = (", "        ^"])), None);
    }

    #[test]
    fn a_linters_row_starts_at_the_file_it_lists() {
        // ESLint's stylish report (real: https://github.com/kriasoft/babel-starter-kit/issues/2)
        let above = para(7, &["tools\\utils\\compile.js"]);
        let row = "  35:18  error  Empty block statement  no-empty";
        assert_eq!(lead_in(8, row, &above), Some(7));
        // a row with no file above it, or a file line above another kind of headline
        assert_eq!(
            lead_in(8, row, &para(7, &["> eslint src docs/js tools"])),
            None
        );
        assert_eq!(lead_in(8, "error: oops", &above), None);
    }

    #[test]
    fn compiler_context_lines_are_no_lead_in() {
        let above = para(
            1,
            &[
                "In file included from src/a.c:2:",
                "src/a.h: In function 'f':",
            ],
        );
        assert_eq!(lead_in(3, "", &above), None);
    }

    #[test]
    fn an_unrelated_paragraph_is_not_lead_in() {
        let above = para(1, &["Compiling foo v0.1.0", "Running tests"]);
        assert_eq!(lead_in(3, "", &above), None);
        assert_eq!(lead_in(3, "", &[]), None);
    }
}
