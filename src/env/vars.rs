//! Filling `{{env.…}}` variables ([`crate::knowledge::vars`]) in prose from facts.

use super::facts::Facts;

/// Fills `{{env.…}}` in prose; `None` when a value is unknown (the sentence is then
/// left out rather than printed with a hole).
pub fn fill_prose(text: &str, facts: &Facts) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let j = after.find("}}")?;
        let name = after[..j].trim();
        let v = facts.lookup(name)?;
        out.push_str(&crate::knowledge::text::escape_control(&v));
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    Some(out)
}
