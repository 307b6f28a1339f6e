//! Draft: a first signature from a log the library does not explain (`crashdoc sig new`).
//!
//! The draft is made from the log's first *unexplained* failure (the first failure of an
//! attempt that no signature matched, else the first unmatched failure that is not a
//! warning, else any unmatched one):
//!
//! - `exception:` the type of its primary exception (when it has one);
//! - `message:` a regex generalized from its message by [`generalize`]: the volatile
//!   parts — quoted names, URLs, timestamps, hex addresses, hosts, paths, pids, versions,
//!   numbers — become named captures with ASCII patterns, the rest is escaped literally;
//! - `atoms:` left to derivation unless the derived ones would be weak (see
//!   [`crate::tools::lint::weak_atom`]); then the longest literal part of the message;
//! - `category:` guessed from phrases of the message ([`guess_category`]), `other`
//!   otherwise; a comment says it was guessed;
//! - the failure's raw log lines as the positive example (they are real: they come from
//!   the log), the log's name or the `--source` given as its source and reference.
//!
//! The YAML is written by hand (the serde model only deserializes, its values carry
//! spans), with single-quoted scalars and literal blocks, and parsed back before it is
//! returned, so that a draft that would not load is an error here and not in the
//! contributor's editor.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

use crate::engine::diagnosis::BuildOptions;
use crate::engine::extract::{Extraction, Failure, FailureId, FailureKind};
use crate::engine::ingest::LineReader;
use crate::engine::matcher::{Compiled, EngineKind, Matches, PrefilterError};
use crate::engine::pipeline::Engine;
use crate::knowledge::reading::valid_id;
use crate::knowledge::signature::load::{compile_files, LibraryFile};
use crate::knowledge::signature::model::Category;
use crate::knowledge::signature::Library;
use crate::knowledge::signature::SigIndex;

/// Messages longer than this are cut (at a character boundary) before generalizing.
pub const MAX_MESSAGE_CHARS: usize = 300;

/// Why no draft could be made.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    #[error("{0}: no failure found in the log (nothing to draft a signature from)")]
    NoFailure(String),
    #[error("{0}: every failure is already explained by the library (first: `{1}` by {2})")]
    AllExplained(String, String, String),
    #[error("{0}: already explained by `{2}` ({3}): its failing block, lines {1}; nothing to draft from it{4}")]
    Explained(String, String, String, String, String),
    #[error("{0}: {1} failures the library does not explain; choose one with --failure N:\n{2}")]
    Several(String, usize, String),
    #[error(
        "{0}: no failure {1}: the log has {2} candidate(s) (run without --failure to list them)"
    )]
    NoSuchFailure(String, usize, usize),
    #[error("`{0}` is not a valid id (kebab-case: lowercase letters, digits, single dashes)")]
    BadId(String),
    #[error("id `{0}` is already used by {1}")]
    TakenId(String, String),
    #[error("internal: the draft does not load: {0}")]
    DoesNotLoad(String),
    #[error("{0}")]
    Prefilter(#[from] PrefilterError),
}

/// What kind of volatile token a capture stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Volatile {
    Name,
    Url,
    Time,
    Hex,
    Host,
    Path,
    Pid,
    Version,
    Number,
}

impl Volatile {
    fn name(self) -> &'static str {
        match self {
            Volatile::Name => "name",
            Volatile::Url => "url",
            Volatile::Time => "time",
            Volatile::Hex => "addr",
            Volatile::Host => "host",
            Volatile::Path => "path",
            Volatile::Pid => "pid",
            Volatile::Version => "version",
            Volatile::Number => "number",
        }
    }

    /// The capture's pattern (ASCII only).
    fn pattern(self) -> &'static str {
        match self {
            Volatile::Name => "[^'\"]+",
            Volatile::Url => r#"[a-z][a-z0-9+.-]*://[^\s'"]+"#,
            Volatile::Time => r"[0-9][0-9:.,T +-]*[0-9Z]",
            Volatile::Hex => "0x[0-9a-fA-F]+",
            Volatile::Host => r"[A-Za-z0-9.-]+(?::[0-9]+)?",
            Volatile::Path => r#"[^\s'"]+"#,
            Volatile::Pid => "[0-9]+",
            Volatile::Version => "[0-9]+(?:\\.[0-9]+)+(?:[+-][A-Za-z0-9.]*)?",
            Volatile::Number => "[0-9]+(?:\\.[0-9]+)?",
        }
    }
}

