//! Text shown to a person: control, bidi and zero-width characters escaped, long text
//! clipped.

/// Characters that change how text around them reads without showing themselves:
/// bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: the
/// "Trojan Source" trick), zero-width characters (U+200B–U+200D, U+2060, U+FEFF, U+180E)
/// and the line and paragraph separators (U+2028, U+2029: a line break to some readers).
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
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
}
