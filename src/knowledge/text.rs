//! Text shown to a person: control characters escaped, long text clipped.

/// Escapes terminal control characters (ANSI escapes, BEL, backspace…) so that text
/// taken from a log can never drive the user's terminal. Tabs are kept.
pub fn escape_control(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\t') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() && c != '\t' {
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
