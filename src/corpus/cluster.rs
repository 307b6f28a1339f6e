//! `crashdoc corpus cluster`: the failures nothing in the library explains, over an
//! archive of logs, grouped by shape and ranked by how many logs they occur in — the
//! list a team reads to choose its next signatures (failures → clusters → rules).
//!
//! ## Design
//!
//! - **What is clustered.** Every failure the extractor finds that no signature explains
//!   exactly (a fuzzy resemblance or a structural fallback is no explanation: the
//!   failure still deserves a signature), that is not the consequence of an explained
//!   failure, and that *states* a failure: an exception, a traceback, an abort, a
//!   signal, an OOM kill, a CUDA or NCCL error, a systemd exit, a line logged at error
//!   level, or an error line whose words say something failed ([`is_failure_statement`]:
//!   `error:`, `fatal:`, `failed`, `cannot`, `not found`, `npm ERR!`, `make: ***` …).
//!   CI logs mention errors far more often than they report them (a configure line with
//!   `-Werror`, a changelog's "improve the error message"); such a mention is no
//!   failure and would otherwise fill the top of the ranking with boilerplate that every
//!   build prints. `--every-line` clusters them too; warnings only with `--warnings`.
//! - **The shape** ([`Key`]): the failure's kind, its exception type, its message with
//!   the volatile parts masked ([`mask`]: quoted names, URLs, paths, UUIDs, hex, numbers
//!   and versions, CI runner markers), and the package of the innermost library frame
//!   (`site-packages/<pkg>/…`), so that one message raised by two libraries is two
//!   clusters. Masking here only groups; the regex of a draft is generalized by `sig
//!   new`'s own rules from the first member.
//! - **Ranking**: by the number of logs a shape occurs in (a failure repeated a
//!   thousand times in one log is one log), then by occurrences, then by the shape, so
//!   that a run is deterministic.
//! - **Streaming in bounded memory.** Inputs are read one at a time by a producer
//!   thread and handed to rayon's pool through a bounded queue ([`QUEUE`] jobs): a plain
//!   file is passed by path and read by the worker, an archive entry (tar, tar.gz) is
//!   passed as its bytes when it is at most [`MAX_BUFFERED_ENTRY`] and read on the
//!   producer thread otherwise. Each worker folds its logs into its own table of
//!   clusters; tables are merged at the end. A cluster keeps at most `examples`
//!   members (the first logs in input order, whatever the scheduling), each at most
//!   [`MAX_EXAMPLE_LINES`] lines; at most [`MAX_CLUSTERS`] distinct shapes are kept and
//!   any further one is counted (`dropped`), never silently lost. A log that cannot be
//!   read is an error listed with its name; the others are still clustered.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::LazyLock;

use indicatif::ProgressBar;
use rayon::prelude::*;
use regex::Regex;
use serde::Serialize;

use crate::engine::extract::{Extraction, Failure, FailureId, FailureKind};
use crate::engine::ingest::{IngestError, LineReader, Source};
use crate::engine::matcher::layers::is_exact;
use crate::engine::matcher::{Compiled, EngineKind, Matches};
use crate::engine::pipeline::Engine;
use crate::knowledge::signature::Library;

/// Distinct shapes kept; a further new shape is counted in `dropped`.
pub const MAX_CLUSTERS: usize = 100_000;
/// Lines kept of a member's failure (its example in the draft).
pub const MAX_EXAMPLE_LINES: usize = 25;
/// Characters kept of a member's failure.
pub const MAX_EXAMPLE_CHARS: usize = 4_000;
/// Characters of a masked message kept as the shape.
pub const MAX_SHAPE_CHARS: usize = 200;
/// An archive entry up to this size is handed to the pool as bytes; a larger one is
/// read where it is (the producer thread), never buffered whole.
pub const MAX_BUFFERED_ENTRY: u64 = 8 << 20;
/// Jobs waiting in the queue between the producer and the pool.
pub const QUEUE: usize = 8;

/// What `corpus cluster` counts and keeps.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Members kept per cluster (the draft's examples); at least 1.
    pub examples: usize,
    /// Cluster every unexplained error line, not only those that state a failure.
    pub every_line: bool,
    /// Cluster warnings too.
    pub warnings: bool,
}

