//! Normalize: peel the prefix layers real logs carry off each line.
//!
//! A line from `journalctl -u vllm` reads
//! `Feb 20 23:31:36 host vllm[216054]: (Worker_TP4 pid=216054) ERROR 02-20 23:31:36
//! [multiproc_executor.py:783] Traceback (most recent call last):` — three layers
//! (journald, the vLLM process tag, the vLLM logger) around the message that matters.
//! [`normalize`] applies the known layer parsers repeatedly, each at most once (a process
//! tag twice: Ray's actor tag around a vLLM worker's), until no
//! layer matches; what is left is the message. The raw line and its number are kept for
//! evidence; the peeled layers fill the record's stream (unit, identifier, pid, worker
//! tag, rank), level, timestamp and logger origin.
//!
//! Lines in no known format pass through unchanged: a traceback pasted from a terminal
//! is its own message.
//!
//! Layers that can only come first: markdown quote markers and code fences (as lines
//! pasted into a GitHub issue carry them) and journald `-o json` (the message, then
//! peeled, and the journald fields).
//!
//! The other layers are named in [`layers::Layer`], by the format each reads: journald
//! `short-iso`, ISO timestamps (GitHub Actions, `docker logs --timestamps`), GitHub
//! `##[error]`, journald `short`/`short-precise` and classic syslog (a "host" ending in
//! `:` is no host: the line is a bare `Mon DD HH:MM:SS` timestamp, as CI logs print it,
//! before its message), docker compose `svc_1  | `, NCCL `host:pid:tid [dev]`, vLLM/Ray
//! process tags `(Worker_TP4 pid=1)`, torchrun `[rank0]:`, glog (bracketed, old PyTorch
//! and bare), the vLLM logger, Python logging (full and `basicConfig`), DeepSpeed,
//! uvicorn's `LEVEL:`, bracketed ISO timestamps and origins, bare timestamps. Each layer
//! has exactly one parser: a byte parser ([`bytes`]) for the layers on the hot path
//! (syslog, process tag, vLLM logger, `LEVEL:`, and compose, NCCL and bare timestamps,
//! which [`view`] must rule out cheaply), an anchored regex with ASCII digit classes for
//! the rest; a guard per layer keeps the parser off lines it cannot read;
//! [`layers::ORDER`] is the order they are tried in, and [`layers::Layer::apply`] how
//! what a layer reads joins what the layers before it read.
//!
//! The fast path: [`view`] reads the common stack (syslog → process tag → vLLM logger
//! or `LEVEL:`) with the same parsers, without allocating, and declines any line where
//! another layer could follow; the pipeline builds a record from a view
//! ([`View::record`]) or else calls [`normalize`]. The integration test `fast_path`
//! compares [`normalize`] with an independent regex oracle of the same formats, and
//! [`view`] with [`normalize`], on every line of the repository's logs, a generated log
//! and composed random prefixes.

use std::sync::LazyLock;

use regex::Regex;

use crate::engine::ingest::Line;

/// Severity read from a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Debug,
    Info,
    Warning,
    Error,
    Critical,
}

impl Level {
    fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "DEBUG" | "D" | "debug" => Level::Debug,
            "INFO" | "I" | "info" | "notice" => Level::Info,
            "WARNING" | "WARN" | "W" | "warning" => Level::Warning,
            "ERROR" | "E" | "error" => Level::Error,
            "CRITICAL" | "FATAL" | "F" | "C" | "critical" => Level::Critical,
            _ => return None,
        })
    }

    /// A journald `PRIORITY`. 5 (notice) and 6 (info) say nothing: journald gives 6 to
    /// every line a service writes on stdout or stderr (`SyslogLevel=` defaults to info),
    /// tracebacks included, so they are no level (an INFO level would make a crash's
    /// lines no evidence for it).
    fn from_priority(p: &str) -> Option<Level> {
        Some(match p {
            "0" | "1" | "2" => Level::Critical,
            "3" => Level::Error,
            "4" => Level::Warning,
            "7" => Level::Debug,
            _ => return None,
        })
    }

    pub fn is_error(self) -> bool {
        self >= Level::Error
    }
}

/// Who wrote a line, as far as the prefixes tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stream {
    pub unit: Option<String>,
    pub host: Option<String>,
    pub ident: Option<String>,
    pub pid: Option<u32>,
    pub worker: Option<String>,
    pub rank: Option<u32>,
}

