//! Readings of a failure's text besides its parse.
//!
//! Extraction's idea of "the exception message" misses text that real logs carry: a
//! traceback cut off before its final exception keeps its decisive text in the preamble
//! or an error line; an error line's detail may sit on the next line (NCCL's
//! `Last error:`); a paste reshapes lines (GitHub's rendered pastes break long lines
//! with runs of spaces inside words, `get_confi                g`; a wrapped message
//! spans lines). When no parsed subject of a failure satisfies a signature, the matcher
//! tries these readings, at a lower place weight ([`super::Place::FailureText`]):
//!
//! - each exception headline *folded*: whitespace runs made one space, or runs of two or
//!   more spaces removed (the in-word wrap); and a multi-line message's first line alone
//!   (the lines after it may be another process's, interleaved);
//! - when the parse found no exception in the failure (a traceback cut off before its
//!   exception line, an error line, an NCCL block): each line of the failure that is
//!   not a frame, a frame's source line or a traceback header, with its prefixes
//!   peeled; joined with the next line when it ends with `:`; and folded.
//!
//! The prefilter is fed every text returned here, so that it still finds
//! every candidate brute force finds.

use crate::engine::extract::{shapes, BlockLine, Failure};

/// Whitespace runs made one space (a line wrapped between words, a message joined
/// over lines); `None` when that changes nothing.
pub fn fold_spaced(s: &str) -> Option<String> {
    let folded = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (folded != s).then_some(folded)
}

/// Runs of two or more whitespace characters removed, single spaces kept (a line
/// broken inside a word by a run of spaces); `None` when there is no such run.
pub fn fold_joined(s: &str) -> Option<String> {
    let t = s.trim();
    let mut out = String::with_capacity(t.len());
    let mut run = String::new();
    let mut changed = false;
    for c in t.chars() {
        if c.is_whitespace() {
            run.push(c);
            continue;
        }
        if run.chars().count() == 1 {
            out.push_str(&run);
        } else if !run.is_empty() {
            changed = true;
        }
        run.clear();
        out.push(c);
    }
    changed.then_some(out)
}

/// Runs of two or more whitespace characters removed next to a digit, made one space
/// elsewhere (GitHub's runs fall anywhere: between words, inside a port or a number —
/// `listen                  on` and `[::]:            29500` in one message); `None`
/// when there is no such run.
pub fn fold_digits(s: &str) -> Option<String> {
    let t = s.trim();
    let mut out = String::with_capacity(t.len());
    let mut run = 0usize;
    let mut changed = false;
    for c in t.chars() {
        if c.is_whitespace() {
            run += 1;
            continue;
        }
        if run == 1 {
            out.push(' ');
        } else if run > 1 {
            changed = true;
            let digit = out.ends_with(|p: char| p.is_ascii_digit()) || c.is_ascii_digit();
            if !digit {
                out.push(' ');
            }
        }
        run = 0;
        out.push(c);
    }
    changed.then_some(out)
}

/// Whether a text has a run that [`fold_joined`] would remove or [`fold_spaced`] would
/// shorten: the cheap test the fast path uses before reading a line folded.
pub fn has_run(s: &str) -> bool {
    let b = s.trim().as_bytes();
    b.windows(2)
        .any(|w| w[0].is_ascii_whitespace() && w[1].is_ascii_whitespace())
        || b.iter().any(|&c| matches!(c, b'\t' | b'\n' | b'\r'))
}

/// The folded readings of a text, in the order they are tried.
pub fn folds(s: &str) -> impl Iterator<Item = String> {
    let spaced = fold_spaced(s);
    let joined = fold_joined(s).filter(|j| Some(j) != spaced.as_ref());
    let digits =
        fold_digits(s).filter(|d| Some(d) != spaced.as_ref() && Some(d) != joined.as_ref());
    spaced.into_iter().chain(joined).chain(digits)
}

/// Whether a line of a failure is text worth reading on its own: not blank, not a
/// frame, not a frame's (indented) source line, not a traceback header.
fn is_text_line(l: &BlockLine) -> bool {
    let m = l.message.as_str();
    !m.trim().is_empty()
        && !m.starts_with([' ', '\t'])
        && !shapes::is_traceback_header(m)
        && shapes::frame(m).is_none()
}

/// One reading of a failure's text: the log line it comes from, the text, and the
/// exception (index in the chain) it is a folded headline of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub line: usize,
    pub text: String,
    pub exception: Option<usize>,
}

/// The readings of a failure, in the order they are tried: the exception headlines
/// folded (final first); when the parse found no exception (a traceback cut off before
/// it, an error line, an NCCL block), the lines read as text: each line's message, the
/// line joined with the next when it ends with `:` (its continuation), and their folds.
pub fn readings(f: &Failure) -> Vec<Reading> {
    let mut out: Vec<Reading> = Vec::new();
    let push = |line: usize, text: String, exception: Option<usize>, out: &mut Vec<Reading>| {
        if !text.is_empty() && !out.iter().any(|r| r.text == text) {
            out.push(Reading {
                line,
                text,
                exception,
            });
        }
    };
    let mut parsed = false;
    for (i, e) in f.chain.iter().enumerate().rev() {
        if e.exception_type.is_empty() {
            continue;
        }
        parsed = true;
        for t in folds(&e.headline()) {
            push(e.line, t, Some(i), &mut out);
        }
        // a multi-line message's first line alone: the lines after it may be another
        // stream's, interleaved before the next record closed the message
        if let Some(head) = e.first_line_headline() {
            push(e.line, head, Some(i), &mut out);
        }
    }
    if parsed {
        // the parse found the exceptions: their (folded) headlines are the text
        return out;
    }
    let lines: Vec<&BlockLine> = f.lines.iter().filter(|l| is_text_line(l)).collect();
    for (i, l) in lines.iter().enumerate() {
        let own = l.message.trim().to_string();
        let mut texts = vec![own.clone()];
        if own.ends_with(':') {
            if let Some(next) = lines.get(i + 1).filter(|n| n.line == l.line + 1) {
                texts.push(format!("{own} {}", next.message.trim()));
            }
        }
        for t in texts {
            let folded: Vec<String> = folds(&t).collect();
            push(l.line, t, None, &mut out);
            for x in folded {
                push(l.line, x, None, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Source: issue 15 quotes the GitHub rendered-paste shape `get_confi                g`.
    #[test]
    fn folds_undo_space_runs_and_wraps() {
        assert_eq!(
            fold_joined("AttributeError: 'X' has no attribute 'get_confi                g'")
                .as_deref(),
            Some("AttributeError: 'X' has no attribute 'get_config'")
        );
        assert_eq!(
            fold_spaced("CUDA out of\nmemory.  Tried").as_deref(),
            Some("CUDA out of memory. Tried")
        );
        // CONSTRUCTED from torch's c10d message with GitHub's runs in it
        assert_eq!(
            fold_digits("failed to listen          on [::]:       29500 (errno: 9      8")
                .as_deref(),
            Some("failed to listen on [::]:29500 (errno: 98")
        );
        assert_eq!(fold_digits("one two"), None);
        assert_eq!(fold_joined("one two"), None);
        assert_eq!(fold_spaced("one two"), None);
        assert!(has_run("a  b") && has_run("a\tb") && !has_run("a b "));
    }
}