/// A message turned into a regex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generalized {
    pub regex: String,
    /// Capture name → (kind, the text it replaced).
    pub captures: Vec<(String, Volatile, String)>,
    /// The literal parts, in order.
    pub literals: Vec<String>,
}

#[allow(clippy::expect_used)]
fn re(p: &str) -> Regex {
    Regex::new(p).expect("built-in token regex")
}

/// Recognizers, tried in order at each token start; each is anchored.
static TOKENS: LazyLock<Vec<(Volatile, Regex)>> = LazyLock::new(|| {
    vec![
        (
            Volatile::Url,
            re(r#"^[a-z][a-z0-9+.-]*://[^\s'"]+[^\s'".,;:)]"#),
        ),
        (
            Volatile::Time,
            re(
                r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?|[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?)",
            ),
        ),
        (Volatile::Hex, re(r"^0x[0-9a-fA-F]+")),
        (
            Volatile::Host,
            re(
                r"^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?::[0-9]+)?|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*:[0-9]{2,5})",
            ),
        ),
        (
            Volatile::Path,
            re(r#"^(?:[A-Za-z]:\\|\.{0,2}/|~/)[^\s'",;()]*[A-Za-z0-9_]"#),
        ),
        (
            Volatile::Version,
            re(r"^v?[0-9]+(?:\.[0-9]+)+(?:[+-][A-Za-z0-9.]*[A-Za-z0-9])?"),
        ),
        (Volatile::Number, re(r"^[0-9]+(?:\.[0-9]+)?")),
    ]
});

static QUOTED: LazyLock<Regex> = LazyLock::new(|| re(r#"^(?:'[^'\n]{1,200}'|"[^"\n]{1,200}")"#));
static PID: LazyLock<Regex> = LazyLock::new(|| re(r"^(?i:pid)(?:\(s\))?[= ]([0-9]+)"));
/// Kept literal: they define the failure rather than vary with it.
static KEEP: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:Errno [0-9]+|errno [0-9]+|error [0-9]+)"));

fn boundary_before(s: &str, i: usize, dotted: bool) -> bool {
    s[..i].chars().next_back().is_none_or(|c| {
        !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || (c == '.' && !dotted))
    })
}

fn boundary_after(s: &str, end: usize) -> bool {
    s[end..]
        .chars()
        .next()
        .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
}

/// Literal letters and digits a regex must keep to stay specific; below this, a quoted
/// name is the failure's identity (`KeyError: 'layers.0.mlp.weight'`) and only the
/// volatile parts inside it are captured.
pub const MIN_LITERAL_ALNUM: usize = 8;

/// Turns a message into a regex: volatile parts captured, the rest escaped.
pub fn generalize(message: &str) -> Generalized {
    let g = generalize_with(message, true);
    let alnum: usize = g
        .literals
        .iter()
        .map(|l| l.chars().filter(char::is_ascii_alphanumeric).count())
        .sum();
    if alnum < MIN_LITERAL_ALNUM && g.captures.iter().any(|c| c.1 == Volatile::Name) {
        generalize_with(message, false)
    } else {
        g
    }
}

fn generalize_with(message: &str, whole_quotes: bool) -> Generalized {
    let message: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
    let s = message.as_str();
    let mut out = Generalized {
        regex: String::new(),
        captures: Vec::new(),
        literals: Vec::new(),
    };
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut literal = String::new();
    let mut add_capture =
        |out: &mut Generalized, literal: &mut String, kind: Volatile, text: &str| {
            if !literal.is_empty() {
                out.regex.push_str(&regex::escape(literal));
                out.literals.push(std::mem::take(literal));
            }
            let n = counts.entry(kind.name()).or_insert(0);
            *n += 1;
            let name = if *n == 1 {
                kind.name().to_string()
            } else {
                format!("{}{}", kind.name(), n)
            };
            let _ = write!(out.regex, "(?P<{name}>{})", kind.pattern());
            out.captures.push((name, kind, text.to_string()));
        };
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        let at_start = boundary_before(s, i, !whole_quotes);
        if at_start {
            if let Some(m) = KEEP.find(rest) {
                literal.push_str(m.as_str());
                i += m.end();
                continue;
            }
            if let Some(c) = PID.captures(rest) {
                if let (Some(all), Some(num)) = (c.get(0), c.get(1)) {
                    literal.push_str(&rest[..num.start()]);
                    add_capture(&mut out, &mut literal, Volatile::Pid, num.as_str());
                    i += all.end();
                    continue;
                }
            }
        }
        if let Some(m) = QUOTED.find(rest).filter(|_| whole_quotes) {
            let q = &rest[..1];
            let inner = &m.as_str()[1..m.as_str().len() - 1];
            if !inner.contains(['\'', '"']) {
                let kind = if inner.contains('/') || inner.contains('\\') {
                    Volatile::Path
                } else {
                    Volatile::Name
                };
                literal.push_str(q);
                add_capture(&mut out, &mut literal, kind, inner);
                literal.push_str(q);
                i += m.end();
                continue;
            }
        }
        let mut matched = false;
        if at_start {
            for (kind, r) in TOKENS.iter() {
                if let Some(m) = r.find(rest) {
                    if m.end() > 0 && boundary_after(s, i + m.end()) {
                        add_capture(&mut out, &mut literal, *kind, m.as_str());
                        i += m.end();
                        matched = true;
                        break;
                    }
                }
            }
        }
        if !matched {
            let ch = rest.chars().next().map_or(1, char::len_utf8);
            literal.push_str(&rest[..ch]);
            i += ch;
        }
    }
    if !literal.is_empty() {
        out.regex.push_str(&regex::escape(&literal));
        out.literals.push(literal);
    }
    out
}

/// Phrases that point at a category, checked in order (case-insensitive).
const CATEGORY_HINTS: &[(&str, Category)] = &[
    ("cuda out of memory", Category::GpuOom),
    ("out of memory", Category::HostOom),
    ("no space left on device", Category::DiskFull),
    ("permission denied", Category::PermissionDenied),
    ("address already in use", Category::PortInUse),
    ("no module named", Category::ImportError),
    ("cannot import name", Category::ImportError),
    (
        "cannot open shared object file",
        Category::MissingSharedLibrary,
    ),
    ("undefined symbol", Category::UndefinedSymbolAbi),
    ("nccl", Category::NcclCommunication),
    ("timed out", Category::HangTimeout),
    ("timeout", Category::HangTimeout),
    ("connection refused", Category::NetworkDownload),
    ("name or service not known", Category::NetworkDownload),
    ("does not match", Category::VersionMismatch),
    ("version mismatch", Category::VersionMismatch),
    ("no cuda gpus", Category::GpuUnavailable),
    ("weight", Category::ModelLoadError),
    ("checkpoint", Category::ModelLoadError),
];

/// A category guessed from the text, and the phrase that decided it.
pub fn guess_category(text: &str) -> (Category, Option<&'static str>) {
    let lower = text.to_ascii_lowercase();
    for (phrase, cat) in CATEGORY_HINTS {
        if lower.contains(phrase) {
            return (*cat, Some(phrase));
        }
    }
    (Category::Other, None)
}

/// A draft, ready to be written.
#[derive(Debug, Clone)]
pub struct Draft {
    pub id: String,
    /// Suggested library area (`python`, `gpu`, `serving`, `system`).
    pub area: &'static str,
    pub yaml: String,
    pub generalized: Generalized,
    /// The failure it was drafted from.
    pub headline: String,
    /// What the contributor should know about the choice (drafted from the failing
    /// block while other failures are unexplained too).
    pub note: Option<String>,
}

/// Extracts and matches a text with the library (prefilter engine).
pub fn run_text(
    lib: &Library,
    name: &str,
    text: &str,
) -> Result<(Extraction, Matches), DraftError> {
    let compiled = Compiled::new(lib)?;
    let mut engine = Engine::new(&compiled, EngineKind::Prefilter);
    let cursor = std::io::Cursor::new(text.as_bytes().to_vec());
    let unreadable =
        |e: crate::engine::ingest::IngestError| DraftError::Read(name.to_string(), e.to_string());
    let mut reader =
        LineReader::from_reader(Box::new(cursor), name.to_string()).map_err(unreadable)?;
    engine.run(&mut reader).map_err(unreadable)
}

/// The first failure no signature explains exactly (a fuzzy resemblance or a structural
/// fallback is no exact explanation: such a failure still deserves a signature).
pub fn first_unexplained<'x>(
    lib: &Library,
    x: &'x Extraction,
    m: &Matches,
) -> Result<&'x Failure, Option<(FailureId, SigIndex)>> {
    let explained = |f: &Failure| {
        m.failures
            .iter()
            .find(|h| h.failure == f.id && crate::engine::matcher::layers::is_exact(lib, m, h))
    };
    let free: Vec<&Failure> = x
        .failures
        .iter()
        .filter(|f| explained(f).is_none() && !is_code_line(&f.headline) && own_words(f).is_some())
        .collect();
    let pick = free
        .iter()
        .find(|f| f.first_in_attempt && f.kind != FailureKind::Warning)
        .or_else(|| free.iter().find(|f| f.kind != FailureKind::Warning))
        .or_else(|| free.first());
    match pick {
        Some(f) => Ok(f),
        None => Err(x
            .failures
            .first()
            .and_then(|f| explained(f).map(|h| (f.id, h.signature)))),
    }
}

