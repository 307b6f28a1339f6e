//! Which categories of failure can explain which: the category link table.
//!
//! Ordering causes root first needs to know that one kind of failure makes another
//! happen: a package built for another version makes an import fail on an undefined
//! symbol; a GPU that fell off the bus makes NCCL and CUDA calls fail; a full disk makes a
//! model load or a download fail. The table below is data, read by the ranking
//! (`engine::rank::causal`): an earlier cause of the first category, in the same crash
//! attempt, ranks before a later one of the second. It names categories of the taxonomy
//! only (never a signature, a project or a log); a change to it is reviewed like a
//! signature, and its effect shown with `crashdoc corpus run` (before / after).
//!
//! `other` (the catch-all: wrappers such as "engine core initialization failed", and
//! code bugs) is explained by every specific category: a specific failure printed before
//! a generic one of the same attempt is its reason.

use crate::knowledge::signature::Category;
use Category::*;

/// `(cause, what it can explain)`.
pub const LINKS: &[(Category, &[Category])] = &[
    (
        VersionMismatch,
        &[
            UndefinedSymbolAbi,
            ImportError,
            MissingSharedLibrary,
            UnsupportedComputeCapability,
        ],
    ),
    (UndefinedSymbolAbi, &[ImportError]),
    (MissingSharedLibrary, &[ImportError, UndefinedSymbolAbi]),
    (UnsupportedComputeCapability, &[GpuUnavailable]),
    (
        CudaDriverTooOld,
        &[GpuUnavailable, ImportError, UnsupportedComputeCapability],
    ),
    (
        GpuHardwareFault,
        &[NcclCommunication, GpuUnavailable, HangTimeout, GpuOom],
    ),
    (HostOom, &[NcclCommunication, HangTimeout]),
    (GpuOom, &[NcclCommunication, HangTimeout]),
    (
        DiskFull,
        &[ModelLoadError, NetworkDownload, PermissionDenied],
    ),
    (PermissionDenied, &[ModelLoadError, NetworkDownload]),
    (NetworkDownload, &[ModelLoadError]),
    (
        PortInUse,
        &[NcclCommunication, HangTimeout, NetworkDownload],
    ),
    (NcclCommunication, &[HangTimeout]),
    (KvCacheInsufficient, &[UnsupportedConfig]),
];

/// Whether a failure of category `cause` can explain a later one of category `effect`.
pub fn explains(cause: Category, effect: Category) -> bool {
    if cause == effect {
        return false;
    }
    if effect == Other && cause != Other {
        return true;
    }
    LINKS
        .iter()
        .any(|(c, effects)| *c == cause && effects.contains(&effect))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_no_cycle_of_two() {
        for (c, effects) in LINKS {
            for e in *effects {
                assert!(!explains(*e, *c), "{c:?} and {e:?} explain each other");
            }
        }
    }

    #[test]
    fn a_specific_category_explains_the_catch_all() {
        assert!(explains(HostOom, Other));
        assert!(!explains(Other, HostOom));
        assert!(explains(VersionMismatch, UndefinedSymbolAbi));
        assert!(!explains(UndefinedSymbolAbi, VersionMismatch));
    }
}
