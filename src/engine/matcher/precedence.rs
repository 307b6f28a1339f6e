//! Precedence between matches of one line or failure, before ranking.
//!
//! - A line a benign signature explains is no evidence for a non-benign signature,
//!   unless that signature names the benign one in `overrides_benign`: the NCCL INFO
//!   line `NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot
//!   open shared object file…` is NCCL's noise, not a missing library.
//! - INFO/DEBUG lines are never a fatal or error signature's only evidence, unless it
//!   declares `info_evidence: true`.

use crate::engine::extract::Failure;
use crate::engine::normalize::Level;
use crate::knowledge::signature::{Library, Severity, SigIndex, Signature};

use super::FailureHit;

/// The level a line's text states when its prefixes did not (`NCCL INFO`, `NCCL WARN`).
pub fn text_level(message: &str) -> Option<Level> {
    if message.contains("NCCL INFO") {
        Some(Level::Info)
    } else if message.contains("NCCL WARN") {
        Some(Level::Warning)
    } else {
        None
    }
}

/// Whether a line at this level cannot alone be `sig`'s evidence.
pub fn info_only(sig: &Signature, level: Option<Level>) -> bool {
    matches!(level, Some(Level::Info | Level::Debug))
        && matches!(sig.severity, Severity::Fatal | Severity::Error)
        && !sig.info_evidence
}

/// Whether the benign signatures `benign` (indices) that explain a line leave it as
/// evidence for `sig`: only when `sig` overrides every one of them.
pub fn overrides(lib: &Library, sig: &Signature, benign: &[SigIndex]) -> bool {
    benign
        .iter()
        .all(|&b| sig.overrides_benign.contains(&lib.signatures[b].id))
}

/// The level of one line of a failure: what its text states, else the failure's own
/// level when the failure is that one line.
fn failure_line_level(f: &Failure, line: usize) -> Option<Level> {
    let bl = f.lines.iter().find(|b| b.line == line)?;
    text_level(&bl.message).or_else(|| (f.lines.len() == 1).then_some(f.level).flatten())
}

/// Drops the hits on one failure that precedence rules out (see the module docs).
pub fn filter_failure_hits(lib: &Library, f: &Failure, hits: &mut Vec<FailureHit>) {
    let benign: Vec<(SigIndex, Vec<usize>)> = hits
        .iter()
        .filter(|h| lib.signatures[h.signature].severity == Severity::Benign)
        .map(|h| (h.signature, h.lines.clone()))
        .collect();
    hits.retain(|h| {
        let sig = &lib.signatures[h.signature];
        if sig.severity == Severity::Benign {
            return true;
        }
        let explained = h.lines.iter().all(|l| {
            let by: Vec<SigIndex> = benign
                .iter()
                .filter(|(_, ls)| ls.contains(l))
                .map(|(b, _)| *b)
                .collect();
            !by.is_empty() && !overrides(lib, sig, &by)
        });
        let info = h
            .lines
            .iter()
            .all(|&l| info_only(sig, failure_line_level(f, l)));
        !explained && !info
    });
}
