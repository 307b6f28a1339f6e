//! Package names and versions as PEP 503 / PEP 440 define them (`pep508_rs`), shared by
//! fact conditions (compiled here) and the facts read from reports ([`crate::env`]).

use std::str::FromStr;

use pep508_rs::pep440_rs::Version;
use pep508_rs::PackageName;

/// PEP 503 normalized name (`Flash_Attn` → `flash-attn`); the lowercased text when it is
/// not a valid distribution name.
pub fn normalize_name(name: &str) -> String {
    match PackageName::from_str(name.trim()) {
        Ok(n) => n.as_ref().to_string(),
        Err(_) => name.trim().to_ascii_lowercase(),
    }
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