fn kebab_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            cur.push(c.to_ascii_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// An id from the exception type and the first words of the message's literal parts.
pub fn suggest_id(exception: Option<&str>, g: &Generalized) -> String {
    let mut words: Vec<String> = Vec::new();
    if let Some(t) = exception {
        let short = t.rsplit('.').next().unwrap_or(t);
        words.extend(kebab_words(short));
    }
    let lit: Vec<String> = g
        .literals
        .iter()
        .flat_map(|l| kebab_words(l))
        .filter(|w| w.len() > 1 && !w.bytes().all(|b| b.is_ascii_digit()))
        .take(5)
        .collect();
    words.extend(lit);
    let mut id = String::new();
    for w in words {
        if id.len() + w.len() + 1 > 60 {
            break;
        }
        if !id.is_empty() {
            id.push('-');
        }
        id.push_str(&w);
    }
    if id.is_empty() {
        "drafted-signature".to_string()
    } else {
        id
    }
}

/// A YAML scalar on one line: single-quoted, or double-quoted with `\u` escapes when the
/// text holds a control, bidi or zero-width character (a `\r` or a U+2028 could start a
/// new YAML line, and a C0 or DEL character is not allowed raw in a YAML file).
pub fn yaml_quote(s: &str) -> String {
    if !s.chars().any(yaml_needs_escape) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    yaml_double(s)
}

fn yaml_needs_escape(c: char) -> bool {
    c.is_control() || crate::knowledge::text::is_invisible(c)
}

/// A YAML double-quoted scalar: `"`, `\` and every character [`yaml_needs_escape`]
/// names are escaped.
fn yaml_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if yaml_needs_escape(c) => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A YAML scalar for a (possibly multi-line) log excerpt at the given indentation.
fn yaml_block(text: &str, indent: usize) -> String {
    let printable = text
        .chars()
        .all(|c| c == '\n' || c == '\t' || !yaml_needs_escape(c));
    let first_blank = text
        .lines()
        .next()
        .is_some_and(|l| l.starts_with([' ', '\t']));
    if !printable || text.lines().any(|l| l.starts_with('\t')) {
        return yaml_double(text);
    }
    let pad = " ".repeat(indent);
    let mut out = if first_blank {
        format!("|{indent}\n", indent = 2)
    } else {
        "|\n".to_string()
    };
    for l in text.lines() {
        if l.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{pad}{l}");
        }
    }
    out.pop();
    out
}

