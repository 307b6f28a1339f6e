//! Package names and versions as PEP 503 / PEP 440 define them (`pep440_rs` for
//! versions), shared by fact conditions (compiled here) and the facts read from reports
//! ([`crate::env`]).

use std::str::FromStr;

use pep440_rs::Version;

/// PEP 503 normalized name (`Flash_Attn` → `flash-attn`); the lowercased text when it is
/// not a valid distribution name.
pub fn normalize_name(name: &str) -> String {
    let name = name.trim();
    pep503(name).unwrap_or_else(|| name.to_ascii_lowercase())
}

/// The name-normalization rule of the Python packaging specification
/// (<https://packaging.python.org/en/latest/specifications/name-normalization/>):
/// ASCII letters lowercased, each run of `-`, `_` and `.` one `-`; `None` for a name that
/// is not valid (another character, or punctuation first or last). This was
/// `pep508_rs::PackageName`: requirement parsing with URL parsing and its Unicode tables
/// (371 lines of `Cargo.lock`, built by every clean build) for these few lines; thin LTO
/// had already kept that code out of the binary, so the binary did not shrink.
fn pep503(name: &str) -> Option<String> {
    let punct = |b: u8| matches!(b, b'-' | b'_' | b'.');
    let bytes = name.as_bytes();
    if bytes.first().copied().is_some_and(punct) || bytes.last().copied().is_some_and(punct) {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut last = 0u8;
    for &b in bytes {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => out.push(char::from(b.to_ascii_lowercase())),
            b'-' | b'_' | b'.' if !punct(last) => out.push('-'),
            b'-' | b'_' | b'.' => {}
            _ => return None,
        }
        last = b;
    }
    Some(out)
}

/// Parses a version leniently: PEP 440 first, then its leading `N(.N)*` part
/// (`12.4.131` is fine; `550.54.15` too; `12.8 (Build ...)` gives `12.8`).
pub fn parse_version(s: &str) -> Option<Version> {
    let s = s.trim();
    if let Ok(v) = Version::from_str(s) {
        return Some(v);
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let head = s[..end].trim_end_matches('.');
    if head.is_empty() {
        return None;
    }
    Version::from_str(head).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized_and_versions_lenient() {
        assert_eq!(normalize_name("Flash_Attn"), "flash-attn");
        assert_eq!(normalize_name("flashinfer.python"), "flashinfer-python");
        assert_eq!(normalize_name(" Torch__Vision.-x "), "torch-vision-x");
        assert_eq!(normalize_name(""), "");
        // not valid names: lowercased as they are
        assert_eq!(normalize_name("_Private"), "_private");
        assert_eq!(normalize_name("Name-"), "name-");
        assert_eq!(normalize_name("Ünï Code"), "Ünï code");
        assert_eq!(
            parse_version("12.4.131").map(|v| v.to_string()),
            Some("12.4.131".into())
        );
        assert_eq!(
            parse_version("12.8 (build x)").map(|v| v.to_string()),
            Some("12.8".into())
        );
        assert!(parse_version("Could not collect").is_none());
    }
}