/// The shape of a failure: what its cluster is keyed by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Key {
    pub kind: FailureKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    /// The message with its volatile parts masked.
    pub shape: String,
    /// The package of the innermost library frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

/// One log's occurrence of a shape (its first in that log).
#[derive(Debug, Clone, Serialize)]
pub struct Member {
    #[serde(skip)]
    pub seq: u64,
    pub log: String,
    pub line: usize,
    /// The failure's raw log lines (at most [`MAX_EXAMPLE_LINES`]).
    pub text: String,
    /// The message the shape was masked from (the draft's regex is generalized from it).
    #[serde(skip)]
    pub message: String,
}

/// Logs that share one shape.
#[derive(Debug, Clone, Serialize)]
pub struct Cluster {
    #[serde(flatten)]
    pub key: Key,
    /// Logs it occurs in.
    pub logs: usize,
    /// Occurrences in all (a failure repeated in one log counts each time).
    pub occurrences: usize,
    /// Its failures carry an exception chain (a Python traceback or exception).
    #[serde(skip)]
    pub chained: bool,
    /// The first logs it occurs in, in input order.
    pub members: Vec<Member>,
}

impl Cluster {
    fn prune(&mut self, keep: usize) {
        self.members.sort_by_key(|m| (m.seq, m.line));
        self.members.truncate(keep.max(1));
    }
}

/// The result of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Clustering {
    /// Logs read (an unreadable one is in `errors` instead).
    pub logs: usize,
    /// Failures extracted, explained or not.
    pub failures: usize,
    /// Failures nothing in the library explains.
    pub unexplained: usize,
    /// Unexplained failures that were clustered (see the module's design).
    pub clustered: usize,
    /// Distinct shapes.
    pub shapes: usize,
    /// New shapes not kept past [`MAX_CLUSTERS`].
    pub dropped: usize,
    /// Every shape, ranked (the caller applies `--min-count`).
    pub clusters: Vec<Cluster>,
    /// Inputs that could not be read, each with its name.
    pub errors: Vec<String>,
}

// ---------------------------------------------------------------- shapes

#[allow(clippy::expect_used)]
fn re(p: &str) -> Regex {
    Regex::new(p).expect("built-in cluster regex")
}

/// Masks, applied in order; each replaces what varies between occurrences of one
/// failure with a placeholder.
static MASKS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    vec![
        // Travis CI's fold and timing markers, glued to the line a step printed
        (re(r"travis_(?:fold|time):(?:start|end):\S*"), ""),
        (
            re(
                r#"'[^'\n]{0,200}'|"[^"\n]{0,200}"|`[^`\n]{0,200}`|‘[^’\n]{0,200}’|“[^”\n]{0,200}”"#,
            ),
            "<q>",
        ),
        (re(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s<>]+"), "<url>"),
        (
            re(r#"\b[A-Za-z]:\\[^\s'"]*|[^\s'"(),;<>=\[\]{}]*/[^\s'"(),;<>=\[\]{}]*"#),
            "<path>",
        ),
        (
            re(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
            "<id>",
        ),
        (re(r"\b0[xX][0-9a-fA-F]+\b"), "<hex>"),
    ]
});

static SIZE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b[0-9]+(?:\.[0-9]+)? ?(?:[KMGTPE]i?B|[KMGTPE]iB|bytes?|B)\b"));
static HEXISH: LazyLock<Regex> = LazyLock::new(|| re(r"\b[0-9a-fA-F]{7,}\b"));
static NUMBER: LazyLock<Regex> = LazyLock::new(|| re(r"[0-9]+(?:[.,:_-][0-9]+)*"));
static SPACES: LazyLock<Regex> = LazyLock::new(|| re(r"\s+"));

/// A message with its volatile parts masked: `<q>` for a quoted name, `<url>`, `<path>`,
/// `<id>` for a UUID, `<hex>` for an address or a hash, `<size>` for an amount of
/// memory, `<n>` for a number, a version or a time; runs of blanks become one space.
/// A long message is cut after its first sentence (the details that follow vary
/// between versions of one program: PyTorch's OOM message), and at most
/// [`MAX_SHAPE_CHARS`] characters are kept.
pub fn mask(message: &str) -> String {
    let mut s = first_sentence(message).to_string();
    for (r, with) in MASKS.iter() {
        if r.is_match(&s) {
            s = r.replace_all(&s, *with).into_owned();
        }
    }
    s = SIZE.replace_all(&s, "<size>").into_owned();
    s = HEXISH
        .replace_all(&s, |c: &regex::Captures<'_>| {
            let t = &c[0];
            match (
                t.bytes().any(|b| b.is_ascii_digit()),
                t.bytes().any(|b| b.is_ascii_alphabetic()),
            ) {
                (true, true) => "<hex>".to_string(),
                (true, false) => "<n>".to_string(),
                _ => t.to_string(),
            }
        })
        .into_owned();
    s = NUMBER.replace_all(&s, "<n>").into_owned();
    let s = SPACES.replace_all(s.trim(), " ");
    s.chars().take(MAX_SHAPE_CHARS).collect()
}

