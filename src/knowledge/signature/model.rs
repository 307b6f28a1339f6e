//! The serialized signature: what an author writes in `signatures/<area>/<id>.yaml`.
//!
//! These types mirror the YAML exactly (unknown fields are rejected) and are compiled
//! into the runtime types of [`compile`](super::compile). Values that later checks must
//! locate (ids, regexes, templates, links) are [`Spanned`](serde_saphyr::Spanned) so that an error names the
//! file, line and column of the offending text. The JSON Schema of the format
//! (`signatures/schema.json`) is generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A located string ([`crate::knowledge::diagnostic::Text`]).
pub use crate::knowledge::diagnostic::Text;

/// The failure classes of the taxonomy (docs/signature-format.md, Categories).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Deserialize,
    Serialize,
    JsonSchema,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Category {
    VersionMismatch,
    ImportError,
    MissingSharedLibrary,
    UndefinedSymbolAbi,
    UnsupportedComputeCapability,
    CudaDriverTooOld,
    GpuUnavailable,
    GpuOom,
    HostOom,
    NcclCommunication,
    KvCacheInsufficient,
    UnsupportedConfig,
    ModelLoadError,
    DiskFull,
    PermissionDenied,
    PortInUse,
    NetworkDownload,
    HangTimeout,
    // Xid, ECC, a GPU fallen off the bus: bad hardware (or driver), not bad code.
    GpuHardwareFault,
    Other,
}

// Names (serde, `as_str`, `parse`, `Display`) are derived, kebab-case.
impl Category {
    /// Every category, in declaration order.
    pub const ALL: &'static [Category] = <Category as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Category> {
        s.parse().ok()
    }
}

/// How bad a matched failure is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Deserialize,
    Serialize,
    JsonSchema,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Severity {
    /// Harmless noise that looks like an error: never ranked as a cause.
    Benign,
    /// Worth seeing, rarely the cause.
    Warning,
    /// A failure that may be fatal in context.
    Error,
    /// The process cannot go on.
    Fatal,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The highest confidence a cause may get: for knowledge that names a failure without
/// establishing its cause (a generic error code, a signal).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ConfidenceCap {
    Low,
    Medium,
    High,
}

/// One signature file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignatureFile {
    /// Kebab-case, unique across the loaded libraries, equal to the file name.
    #[schemars(with = "String")]
    pub id: Text,
    /// One line: what failed.
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    /// The projects that print this failure or that it applies to.
    #[serde(default)]
    pub projects: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Ids of the causes this failure typically follows (it then ranks under them).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub consequence_of: Vec<Text>,
    /// Ids of benign signatures whose lines may still be evidence for this one. A line a
    /// benign signature explains is otherwise no evidence for a non-benign cause (the
    /// NCCL INFO plugin-load line is noise, not a missing library).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub overrides_benign: Vec<Text>,
    /// Whether INFO/DEBUG lines alone may be this (fatal or error) signature's evidence;
    /// without it, a match resting only on such lines gives no cause.
    #[serde(default)]
    pub info_evidence: bool,
    /// The condition tree.
    #[serde(rename = "match")]
    pub condition: Condition,
    /// Literals for the prefilter; derived from the conditions when empty.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub atoms: Vec<Text>,
    /// What happened and why, briefly.
    pub explain: String,
    /// Sentences added to `explain` when environment facts make their condition true
    /// (`{{env.…}}` variables are filled; a sentence with an unknown value is left out).
    #[serde(default)]
    pub explain_env: Vec<EnvNote>,
    /// Ordered steps: the usual fix first.
    #[serde(default)]
    pub remediation: Vec<Step>,
    /// Where the message and the fix are confirmed.
    #[serde(default)]
    pub references: Vec<String>,
    #[serde(default)]
    pub examples: Examples,
    /// Cap the confidence of this cause (`medium`: the message alone does not establish it).
    #[serde(default)]
    pub max_confidence: Option<ConfidenceCap>,
    /// The capture that holds an inner error this message wraps: its text is diagnosed
    /// through the whole library and this failure folds under the inner cause.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub wraps: Option<Text>,
    /// Ids of the later failures this one explains: when both match, the later one is
    /// folded under this one as its consequence (and its generic fix is not printed).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub explains: Vec<Text>,
    /// A benign marker that the run finished its work (a trainer's last message, printed
    /// only once its loop is done): a failure of the same attempt that comes before it
    /// did not stop the run, and is folded under it as survived noise. Failures after it
    /// are unaffected (a crash while saving, a hang at the final barrier).
    #[serde(default)]
    pub completes: bool,
    /// A structural fallback (exception type, raising module, frames): used only when no
    /// other signature explains the failure, at `low` confidence.
    #[serde(default)]
    pub fallback: bool,
    /// A rare failure with a single public source (often the corpus incident it was
    /// filed from): one positive example is enough instead of two, its confidence is
    /// capped at `medium` (one report does not establish that the message always means
    /// this cause), and a corpus incident it is expected to explain counts as *seen*
    /// (the library learned it from that incident, so it does not measure recall on
    /// unseen logs).
    #[serde(default)]
    pub rare: bool,
}

