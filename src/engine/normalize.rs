//! Normalize: peel the prefix layers real logs carry off each line.
//!
//! A line from `journalctl -u vllm` reads
//! `Feb 20 23:31:36 host vllm[216054]: (Worker_TP4 pid=216054) ERROR 02-20 23:31:36
//! [multiproc_executor.py:783] Traceback (most recent call last):` — three layers
//! (journald, the vLLM process tag, the vLLM logger) around the message that matters.
//! [`normalize`] applies the known layer parsers repeatedly, each at most once, until no
//! layer matches; what is left is the message. The raw line and its number are kept for
//! evidence; the peeled layers fill the record's stream (unit, identifier, pid, worker
//! tag, rank), level, timestamp and logger origin.
//!
//! Lines in no known format pass through unchanged: a traceback pasted from a terminal
//! is its own message.
//!
//! Layers (each a small anchored regex, ASCII digit classes):
//! markdown quote `> `; journald `-o json`; ISO timestamps (GitHub Actions, `docker logs
//! --timestamps`); journald `short-iso`; GitHub `##[error]`; journald `short` /
//! `short-precise` and classic syslog (a "host" ending in `:` is no host: the line is a
//! bare `Mon DD HH:MM:SS` timestamp, as CI logs print it, before its message); docker compose `svc_1  | `; NCCL
//! `host:pid:tid [dev]`; vLLM/Ray process tags `(Worker_TP4 pid=1)`, `(RayWorkerWrapper
//! pid=1, ip=10.0.0.2)`; torchrun `[rank0]:`; glog (bare and bracketed); vLLM logger
//! (new `[file.py:N]` and old `file.py:N]`); Python logging; DeepSpeed; `LEVEL:` prefixes.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::engine::ingest::Line;

/// Severity read from a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stream {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ident: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
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

macro_rules! re {
    ($name:ident, $pat:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| {
            #[allow(clippy::expect_used)]
            Regex::new($pat).expect("built-in prefix regex")
        });
    };
}