impl Stream {
    /// The key tracebacks are reassembled under: the most specific writer known.
    pub fn key(&self) -> String {
        let mut k = String::with_capacity(32);
        write_key(
            &mut k,
            self.worker.as_deref(),
            self.rank,
            self.ident.as_deref(),
            self.pid,
        );
        k
    }

    /// A short label for reports (`Worker_TP4`, `rank2`, `vllm[12]`); empty when unknown.
    pub fn short(&self) -> String {
        if let Some(w) = &self.worker {
            w.clone()
        } else {
            self.key()
        }
    }
}

pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`, continuing from `h`.
pub(crate) fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A stream key's hash (FNV-1a of its bytes); [`View::key_hash`] gives the same from a
/// line's parts.
pub fn stream_key_hash(key: &str) -> u64 {
    fnv1a(FNV_OFFSET, key.as_bytes())
}

/// The decimal digits of `n`, written into the end of `buf`.
fn decimal(mut n: u32, buf: &mut [u8; 10]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // ASCII digits only
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

/// Feeds a stream key ([`Stream::key`]) to `out`, piece by piece: the one
/// definition of the key's form, which [`write_key`] writes and [`View::key_hash`]
/// hashes without writing.
fn key_pieces(
    worker: Option<&str>,
    rank: Option<u32>,
    ident: Option<&str>,
    pid: Option<u32>,
    mut out: impl FnMut(&str),
) {
    let mut buf = [0u8; 10];
    if let Some(w) = worker {
        out(w);
        if let Some(p) = pid {
            out(" pid=");
            out(decimal(p, &mut buf));
        }
    } else if let Some(r) = rank {
        out("rank");
        out(decimal(r, &mut buf));
    } else if let Some(i) = ident {
        out(i);
        if let Some(p) = pid {
            out("[");
            out(decimal(p, &mut buf));
            out("]");
        }
    } else if let Some(p) = pid {
        out("pid ");
        out(decimal(p, &mut buf));
    }
}

/// Writes a stream key ([`Stream::key`]) from its parts into `k` (built by hand: this
/// runs for most lines).
fn write_key(
    k: &mut String,
    worker: Option<&str>,
    rank: Option<u32>,
    ident: Option<&str>,
    pid: Option<u32>,
) {
    key_pieces(worker, rank, ident, pid, |piece| k.push_str(piece));
}

/// One normalized line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// 1-based line number in its input.
    pub line: usize,
    /// The line as ingested (ANSI escapes removed): the evidence text.
    pub raw: String,
    /// What is left after the prefixes are peeled.
    pub message: String,
    pub stream: Stream,
    pub level: Option<Level>,
    pub timestamp: Option<String>,
    /// The logger's source location (`multiproc_executor.py:783`), when a prefix names it.
    pub origin: Option<String>,
    /// Bytes of the original line dropped by ingest's line bound.
    pub truncated: usize,
}

mod bytes;
mod layers;

/// A value (a regex, an automaton) built on first use, as with a `LazyLock`, except that no
/// thread ever waits for another's build: one that needs it while another is building it
/// builds its own and uses it (the first stored is kept; both are built from the same
/// constants, so they are the same). The engine's own regexes are held this way so that the
/// warm-up thread ([`crate::engine::warm_up_in_background`]) can build them ahead of the scan
/// without the scan ever blocking on it: on a machine whose cores are busy, such a wait can
/// cost a scheduler slice (pinned to one busy core, the scenario journal took 84 ms with
/// `LazyLock`s against 63 ms without the warm-up thread; 60 ms with these).
pub struct Prebuilt<T> {
    cell: std::sync::OnceLock<T>,
    build: fn() -> T,
}

impl<T> Prebuilt<T> {
    pub const fn new(build: fn() -> T) -> Self {
        Prebuilt {
            cell: std::sync::OnceLock::new(),
            build,
        }
    }

    /// The value, built now if no thread has stored it yet.
    pub fn force(this: &Self) -> &T {
        if let Some(v) = this.cell.get() {
            return v;
        }
        let v = (this.build)();
        // stores it unless another thread stored its own meanwhile (a move: no build
        // happens while this holds the cell)
        this.cell.get_or_init(|| v)
    }
}

impl<T> std::ops::Deref for Prebuilt<T> {
    type Target = T;
    fn deref(&self) -> &T {
        Prebuilt::force(self)
    }
}

use layers::{Fields, Layer, ORDER};

/// The unit a systemd line is about (`vllm.service: Main process exited…`).
static UNIT: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"^([A-Za-z0-9@._:\\-]+\.(?:service|scope|slice|socket|timer|mount)): ")
        .expect("built-in unit regex")
});

/// The journald fields read from `journalctl -o json`.
#[derive(serde::Deserialize)]
struct JournalJson {
    #[serde(rename = "MESSAGE")]
    message: Option<serde_json::Value>,
    #[serde(rename = "_PID")]
    pid: Option<String>,
    #[serde(rename = "SYSLOG_IDENTIFIER")]
    ident: Option<String>,
    #[serde(rename = "_SYSTEMD_UNIT")]
    unit: Option<String>,
    #[serde(rename = "PRIORITY")]
    priority: Option<String>,
    #[serde(rename = "_HOSTNAME")]
    host: Option<String>,
    #[serde(rename = "__REALTIME_TIMESTAMP")]
    realtime: Option<String>,
}

fn journal_message(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        // journald writes non-UTF-8 messages as an array of byte values
        serde_json::Value::Array(a) => {
            let bytes: Vec<u8> = a
                .iter()
                .filter_map(|b| b.as_u64().and_then(|n| u8::try_from(n).ok()))
                .collect();
            Some(crate::engine::ingest::clean_text(&bytes))
        }
        _ => None,
    }
}

/// What the fast path needs to know of a line, read without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View<'a> {
    pub level: Option<Level>,
    pub message: &'a str,
    /// The vLLM/Ray process tag and pid, when present.
    pub worker: Option<&'a str>,
    pub pid: Option<u32>,
    /// The journald/syslog timestamp, or else the vLLM logger's.
    pub timestamp: Option<&'a str>,
    pub host: Option<&'a str>,
    pub ident: Option<&'a str>,
    /// The vLLM logger's source location.
    pub origin: Option<&'a str>,
}

/// The layers [`view`] reads, in this order, each at most once: journald/syslog `short`,
/// the vLLM/Ray process tag, then the vLLM logger or else uvicorn's `LEVEL:`.
const VIEW_STACK: &[&[Layer]] = &[
    &[Layer::Syslog],
    &[Layer::ProcTag],
    &[Layer::Vllm, Layer::LevelColon],
];

/// Reads the common layer stack (journald `short` → process tag → vLLM logger) without
/// allocating, with the same layer parsers as [`normalize`]. `None` when the line has
/// any other layer, so that the caller falls back to [`normalize`]: for the lines it
/// accepts, [`View::record`] is exactly the record [`normalize`] gives (a test checks
/// this on every line of the scenario and corpus).
pub fn view(text: &str) -> Option<View<'_>> {
    let mut f = Fields::default();
    let mut rest = text;
    let mut any = false;
    for step in VIEW_STACK {
        let Some(&first) = rest.as_bytes().first() else {
            break;
        };
        if let Some((layer, read)) = step
            .iter()
            .find_map(|l| l.read(first, rest).map(|r| (l, r)))
        {
            layer.apply(&read.fields, &mut f);
            rest = &rest[read.len..];
            any = true;
        }
    }
    // systemd's lines act on extraction through their identifier and unit
    if !any || f.ident == Some("systemd") || may_have_layer(rest) {
        return None;
    }
    Some(View {
        level: f.level,
        message: rest,
        worker: f.worker,
        pid: f.pid,
        timestamp: f.timestamp,
        host: f.host,
        ident: f.ident,
        origin: f.origin,
    })
}

impl View<'_> {
    /// The hash of the line's stream key ([`stream_key_hash`] of [`Stream::key`]),
    /// from the same bytes as [`write_key`] writes ([`key_pieces`]), without writing them.
    pub fn key_hash(&self) -> u64 {
        let mut h = FNV_OFFSET;
        key_pieces(self.worker, None, self.ident, self.pid, |piece| {
            h = fnv1a(h, piece.as_bytes())
        });
        h
    }

    /// The stream key of the line ([`Stream::key`]), written into `k` (cleared first).
    pub fn key_into(&self, k: &mut String) {
        k.clear();
        write_key(k, self.worker, None, self.ident, self.pid);
    }

    /// The record of a line this view was read from: what [`normalize`] gives for it,
    /// without running the layer parsers again.
    pub fn record(&self, number: usize, text: &str, truncated: usize) -> Record {
        Record {
            line: number,
            raw: text.to_string(),
            message: self.message.to_string(),
            stream: Stream {
                unit: None,
                host: self.host.map(str::to_string),
                ident: self.ident.map(str::to_string),
                pid: self.pid,
                worker: self.worker.map(str::to_string),
                rank: None,
            },
            level: self.level,
            timestamp: self.timestamp.map(str::to_string),
            origin: self.origin.map(str::to_string),
            truncated,
        }
    }
}

/// Whether a layer may start `s`, after the layers [`view`] reads (a superset of what
/// [`normalize`] would still peel: the view declines such a line).
fn may_have_layer(s: &str) -> bool {
    let Some(&first) = s.as_bytes().first() else {
        return false;
    };
    let reads = |l: Layer| l.parse(s).is_some();
    matches!(first, b'[' | b'(' | b'#' | b'{' | b'>')
        // ISO timestamps and Python logging have `-` at offset 4; other digit-first
        // layers (compose, NCCL) are covered by the clause below
        || (first.is_ascii_digit() && s.as_bytes().get(4) == Some(&b'-'))
        || layers::level_word(s)
        || reads(Layer::Syslog)
        || reads(Layer::BareTime)
        || (first.is_ascii_alphanumeric() && (reads(Layer::Compose) || reads(Layer::NcclHostPid)))
        || Layer::GlogLetter.guard(first, s)
}

/// The layers a collector or a launcher puts before every line a program wrote, after
/// the program wrote it: journald and syslog, container and CI timestamps, `kubectl
/// --prefix`, docker compose, the vLLM/Ray process tag, torchrun's rank. (A program's
/// own logger format, which a terminal wraps with the message, is not one of them.)
const TRANSPORT: &[Layer] = &[
    Layer::Kubectl,
    Layer::JournalIso,
    Layer::IsoTimestamp,
    Layer::Syslog,
    Layer::Compose,
    Layer::ProcTag,
    Layer::Rank,
    Layer::BareTime,
];

