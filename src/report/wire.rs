//! The JSON contract of `crashdoc diagnose --format json|jsonl`: wire types of their own,
//! built from the engine's [`Diagnosis`](crate::engine::diagnosis::Diagnosis) by a
//! conversion (`From`), so that a change inside the engine never changes the output
//! silently. The JSON Schema of the output is generated from these types
//! (`crashdoc schema diagnosis`, committed as `docs/schema/diagnosis.schema.json`; a test
//! checks it is current and validates real output against it).
//!
//! **Version.** Every document carries [`VERSION`] in its top-level `version` field. It
//! changes only with a breaking change of the contract: a field removed or renamed, a
//! field's type or meaning changed, a value removed from an enumeration, an optional field
//! made absent where it used to be present. Adding a field, or a value to an enumeration
//! (a new category or failure kind), is not breaking and keeps the version: a consumer
//! ignores fields it does not know.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::{diagnosis as dx, extract as ex, findings, normalize, rank, remedy};
use crate::env::{eval::Seen as EnvSeen, facts as fx};
use crate::knowledge::{failure_kind, signature::model};

/// The version of the JSON contract (see the module documentation: bumped by a breaking
/// change only).
pub const VERSION: u32 = 1;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn not(b: &bool) -> bool {
    !*b
}

/// An enumeration of the contract mirroring an engine enumeration variant by variant,
/// with the conversion (an exhaustive `match`: a variant added in the engine does not
/// compile until the contract has it too).
macro_rules! mirror_enum {
    ($(#[$m:meta])* $name:ident from $($src:ident)::+ { $($(#[$vm:meta])* $v:ident),* $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
        $(#[$m])*
        pub enum $name {
            $($(#[$vm])* $v),*
        }

        impl From<$($src)::+> for $name {
            fn from(x: $($src)::+) -> Self {
                type S = $($src)::+;
                match x {
                    $(S::$v => $name::$v),*
                }
            }
        }
    };
}

mirror_enum! {
    /// The failure class of the taxonomy (docs/signature-format.md, Categories).
    #[serde(rename_all = "kebab-case")]
    Category from model::Category {
        VersionMismatch, ImportError, MissingSharedLibrary, UndefinedSymbolAbi,
        UnsupportedComputeCapability, CudaDriverTooOld, GpuUnavailable, GpuOom, HostOom,
        NcclCommunication, KvCacheInsufficient, UnsupportedConfig, ModelLoadError, DiskFull,
        PermissionDenied, PortInUse, NetworkDownload, HangTimeout, GpuHardwareFault, Other,
    }
}

mirror_enum! {
    /// How bad a matched failure is (a cause is never `benign`: benign matches are noise).
    #[serde(rename_all = "kebab-case")]
    Severity from model::Severity { Benign, Warning, Error, Fatal }
}

mirror_enum! {
    /// How sure a cause is: `high` from a score of 0.75, `medium` from 0.5, else `low`.
    #[serde(rename_all = "lowercase")]
    Confidence from rank::Confidence { Low, Medium, High }
}

mirror_enum! {
    /// The shape of an extracted failure.
    #[serde(rename_all = "kebab-case")]
    FailureKind from failure_kind::FailureKind {
        Traceback, Exception, Abort, Signal, OomKill, CudaError, Nccl, Systemd, Warning,
        ErrorLine,
        /// A line that carries a signature's atom (not a failure; matcher use only).
        Line,
    }
}

mirror_enum! {
    /// The severity a log prefix gave a line.
    #[serde(rename_all = "lowercase")]
    Level from normalize::Level { Debug, Info, Warning, Error, Critical }
}

mirror_enum! {
    /// How an exception relates to the one printed before it in a chain.
    #[serde(rename_all = "kebab-case")]
    ChainMarker from ex::ChainMarker {
        /// "The above exception was the direct cause of the following exception:"
        Cause,
        /// "During handling of the above exception, another exception occurred:"
        Context,
    }
}

/// Another JSON report (`sig test --format json`) with the contract's `version` in front
/// of its own fields.
#[derive(Debug, Clone, Serialize)]
pub struct Versioned<'a, T: Serialize> {
    pub version: u32,
    #[serde(flatten)]
    pub report: &'a T,
}

impl<'a, T: Serialize> Versioned<'a, T> {
    pub fn new(report: &'a T) -> Self {
        Versioned {
            version: VERSION,
            report,
        }
    }
}

/// The diagnosis of one input: one JSON document (`--format json`) or one line
/// (`--format jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Diagnosis {
    /// The version of this contract; it changes only with a breaking change.
    #[schemars(extend("const" = VERSION))]
    pub version: u32,
    /// The input's name (a path, or `-` for standard input).
    pub input: String,
    /// Lines read.
    pub lines: usize,
    /// The probable causes, best first (at most `--top`).
    pub causes: Vec<Cause>,
    /// The block the report leads with: the top cause's evidence, or (with no confident
    /// cause, or when a CI runner's failing step holds the top cause nowhere) the failing
    /// block the log's structure shows, or the first failure of the last crash attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary: Option<Primary>,
    /// Harmless lines that look like errors, explained by benign signatures.
    pub noise: Vec<Noise>,
    /// When no cause was found: the first failure's final exception (or line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unexplained: Option<String>,
    /// When the top cause is a consequence and no cause explains the first failure of its
    /// crash attempt: that failure, so that a consequence never hides it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<FirstFailure>,
    /// The systemd unit of the first failure whose unit the log establishes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The crash attempts (spans between two starts of a service).
    pub attempts: Vec<Attempt>,
    /// The extracted failures (also `crashdoc extract --format json`).
    pub failures: Vec<Failure>,
    /// Streams whose open block was closed early by the cap on open streams.
    #[serde(skip_serializing_if = "is_zero")]
    pub evicted_streams: usize,
    /// The environment facts used (from `--env` files and reports inside the log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// Compatibility rules the environment breaks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Distinct failures counted but not kept (the store's caps, README "Limits").
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_failures: usize,
    /// The signature libraries this run used: `builtin`, each folder, each config file
    /// ([`super::provenance`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<super::provenance::Source>,
}

/// The block a report leads with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Primary {
    /// Its first line (1-based physical input line): the line a person points at.
    pub start: usize,
    /// Its last line (inclusive).
    pub end: usize,
    /// The extracted failure (id in `failures`) its first line belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<usize>,
    /// What chose it: `cause` (the top cause's evidence), `structure` (the failing CI step
    /// or the log's first cluster of its strongest error lines), `failure` (the first
    /// extracted failure of the last crash attempt), `paste` (a short paste in which no
    /// failure shape was found: all of it).
    pub from: String,
}

impl From<&dx::Primary> for Primary {
    fn from(p: &dx::Primary) -> Self {
        Primary {
            start: p.start,
            end: p.end,
            failure: p.failure.map(|f| f.0),
            from: match p.from {
                dx::PrimaryFrom::Cause => "cause",
                dx::PrimaryFrom::Structure => "structure",
                dx::PrimaryFrom::Failure => "failure",
                dx::PrimaryFrom::Paste => "paste",
            }
            .to_string(),
        }
    }
}

/// The failures extracted from one input (`crashdoc extract --format json`, the signature
/// author's debugging view): the same [`Failure`] and [`Attempt`] as in a diagnosis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Extraction {
    /// The version of this contract (the same as the diagnosis').
    #[schemars(extend("const" = VERSION))]
    pub version: u32,
    /// Lines read.
    pub lines: usize,
    pub attempts: Vec<Attempt>,
    pub failures: Vec<Failure>,
    /// The systemd unit of the first failure whose unit the log establishes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Failures past the limit of distinct failures per input (counted, not listed).
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_failures: usize,
    /// Streams whose open block was closed early by the cap on open streams.
    #[serde(skip_serializing_if = "is_zero")]
    pub evicted_streams: usize,
}