/// Characters before which a sentence end does not cut a message.
const MIN_SENTENCE_CHARS: usize = 24;

/// The message up to the end of its first sentence (`. ` and a capital letter) when that
/// is at least [`MIN_SENTENCE_CHARS`] characters in.
fn first_sentence(message: &str) -> &str {
    let b = message.as_bytes();
    for (i, w) in b.windows(3).enumerate() {
        if i >= MIN_SENTENCE_CHARS && w[0] == b'.' && w[1] == b' ' && w[2].is_ascii_uppercase() {
            return &message[..=i];
        }
    }
    message
}

/// Words by which a line states that something failed (on the masked text, so a quoted
/// name or a path never counts).
static STATEMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"^\[?(?i:error|fatal|failed|failure|fail|panic|critical|abort|aborted)\b",
        r"|^(?:E: |npm ERR!|\S+: \*\*\*)",
        r"|\b(?:[Ee]rror|ERROR|[Ff]atal|FATAL|[Ee]xception|[Pp]anic|PANIC)\s*[:!]",
        r"|\b(?:[Ee]rror|ERROR) (?:at|in|on|while|during)\b",
        r"|\b(?:[Ff]ailed|FAILED|[Aa]borted|ABORTED|[Ff]ailures?!)",
        r"|(?i:\b(?:cannot|can't|could not|couldn't|unable to|not found|no such file",
        r"|permission denied|refused|timed out|segmentation fault|core dumped",
        r"|undefined reference|command not found|exited with)\b)",
    ))
});

/// Lines that are no failure whatever their words: a command echoed by a shell trace or
/// a CI runner (`+ cmd`, `$ cmd`), a line that gives itself a lower level (`info …`,
/// `warning: …`, apt's `W:` and `N:`), a CMake status message (`-- Looking for … - not
/// found`).
static NOT_A_FAILURE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:\+{1,3} ?\S|\$ \S|-- |[WN]: |\[?(?i:info|notice|debug|verbose|warn|warning)\b)")
});

/// Whether a masked error line states a failure (see the module's design).
pub fn is_failure_statement(shape: &str) -> bool {
    !NOT_A_FAILURE.is_match(shape) && STATEMENT.is_match(shape)
}

/// The package of a frame's file: the folder after `site-packages/` or
/// `dist-packages/` (a module file there is its own package).
pub fn package_of(file: &str) -> Option<String> {
    let file = file.replace('\\', "/");
    let rest = ["site-packages/", "dist-packages/"]
        .iter()
        .find_map(|m| file.rfind(m).map(|i| &file[i + m.len()..]))?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".py").unwrap_or(first);
    (!name.is_empty()).then(|| name.to_string())
}

// ---------------------------------------------------------------- one log

/// A shape found in one log.
#[derive(Debug, Clone)]
struct Found {
    key: Key,
    member: Member,
    occurrences: usize,
    chained: bool,
}

/// What one log gave.
#[derive(Debug, Default)]
struct LogResult {
    found: Vec<Found>,
    failures: usize,
    unexplained: usize,
    error: Option<String>,
}

fn counted(f: &Failure, shape: &str, opts: &Options) -> bool {
    match f.kind {
        FailureKind::Line => false,
        FailureKind::Warning => opts.warnings,
        FailureKind::ErrorLine => {
            opts.every_line || f.level.is_some_and(|l| l.is_error()) || is_failure_statement(shape)
        }
        _ => true,
    }
}