/// A line's transport prefix ([`TRANSPORT`]): its length in bytes and the stream it
/// names (the hash of its stream key, [`Stream::key`]'s pieces: process tag and pid,
/// rank, identifier and pid; timestamps are not part of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transport {
    pub len: usize,
    pub stream: u64,
}

/// The transport prefix a line starts with, `None` when it has none. Rejoin reads it
/// to put back together a line a program wrote already cut (a paste folded at a width,
/// `rich` at its 80 columns) that a collector then prefixed line by line.
pub fn transport(text: &str) -> Option<Transport> {
    let mut f = Fields::default();
    let start = peel_layers(text, 0, TRANSPORT, &mut f);
    if start == 0 {
        return None;
    }
    let mut h = FNV_OFFSET;
    key_pieces(f.worker, f.rank, f.ident, f.pid, |piece| {
        h = fnv1a(h, piece.as_bytes())
    });
    Some(Transport {
        len: start,
        stream: h,
    })
}

/// A text read as the line `number` of an input ([`normalize`] of a line not read from
/// one: an example, a message quoted elsewhere, a line kept as text).
pub fn normalize_text(number: usize, text: &str) -> Record {
    normalize(Line {
        number,
        text: text.to_string(),
        truncated: 0,
    })
}

/// Peels one line into a record.
pub fn normalize(line: Line) -> Record {
    let text = line.text.as_str();
    let quoted = markdown_start(text);
    // journald `-o json` (only ever the whole line)
    let json = (quoted == 0 && text.starts_with("{\"") && text.contains("\"MESSAGE\""))
        .then(|| serde_json::from_str::<JournalJson>(text).ok())
        .flatten()
        .and_then(|j| Some((j.message.as_ref().and_then(journal_message)?, j)));
    let mut f = Fields::default();
    let message = match &json {
        Some((m, j)) => {
            f.pid = j.pid.as_deref().and_then(|p| p.parse().ok());
            f.ident = j.ident.as_deref();
            f.unit = j.unit.as_deref();
            f.host = j.host.as_deref();
            f.level = j.priority.as_deref().and_then(Level::from_priority);
            f.timestamp = j.realtime.as_deref();
            &m[peel(m, 0, &mut f)..]
        }
        None => &text[peel(text, quoted, &mut f)..],
    };
    let own = |s: Option<&str>| s.map(str::to_string);
    Record {
        line: line.number,
        message: message.to_string(),
        stream: Stream {
            unit: own(f.unit),
            host: own(f.host),
            ident: own(f.ident),
            pid: f.pid,
            worker: own(f.worker),
            rank: f.rank,
        },
        level: f.level,
        timestamp: own(f.timestamp),
        origin: own(f.origin),
        truncated: line.truncated,
        raw: line.text,
    }
}