/// One probable cause.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Cause {
    /// 1-based rank.
    pub rank: usize,
    /// The signature's id.
    pub signature: String,
    /// The layer of knowledge that matched when it is not a signature file: `table:<id>`
    /// for an entry of a code table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    pub confidence: Confidence,
    /// 0 to 1, two decimals.
    pub score: f64,
    /// Why this failure happens.
    pub explain: String,
    /// What the environment facts add to the explanation.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
    /// The lines that prove it (raw input lines, 1-based numbers).
    pub evidence: Vec<EvidenceLine>,
    /// Values captured from the log by the signature's regexes.
    pub captures: BTreeMap<String, String>,
    /// The fix, in order; commands are printed, never run.
    pub remediation: Vec<Step>,
    pub references: Vec<String>,
    /// Failures that follow from this cause, folded under it.
    pub consequences: Vec<Consequence>,
    /// For a fuzzy match: the similarity to the closest real example (0 to 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// For a cause found inside a wrapper's message: the wrapper's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapped_by: Option<String>,
    /// Less specific signatures that rest on the same evidence lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_matches: Vec<AlsoMatch>,
    /// The calibrated probability that the cause's category is right (0 to 1): for an
    /// inferred cause (layer `inferred`), the category model's probability; for the other
    /// layers, the score mapped through its layer's fit on held-out outcomes (the
    /// corpus's unseen incidents and the knock-out run). Absent for a cause read from a
    /// traceback's structure alone, and with a library that has no embedded model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// For an inferred cause: the signatures whose words are nearest, nearest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resembles: Vec<Resemblance>,
    /// Crash attempts it was seen in.
    pub attempts: usize,
    /// Streams (workers, ranks, processes) that show it.
    pub streams: Vec<String>,
    /// How many times it occurred.
    pub occurrences: usize,
    /// Its first occurrence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<Occurrence>,
    /// Where the program was when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_site: Option<Site>,
    /// The innermost frame: where it was raised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raise_site: Option<Site>,
    /// The module whose import failed, when it failed during an import.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub importing: Option<String>,
    /// Ids of the extracted failures it explains (`failures[].id`).
    pub failures: Vec<usize>,
    /// For a signature read from a folder library (not crashdoc's own): its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// A signature an inferred cause's failure resembles.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Resemblance {
    /// The signature's id.
    pub signature: String,
    pub title: String,
    /// Cosine similarity of the words (0 to 1, two decimals).
    pub similarity: f64,
}

