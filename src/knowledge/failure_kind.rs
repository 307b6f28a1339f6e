//! The shapes of failures the extractor finds; a signature's `kind:` names one.

use serde::{Deserialize, Serialize};

/// The shape of a failure (names derived, kebab-case: serde, `as_str`, `parse`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum FailureKind {
    Traceback,
    Exception,
    Abort,
    Signal,
    OomKill,
    CudaError,
    Nccl,
    Systemd,
    Warning,
    ErrorLine,
    /// A line that is no failure but carries a signature's atom (matcher use only).
    Line,
}

impl FailureKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [FailureKind] = <FailureKind as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }

    /// A shape that ends a process by itself: a traceback or exception, an abort, a fatal
    /// signal, the OOM killer's kill (what the category model reads first, and what a
    /// failure that stopped a run looks like). Error lines, CUDA and NCCL lines, service
    /// manager lines and warnings are reports a process may go on after.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            FailureKind::Traceback
                | FailureKind::Exception
                | FailureKind::Abort
                | FailureKind::Signal
                | FailureKind::OomKill
        )
    }
}