/// Where a line pasted into markdown starts: after its quote markers (`> `, nested
/// `> > `, a bare `>`) and an opening or closing code fence (```` ``` ```` or `~~~`, up
/// to three spaces indented). A fence line alone (with its info string, ```` ```text ````)
/// has no message: the whole line is peeled. 0 when the line is not markdown.
fn markdown_start(text: &str) -> usize {
    let mut rest = text;
    loop {
        if let Some(r) = rest.strip_prefix("> ") {
            rest = r;
        } else if rest == ">" {
            rest = "";
        } else {
            break;
        }
    }
    let indent = rest.len() - rest.trim_start_matches(' ').len();
    let body = &rest[indent..];
    let fence = if body.starts_with("```") {
        Some('`')
    } else if body.starts_with("~~~") {
        Some('~')
    } else {
        None
    };
    if let Some(mark) = fence.filter(|_| indent <= MAX_FENCE_INDENT) {
        let after = body.trim_start_matches(mark);
        let info = after.trim_end();
        let info_only = info
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'.' | b'-'));
        rest = if info_only { "" } else { after };
    }
    text.len() - rest.len()
}

/// Whether a line is a markdown code fence alone (```` ``` ````, ```` ```text ````, `~~~`,
/// behind quote markers too): a fenced block opens or closes there.
pub fn is_fence_line(text: &str) -> bool {
    let body = text.trim_start_matches(['>', ' ']);
    (body.starts_with("```") || body.starts_with("~~~")) && markdown_start(text) == text.len()
}