/// One line of evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EvidenceLine {
    /// 1-based line number in the input.
    pub line: usize,
    /// The raw input line.
    pub text: String,
    /// The stream (worker, rank, process) that wrote it, when known.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stream: String,
}

/// A remediation step, filled for this log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Step {
    pub description: String,
    /// The command, filled; absent when the step has none or it could not be filled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// When the step applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// Why a command was not filled (a value missing from the log, or refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The command's template, when it could not be filled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The step's `if` holds on the environment facts given: the fix that fits.
    #[serde(skip_serializing_if = "not")]
    pub fits: bool,
}

/// Something that follows from a cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Consequence {
    /// The signature that matched it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    pub text: String,
    /// 1-based line of its first occurrence.
    pub line: usize,
    pub count: usize,
    /// Folded through the cause's `explains:` link.
    #[serde(skip_serializing_if = "not")]
    pub linked: bool,
}

/// The first failure of a crash attempt, shown beside a consequence cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FirstFailure {
    pub line: usize,
    pub headline: String,
}

/// A signature that also matches a cause's evidence, less specifically.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AlsoMatch {
    pub signature: String,
    pub title: String,
    pub category: Category,
    pub score: f64,
}

/// A benign signature's matches: harmless lines that look like errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Noise {
    pub signature: String,
    pub title: String,
    /// Lines it matched.
    pub count: usize,
    /// The first few of them.
    pub evidence: Vec<EvidenceLine>,
}

/// Where and when a failure occurred in one stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Occurrence {
    pub stream: String,
    pub line: usize,
    /// The timestamp of its line, as the log wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// A frame of a traceback, as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Site {
    pub file: String,
    pub line: u32,
    pub function: String,
    /// The source line, when the traceback printed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The log line of the frame.
    pub log_line: usize,
}

/// A crash attempt: the span between two starts of a service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Attempt {
    /// 1-based.
    pub index: usize,
    pub first_line: usize,
    pub last_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// systemd's "restart counter is at N" at the end of this attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_counter: Option<u32>,
    /// Failures in this attempt.
    pub failures: usize,
    /// Distinct worker streams (vLLM/Ray workers, torchrun ranks) in this attempt.
    pub workers: usize,
}