fn area_of(cat: Category, chained: bool) -> &'static str {
    match cat {
        Category::GpuOom
        | Category::GpuUnavailable
        | Category::NcclCommunication
        | Category::CudaDriverTooOld
        | Category::UnsupportedComputeCapability => "gpu",
        Category::KvCacheInsufficient | Category::UnsupportedConfig | Category::ModelLoadError => {
            "serving"
        }
        _ if !chained => "system",
        _ => "python",
    }
}

/// Options of a draft.
/// A line of program source echoed by a traceback or a crash dump (`raise ValueError(`,
/// `x = f(`, `^^^^`): never a failure to draft a signature from.
pub fn is_code_line(headline: &str) -> bool {
    static CODE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"^\s*(?:raise\b|assert\b|return\b|File "|def |class |import |from \S+ import |self\.|[\^~]{3,}|[A-Za-z_][\w.\[\]]*\s*=\s*[\w.]+\()"#,
        )
    });
    let t = headline.trim_end();
    CODE.is_match(t) || t.ends_with('(') || t.ends_with(',')
}

/// The failures a draft can be made from: not exactly explained by the library, not a
/// consequence of another, not a source-code line; one per headline, in log order.
pub fn candidates<'x>(lib: &Library, x: &'x Extraction, m: &Matches) -> Vec<&'x Failure> {
    let mut seen = std::collections::BTreeSet::new();
    x.failures
        .iter()
        .filter(|f| {
            f.consequence_of.is_none()
                && !is_code_line(&f.headline)
                && own_words(f).is_some()
                && !m.failures.iter().any(|h| {
                    h.failure == f.id && crate::engine::matcher::layers::is_exact(lib, m, h)
                })
        })
        .filter(|f| seen.insert(f.headline.lines().next().unwrap_or("").trim().to_string()))
        .collect()
}

