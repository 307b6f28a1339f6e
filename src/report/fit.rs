//! Fitting a rendered text report into `--width N` columns (or the terminal's).
//!
//! The text renderer wraps the prose it knows is long (explanations, steps, "Seen:")
//! and clips evidence lines; everything else it writes — a cause's heading with its
//! badge, a noise line, the header, a layer's note — may be longer than the width.
//! [`fit`] is a last pass over the whole report, so that no renderer change can let a
//! long line through: each line over the width is wrapped at spaces by `textwrap`
//! (display width, ANSI styles ignored), its continuation lines indented under the
//! line's text (after a list marker such as `1. `, `- `, `×16 `).
//!
//! A bracketed badge (`[gpu-oom · fatal · high 0.95 · likely 96 %]`) moves to the next line whole.
//! Two things are never broken: a word longer than the line (a path, a URL — a
//! broken one could not be opened or pasted: it gets a line of its own) and a printed
//! command (`$ …`, pasted whole into a shell; a line break would run half of it).

use std::sync::LazyLock;

use regex::Regex;
use textwrap::{Options, WordSplitter};

#[allow(clippy::expect_used)]
static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\s*)((?:[0-9]+\.|[-—•]|×[0-9]+|\$)\s+)?").expect("built-in marker regex")
});

/// A short bracketed group (a badge) whose spaces are held together while wrapping.
#[allow(clippy::expect_used)]
static BADGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[[^\[\]]{1,72}\]").expect("built-in badge regex"));

/// Held spaces: a no-break space (one column, and `textwrap` breaks at ASCII spaces
/// only), turned back into a space after wrapping; a line that holds one of its own is
/// wrapped without holding its badges.
const HELD: char = '\u{a0}';

/// Whether a line is a printed command (`$ cmd`): never wrapped.
fn is_command(line: &str) -> bool {
    line.trim_start().starts_with("$ ")
}

/// One line fitted into `width` columns.
fn fit_line(line: &str, width: usize, out: &mut String) {
    if textwrap::core::display_width(line) <= width || is_command(line) {
        out.push_str(line);
        out.push('\n');
        return;
    }
    let (lead, marker) = MARKER
        .captures(line)
        .map(|c| {
            let g = |i: usize| c.get(i).map_or("", |m| m.as_str());
            (g(1), g(2))
        })
        .unwrap_or(("", ""));
    let hang = if marker.is_empty() {
        format!("{lead}  ")
    } else {
        " ".repeat(textwrap::core::display_width(lead) + textwrap::core::display_width(marker))
    };
    // a hanging indent that leaves less than half the width is not worth keeping
    let hang = if hang.len() > width / 2 {
        String::new()
    } else {
        hang
    };
    let opts = Options::new(width)
        .initial_indent(lead)
        .subsequent_indent(&hang)
        .break_words(false)
        .word_splitter(WordSplitter::NoHyphenation);
    let text = line.trim_start();
    let hold = !text.contains(HELD);
    let held = if hold {
        BADGE.replace_all(text, |c: &regex::Captures<'_>| {
            c[0].replace(' ', &HELD.to_string())
        })
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    for l in textwrap::wrap(&held, &opts) {
        let l = l.trim_end();
        if hold {
            out.push_str(&l.replace(HELD, " "));
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
}

/// A rendered text fitted into `width` columns: every line over it wrapped (see the
/// module's notes for what is never broken).
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        if lines.peek().is_none() {
            // the text after the last newline (empty when the text ends with one)
            if !line.is_empty() {
                let mut last = String::new();
                fit_line(line, width, &mut last);
                out.push_str(last.trim_end_matches('\n'));
            }
            break;
        }
        fit_line(line, width, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(s: &str) -> usize {
        s.lines()
            .map(textwrap::core::display_width)
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn long_lines_are_wrapped_under_their_text() {
        let s = "1. The dynamic loader cannot find a shared library (.so) needed by an extension or program  [missing-shared-library · fatal · high 0.80]\n";
        let f = fit(s, 80);
        assert!(widest(&f) <= 80, "{f}");
        assert!(
            f.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("   ") && !l.starts_with("    ")),
            "{f}"
        );
        assert_eq!(
            f.split_whitespace().collect::<Vec<_>>(),
            s.split_whitespace().collect::<Vec<_>>()
        );
        assert!(f.ends_with('\n'));
        assert!(
            f.contains("[missing-shared-library · fatal · high 0.80]"),
            "the badge is whole: {f}"
        );
    }

    #[test]
    fn commands_urls_and_short_lines_are_kept() {
        let cmd = "        $ ldconfig -p | grep libcusparse.so.11; find / -name \"libcusparse.so.11*\" 2>/dev/null\n";
        assert_eq!(fit(cmd, 80), cmd);
        let url = "   See: https://numpy.org/devdocs/user/troubleshooting-importerror.html#downstream-importerror-attributeerror-or-c-api-abi-incompatibility\n";
        let f = fit(url, 80);
        assert_eq!(f.lines().count(), 2, "{f}");
        assert!(f.contains("https://numpy.org/devdocs/user/troubleshooting-importerror.html#downstream-importerror-attributeerror-or-c-api-abi-incompatibility"));
        assert_eq!(fit("short\n\nlines", 80), "short\n\nlines");
    }

    #[test]
    fn styles_do_not_count() {
        let s = format!("\x1b[1m{}\x1b[0m\n", "x".repeat(78));
        assert_eq!(fit(&s, 80), s);
    }
}