/// A member's example: the failure's last lines (at most [`MAX_EXAMPLE_LINES`] and
/// [`MAX_EXAMPLE_CHARS`]), where a traceback's innermost frames and its exception line
/// are, the part a signature matches.
fn example_of(f: &Failure) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut chars = 0;
    for l in f.lines.iter().rev().take(MAX_EXAMPLE_LINES) {
        if chars + l.text.len() > MAX_EXAMPLE_CHARS && !kept.is_empty() {
            break;
        }
        chars += l.text.len() + 1;
        kept.push(&l.text);
    }
    if kept.is_empty() {
        return f.headline.chars().take(MAX_EXAMPLE_CHARS).collect();
    }
    kept.reverse();
    kept.join("\n")
}

/// The shape and member of one failure.
fn found_of(f: &Failure, seq: u64, log: &str, opts: &Options) -> Option<Found> {
    let primary = f.primary().filter(|e| !e.exception_type.is_empty());
    let message = match primary {
        Some(e) => e.message.lines().next().unwrap_or(""),
        None => f.headline.lines().next().unwrap_or("").trim(),
    };
    let shape = mask(message);
    if !counted(f, &shape, opts) {
        return None;
    }
    let package = primary.and_then(|e| e.frames.iter().rev().find_map(|fr| package_of(&fr.file)));
    Some(Found {
        key: Key {
            // a traceback and a lone exception line of one exception are one shape
            kind: if primary.is_some() {
                FailureKind::Exception
            } else {
                f.kind
            },
            exception: primary.map(|e| e.exception_type.clone()),
            shape,
            package,
        },
        member: Member {
            seq,
            log: log.to_string(),
            line: f.first_line(),
            text: example_of(f),
            // the part the shape was masked from: a draft's regex generalized from it
            // finds every member (a regex is found unanchored in the message)
            message: first_sentence(message).chars().take(300).collect(),
        },
        occurrences: f.count.max(1),
        chained: !f.chain.is_empty(),
    })
}

/// The unexplained failures of one extracted log, one [`Found`] per shape.
fn shapes_of(
    lib: &Library,
    x: &Extraction,
    m: &Matches,
    seq: u64,
    log: &str,
    opts: &Options,
) -> LogResult {
    let explained: std::collections::HashSet<FailureId> = m
        .failures
        .iter()
        .filter(|h| is_exact(lib, m, h))
        .map(|h| h.failure)
        .collect();
    let mut out = LogResult {
        failures: x.failures.len(),
        ..LogResult::default()
    };
    let mut index: HashMap<Key, usize> = HashMap::new();
    for f in &x.failures {
        if explained.contains(&f.id) || f.consequence_of.is_some_and(|c| explained.contains(&c)) {
            continue;
        }
        out.unexplained += 1;
        let Some(found) = found_of(f, seq, log, opts) else {
            continue;
        };
        match index.get(&found.key) {
            Some(&i) => out.found[i].occurrences += found.occurrences,
            None => {
                index.insert(found.key.clone(), out.found.len());
                out.found.push(found);
            }
        }
    }
    out
}

fn scan(
    engine: &mut Engine<'_>,
    lib: &Library,
    reader: Result<LineReader, IngestError>,
    seq: u64,
    opts: &Options,
) -> LogResult {
    let run = |mut reader: LineReader| {
        let name = reader.name().to_string();
        engine
            .run(&mut reader)
            .map(|(x, m)| shapes_of(lib, &x, &m, seq, &name, opts))
    };
    match reader.and_then(run) {
        Ok(r) => r,
        Err(e) => LogResult {
            error: Some(e.to_string()),
            ..LogResult::default()
        },
    }
}

// ---------------------------------------------------------------- the tables

/// One worker's clusters.
#[derive(Debug, Default)]
struct Table {
    clusters: HashMap<Key, Cluster>,
    logs: usize,
    failures: usize,
    unexplained: usize,
    clustered: usize,
    dropped: usize,
    errors: Vec<(u64, String)>,
}