/// `sig new --from LOG` without `--failure` on a log with several candidates: each,
/// numbered, with its line and message.
pub fn list_candidates(fs: &[&Failure]) -> String {
    let mut out = String::new();
    for (i, f) in fs.iter().enumerate() {
        let own = own_words(f).unwrap_or_default();
        let head: String = own.chars().take(MAX_MESSAGE_CHARS).collect();
        let _ = writeln!(
            out,
            "  {}. line {} ({}): {}",
            i + 1,
            f.first_line(),
            f.kind.as_str(),
            crate::knowledge::text::escape_control(&head)
        );
    }
    out
}

#[derive(Debug, Clone, Default)]
pub struct DraftOptions {
    pub id: Option<String>,
    /// Where the log comes from (a thread URL); the log's name otherwise.
    pub source: Option<String>,
}

/// Drafts a signature from the `n`th candidate failure of a log ([`candidates`], from 1);
/// without `n`, from the only candidate, and a log with several is
/// [`DraftError::Several`] (the list).
pub fn draft_choice(
    lib: &Library,
    log_name: &str,
    text: &str,
    opts: &DraftOptions,
    n: Option<usize>,
) -> Result<Draft, DraftError> {
    let (x, m) = run_text(lib, log_name, text)?;
    let cs = candidates(lib, &x, &m);
    let f = match (n, cs.len()) {
        (Some(n), len) => match n.checked_sub(1).and_then(|i| cs.get(i)) {
            Some(f) => *f,
            None => return Err(DraftError::NoSuchFailure(log_name.to_string(), n, len)),
        },
        (None, _) => return draft_default(lib, log_name, text, opts, &cs),
    };
    draft_from(lib, log_name, f, opts)
}

/// `sig new` without `--failure`: the failing block the report leads with
/// ([`crate::engine::diagnosis::Primary`]) when nothing explains it; a log whose
/// failing block a signature already explains is [`DraftError::Explained`] (by what,
/// and the other unexplained failures to choose from), never a draft from a leftover
/// line; without a failing block, the only candidate, else the list.
fn draft_default(
    lib: &Library,
    log_name: &str,
    text: &str,
    opts: &DraftOptions,
    cs: &[&Failure],
) -> Result<Draft, DraftError> {
    let compiled = Compiled::new(lib)?;
    let mut engine = Engine::new(&compiled, EngineKind::Prefilter);
    let d = engine.diagnose_text(log_name, text, BuildOptions { top: 1 });
    let Some(p) = d.primary.as_ref() else {
        return match cs {
            [] => draft(lib, log_name, text, opts),
            [f] => draft_from(lib, log_name, f, opts),
            _ => Err(DraftError::Several(
                log_name.to_string(),
                cs.len(),
                list_candidates(cs),
            )),
        };
    };
    if let Some(f) = cs.iter().find(|f| Some(f.id) == p.failure) {
        let mut out = draft_from(lib, log_name, f, opts)?;
        let others = cs.len() - 1;
        out.note = Some(format!(
            "drafted from the failing block, lines {}–{}{}",
            p.start,
            p.end,
            if others > 0 {
                format!(
                    " ({others} other failure(s) the library does not explain: --failure N picks one)\n{}",
                    list_candidates(cs)
                )
            } else {
                String::new()
            }
        ));
        return Ok(out);
    }
    match d.causes.first().filter(|_| d.found()) {
        Some(c) => Err(DraftError::Explained(
            log_name.to_string(),
            format!("{}–{}", p.start, p.end),
            c.signature.clone(),
            c.title.clone(),
            if cs.is_empty() {
                String::new()
            } else {
                format!(
                    ". Other failures the library does not explain (draft one with --failure N):\n{}",
                    list_candidates(cs)
                )
            },
        )),
        None => match cs {
            [] => draft(lib, log_name, text, opts),
            [f] => draft_from(lib, log_name, f, opts),
            _ => Err(DraftError::Several(
                log_name.to_string(),
                cs.len(),
                list_candidates(cs),
            )),
        },
    }
}

