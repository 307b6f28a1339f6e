//! The shapes of failures the extractor finds; a signature's `kind:` names one.

use serde::Serialize;

/// The shape of a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
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
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Traceback => "traceback",
            FailureKind::Exception => "exception",
            FailureKind::Abort => "abort",
            FailureKind::Signal => "signal",
            FailureKind::OomKill => "oom-kill",
            FailureKind::CudaError => "cuda-error",
            FailureKind::Nccl => "nccl",
            FailureKind::Systemd => "systemd",
            FailureKind::Warning => "warning",
            FailureKind::ErrorLine => "error-line",
            FailureKind::Line => "line",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "traceback" => FailureKind::Traceback,
            "exception" => FailureKind::Exception,
            "abort" => FailureKind::Abort,
            "signal" => FailureKind::Signal,
            "oom-kill" => FailureKind::OomKill,
            "cuda-error" => FailureKind::CudaError,
            "nccl" => FailureKind::Nccl,
            "systemd" => FailureKind::Systemd,
            "warning" => FailureKind::Warning,
            "error-line" => FailureKind::ErrorLine,
            "line" => FailureKind::Line,
            _ => return None,
        })
    }

    pub const ALL: [&'static str; 11] = [
        "traceback",
        "exception",
        "abort",
        "signal",
        "oom-kill",
        "cuda-error",
        "nccl",
        "systemd",
        "warning",
        "error-line",
        "line",
    ];
}