/// One extracted failure, possibly seen in several streams.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Failure {
    pub id: usize,
    pub kind: FailureKind,
    /// The crash attempt (1-based) it belongs to.
    pub attempt: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// What a person reads first: the final exception, or the line.
    pub headline: String,
    /// A line that introduced the traceback.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preamble: Option<String>,
    /// Python exceptions in printed order; the last one is the final exception.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<Exception>,
    /// Exceptions dropped from the middle of a long chain.
    #[serde(skip_serializing_if = "is_zero")]
    pub elided_exceptions: usize,
    /// The innermost frame: where it was raised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raise_site: Option<Site>,
    /// The innermost application frame: where the program was when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_site: Option<Site>,
    /// The module whose import failed, when the failure happened during an import.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub importing: Option<String>,
    /// The traceback was cut off (by the end of the log or the start of the excerpt).
    pub truncated: bool,
    /// Distinct streams, in order of first occurrence.
    pub streams: Vec<String>,
    /// How many times it occurred (all streams).
    pub count: usize,
    pub first: Occurrence,
    /// Occurrences (stream and first line), in log order (at most 1,024 listed).
    pub occurrences: Vec<Occurrence>,
    /// The first failure of its crash attempt that is no known consequence.
    pub first_in_attempt: bool,
    /// The id of the failure this one follows from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consequence_of: Option<usize>,
    /// Its text has a consequence shape ("see root cause above", a systemd exit…).
    pub consequence_shape: bool,
    /// The lines of its block.
    pub lines: Vec<BlockLine>,
    /// Lines dropped past the per-failure limit.
    #[serde(skip_serializing_if = "is_zero")]
    pub elided_lines: usize,
    /// The systemd unit whose process wrote it, when the log establishes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// One exception of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Exception {
    #[serde(rename = "type")]
    pub exception_type: String,
    pub message: String,
    /// The log line of `Type: message`.
    pub line: usize,
    /// How this exception relates to the one printed before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follows: Option<ChainMarker>,
    /// Its message says the real error is elsewhere ("look up to see its traceback").
    pub wrapper: bool,
    pub frames: Vec<Frame>,
    /// Frames dropped from the middle of a long traceback.
    #[serde(skip_serializing_if = "is_zero")]
    pub elided_frames: usize,
}

/// One frame of a Python traceback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Frame {
    pub file: String,
    pub line: u32,
    pub function: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The log line the frame was read from.
    pub log_line: usize,
    /// A frame of Python's import machinery.
    pub import_machinery: bool,
}

/// One line of a failure's block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BlockLine {
    pub line: usize,
    /// The raw log line.
    pub text: String,
}

/// Where a fact was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Origin {
    /// The report's name (a file, `<log>`, or the command that printed it).
    pub source: String,
    /// 1-based line in that report; 0 when the whole report is one value.
    pub line: usize,
}

/// A single valued fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Fact {
    pub value: String,
    pub origin: Origin,
}

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Package {
    /// The name as the report spelt it.
    pub name: String,
    pub version: String,
    /// `pip show` Requires; absent when no `pip show` covered this package.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires: Option<Vec<String>>,
    /// `pip show` Required-by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_by: Option<Vec<String>>,
    pub origin: Origin,
}

/// One GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Gpu {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    pub name: String,
    /// Compute capability, `major.minor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    pub origin: Origin,
}

/// The environment facts: what is known about one Python/GPU environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Environment {
    /// Installed packages by normalized name (PEP 503).
    pub packages: BTreeMap<String, Package>,
    /// A complete package list was seen (a package it lacks is missing, not unknown).
    pub has_package_list: bool,
    /// The CUDA version PyTorch was built with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_cuda: Option<Fact>,
    /// The CUDA runtime/toolkit on the machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_runtime: Option<Fact>,
    /// The NVIDIA driver version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<Fact>,
    /// The newest CUDA the driver supports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_cuda: Option<Fact>,
    /// The architectures PyTorch was compiled for, and where they were read: a pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arch_list: Option<(Vec<String>, Origin)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<Gpu>,
    /// The reports recognized, in order.
    pub reports: Vec<String>,
}

/// A fact a rule looked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Seen {
    pub what: String,
    pub origin: Origin,
}

/// A compatibility rule the environment breaks.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Finding {
    pub rule: String,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    /// The facts that show it, with where they were read.
    pub evidence: Vec<Seen>,
    pub explain: String,
    pub remediation: Vec<Step>,
    pub references: Vec<String>,
    /// The signature of the crash it leads to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

fn all<T, U: for<'a> From<&'a T>>(v: &[T]) -> Vec<U> {
    v.iter().map(U::from).collect()
}

impl From<&dx::Diagnosis> for Diagnosis {
    fn from(d: &dx::Diagnosis) -> Self {
        Diagnosis {
            version: VERSION,
            input: d.input.clone(),
            lines: d.lines,
            causes: all(&d.causes),
            primary: d.primary.as_ref().map(Primary::from),
            noise: all(&d.noise),
            unexplained: d.unexplained.clone(),
            first_failure: d.first_failure.as_ref().map(|f| FirstFailure {
                line: f.line,
                headline: f.headline.clone(),
            }),
            unit: d.unit.clone(),
            attempts: all(&d.attempts),
            failures: all(&d.failures),
            evicted_streams: d.evicted_streams,
            environment: (!d.environment.is_empty()).then(|| Environment::from(&d.environment)),
            findings: all(&d.findings),
            dropped_failures: d.dropped_failures,
            sources: super::provenance::sources().to_vec(),
        }
    }
}