impl Table {
    fn add(mut self, seq: u64, r: LogResult, keep: usize) -> Table {
        if let Some(e) = r.error {
            self.errors.push((seq, e));
            return self;
        }
        self.logs += 1;
        self.failures += r.failures;
        self.unexplained += r.unexplained;
        for f in r.found {
            self.clustered += f.occurrences;
            if let Some(c) = self.clusters.get_mut(&f.key) {
                c.logs += 1;
                c.occurrences += f.occurrences;
                c.members.push(f.member);
                if c.members.len() > 2 * keep.max(1) {
                    c.prune(keep);
                }
            } else if self.clusters.len() < MAX_CLUSTERS {
                self.clusters.insert(
                    f.key.clone(),
                    Cluster {
                        key: f.key,
                        logs: 1,
                        occurrences: f.occurrences,
                        chained: f.chained,
                        members: vec![f.member],
                    },
                );
            } else {
                self.dropped += 1;
            }
        }
        self
    }

    fn merge(self, other: Table, keep: usize) -> Table {
        let (mut big, small) = if self.clusters.len() >= other.clusters.len() {
            (self, other)
        } else {
            (other, self)
        };
        big.logs += small.logs;
        big.failures += small.failures;
        big.unexplained += small.unexplained;
        big.clustered += small.clustered;
        big.dropped += small.dropped;
        big.errors.extend(small.errors);
        for (k, c) in small.clusters {
            if let Some(b) = big.clusters.get_mut(&k) {
                b.logs += c.logs;
                b.occurrences += c.occurrences;
                b.members.extend(c.members);
                b.prune(keep);
            } else if big.clusters.len() < MAX_CLUSTERS {
                big.clusters.insert(k, c);
            } else {
                big.dropped += c.logs;
            }
        }
        big
    }

    fn finish(self, keep: usize) -> Clustering {
        let mut clusters: Vec<Cluster> = self
            .clusters
            .into_values()
            .map(|mut c| {
                c.prune(keep);
                c
            })
            .collect();
        clusters.sort_by(|a, b| {
            b.logs
                .cmp(&a.logs)
                .then(b.occurrences.cmp(&a.occurrences))
                .then_with(|| a.key.cmp(&b.key))
        });
        let mut errors = self.errors;
        errors.sort();
        Clustering {
            logs: self.logs,
            failures: self.failures,
            unexplained: self.unexplained,
            clustered: self.clustered,
            shapes: clusters.len(),
            dropped: self.dropped,
            clusters,
            errors: errors.into_iter().map(|(_, e)| e).collect(),
        }
    }
}

// ---------------------------------------------------------------- the run

/// What a worker reads.
enum Body {
    File(PathBuf),
    Bytes(Vec<u8>),
}

struct Job {
    seq: u64,
    name: String,
    body: Body,
}

/// Whether a path names a tar archive (`.tar`, `.tar.gz`, `.tgz`), by its name.
pub fn is_archive(p: &Path) -> bool {
    let n = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    n.ends_with(".tar") || n.ends_with(".tar.gz") || n.ends_with(".tgz")
}

/// Whether a path names a zip archive (by its name, or its first bytes): refused with
/// a message rather than read as text.
fn is_zip(p: &Path) -> bool {
    let named = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    let mut head = [0u8; 4];
    let magic = std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == *b"PK\x03\x04");
    named || magic
}

fn run_job(engine: &mut Engine<'_>, lib: &Library, job: Job, opts: &Options) -> LogResult {
    let reader = match job.body {
        Body::File(p) => LineReader::open(&Source::Path(p)),
        Body::Bytes(b) => LineReader::from_reader(Box::new(std::io::Cursor::new(b)), job.name),
    };
    scan(engine, lib, reader, job.seq, opts)
}