/// A failure in the log's own words: its primary exception's headline, else its
/// headline when a line of the failure holds it, else its last line that is not
/// source code, a frame or a caret. (A traceback cut off before its exception line has
/// only the extractor's description of it as headline: never a message to draft from.)
/// None when the failure has no line of its own (a cut-off traceback of frames only).
pub fn own_words(f: &Failure) -> Option<String> {
    if let Some(e) = f.primary().filter(|e| !e.exception_type.is_empty()) {
        return Some(e.headline().lines().next().unwrap_or("").trim().to_string());
    }
    let head = f.headline.lines().next().unwrap_or("").trim();
    if !head.is_empty() && f.lines.iter().any(|l| l.text.contains(head)) {
        return Some(head.to_string());
    }
    f.lines
        .iter()
        .rev()
        .map(|l| l.message.trim())
        .find(|m| !m.is_empty() && !is_code_line(m) && !m.starts_with("Traceback ("))
        .map(str::to_string)
}

/// Drafts a signature from a log held in memory (its first unexplained failure).
pub fn draft(
    lib: &Library,
    log_name: &str,
    text: &str,
    opts: &DraftOptions,
) -> Result<Draft, DraftError> {
    let (x, m) = run_text(lib, log_name, text)?;
    let f = match first_unexplained(lib, &x, &m) {
        Ok(f) => f,
        Err(None) => return Err(DraftError::NoFailure(log_name.to_string())),
        Err(Some((fid, sig))) => {
            let head = x
                .failures
                .iter()
                .find(|f| f.id == fid)
                .map_or(String::new(), |f| f.headline.clone());
            let sid = lib.signatures.get(sig).map_or("?", |s| s.id.as_str());
            return Err(DraftError::AllExplained(
                log_name.to_string(),
                head,
                sid.to_string(),
            ));
        }
    };
    draft_from(lib, log_name, f, opts)
}

/// Drafts a signature from one failure of a log.
fn draft_from(
    lib: &Library,
    log_name: &str,
    f: &Failure,
    opts: &DraftOptions,
) -> Result<Draft, DraftError> {
    let source = opts.source.clone().unwrap_or_else(|| log_name.to_string());
    let example: String = f
        .lines
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let seed = Seed::of(f, vec![(source, example)]);
    draft_seed(lib, &seed, opts.id.as_deref(), &BTreeSet::new())
}

/// What a draft is made from: the failure's shape and its real log lines, one or more
/// (`corpus cluster` drafts one signature from every member of a cluster).
#[derive(Debug, Clone)]
pub struct Seed {
    /// The primary exception's type, when the failure has one.
    pub exception: Option<String>,
    /// Its message's first line (or the failure's headline).
    pub message: String,
    pub kind: FailureKind,
    /// The failure has an exception chain (a Python traceback or exception).
    pub chained: bool,
    /// The positive examples: (source, the failure's raw log lines), the first is the
    /// one the regex is generalized from.
    pub examples: Vec<(String, String)>,
}

impl Seed {
    /// The seed of one extracted failure, with the given examples.
    pub fn of(f: &Failure, examples: Vec<(String, String)>) -> Seed {
        let primary = f.primary().filter(|e| !e.exception_type.is_empty());
        let (exception, message) = match primary {
            Some(e) => (
                Some(e.exception_type.clone()),
                e.message.lines().next().unwrap_or("").to_string(),
            ),
            None => (
                None,
                own_words(f).unwrap_or_else(|| f.headline.trim().to_string()),
            ),
        };
        Seed {
            exception,
            message,
            kind: f.kind,
            chained: !f.chain.is_empty(),
            examples,
        }
    }
}