impl From<&ex::Extraction> for Extraction {
    fn from(x: &ex::Extraction) -> Self {
        Extraction {
            version: VERSION,
            lines: x.lines,
            attempts: all(&x.attempts),
            failures: all(&x.failures),
            unit: x.unit.clone(),
            dropped_failures: x.dropped_failures,
            evicted_streams: x.evicted_streams,
        }
    }
}

impl From<&dx::Cause> for Cause {
    fn from(c: &dx::Cause) -> Self {
        Cause {
            rank: c.rank,
            signature: c.signature.clone(),
            layer: c.layer.clone(),
            title: c.title.clone(),
            category: c.category.into(),
            severity: c.severity.into(),
            confidence: c.confidence.into(),
            score: c.score,
            explain: c.explain.clone(),
            environment: c.environment.clone(),
            evidence: all(&c.evidence),
            captures: c.captures.clone(),
            remediation: all(&c.remediation),
            references: c.references.clone(),
            consequences: all(&c.consequences),
            similarity: c.similarity,
            wrapped_by: c.wrapped_by.clone(),
            also_matches: all(&c.also_matches),
            probability: c.probability,
            resembles: c
                .resembles
                .iter()
                .map(|r| Resemblance {
                    signature: r.signature.clone(),
                    title: r.title.clone(),
                    similarity: r.similarity,
                })
                .collect(),
            attempts: c.attempts,
            streams: c.streams.clone(),
            occurrences: c.occurrences,
            first: c.first.as_ref().map(Occurrence::from),
            crash_site: c.crash_site.as_ref().map(Site::from),
            raise_site: c.raise_site.as_ref().map(Site::from),
            importing: c.importing.clone(),
            failures: c.failures.iter().map(|f| f.0).collect(),
            origin: super::provenance::origin(&c.signature).map(str::to_string),
        }
    }
}

impl From<&rank::EvidenceLine> for EvidenceLine {
    fn from(e: &rank::EvidenceLine) -> Self {
        EvidenceLine {
            line: e.line,
            text: e.text.clone(),
            stream: e.stream.clone(),
        }
    }
}

impl From<&remedy::RenderedStep> for Step {
    fn from(s: &remedy::RenderedStep) -> Self {
        Step {
            description: s.description.clone(),
            command: s.command.clone(),
            when: s.when.clone(),
            note: s.note.clone(),
            template: s.template.clone(),
            fits: s.fits,
        }
    }
}

impl From<&dx::Consequence> for Consequence {
    fn from(c: &dx::Consequence) -> Self {
        Consequence {
            signature: c.signature.clone(),
            text: c.text.clone(),
            line: c.line,
            count: c.count,
            linked: c.linked,
        }
    }
}

impl From<&dx::AlsoMatch> for AlsoMatch {
    fn from(a: &dx::AlsoMatch) -> Self {
        AlsoMatch {
            signature: a.signature.clone(),
            title: a.title.clone(),
            category: a.category.into(),
            score: a.score,
        }
    }
}

impl From<&dx::Noise> for Noise {
    fn from(n: &dx::Noise) -> Self {
        Noise {
            signature: n.signature.clone(),
            title: n.title.clone(),
            count: n.count,
            evidence: all(&n.evidence),
        }
    }
}

impl From<&ex::Occurrence> for Occurrence {
    fn from(o: &ex::Occurrence) -> Self {
        Occurrence {
            stream: o.stream.clone(),
            line: o.line,
            timestamp: o.timestamp.clone(),
        }
    }
}

impl From<&ex::Site> for Site {
    fn from(s: &ex::Site) -> Self {
        Site {
            file: s.file.clone(),
            line: s.line,
            function: s.function.clone(),
            source: s.source.clone(),
            log_line: s.log_line,
        }
    }
}

impl From<&ex::Attempt> for Attempt {
    fn from(a: &ex::Attempt) -> Self {
        Attempt {
            index: a.index,
            first_line: a.first_line,
            last_line: a.last_line,
            unit: a.unit.clone(),
            restart_counter: a.restart_counter,
            failures: a.failures,
            workers: a.workers,
        }
    }
}