re!(
    ISO_Z,
    r"^([0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?Z) "
);
re!(
    JOURNAL_ISO,
    r"^([0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?[+-][0-9][0-9]:?[0-9][0-9]) (\S+) ([^\s\[:]+)(?:\[([0-9]+)\])?: ?"
);
re!(
    ISO_BRACKET,
    r"^\[([0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]+)?(?:Z|[+-][0-9][0-9]:?[0-9][0-9])?)\] "
);
re!(BARE_ORIGIN, r"^\[([A-Za-z0-9_.-]+\.py:[0-9]+)\] ");
re!(GHA, r"^##\[(error|warning|notice|debug|group|endgroup)\]");
re!(
    SYSLOG,
    r"^([A-Z][a-z]{2} [ 0-3][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]+)?) (\S+) ([^\s\[:]+)(?:\[([0-9]+)\])?: ?"
);
re!(COMPOSE, r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s+\| ");
re!(
    NCCL,
    r"^([A-Za-z0-9][A-Za-z0-9._-]*):([0-9]+):([0-9]+) \[([0-9]+)\] "
);
re!(
    PROC_TAG,
    r"^\(([A-Za-z][A-Za-z0-9_]*)(?: pid=([0-9]+))?(?:, ip=[0-9A-Fa-f.:]+)?\) ?"
);
re!(RANK, r"^\[(?:rank|default)([0-9]+)\]: ?");
re!(
    GLOG_BRACKET,
    r"^\[([IWEF])([0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+)(?: ([0-9]+))? ([^\]\s]+:[0-9]+)\] ?"
);
re!(OLD_TORCH, r"^\[([IWEF]) ([^\]\s]+:[0-9]+)\] ?");
re!(
    VLLM,
    r"^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) ([0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9])(?:\.[0-9]+)? (?:\[([^\]]+)\] ?|([A-Za-z0-9_.]+:[0-9]+)\] ?)"
);
re!(
    PYLOG,
    r"^([0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:,[0-9]+)?) - (\S+) - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - "
);
re!(
    DEEPSPEED,
    r"^\[([0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9],[0-9]+)\] \[(DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[([^\]]+)\] "
);
re!(
    GLOG,
    r"^([IWEF])([0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+)\s+([0-9]+) ([^\]\s]+:[0-9]+)\] "
);
re!(
    PYLOG_BASIC,
    r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):([A-Za-z_][A-Za-z0-9_.]*):"
);
re!(LEVEL_COLON, r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+");
re!(
    UNIT,
    r"^([A-Za-z0-9@._:\\-]+\.(?:service|scope|slice|socket|timer|mount)): "
);

/// Hand-written parsers for the three layers nearly every line of a journal carries
/// (journald/syslog `short`, the vLLM process tag, the vLLM logger). They accept exactly
/// what the regexes beside them describe, without a regex engine per line: profiling
/// showed capture extraction dominating the whole pipeline.
mod fast {
    /// A byte range of the input.
    pub type Span = (usize, usize);
    /// Prefix length, timestamp end, host, identifier, pid.
    pub type Syslog = (usize, usize, Span, Span, Option<u32>);
    /// Prefix length, level, timestamp, origin.
    pub type Vllm = (usize, Span, Span, Span);

    fn digits(b: &[u8], i: usize, n: usize) -> bool {
        b.len() >= i + n && b[i..i + n].iter().all(u8::is_ascii_digit)
    }

    /// `Mon DD HH:MM:SS[.frac]` at the start of `s` → where the timestamp ends.
    fn syslog_time(b: &[u8]) -> Option<usize> {
        if b.len() < 15
            || !b[0].is_ascii_uppercase()
            || !b[1].is_ascii_lowercase()
            || !b[2].is_ascii_lowercase()
            || b[3] != b' '
            || !(b[4] == b' ' || (b'0'..=b'3').contains(&b[4]))
            || !b[5].is_ascii_digit()
            || b[6] != b' '
            || !digits(b, 7, 2)
            || b[9] != b':'
            || !digits(b, 10, 2)
            || b[12] != b':'
            || !digits(b, 13, 2)
        {
            return None;
        }
        let mut i = 15;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == start {
                return None;
            }
        }
        Some(i)
    }

    /// A bare timestamp (`Mon DD HH:MM:SS[.frac] `, as CI runners and some loggers
    /// print it) that is not a syslog prefix → (len, ts_end). One space is taken: the
    /// indentation of a traceback's frame lines after it stays.
    pub fn bare_time(s: &str) -> Option<(usize, usize)> {
        let ts_end = syslog_time(s.as_bytes())?;
        if s.as_bytes().get(ts_end) != Some(&b' ') || syslog(s).is_some() {
            return None;
        }
        Some((ts_end + 1, ts_end))
    }

    /// `Mon DD HH:MM:SS[.frac] host ident[pid]: ` → (len, ts_end, host, ident, pid).
    ///
    /// A host cannot end with `:`: `Aug 16 14:45:47 ImportError: libfoo.so.7: cannot
    /// open…` is a bare timestamp before a message (see [`bare_time`]), not host
    /// `ImportError:` and identifier `libfoo.so.7`.
    pub fn syslog(s: &str) -> Option<Syslog> {
        let b = s.as_bytes();
        let mut i = syslog_time(b)?;
        let ts_end = i;
        if b.get(i) != Some(&b' ') {
            return None;
        }
        i += 1;
        let hs = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == hs || b.get(i) != Some(&b' ') || b[i - 1] == b':' {
            return None;
        }
        let host = (hs, i);
        i += 1;
        let is = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'[' && b[i] != b':' {
            i += 1;
        }
        if i == is {
            return None;
        }
        let ident = (is, i);
        let mut pid = None;
        if b.get(i) == Some(&b'[') {
            let ps = i + 1;
            let mut j = ps;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j == ps || b.get(j) != Some(&b']') {
                return None;
            }
            pid = s[ps..j].parse().ok();
            i = j + 1;
        }
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        if b.get(i) == Some(&b' ') {
            i += 1;
        }
        Some((i, ts_end, host, ident, pid))
    }

    /// `(Tag pid=N[, ip=…]) ` → (len, tag, pid).
    pub fn proc_tag(s: &str) -> Option<(usize, Span, Option<u32>)> {
        let b = s.as_bytes();
        if b.first() != Some(&b'(') || !b.get(1).is_some_and(u8::is_ascii_alphabetic) {
            return None;
        }
        let mut i = 2;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let tag = (1, i);
        let mut pid = None;
        if s[i..].starts_with(" pid=") {
            let ps = i + 5;
            let mut j = ps;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j == ps {
                return None;
            }
            pid = s[ps..j].parse().ok();
            i = j;
        }
        if s[i..].starts_with(", ip=") {
            let mut j = i + 5;
            while j < b.len() && (b[j].is_ascii_hexdigit() || b[j] == b'.' || b[j] == b':') {
                j += 1;
            }
            i = j;
        }
        if b.get(i) != Some(&b')') {
            return None;
        }
        i += 1;
        if b.get(i) == Some(&b' ') {
            i += 1;
        }
        Some((i, tag, pid))
    }

    /// The length of `[A-Za-z0-9][A-Za-z0-9_.-]*` at the start of `b` (0: none).
    fn name(b: &[u8], extra: &[u8]) -> usize {
        if !b.first().is_some_and(u8::is_ascii_alphanumeric) {
            return 0;
        }
        1 + b[1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || extra.contains(c))
            .count()
    }

    /// Whether the docker compose layer (`svc_1  | `, the `COMPOSE` regex) starts `s`.
    pub fn compose(s: &str) -> bool {
        let n = name(s.as_bytes(), b"_.-");
        if n == 0 {
            return false;
        }
        let rest = &s[n..];
        let ws = rest.trim_start_matches(char::is_whitespace);
        ws.len() < rest.len() && ws.starts_with("| ")
    }

    /// Whether the NCCL layer (`host:pid:tid [dev] `, the `NCCL` regex) starts `s`.
    pub fn nccl(s: &str) -> bool {
        let b = s.as_bytes();
        let mut i = name(b, b"._-");
        if i == 0 {
            return false;
        }
        for sep in [b':', b':', b' '] {
            if b.get(i) != Some(&sep) {
                return false;
            }
            let d = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if sep == b' ' {
                // ` [N] `
                if b.get(i + 1) != Some(&b'[') {
                    return false;
                }
                let d = b[i + 2..].iter().take_while(|c| c.is_ascii_digit()).count();
                return d > 0 && b.get(i + 2 + d) == Some(&b']') && b.get(i + 3 + d) == Some(&b' ');
            }
            if d == 0 {
                return false;
            }
            i += 1 + d;
        }
        false
    }

    /// `LEVEL:` and whitespace (the `LEVEL_COLON` layer) → (len, level end). `None`
    /// when whitespace other than ASCII follows (the regex's `\s+` would take it).
    pub fn level_colon(s: &str) -> Option<(usize, usize)> {
        let colon = s.as_bytes().iter().take(9).position(|&c| c == b':')?;
        if !matches!(
            &s[..colon],
            "DEBUG" | "INFO" | "WARNING" | "ERROR" | "CRITICAL"
        ) {
            return None;
        }
        let b = s.as_bytes();
        let mut i = colon + 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == colon + 1 || s[i..].starts_with(char::is_whitespace) {
            return None;
        }
        Some((i, colon))
    }

    /// `LEVEL MM-DD HH:MM:SS[.frac] [file.py:N] ` or the older `… file.py:N] ` →
    /// (len, level, ts, origin).
    pub fn vllm(s: &str) -> Option<Vllm> {
        let b = s.as_bytes();
        let lvl_end = b.iter().position(|&c| c == b' ')?;
        if !matches!(
            &s[..lvl_end],
            "DEBUG" | "INFO" | "WARNING" | "WARN" | "ERROR" | "CRITICAL"
        ) {
            return None;
        }
        let t = lvl_end + 1;
        if !(digits(b, t, 2)
            && b.get(t + 2) == Some(&b'-')
            && digits(b, t + 3, 2)
            && b.get(t + 5) == Some(&b' ')
            && digits(b, t + 6, 2)
            && b.get(t + 8) == Some(&b':')
            && digits(b, t + 9, 2)
            && b.get(t + 11) == Some(&b':')
            && digits(b, t + 12, 2))
        {
            return None;
        }
        let ts = (t, t + 14);
        let mut i = t + 14;
        if b.get(i) == Some(&b'.') {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if b.get(i) != Some(&b' ') {
            return None;
        }
        i += 1;
        let (origin, mut end) = if b.get(i) == Some(&b'[') {
            let close = s[i..].find(']')? + i;
            if close == i + 1 {
                return None;
            }
            ((i + 1, close), close + 1)
        } else {
            let os = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            if i == os || b.get(i) != Some(&b':') {
                return None;
            }
            let ds = i + 1;
            let mut j = ds;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j == ds || b.get(j) != Some(&b']') {
                return None;
            }
            ((os, j), j + 1)
        };
        if b.get(end) == Some(&b' ') {
            end += 1;
        }
        Some((end, (0, lvl_end), ts, origin))
    }
}

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

/// Reads the common layer stack (journald `short` → process tag → vLLM logger) without
/// allocating. `None` when the line has any other layer, so that the caller falls back
/// to [`normalize`]: for the lines it accepts, [`View::record`] is exactly the record
/// [`normalize`] gives (a test checks this on every line of the scenario and corpus).
pub fn view(text: &str) -> Option<View<'_>> {
    let mut rest = text;
    let mut v = View {
        level: None,
        message: text,
        worker: None,
        pid: None,
        timestamp: None,
        host: None,
        ident: None,
        origin: None,
    };
    let mut any = false;
    if let Some((len, ts_end, host, ident, pid)) = fast::syslog(rest) {
        if &rest[ident.0..ident.1] == "systemd" {
            return None;
        }
        v.pid = pid;
        v.timestamp = Some(&rest[..ts_end]);
        v.host = Some(&rest[host.0..host.1]);
        v.ident = Some(&rest[ident.0..ident.1]);
        rest = &rest[len..];
        any = true;
    }
    if let Some((len, tag, pid)) = fast::proc_tag(rest) {
        v.worker = Some(&rest[tag.0..tag.1]);
        if pid.is_some() {
            v.pid = pid;
        }
        rest = &rest[len..];
        any = true;
    }
    if let Some((len, lvl, ts, origin)) = fast::vllm(rest) {
        v.level = Level::parse(&rest[lvl.0..lvl.1]);
        v.timestamp = v.timestamp.or(Some(&rest[ts.0..ts.1]));
        v.origin = Some(&rest[origin.0..origin.1]);
        rest = &rest[len..];
        any = true;
    } else if let Some((len, lvl)) = fast::level_colon(rest) {
        // uvicorn's access log inside vLLM's API server: `INFO:     10.0.0.1:5 - "POST …"`
        v.level = Level::parse(&rest[..lvl]);
        rest = &rest[len..];
        any = true;
    }
    if !any || may_have_layer(rest) {
        return None;
    }
    v.message = rest;
    Some(v)
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

/// Whether any layer parser could apply to `s` (a superset of their guards).
fn may_have_layer(s: &str) -> bool {
    let Some(&first) = s.as_bytes().first() else {
        return false;
    };
    matches!(first, b'[' | b'(' | b'#' | b'{' | b'>')
        // ISO timestamps and Python logging (layers 0, 1, 11) have `-` at offset 4;
        // other digit-first layers (compose, NCCL) are covered by the clause below
        || (first.is_ascii_digit() && s.as_bytes().get(4) == Some(&b'-'))
        || level_word(s)
        || fast::syslog(s).is_some()
        || fast::bare_time(s).is_some()
        || (first.is_ascii_alphanumeric() && (fast::compose(s) || fast::nccl(s)))
        || (matches!(first, b'I' | b'W' | b'E' | b'F')
            && s.as_bytes().get(1).is_some_and(u8::is_ascii_digit))
}

/// Peels one line into a record.
pub fn normalize(line: Line) -> Record {
    let mut rec = Record {
        line: line.number,
        raw: String::new(),
        message: String::new(),
        stream: Stream::default(),
        level: None,
        timestamp: None,
        origin: None,
        truncated: line.truncated,
    };
    let mut start = 0usize;
    let text = line.text.as_str();

    // Layers that can only come first.
    let quoted = markdown_start(text);
    if quoted > 0 {
        start = quoted;
    } else if text.starts_with("{\"") && text.contains("\"MESSAGE\"") {
        if let Ok(j) = serde_json::from_str::<JournalJson>(text) {
            if let Some(m) = j.message.as_ref().and_then(journal_message) {
                rec.stream.pid = j.pid.as_deref().and_then(|p| p.parse().ok());
                rec.stream.ident = j.ident;
                rec.stream.unit = j.unit;
                rec.stream.host = j.host;
                rec.level = j.priority.as_deref().and_then(Level::from_priority);
                rec.timestamp = j.realtime;
                let peeled = peel(&m, 0, &mut rec);
                rec.message = m[peeled..].to_string();
                rec.raw = line.text;
                return rec;
            }
        }
    }
    start = peel(text, start, &mut rec);
    rec.message = text[start..].to_string();
    rec.raw = line.text;
    rec
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

/// Spaces a markdown code fence may be indented by (CommonMark).
const MAX_FENCE_INDENT: usize = 3;

/// How many layer parsers [`try_layer`] knows.
const LAYERS: usize = 19;

/// Applies the layer parsers from `start`; returns where the message begins.
fn peel(text: &str, mut start: usize, rec: &mut Record) -> usize {
    // Each layer at most once, in any order the line presents them.
    let mut used = [false; LAYERS];
    'outer: loop {
        let rest = &text[start..];
        let Some(&first) = rest.as_bytes().first() else {
            break;
        };
        for (layer, done) in used.iter_mut().enumerate() {
            if *done {
                continue;
            }
            if let Some(n) = try_layer(layer, first, rest, rec) {
                *done = true;
                start += n;
                continue 'outer;
            }
        }
        break;
    }
    if rec.stream.unit.is_none() && rec.stream.ident.as_deref() == Some("systemd") {
        if let Some(c) = UNIT.captures(&text[start..]) {
            rec.stream.unit = Some(c[1].to_string());
        }
    }
    start
}

fn set_level(rec: &mut Record, s: &str) {
    if let Some(l) = Level::parse(s) {
        rec.level = Some(l);
    }
}

/// Cheap guards that keep a layer's regex off lines it cannot match.
fn iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 10 && b[4] == b'-' && b[7] == b'-'
}