/// The draft's id: the one asked for (valid and free), else one suggested from the
/// text, suffixed until neither the library nor `taken` has it.
fn draft_id(
    lib: &Library,
    asked: Option<&str>,
    exception: Option<&str>,
    g: &Generalized,
    taken: &BTreeSet<String>,
) -> Result<String, DraftError> {
    if let Some(id) = asked {
        if !valid_id(id) {
            return Err(DraftError::BadId(id.to_string()));
        }
        if let Some(s) = lib.get(id) {
            return Err(DraftError::TakenId(id.to_string(), s.file.clone()));
        }
        return Ok(id.to_string());
    }
    let base = suggest_id(exception, g);
    let mut id = base.clone();
    let mut n = 2;
    while lib.get(&id).is_some() || taken.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    Ok(id)
}

/// The message with `<name>` in place of each volatile part.
fn draft_title(exception: Option<&str>, message: &str, g: &Generalized, headline: &str) -> String {
    let mut t = String::new();
    if let Some(e) = exception {
        t.push_str(e);
        t.push_str(": ");
    }
    let mut lit = g.literals.iter();
    let mut caps = g.captures.iter();
    let mut rebuilt = String::new();
    let mut rest = message.chars().take(MAX_MESSAGE_CHARS).collect::<String>();
    loop {
        let nl = lit.clone().next();
        let nc = caps.clone().next();
        match (nl, nc) {
            (Some(l), _) if rest.starts_with(l.as_str()) => {
                rebuilt.push_str(l);
                rest = rest[l.len()..].to_string();
                lit.next();
            }
            (_, Some((name, _, sample))) if rest.starts_with(sample.as_str()) => {
                let _ = write!(rebuilt, "<{name}>");
                rest = rest[sample.len()..].to_string();
                caps.next();
            }
            _ => break,
        }
    }
    t.push_str(rebuilt.trim());
    if t.trim().is_empty() {
        t = headline.to_string();
    }
    t.chars().take(120).collect::<String>()
}

/// Drafts a signature from a seed: the regex generalized from the seed's message, every
/// example listed as a positive example (and every source as a reference). `id` is the
/// id asked for; without it one is suggested that neither the library nor `taken` uses.
pub fn draft_seed(
    lib: &Library,
    seed: &Seed,
    id: Option<&str>,
    taken: &BTreeSet<String>,
) -> Result<Draft, DraftError> {
    let exception = seed.exception.as_deref();
    let message = seed.message.as_str();
    let g = generalize(message);
    let id = draft_id(lib, id, exception, &g, taken)?;
    let headline = match exception {
        Some(t) if message.is_empty() => t.to_string(),
        Some(t) => format!("{t}: {message}"),
        None => message.to_string(),
    };
    let (category, hint) = guess_category(&headline);
    let severity = match seed.kind {
        FailureKind::Warning => "warning",
        FailureKind::Traceback | FailureKind::Exception | FailureKind::Abort => "fatal",
        _ => "error",
    };
    let title = draft_title(exception, message, &g, &headline);
    let y = draft_yaml(&DraftText {
        id: &id,
        title: &title,
        category,
        hint,
        severity,
        exception,
        g: &g,
        headline: &headline,
        examples: &seed.examples,
    });
    // parse it back with the library: a draft that does not load is our bug
    let name = format!("{id}.yaml");
    if let Err(e) = compile_files(&[LibraryFile {
        name: name.clone(),
        text: y.clone(),
    }]) {
        return Err(DraftError::DoesNotLoad(e.to_string()));
    }
    Ok(Draft {
        id,
        area: area_of(category, seed.chained),
        yaml: y,
        generalized: g,
        headline,
        note: None,
    })
}

/// The parts of a draft's YAML.
struct DraftText<'a> {
    id: &'a str,
    title: &'a str,
    category: Category,
    hint: Option<&'static str>,
    severity: &'static str,
    exception: Option<&'a str>,
    g: &'a Generalized,
    headline: &'a str,
    examples: &'a [(String, String)],
}