impl From<&ex::Failure> for Failure {
    fn from(f: &ex::Failure) -> Self {
        Failure {
            id: f.id.0,
            kind: f.kind.into(),
            attempt: f.attempt,
            level: f.level.map(Level::from),
            headline: f.headline.clone(),
            preamble: f.preamble.clone(),
            chain: all(&f.chain),
            elided_exceptions: f.elided_exceptions,
            raise_site: f.raise_site.as_ref().map(Site::from),
            crash_site: f.crash_site.as_ref().map(Site::from),
            importing: f.importing.clone(),
            truncated: f.truncated,
            streams: f.streams.clone(),
            count: f.count,
            first: Occurrence::from(&f.first),
            occurrences: all(&f.occurrences),
            first_in_attempt: f.first_in_attempt,
            consequence_of: f.consequence_of.map(|c| c.0),
            consequence_shape: f.consequence_shape,
            lines: f
                .lines
                .iter()
                .map(|l| BlockLine {
                    line: l.line,
                    text: l.text.clone(),
                })
                .collect(),
            elided_lines: f.elided_lines,
            unit: f.unit.clone(),
        }
    }
}

impl From<&ex::ExceptionInfo> for Exception {
    fn from(e: &ex::ExceptionInfo) -> Self {
        Exception {
            exception_type: e.exception_type.clone(),
            message: e.message.clone(),
            line: e.line,
            follows: e.follows.map(ChainMarker::from),
            wrapper: e.wrapper,
            frames: all(&e.frames),
            elided_frames: e.elided_frames,
        }
    }
}

impl From<&ex::Frame> for Frame {
    fn from(f: &ex::Frame) -> Self {
        Frame {
            file: f.file.clone(),
            line: f.line,
            function: f.function.clone(),
            source: f.source.clone(),
            log_line: f.log_line,
            import_machinery: f.import_machinery,
        }
    }
}

impl From<&fx::Origin> for Origin {
    fn from(o: &fx::Origin) -> Self {
        Origin {
            source: o.source.clone(),
            line: o.line,
        }
    }
}

impl From<&fx::Fact> for Fact {
    fn from(f: &fx::Fact) -> Self {
        Fact {
            value: f.value.clone(),
            origin: Origin::from(&f.origin),
        }
    }
}

impl From<&fx::Package> for Package {
    fn from(p: &fx::Package) -> Self {
        Package {
            name: p.name.clone(),
            version: p.version.clone(),
            requires: p.requires.clone(),
            required_by: p.required_by.clone(),
            origin: Origin::from(&p.origin),
        }
    }
}

impl From<&fx::Gpu> for Gpu {
    fn from(g: &fx::Gpu) -> Self {
        Gpu {
            index: g.index,
            name: g.name.clone(),
            capability: g.capability.clone(),
            origin: Origin::from(&g.origin),
        }
    }
}

impl From<&fx::Facts> for Environment {
    fn from(f: &fx::Facts) -> Self {
        Environment {
            packages: f
                .packages
                .iter()
                .map(|(k, p)| (k.clone(), Package::from(p)))
                .collect(),
            has_package_list: f.has_package_list,
            torch_cuda: f.torch_cuda.as_ref().map(Fact::from),
            cuda_runtime: f.cuda_runtime.as_ref().map(Fact::from),
            driver: f.driver.as_ref().map(Fact::from),
            driver_cuda: f.driver_cuda.as_ref().map(Fact::from),
            arch_list: f
                .arch_list
                .as_ref()
                .map(|(a, o)| (a.clone(), Origin::from(o))),
            gpus: all(&f.gpus),
            reports: f.reports.clone(),
        }
    }
}

impl From<&EnvSeen> for Seen {
    fn from(s: &EnvSeen) -> Self {
        Seen {
            what: s.what.clone(),
            origin: Origin::from(&s.origin),
        }
    }
}

impl From<&findings::Finding> for Finding {
    fn from(f: &findings::Finding) -> Self {
        Finding {
            rule: f.rule.clone(),
            title: f.title.clone(),
            category: f.category.into(),
            severity: f.severity.into(),
            evidence: all(&f.evidence),
            explain: f.explain.clone(),
            remediation: all(&f.remediation),
            references: f.references.clone(),
            signature: f.signature.clone(),
        }
    }
}

/// The JSON Schema of [`Diagnosis`] (the output of `--format json`, one line of
/// `--format jsonl`), pretty-printed with a final newline: what `crashdoc schema
/// diagnosis` prints and `docs/schema/diagnosis.schema.json` holds.
pub fn diagnosis_schema() -> Result<String, serde_json::Error> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let schema = generator.into_root_schema_for::<Diagnosis>();
    Ok(serde_json::to_string_pretty(&schema)? + "\n")
}