fn near(s: &str, byte: u8, within: usize) -> bool {
    let b = s.as_bytes();
    memchr::memchr(byte, &b[..b.len().min(within)]).is_some()
}

fn level_word(s: &str) -> bool {
    ["DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"]
        .iter()
        .any(|w| s.starts_with(w))
}

/// Tries one layer; returns the prefix length when it applies.
fn try_layer(layer: usize, first: u8, rest: &str, rec: &mut Record) -> Option<usize> {
    match layer {
        0 if first.is_ascii_digit() && iso_date(rest) => {
            let c = JOURNAL_ISO.captures(rest)?;
            rec.timestamp = Some(c[1].to_string());
            rec.stream.host = Some(c[2].to_string());
            rec.stream.ident = Some(c[3].to_string());
            rec.stream.pid = c.get(4).and_then(|m| m.as_str().parse().ok());
            Some(c[0].len())
        }
        1 if first.is_ascii_digit() && iso_date(rest) => {
            let c = ISO_Z.captures(rest)?;
            rec.timestamp.get_or_insert_with(|| c[1].to_string());
            Some(c[0].len())
        }
        2 if first == b'#' => {
            let c = GHA.captures(rest)?;
            match &c[1] {
                "error" => rec.level = Some(Level::Error),
                "warning" => rec.level = Some(Level::Warning),
                _ => {}
            }
            Some(c[0].len())
        }
        3 if first.is_ascii_uppercase() => {
            let (len, ts_end, host, ident, pid) = fast::syslog(rest)?;
            debug_assert!(SYSLOG.is_match(rest));
            rec.timestamp = Some(rest[..ts_end].to_string());
            rec.stream.host = Some(rest[host.0..host.1].to_string());
            rec.stream.ident = Some(rest[ident.0..ident.1].to_string());
            rec.stream.pid = pid;
            Some(len)
        }
        4 if first.is_ascii_alphanumeric() && near(rest, b'|', 64) => {
            let c = COMPOSE.captures(rest)?;
            rec.stream.ident.get_or_insert_with(|| c[1].to_string());
            Some(c[0].len())
        }
        5 if first.is_ascii_alphanumeric() && near(rest, b'[', 48) => {
            let c = NCCL.captures(rest)?;
            rec.stream.host.get_or_insert_with(|| c[1].to_string());
            rec.stream.pid = c[2].parse().ok();
            Some(c[0].len())
        }
        6 if first == b'(' => {
            let (len, tag, pid) = fast::proc_tag(rest)?;
            debug_assert!(PROC_TAG.is_match(rest));
            rec.stream.worker = Some(rest[tag.0..tag.1].to_string());
            if let Some(p) = pid {
                rec.stream.pid = Some(p);
            }
            Some(len)
        }
        7 if first == b'[' => {
            let c = RANK.captures(rest)?;
            rec.stream.rank = c[1].parse().ok();
            Some(c[0].len())
        }
        8 if first == b'[' => {
            let c = GLOG_BRACKET.captures(rest)?;
            set_level(rec, &c[1]);
            rec.timestamp.get_or_insert_with(|| c[2].to_string());
            rec.origin = Some(c[4].to_string());
            Some(c[0].len())
        }
        9 if first == b'[' => {
            let c = OLD_TORCH.captures(rest)?;
            set_level(rec, &c[1]);
            rec.origin = Some(c[2].to_string());
            Some(c[0].len())
        }
        10 if first.is_ascii_uppercase() && level_word(rest) => {
            let (len, lvl, ts, origin) = fast::vllm(rest)?;
            debug_assert!(VLLM.is_match(rest));
            set_level(rec, &rest[lvl.0..lvl.1]);
            rec.timestamp
                .get_or_insert_with(|| rest[ts.0..ts.1].to_string());
            rec.origin = Some(rest[origin.0..origin.1].to_string());
            Some(len)
        }
        11 if first.is_ascii_digit() && rest.as_bytes().get(4) == Some(&b'-') => {
            let c = PYLOG.captures(rest)?;
            rec.timestamp.get_or_insert_with(|| c[1].to_string());
            rec.origin = Some(c[2].to_string());
            set_level(rec, &c[3]);
            Some(c[0].len())
        }
        12 if first == b'[' => {
            let c = DEEPSPEED.captures(rest)?;
            rec.timestamp.get_or_insert_with(|| c[1].to_string());
            set_level(rec, &c[2]);
            rec.origin = Some(c[3].to_string());
            Some(c[0].len())
        }
        13 if matches!(first, b'I' | b'W' | b'E' | b'F')
            && rest.as_bytes().get(1).is_some_and(u8::is_ascii_digit) =>
        {
            let c = GLOG.captures(rest)?;
            set_level(rec, &c[1]);
            rec.timestamp.get_or_insert_with(|| c[2].to_string());
            rec.origin = Some(c[4].to_string());
            Some(c[0].len())
        }
        14 if first.is_ascii_uppercase() && level_word(rest) => {
            let c = PYLOG_BASIC.captures(rest)?;
            set_level(rec, &c[1]);
            rec.origin = Some(c[2].to_string());
            Some(c[0].len())
        }
        15 if first.is_ascii_uppercase() && level_word(rest) => {
            let c = LEVEL_COLON.captures(rest)?;
            set_level(rec, &c[1]);
            Some(c[0].len())
        }
        16 if first == b'[' => {
            let c = ISO_BRACKET.captures(rest)?;
            rec.timestamp.get_or_insert_with(|| c[1].to_string());
            Some(c[0].len())
        }
        17 if first == b'[' => {
            let c = BARE_ORIGIN.captures(rest)?;
            rec.origin.get_or_insert_with(|| c[1].to_string());
            Some(c[0].len())
        }
        // a bare `Mon DD HH:MM:SS ` timestamp that no syslog reading explains
        18 if first.is_ascii_uppercase() => {
            let (len, ts_end) = fast::bare_time(rest)?;
            rec.timestamp
                .get_or_insert_with(|| rest[..ts_end].to_string());
            Some(len)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(s: &str) -> Record {
        normalize(Line {
            number: 7,
            text: s.to_string(),
            truncated: 0,
        })
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
    fn compose_and_nccl_guards_agree_with_their_regexes() {
        for s in [
            "vllm_1  | RuntimeError: boom",
            "vllm_1 |RuntimeError",
            "Received request chatcmpl-1: prompt: '<|im_start|>user'",
            "svc\u{a0}| x",
            "node08:27106:27302 [0] include/shm.h:27 NCCL WARN x",
            "node08:27106:27302 [0]x",
            "node08:27106 [0] x",
            "a:1:2 [3] ",
            "rank 3 in world size 8 [x]",
        ] {
            assert_eq!(fast::compose(s), COMPOSE.is_match(s), "compose {s:?}");
            assert_eq!(fast::nccl(s), NCCL.is_match(s), "nccl {s:?}");
        }
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
    }

    #[test]
    fn unknown_lines_pass_through() {
        let r = rec("  File \"x.py\", line 1, in <module>");
        assert_eq!(r.message, "  File \"x.py\", line 1, in <module>");
        let r = rec("> NameError: name 'vllm_ops' is not defined");
        assert_eq!(r.message, "NameError: name 'vllm_ops' is not defined");
    }
}