/// Writes a draft's YAML (by hand: single-quoted scalars and literal blocks).
fn draft_yaml(t: &DraftText<'_>) -> String {
    let (id, g) = (t.id, t.g);
    let first = t.examples.first().map_or("", |(s, _)| s.as_str());
    let mut y = String::new();
    let _ = writeln!(y, "# yaml-language-server: $schema=../schema.json");
    let _ = writeln!(
        y,
        "# Drafted by `crashdoc sig new` from {}; edit the title, explain and remediation, then run `crashdoc sig lint` and `crashdoc sig test`.",
        crate::knowledge::text::escape_control(first)
    );
    let _ = writeln!(y, "id: {id}");
    let _ = writeln!(y, "title: {}", yaml_quote(t.title));
    let category = t.category;
    match t.hint {
        Some(p) => {
            let _ = writeln!(y, "category: {category}  # guessed from \"{p}\"; check it");
        }
        None => {
            let _ = writeln!(
                y,
                "category: {category}  # no hint in the text; pick one of the taxonomy"
            );
        }
    }
    let _ = writeln!(y, "severity: {}", t.severity);
    let _ = writeln!(y, "match:");
    let regex_line = yaml_quote(&g.regex);
    match t.exception {
        Some(e) => {
            let _ = writeln!(y, "  all:");
            let _ = writeln!(y, "    - exception: {}", yaml_quote(e));
            if !g.regex.is_empty() {
                let _ = writeln!(y, "    - message: {regex_line}");
            }
        }
        None => {
            let _ = writeln!(y, "  message: {regex_line}");
        }
    }
    // atoms: derived unless weak
    let probe = format!("{y}explain: probe\n");
    if let Some(atom) = choose_atom(&probe, id, g) {
        let _ = writeln!(y, "atoms: [{}]", yaml_quote(&atom));
    }
    let _ = writeln!(y, "explain: >");
    let varying = if g.captures.is_empty() {
        String::new()
    } else {
        format!(
            "; captured as varying between occurrences: {}",
            g.captures
                .iter()
                .map(|(n, _, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let _ = writeln!(
        y,
        "  The log failed with {}. Describe what happened and why, and what fixes it (drafted from the log{varying}).",
        yaml_safe_words(t.headline)
    );
    let _ = writeln!(y, "references:");
    let mut refs = BTreeSet::new();
    for (source, _) in t.examples {
        if refs.insert(source.as_str()) {
            let _ = writeln!(y, "  - {}", yaml_quote(source));
        }
    }
    let _ = writeln!(y, "examples:");
    let _ = writeln!(y, "  match:");
    for (source, example) in t.examples {
        let _ = writeln!(y, "    - source: {}", yaml_quote(source));
        let _ = writeln!(y, "      log: {}", yaml_block(example, 8));
    }
    y
}

/// Keeps a headline on one line inside a folded YAML scalar.
fn yaml_safe_words(s: &str) -> String {
    let one: String = s
        .chars()
        .take(160)
        .map(|c| {
            if c.is_control() || crate::knowledge::text::is_invisible(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    format!("`{}`", one.trim())
}

/// An explicit atom when the derived ones would be weak: the longest literal piece.
fn choose_atom(probe: &str, id: &str, g: &Generalized) -> Option<String> {
    let lib = compile_files(&[LibraryFile {
        name: format!("{id}.yaml"),
        text: probe.to_string(),
    }])
    .ok()?;
    let sig = lib.signatures.first()?;
    if !sig.atoms.iter().any(|a| crate::tools::lint::weak_atom(a)) {
        return None;
    }
    g.literals
        .iter()
        .flat_map(|l| crate::knowledge::signature::atoms::split_pieces(l))
        .map(|p| p.trim().to_string())
        .filter(|p| !crate::tools::lint::weak_atom(p))
        .max_by_key(|p| p.len())
}

/// How many of a draft's positive examples it matches on its own (the draft compiled
/// alone and its examples run through the pipeline, as `sig test` does): a cluster's
/// draft generalized from one member may miss others, and the reviewer is told.
pub fn coverage(d: &Draft) -> Result<(usize, usize), DraftError> {
    let lib = compile_files(&[LibraryFile {
        name: format!("{}.yaml", d.id),
        text: d.yaml.clone(),
    }])
    .map_err(|e| DraftError::DoesNotLoad(e.to_string()))?;
    let compiled = Compiled::new(&lib)?;
    let rep = crate::tools::examples::test_signatures(&compiled, None);
    Ok((rep.passed, rep.passed + rep.failed))
}