/// Clusters the unexplained failures of every log the paths name (log files, gzip or
/// plain, and tar archives of them; the caller expands folders). `progress` counts
/// the logs (its length grows as archives are read).
pub fn cluster(
    compiled: &Compiled<'_>,
    paths: &[PathBuf],
    opts: &Options,
    progress: &ProgressBar,
) -> Clustering {
    let keep = opts.examples.max(1);
    let (tx, rx) = sync_channel::<Job>(QUEUE);
    let (pooled, inline) = std::thread::scope(|s| {
        let producer = s.spawn(move || produce(compiled, paths, &tx, opts, progress));
        let pooled = rx
            .into_iter()
            .par_bridge()
            .map_init(
                || Engine::new(compiled, EngineKind::Prefilter),
                |engine, job| {
                    let seq = job.seq;
                    let r = run_job(engine, compiled.library, job, opts);
                    progress.inc(1);
                    (seq, r)
                },
            )
            .fold(Table::default, |t, (seq, r)| t.add(seq, r, keep))
            .reduce(Table::default, |a, b| a.merge(b, keep));
        let inline = producer.join().unwrap_or_else(|_| {
            let mut t = Table::default();
            t.errors
                .push((u64::MAX, "internal: the input reader panicked".to_string()));
            t
        });
        (pooled, inline)
    });
    progress.finish_and_clear();
    pooled.merge(inline, keep).finish(keep)
}

/// The producer: sends one job per log, in input order; what it reads itself (an
/// archive entry too large to buffer) and every archive error go in its own table.
fn produce(
    compiled: &Compiled<'_>,
    paths: &[PathBuf],
    tx: &SyncSender<Job>,
    opts: &Options,
    progress: &ProgressBar,
) -> Table {
    let mut own = Table::default();
    let mut seq = 0u64;
    for p in paths {
        if is_zip(p) {
            let shown = escape(&p.display().to_string());
            own.errors.push((
                seq,
                format!("{shown}: a zip archive, which is not read (tar archives are): extract it first, e.g. `unzip -d logs {shown}`"),
            ));
            continue;
        }
        if is_archive(p) {
            own = read_archive(compiled, p, &mut seq, tx, opts, progress, own);
            continue;
        }
        progress.inc_length(1);
        let job = Job {
            seq,
            name: p.display().to_string(),
            body: Body::File(p.clone()),
        };
        seq += 1;
        if tx.send(job).is_err() {
            break;
        }
    }
    own
}

fn open_archive(p: &Path) -> std::io::Result<Box<dyn Read + Send>> {
    let mut f = std::io::BufReader::new(std::fs::File::open(p)?);
    let head = std::io::BufRead::fill_buf(&mut f)?;
    if head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b {
        Ok(Box::new(flate2::read::MultiGzDecoder::new(f)))
    } else {
        Ok(Box::new(f))
    }
}

/// Reads a tar archive's regular files, one job each.
#[allow(clippy::too_many_arguments)]
fn read_archive(
    compiled: &Compiled<'_>,
    p: &Path,
    seq: &mut u64,
    tx: &SyncSender<Job>,
    opts: &Options,
    progress: &ProgressBar,
    mut own: Table,
) -> Table {
    let shown = crate::knowledge::text::escape_control(&p.display().to_string());
    let keep = opts.examples.max(1);
    let fail = |own: &mut Table, seq: u64, what: String| own.errors.push((seq, what));
    let reader = match open_archive(p) {
        Ok(r) => r,
        Err(e) => {
            fail(&mut own, *seq, format!("{shown}: cannot open: {e}"));
            return own;
        }
    };
    let mut archive = tar::Archive::new(reader);
    let entries = match archive.entries() {
        Ok(e) => e,
        Err(e) => {
            fail(&mut own, *seq, format!("{shown}: not a tar archive: {e}"));
            return own;
        }
    };
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                fail(
                    &mut own,
                    *seq,
                    format!("{shown}: unreadable archive entry: {e}"),
                );
                break;
            }
        };
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let inner = entry
            .path()
            .map(|q| q.display().to_string())
            .unwrap_or_else(|_| "?".to_string());
        let name = format!("{}:{}", p.display(), inner);
        let this = *seq;
        *seq += 1;
        progress.inc_length(1);
        if entry.size() > MAX_BUFFERED_ENTRY {
            let r = scan_streaming(compiled, &mut entry, name, this, opts);
            progress.inc(1);
            own = own.add(this, r, keep);
            continue;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
        if let Err(e) = entry.read_to_end(&mut bytes) {
            fail(
                &mut own,
                this,
                format!("{}: cannot read: {e}", escape(&name)),
            );
            continue;
        }
        let job = Job {
            seq: this,
            name,
            body: Body::Bytes(bytes),
        };
        if tx.send(job).is_err() {
            break;
        }
    }
    own
}