/// Spaces a markdown code fence may be indented by (CommonMark).
const MAX_FENCE_INDENT: usize = 3;

/// Applies the layers from `start`, each at most [`Layer::times`] (once but for a
/// process tag), in any order the line presents them (at each point the first layer of
/// [`ORDER`] that reads); returns where the message begins.
fn peel<'a>(text: &'a str, start: usize, f: &mut Fields<'a>) -> usize {
    let start = peel_layers(text, start, ORDER, f);
    if f.unit.is_none() && f.ident == Some("systemd") {
        if let Some(c) = UNIT.captures(&text[start..]) {
            f.unit = c.get(1).map(|m| m.as_str());
        }
    }
    start
}

/// Peels the `layers` (tried in their order at each point, each read at most
/// [`Layer::times`]) off `text` from `start`; where the message starts.
fn peel_layers<'a>(text: &'a str, mut start: usize, layers: &[Layer], f: &mut Fields<'a>) -> usize {
    let mut used = 0u32;
    let mut again = 0u32;
    'outer: loop {
        let rest = &text[start..];
        let Some(&first) = rest.as_bytes().first() else {
            break;
        };
        for &layer in layers {
            if used & layer.bit() != 0 {
                continue;
            }
            if let Some(read) = layer.read(first, rest) {
                layer.apply(&read.fields, f);
                // a layer read twice (`times` 2) is used up on its second reading
                if layer.times() == 1 || again & layer.bit() != 0 {
                    used |= layer.bit();
                }
                again |= layer.bit();
                start += read.len;
                continue 'outer;
            }
        }
        break;
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(s: &str) -> Record {
        normalize_text(7, s)
    }

    // Source: ../shared/scenarios/vllm-flashinfer-crashloop/journal.txt (reconstruction of
    // the journald `short` output in the background story).
    #[test]
    fn journald_short_with_vllm_tag_and_logger() {
        let r = rec("Feb 20 23:31:36 llm-two vllm-kimi[216054]: (Worker_TP4 pid=216054) ERROR 02-20 23:31:36 [multiproc_executor.py:783] Traceback (most recent call last):");
        assert_eq!(r.message, "Traceback (most recent call last):");
        assert_eq!(r.stream.worker.as_deref(), Some("Worker_TP4"));
        assert_eq!(r.stream.pid, Some(216054));
        assert_eq!(r.stream.ident.as_deref(), Some("vllm-kimi"));
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(r.origin.as_deref(), Some("multiproc_executor.py:783"));
        assert_eq!(r.stream.key(), "Worker_TP4 pid=216054");
        assert_eq!(r.line, 7);
    }

    #[test]
    fn journald_systemd_unit() {
        let r = rec("Feb 20 23:31:36 llm-two systemd[1]: vllm-kimi-k25.service: Main process exited, code=exited, status=1/FAILURE");
        assert_eq!(r.stream.unit.as_deref(), Some("vllm-kimi-k25.service"));
        assert_eq!(
            r.message,
            "vllm-kimi-k25.service: Main process exited, code=exited, status=1/FAILURE"
        );
    }

    #[test]
    fn journald_short_iso_and_precise() {
        let r = rec("2024-02-20T23:31:36+0000 llm-two vllm[12]: hello");
        assert_eq!(r.message, "hello");
        assert_eq!(r.stream.pid, Some(12));
        let r = rec("Feb 20 23:31:36.123456 llm-two vllm[12]: hello");
        assert_eq!(r.message, "hello");
        assert_eq!(r.timestamp.as_deref(), Some("Feb 20 23:31:36.123456"));
    }

    // Source: ../shared/incidents/inkypi-host-oom/log.txt (fatihak/InkyPi#428).
    #[test]
    fn kernel_line() {
        let r = rec("Nov 20 15:10:43 inky kernel: Out of memory: Killed process 27241 (python) total-vm:1374456kB");
        assert_eq!(r.stream.ident.as_deref(), Some("kernel"));
        assert!(r.message.starts_with("Out of memory: Killed process 27241"));
    }

    #[test]
    fn journald_json() {
        let r = rec(
            r#"{"__REALTIME_TIMESTAMP":"1708471896000000","_PID":"216054","SYSLOG_IDENTIFIER":"vllm-kimi","_SYSTEMD_UNIT":"vllm-kimi-k25.service","PRIORITY":"3","MESSAGE":"(Worker_TP4 pid=216054) ERROR 02-20 23:31:36 [multiproc_executor.py:783] RuntimeError: boom"}"#,
        );
        assert_eq!(r.message, "RuntimeError: boom");
        assert_eq!(r.stream.unit.as_deref(), Some("vllm-kimi-k25.service"));
        assert_eq!(r.stream.worker.as_deref(), Some("Worker_TP4"));
        assert_eq!(r.level, Some(Level::Error));
        let r = rec(r#"{"MESSAGE":[104,105,255],"PRIORITY":"6"}"#);
        assert_eq!(r.message, "hi\u{fffd}");
    }

    #[test]
    fn docker_and_github_timestamps() {
        let r = rec("2024-01-01T00:00:00.0000000Z ##[error]Process completed with exit code 1.");
        assert_eq!(r.message, "Process completed with exit code 1.");
        assert_eq!(r.level, Some(Level::Error));
        let r = rec("2024-05-02T10:11:12.123456789Z INFO 05-02 10:11:12 [api_server.py:1] up");
        assert_eq!(r.message, "up");
    }

    // Source: corpus/tensorflow-container-gpu-unavailable-cuinit-no-device-driver-not-running
    // (TensorFlow's C++ logger; the second line constructed from its format, with a
    // thread id, `TF_CPP_LOG_THREAD_ID=1`).
    #[test]
    fn tensorflow_logger() {
        let r = rec("2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected");
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(
            r.origin.as_deref(),
            Some("tensorflow/stream_executor/cuda/cuda_driver.cc:314")
        );
        assert!(r.message.starts_with("failed call to cuInit"));
        let r = rec("2020-11-11 10:46:37.467224: I 1234567 dso_loader.cc:48] Successfully opened dynamic library libcuda.so.1");
        assert_eq!(r.level, Some(Level::Info));
        assert_eq!(
            r.message,
            "Successfully opened dynamic library libcuda.so.1"
        );
        // Python logging's layout is another layer
        let r = rec("2020-11-11 10:46:37,467 - x - ERROR - boom");
        assert_eq!(r.message, "boom");
    }

    #[test]
    fn docker_compose() {
        let r = rec("vllm_1  | RuntimeError: boom");
        assert_eq!(r.message, "RuntimeError: boom");
        assert_eq!(r.stream.ident.as_deref(), Some("vllm_1"));
    }

    #[test]
    fn ray_and_engine_tags() {
        let r = rec("(RayWorkerWrapper pid=123, ip=10.0.0.2) ERROR 07-23 22:46:18 worker_base.py:382] Error executing method");
        assert_eq!(r.stream.worker.as_deref(), Some("RayWorkerWrapper"));
        assert_eq!(r.origin.as_deref(), Some("worker_base.py:382"));
        assert_eq!(r.message, "Error executing method");
        // Source: ../shared/incidents/vllm-kv-cache-insufficient/log.txt
        let r = rec("(EngineCore pid=316)     raise ValueError(");
        assert_eq!(r.message, "    raise ValueError(");
        let r = rec("(VllmWorkerProcess pid=82) INFO 01-01 00:00:00 x.py:1] hi");
        assert_eq!(r.message, "hi");
        // a parenthesised word that punctuation follows is prose (CONSTRUCTED: the
        // second piece of Ray's raylet summary wrapped before `(OOM),`)
        for prose in [
            "(OOM), 0 Workers crashed",
            "(default). Use",
            "(see below): x",
        ] {
            let r = rec(prose);
            assert_eq!(r.message, prose);
            assert_eq!(r.stream.worker, None);
        }
    }

    #[test]
    fn torchrun_ranks_and_glog() {
        let r = rec("[rank2]:[E1128 21:12:49.422069862 ProcessGroupNCCL.cpp:2068] [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated");
        assert_eq!(r.stream.rank, Some(2));
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(r.origin.as_deref(), Some("ProcessGroupNCCL.cpp:2068"));
        assert!(r.message.starts_with("[PG ID 0"));
        let r = rec("E1128 21:12:49.422069 12345 file.cpp:2068] boom");
        assert_eq!(r.message, "boom");
        // Source: ../shared/incidents/vllm-hang-timeout/log.txt (vllm-project/vllm#1801)
        let r = rec("(RayWorker pid=4751) [E ProcessGroupNCCL.cpp:474] [Rank 1] Watchdog caught collective operation timeout");
        assert_eq!(
            r.message,
            "[Rank 1] Watchdog caught collective operation timeout"
        );
        assert_eq!(r.level, Some(Level::Error));
    }

    #[test]
    fn python_logging_and_deepspeed() {
        let r = rec("2024-01-01 12:00:00,123 - trainer - ERROR - it broke");
        assert_eq!(r.message, "it broke");
        assert_eq!(r.level, Some(Level::Error));
        let r = rec("[2023-12-31 16:33:59,636] [INFO] [real_accelerator.py:161:get_accelerator] Setting ds_accelerator to cuda (auto detect)");
        assert_eq!(r.message, "Setting ds_accelerator to cuda (auto detect)");
        let r = rec("ERROR:root:bad thing");
        assert_eq!(r.message, "bad thing");
        let r = rec("ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use");
        assert!(r.message.starts_with("[Errno 98]"));
    }

    // Source: ../shared/incidents/pytorch-permission-denied/log.txt (pytorch/pytorch#37004)
    #[test]
    fn nccl_prefix() {
        let r = rec("node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied");
        assert_eq!(
            r.message,
            "include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied"
        );
        assert_eq!(r.stream.pid, Some(27106));
    }

    #[test]
    fn compose_and_nccl_read_their_formats_only() {
        for (s, compose, nccl) in [
            ("vllm_1  | RuntimeError: boom", true, false),
            ("vllm_1 |RuntimeError", false, false),
            (
                "Received request chatcmpl-1: prompt: '<|im_start|>user'",
                false,
                false,
            ),
            ("svc\u{a0}| x", true, false),
            (
                "node08:27106:27302 [0] include/shm.h:27 NCCL WARN x",
                false,
                true,
            ),
            ("node08:27106:27302 [0]x", false, false),
            ("node08:27106 [0] x", false, false),
            ("a:1:2 [3] ", false, true),
            ("rank 3 in world size 8 [x]", false, false),
        ] {
            assert_eq!(Layer::Compose.parse(s).is_some(), compose, "compose {s:?}");
            assert_eq!(Layer::NcclHostPid.parse(s).is_some(), nccl, "nccl {s:?}");
        }
    }

    // CONSTRUCTED: a bare timestamp before a kernel line with its own `[seconds]` stamp
    // (the kernel line is real: corpus/bigdata-nvidia-driver-gpu-unavailable-probe-not-called).
    #[test]
    fn a_kernel_stamp_after_a_bare_timestamp_is_not_a_syslog_host() {
        let r = rec("Dec 08 18:26:52 [188497.595099] NVRM: No NVIDIA graphics adapter probed!");
        assert_eq!(r.stream.host, None);
        assert_eq!(r.stream.ident, None);
        assert_eq!(r.timestamp.as_deref(), Some("Dec 08 18:26:52"));
        assert!(
            r.message
                .contains("NVRM: No NVIDIA graphics adapter probed!"),
            "{}",
            r.message
        );
    }

    // CONSTRUCTED: the CI log shape of issue 15 (a bare `Mon DD HH:MM:SS` timestamp
    // before each line); the messages after it are real (the ImportError is
    // ../shared/incidents/sglang-missing-shared-library's class, the frame is CPython's).
    #[test]
    fn bare_timestamp_is_not_a_syslog_host() {
        let r = rec("Aug 16 14:45:47 ImportError: libfoo.so.7: cannot open shared object file: No such file or directory");
        assert_eq!(
            r.message,
            "ImportError: libfoo.so.7: cannot open shared object file: No such file or directory"
        );
        assert_eq!(r.stream.host, None);
        assert_eq!(r.stream.ident, None);
        assert_eq!(r.timestamp.as_deref(), Some("Aug 16 14:45:47"));
        assert_eq!(view("Aug 16 14:45:47 ImportError: x"), None);
        let line = "Feb 20 23:31:36 llm-two vllm[12]: Aug 16 14:45:47 RuntimeError: x";
        assert_eq!(
            view(line),
            None,
            "the view leaves a second timestamp to normalize"
        );
        assert_eq!(rec(line).message, "RuntimeError: x");
        let r = rec("Aug 16 14:45:47   File \"/usr/lib/python3.10/runpy.py\", line 196, in _run_module_as_main");
        assert_eq!(
            r.message,
            "  File \"/usr/lib/python3.10/runpy.py\", line 196, in _run_module_as_main"
        );
        let r = rec("Aug 16 14:45:47 Traceback (most recent call last):");
        assert_eq!(r.message, "Traceback (most recent call last):");
        // a real syslog line keeps its reading
        let r = rec("Nov 20 15:10:43 inky kernel: Out of memory: Killed process 27241 (python)");
        assert_eq!(r.stream.host.as_deref(), Some("inky"));
        assert_eq!(r.stream.ident.as_deref(), Some("kernel"));
    }

    // Source: the quote and fence shapes of GitHub issue bodies; the log lines inside
    // are ../shared/incidents/vllm-import-error/log.txt's.
    #[test]
    fn markdown_quotes_and_fences_are_peeled() {
        assert_eq!(rec("```").message, "");
        assert_eq!(rec("```text").message, "");
        assert_eq!(rec("> ```python").message, "");
        assert_eq!(rec("> > ~~~").message, "");
        assert_eq!(
            rec("> > NameError: name 'vllm_ops' is not defined").message,
            "NameError: name 'vllm_ops' is not defined"
        );
        assert_eq!(
            rec("```Traceback (most recent call last):").message,
            "Traceback (most recent call last):"
        );
        assert_eq!(
            rec(">   File \"x.py\", line 1, in <module>").message,
            "  File \"x.py\", line 1, in <module>"
        );
        // code spans inside a message are not fences
        let m = "RuntimeError: run `pip install x` first";
        assert_eq!(rec(m).message, m);
        // a fence alone opens or closes a block; a fence before text does not
        for (line, fence) in [
            ("```", true),
            ("```text", true),
            ("> ~~~", true),
            ("```Traceback (most recent call last):", false),
            (m, false),
            (">", false),
        ] {
            assert_eq!(is_fence_line(line), fence, "{line}");
        }
    }

    #[test]
    fn unknown_lines_pass_through() {
        let r = rec("  File \"x.py\", line 1, in <module>");
        assert_eq!(r.message, "  File \"x.py\", line 1, in <module>");
        let r = rec("> NameError: name 'vllm_ops' is not defined");
        assert_eq!(r.message, "NameError: name 'vllm_ops' is not defined");
    }
}
