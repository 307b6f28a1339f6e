//! Text shown to a person: control, bidi, invisible and format characters escaped, long
//! text clipped.
//!
//! One policy for every value that reaches a terminal or a command: [`is_invisible`] is
//! Unicode's whole `Default_Ignorable_Code_Point` set, every format (`Cf`) character,
//! and the line and paragraph separators; display escapes them ([`escape_control`]) and a
//! command refuses a value holding one (`knowledge::signature::template`). The sets come
//! from `regex-syntax`'s Unicode tables, so they follow its Unicode version rather than a
//! hand-picked list (which once let tag characters, U+00AD, U+3164, U+115F, U+034F,
//! variation selectors, U+17B4 and U+FFF9 through).

use std::sync::LazyLock;

/// The ranges of [`is_invisible`], sorted, read once from `regex-syntax`'s tables.
static INVISIBLE: LazyLock<Vec<(char, char)>> = LazyLock::new(|| {
    use regex_syntax::hir::{Class, HirKind};
    let class = r"[\p{Default_Ignorable_Code_Point}\p{Cf}\u{2028}\u{2029}]";
    match regex_syntax::Parser::new()
        .parse(class)
        .map(|h| h.kind().clone())
    {
        Ok(HirKind::Class(Class::Unicode(u))) => {
            u.ranges().iter().map(|r| (r.start(), r.end())).collect()
        }
        // not expected (the pattern is fixed): the characters the old list named
        _ => vec![
            ('\u{ad}', '\u{ad}'),
            ('\u{61c}', '\u{61c}'),
            ('\u{180e}', '\u{180e}'),
            ('\u{200b}', '\u{200f}'),
            ('\u{2028}', '\u{202e}'),
            ('\u{2060}', '\u{206f}'),
            ('\u{feff}', '\u{feff}'),
            ('\u{e0000}', '\u{e0fff}'),
        ],
    }
});

/// Characters that change how text around them reads without showing themselves:
/// every `Default_Ignorable_Code_Point` (zero-width characters, the Hangul fillers
/// U+115F, U+1160, U+3164, U+FFA0, U+00AD, U+034F, variation selectors, tag characters
/// U+E0000–U+E0FFF…), every format character (`Cf`: bidi controls, the "Trojan Source"
/// trick, interlinear annotations U+FFF9–U+FFFB…) and the line and paragraph separators
/// (U+2028, U+2029: a line break to some readers).
pub fn is_invisible(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    let ranges = &*INVISIBLE;
    let i = ranges.partition_point(|&(_, end)| end < c);
    ranges.get(i).is_some_and(|&(start, _)| start <= c)
}

/// Whether a character must be escaped before a person sees it.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t') || is_invisible(c)
}

/// Escapes terminal control characters (ANSI escapes, BEL, backspace…), bidi controls
/// and zero-width characters ([`is_invisible`]) so that text taken from a log can never
/// drive the user's terminal or read differently from what it is. Tabs are kept.
pub fn escape_control(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Shortens text for display (the JSON keeps it whole).
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Edit distance over characters, a swap of two neighbours counting as one edit
/// (optimal string alignment: `sgi` is one edit from `sig`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, v) in d[0].iter_mut().enumerate() {
        *v = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The candidates closest to a mistyped word (at most 3, closest first): within an edit
/// distance of a third of the word's length (at least 2), or holding every `-`-separated
/// part of it (`cubin-mismatch` → `flashinfer-cubin-version-mismatch`). For "did you
/// mean" hints.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    let parts: Vec<&str> = word.split('-').filter(|p| p.len() >= 3).collect();
    let mut v: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = edit_distance(word, c);
            let all_parts =
                !parts.is_empty() && parts.iter().all(|p| c.split('-').any(|x| x == *p));
            (d <= limit || all_parts).then_some((d, c))
        })
        .collect();
    v.sort();
    v.dedup();
    v.into_iter().take(3).map(|(_, c)| c).collect()
}

/// ` (did you mean `a`, `b`?)` for [`closest`]'s answer, or nothing.
pub fn did_you_mean(close: &[&str]) -> String {
    if close.is_empty() {
        return String::new();
    }
    let names: Vec<String> = close.iter().map(|c| format!("`{c}`")).collect();
    format!(" (did you mean {}?)", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_zero_width_and_controls_are_escaped() {
        assert_eq!(escape_control("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(escape_control("\u{feff}x\u{200b}"), "\\u{feff}x\\u{200b}");
        assert_eq!(escape_control("bell\u{7}"), "bell\\u{7}");
        assert_eq!(escape_control("tab\tok é"), "tab\tok é");
    }

    #[test]
    fn every_default_ignorable_and_format_character_is_invisible() {
        for c in [
            '\u{ad}',
            '\u{34f}',
            '\u{115f}',
            '\u{1160}',
            '\u{17b4}',
            '\u{180b}',
            '\u{200b}',
            '\u{202e}',
            '\u{2028}',
            '\u{2064}',
            '\u{3164}',
            '\u{fe00}',
            '\u{fe0f}',
            '\u{feff}',
            '\u{ffa0}',
            '\u{fff9}',
            '\u{fffb}',
            '\u{e0001}',
            '\u{e0078}',
            '\u{e007f}',
            '\u{e01ef}',
            '\u{600}',
            '\u{110bd}',
        ] {
            assert!(is_invisible(c), "{:?}", c.escape_unicode().to_string());
            assert_ne!(escape_control(&c.to_string()), c.to_string());
        }
        for c in ['a', '/', ' ', 'é', 'ㅎ', '中', '\u{fffd}', '\u{1f600}'] {
            assert!(!is_invisible(c), "{c}");
        }
    }
}