/// Scans an archive entry too large to buffer: this thread copies it into a pipe that
/// a scoped thread's reader owns (a reader must own its input; an entry borrows its
/// archive), so it streams in bounded memory.
fn scan_streaming(
    compiled: &Compiled<'_>,
    entry: &mut dyn Read,
    name: String,
    seq: u64,
    opts: &Options,
) -> LogResult {
    let failed = |what: String| LogResult {
        error: Some(format!("{}: {what}", escape(&name))),
        ..LogResult::default()
    };
    let (rd, mut wr) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return failed(format!("cannot stream: {e}")),
    };
    let reader_name = name.clone();
    std::thread::scope(|s| {
        let scanner = s.spawn(move || {
            let mut engine = Engine::new(compiled, EngineKind::Prefilter);
            let reader = LineReader::from_reader(Box::new(rd), reader_name);
            scan(&mut engine, compiled.library, reader, seq, opts)
        });
        let copied = std::io::copy(entry, &mut wr);
        drop(wr);
        match (scanner.join(), copied) {
            (Ok(r), Ok(_)) => r,
            (Ok(_), Err(e)) => failed(format!("cannot read: {e}")),
            (Err(_), _) => failed("internal: the scan panicked".to_string()),
        }
    })
}

fn escape(s: &str) -> String {
    crate::knowledge::text::escape_control(s)
}

// ---------------------------------------------------------------- output

/// The `sig new` draft of a cluster, made by the caller (drafting is a contributor's
/// tool, a layer this one does not import).
#[derive(Debug, Clone, Serialize)]
pub struct DraftView {
    pub id: String,
    /// Its positive examples it matches on its own, of `examples`.
    pub covers: usize,
    pub examples: usize,
    pub yaml: String,
}

/// A cluster as shown: its rank, and its draft or why there is none.
#[derive(Debug, Clone, Serialize)]
pub struct Shown<'a> {
    pub rank: usize,
    #[serde(flatten)]
    pub cluster: &'a Cluster,
    /// Logs it occurs in beyond the members listed.
    pub more_logs: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft: Option<DraftView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_error: Option<String>,
}

impl<'a> Shown<'a> {
    pub fn new(rank: usize, cluster: &'a Cluster, draft: Result<DraftView, String>) -> Self {
        let (draft, draft_error) = match draft {
            Ok(d) => (Some(d), None),
            Err(e) => (None, Some(e)),
        };
        Shown {
            rank,
            cluster,
            more_logs: cluster.logs.saturating_sub(cluster.members.len()),
            draft,
            draft_error,
        }
    }
}

/// The JSON document (`--format json`).
#[derive(Debug, Serialize)]
struct JsonOut<'a> {
    version: u32,
    logs: usize,
    failures: usize,
    unexplained: usize,
    clustered: usize,
    shapes: usize,
    dropped: usize,
    min_count: usize,
    /// Shapes occurring in at least `min_count` logs.
    recurring: usize,
    clusters: &'a [Shown<'a>],
    errors: &'a [String],
}