/// A condition: exactly one key.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// Regex searched in the subject's headline (`Type: message`, or the line's text).
    Message(#[schemars(with = "String")] Text),
    /// Literal text the headline contains.
    Contains(#[schemars(with = "String")] Text),
    /// The exception type equals this or ends with `.` + this.
    Exception(#[schemars(with = "String")] Text),
    /// Regex searched in every line of the failure.
    Text(#[schemars(with = "String")] Text),
    /// A frame of the subject exception.
    Frame(FrameCondition),
    /// The failure kind (traceback, exception, abort, signal, oom-kill, cuda-error, nccl, systemd, warning, error-line, line).
    Kind(#[schemars(with = "String")] Text),
    /// Regex over the failure's streams.
    Stream(#[schemars(with = "String")] Text),
    /// An installed package (needs environment facts; unknown without them).
    Package(crate::knowledge::cond::PackageCondition),
    /// A GPU's compute capability satisfies a PEP 440 specifier (`>=12.0`).
    GpuCapability(#[schemars(with = "String")] Text),
    /// The NVIDIA driver version satisfies a specifier.
    Driver(#[schemars(with = "String")] Text),
    /// The CUDA version torch was built with satisfies a specifier.
    TorchCuda(#[schemars(with = "String")] Text),
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrameCondition {
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub file: Option<Text>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub function: Option<Text>,
}

/// One remediation step.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub description: String,
    /// A command template: `{{name}}` is a capture or a context value (`unit`). Printed, never run.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub command: Option<Text>,
    /// When to prefer this step.
    #[serde(default)]
    pub when: Option<String>,
    /// A condition on environment facts: false drops the step, true marks it as the
    /// one that fits, unknown (no facts) keeps it as it is.
    #[serde(default, rename = "if")]
    pub condition: Option<crate::knowledge::cond::FactCondition>,
}

/// A sentence of the explanation that depends on the environment.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvNote {
    /// Shown only when this holds (true, not unknown).
    #[serde(default, rename = "if")]
    pub condition: Option<crate::knowledge::cond::FactCondition>,
    pub text: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Examples {
    /// Real log excerpts that must produce this signature.
    #[serde(default, rename = "match")]
    pub matches: Vec<Example>,
    /// Near-misses that must not produce it.
    #[serde(default)]
    pub no_match: Vec<Example>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// Where the text comes from (a thread, an upstream source file).
    #[serde(default)]
    pub source: Option<String>,
    pub log: String,
    /// For a positive example: must this signature be the top cause? (default: false)
    #[serde(default)]
    pub top: bool,
}

/// `signatures/frames.yaml`: knowledge about traceback frames.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FramesFile {
    /// Path fragments of generic framework frames skipped when locating the crash site.
    #[serde(default)]
    pub plumbing: Vec<String>,
}