/// `--format json`: the counts and the shown clusters, members and drafts included.
pub fn to_json(
    c: &Clustering,
    min_count: usize,
    shown: &[Shown<'_>],
) -> serde_json::Result<String> {
    let out = JsonOut {
        version: 1,
        logs: c.logs,
        failures: c.failures,
        unexplained: c.unexplained,
        clustered: c.clustered,
        shapes: c.shapes,
        dropped: c.dropped,
        min_count,
        recurring: recurring(c, min_count),
        clusters: shown,
        errors: &c.errors,
    };
    Ok(serde_json::to_string_pretty(&out)? + "\n")
}

/// Shapes occurring in at least `min_count` logs.
pub fn recurring(c: &Clustering, min_count: usize) -> usize {
    c.clusters.iter().filter(|k| k.logs >= min_count).count()
}

/// Members listed in the text output (the JSON lists every one kept).
pub const TEXT_MEMBERS: usize = 3;

/// The text output: a heading, then each shown cluster with its count, its first
/// members (log:line and the first line) and its draft.
pub fn text(c: &Clustering, heading: &str, shown: &[Shown<'_>]) -> String {
    use std::fmt::Write as _;
    let mut out = format!("{heading}\n");
    for s in shown {
        let k = s.cluster;
        let _ = write!(
            out,
            "\n#{} {} logs, {} occurrences: {}",
            s.rank,
            k.logs,
            k.occurrences,
            k.key.kind.as_str()
        );
        if let Some(e) = &k.key.exception {
            let _ = write!(out, " {}", escape(e));
        }
        if let Some(p) = &k.key.package {
            let _ = write!(out, " in package {}", escape(p));
        }
        let _ = writeln!(out, "\n   shape: {}", escape(&k.key.shape));
        for m in k.members.iter().take(TEXT_MEMBERS) {
            let first = m.text.lines().next().unwrap_or("");
            let first: String = first.chars().take(160).collect();
            let _ = writeln!(out, "   {}:{}: {}", escape(&m.log), m.line, escape(&first));
        }
        let more = k.logs.saturating_sub(k.members.len().min(TEXT_MEMBERS));
        if more > 0 {
            let _ = writeln!(out, "   … and {more} more log(s)");
        }
        match (&s.draft, &s.draft_error) {
            (Some(d), _) => {
                let _ = writeln!(
                    out,
                    "   draft `{}` (matches {} of its {} examples on its own; save it as signatures/<area>/{}.yaml):",
                    d.id, d.covers, d.examples, d.id
                );
                for l in d.yaml.lines() {
                    let _ = writeln!(out, "     | {l}");
                }
            }
            (None, Some(e)) => {
                let _ = writeln!(out, "   no draft: {}", escape(e));
            }
            (None, None) => {}
        }
    }
    if c.dropped > 0 {
        let _ = writeln!(
            out,
            "\n{} new shape(s) past the first {MAX_CLUSTERS} were counted, not kept",
            c.dropped
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_parts_are_masked() {
        // ../shared/peer is not copied: these are CONSTRUCTED in the shapes of common lines
        assert_eq!(
            mask("curl: (22) The requested URL returned error: 404 Not Found"),
            "curl: (<n>) The requested URL returned error: <n> Not Found"
        );
        assert_eq!(
            mask("OSError: cannot open '/data/m/config.json' at https://hf.co/x/y 0x7f3a 3fa85f64-5717-4562-b3fc-2c963f66afa6"),
            "OSError: cannot open <q> at <url> <hex> <id>"
        );
        assert_eq!(
            mask("failed at /usr/lib/python3.10/x.py line 12, commit 1d9aca41ff"),
            "failed at <path> line <n>, commit <hex>"
        );
        assert_eq!(
            mask("CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has 1.2 GiB free"),
            "CUDA out of memory. Tried to allocate <size>."
        );
        assert_eq!(
            mask("travis_time:end:0a1b:start=1,finish=2 The command \"make\" exited with 2."),
            "The command <q> exited with <n>."
        );
    }

    #[test]
    fn a_mention_of_an_error_is_no_failure() {
        for yes in [
            "error: linker `cc` not found",
            "npm ERR! Test failed.",
            "make: *** [test] Error <n>",
            "rake aborted!",
            "E: Unable to locate package <q>",
            "curl: (<n>) The requested URL returned error: <n> Not Found",
            "CMake Error at <path> (message):",
        ] {
            assert!(is_failure_statement(yes), "{yes}");
        }
        for no in [
            "Allow some information gathering to give useful error messages",
            "Authentication timestamp timeout: <n> minutes",
            "Compilation: gcc -c -Werror=format-security",
            "+ export ERROR_LOG=<q>",
            "$ echo failed",
            "info <q> is an optional dependency and failed compatibility check.",
            "-- Looking for pthread_create - not found",
            "W: Some index files failed to download.",
        ] {
            assert!(!is_failure_statement(no), "{no}");
        }
    }

    #[test]
    fn the_package_of_a_library_frame() {
        assert_eq!(
            package_of("/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py")
                .as_deref(),
            Some("torch")
        );
        assert_eq!(
            package_of("/usr/lib/python3/dist-packages/six.py").as_deref(),
            Some("six")
        );
        assert_eq!(package_of("/home/u/app/train.py"), None);
    }
}
