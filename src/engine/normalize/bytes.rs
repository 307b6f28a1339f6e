//! Byte parsers for the layers on the hot path: the ones nearly every line of a journal
//! carries (syslog `short`, the vLLM/Ray process tag, the vLLM logger, uvicorn's
//! `LEVEL:`) and the ones [`super::view`] must rule out cheaply after them (docker
//! compose, NCCL, a bare timestamp). Profiling showed regex capture extraction
//! dominating the whole pipeline; these read the same formats byte by byte. Each is the
//! only parser of its layer; the formats they accept are written out in
//! [`super::layers::Layer`]'s documentation, and the integration test `fast_path`
//! checks them against an independent regex oracle.

use super::Level;

/// What the layers peeled off a line read, borrowed from the line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Fields<'a> {
    pub unit: Option<&'a str>,
    pub host: Option<&'a str>,
    pub ident: Option<&'a str>,
    pub pid: Option<u32>,
    pub worker: Option<&'a str>,
    pub rank: Option<u32>,
    pub level: Option<Level>,
    pub timestamp: Option<&'a str>,
    pub origin: Option<&'a str>,
}

/// One layer read at the start of a text: its length and what it names.
#[derive(Debug, Clone, Copy)]
pub(super) struct Read<'a> {
    pub len: usize,
    pub fields: Fields<'a>,
}

fn digits(b: &[u8], i: usize, n: usize) -> bool {
    b.len() >= i + n && b[i..i + n].iter().all(u8::is_ascii_digit)
}

/// The number of ASCII digits at `b[i..]`.
fn digit_run(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .map_or(0, |t| t.iter().take_while(|c| c.is_ascii_digit()).count())
}

/// Where the run of characters that are not whitespace (Unicode `White_Space`, as the
/// regex `\S`) and not in `stop` starting at `i` ends.
fn word_end(s: &str, i: usize, stop: &[char]) -> usize {
    s[i..]
        .find(|c: char| c.is_whitespace() || stop.contains(&c))
        .map_or(s.len(), |n| i + n)
}

/// `.` and at least one digit at `b[i]` → where they end; `i` when there is no `.`;
/// `None` for a `.` without digits.
fn fraction(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'.') {
        return Some(i);
    }
    let n = digit_run(b, i + 1);
    (n > 0).then_some(i + 1 + n)
}

/// `Mon DD HH:MM:SS[.frac]` at the start of `b` → where the timestamp ends.
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
    fraction(b, 15)
}

/// A bare timestamp (`Mon DD HH:MM:SS[.frac] `, as CI runners and some loggers print
/// it) where no syslog prefix reads. One space is taken: the indentation of a
/// traceback's frame lines after it stays.
pub fn bare_time(s: &str) -> Option<Read<'_>> {
    let ts_end = syslog_time(s.as_bytes())?;
    if s.as_bytes().get(ts_end) != Some(&b' ') || syslog(s).is_some() {
        return None;
    }
    Some(Read {
        len: ts_end + 1,
        fields: Fields {
            timestamp: Some(&s[..ts_end]),
            ..Fields::default()
        },
    })
}

/// `Mon DD HH:MM:SS[.frac] host ident[pid]: `.
///
/// A host cannot end with `:`: `Aug 16 14:45:47 ImportError: libfoo.so.7: cannot
/// open…` is a bare timestamp before a message (see [`bare_time`]), not host
/// `ImportError:` and identifier `libfoo.so.7`. Nor can it start with `[`: `Dec 08
/// 18:26:52 [188497.595099] NVRM: …` is a bare timestamp before the kernel's own
/// `[seconds]` stamp, not host `[188497.595099]` and identifier `NVRM`.
pub fn syslog(s: &str) -> Option<Read<'_>> {
    let b = s.as_bytes();
    let ts_end = syslog_time(b)?;
    if b.get(ts_end) != Some(&b' ') {
        return None;
    }
    let hs = ts_end + 1;
    let he = word_end(s, hs, &[]);
    if he == hs || b.get(he) != Some(&b' ') || b[he - 1] == b':' || b[hs] == b'[' {
        return None;
    }
    let is = he + 1;
    let ie = word_end(s, is, &['[', ':']);
    if ie == is {
        return None;
    }
    let (mut i, mut pid) = (ie, None);
    if b.get(i) == Some(&b'[') {
        let n = digit_run(b, i + 1);
        if n == 0 || b.get(i + 1 + n) != Some(&b']') {
            return None;
        }
        pid = s[i + 1..i + 1 + n].parse().ok();
        i += n + 2;
    }
    if b.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    if b.get(i) == Some(&b' ') {
        i += 1;
    }
    Some(Read {
        len: i,
        fields: Fields {
            timestamp: Some(&s[..ts_end]),
            host: Some(&s[hs..he]),
            ident: Some(&s[is..ie]),
            pid,
            ..Fields::default()
        },
    })
}

/// `(Tag[ pid=N][, ip=ADDR])[ ]`.
pub fn proc_tag(s: &str) -> Option<Read<'_>> {
    let b = s.as_bytes();
    if b.first() != Some(&b'(') || !b.get(1).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let mut i = 2 + b[2..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let tag = &s[1..i];
    let mut pid = None;
    if s[i..].starts_with(" pid=") {
        let n = digit_run(b, i + 5);
        if n == 0 {
            return None;
        }
        pid = s[i + 5..i + 5 + n].parse().ok();
        i += 5 + n;
    }
    if s[i..].starts_with(", ip=") {
        let n = b[i + 5..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit() || matches!(c, b'.' | b':'))
            .count();
        if n == 0 {
            return None;
        }
        i += 5 + n;
    }
    if b.get(i) != Some(&b')') {
        return None;
    }
    i += 1;
    // a parenthesised word that punctuation follows is prose (`(OOM), 0 Workers
    // crashed`, a wrap's continuation), never a tag: a process tag ends with a space or
    // the line
    if matches!(b.get(i), Some(b',' | b'.' | b';' | b':')) {
        return None;
    }
    if b.get(i) == Some(&b' ') {
        i += 1;
    }
    Some(Read {
        len: i,
        fields: Fields {
            worker: Some(tag),
            pid,
            ..Fields::default()
        },
    })
}

/// The length of `[A-Za-z0-9][A-Za-z0-9<extra>]*` at the start of `b` (0: none).
fn name(b: &[u8], extra: &[u8]) -> usize {
    if !b.first().is_some_and(u8::is_ascii_alphanumeric) {
        return 0;
    }
    1 + b[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || extra.contains(c))
        .count()
}

/// docker compose's `service_1  | `: a name, whitespace, `| `.
pub fn compose(s: &str) -> Option<Read<'_>> {
    let n = name(s.as_bytes(), b"_.-");
    if n == 0 {
        return None;
    }
    let rest = &s[n..];
    let ws = rest.trim_start_matches(char::is_whitespace);
    if ws.len() == rest.len() || !ws.starts_with("| ") {
        return None;
    }
    Some(Read {
        len: s.len() - ws.len() + 2,
        fields: Fields {
            ident: Some(&s[..n]),
            ..Fields::default()
        },
    })
}

/// NCCL's `host:pid:tid [dev] `.
pub fn nccl(s: &str) -> Option<Read<'_>> {
    let b = s.as_bytes();
    let h = name(b, b"._-");
    if h == 0 || b.get(h) != Some(&b':') {
        return None;
    }
    let p = digit_run(b, h + 1);
    let t_at = h + 1 + p;
    if p == 0 || b.get(t_at) != Some(&b':') {
        return None;
    }
    let t = digit_run(b, t_at + 1);
    let sp = t_at + 1 + t;
    if t == 0 || !s[sp..].starts_with(" [") {
        return None;
    }
    let d = digit_run(b, sp + 2);
    let close = sp + 2 + d;
    if d == 0 || !s[close..].starts_with("] ") {
        return None;
    }
    Some(Read {
        len: close + 2,
        fields: Fields {
            host: Some(&s[..h]),
            pid: s[h + 1..t_at].parse().ok(),
            ..Fields::default()
        },
    })
}

/// `LEVEL:` and whitespace (uvicorn's `INFO:     10.0.0.1:5 - "POST …"`).
pub fn level_colon(s: &str) -> Option<Read<'_>> {
    let colon = s.as_bytes().iter().take(9).position(|&c| c == b':')?;
    if !matches!(
        &s[..colon],
        "DEBUG" | "INFO" | "WARNING" | "ERROR" | "CRITICAL"
    ) {
        return None;
    }
    let after = &s[colon + 1..];
    let rest = after.trim_start_matches(char::is_whitespace);
    if rest.len() == after.len() {
        return None;
    }
    Some(Read {
        len: s.len() - rest.len(),
        fields: Fields {
            level: Level::parse(&s[..colon]),
            ..Fields::default()
        },
    })
}

/// `MM-DD HH:MM:SS` at `b[t..]`.
fn month_day_time(b: &[u8], t: usize) -> bool {
    digits(b, t, 2)
        && b.get(t + 2) == Some(&b'-')
        && digits(b, t + 3, 2)
        && b.get(t + 5) == Some(&b' ')
        && digits(b, t + 6, 2)
        && b.get(t + 8) == Some(&b':')
        && digits(b, t + 9, 2)
        && b.get(t + 11) == Some(&b':')
        && digits(b, t + 12, 2)
}

/// The vLLM logger's origin at `s[i..]`: `[anything]` or the older `file.py:N]` →
/// (origin start, origin end, where the `]` ends).
fn vllm_origin(s: &str, i: usize) -> Option<(usize, usize, usize)> {
    let b = s.as_bytes();
    if b.get(i) == Some(&b'[') {
        let close = s[i..].find(']')? + i;
        return (close > i + 1).then_some((i + 1, close, close + 1));
    }
    let n = b[i..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
        .count();
    if n == 0 || b.get(i + n) != Some(&b':') {
        return None;
    }
    let d = digit_run(b, i + n + 1);
    let close = i + n + 1 + d;
    if d == 0 || b.get(close) != Some(&b']') {
        return None;
    }
    Some((i, close, close + 1))
}

/// vLLM's logger: `LEVEL MM-DD HH:MM:SS[.frac] [file.py:N] ` or the older
/// `LEVEL MM-DD HH:MM:SS file.py:N] `.
pub fn vllm(s: &str) -> Option<Read<'_>> {
    let b = s.as_bytes();
    let lvl_end = memchr::memchr(b' ', b)?;
    if !matches!(
        &s[..lvl_end],
        "DEBUG" | "INFO" | "WARNING" | "WARN" | "ERROR" | "CRITICAL"
    ) {
        return None;
    }
    let t = lvl_end + 1;
    if !month_day_time(b, t) {
        return None;
    }
    let i = fraction(b, t + 14)?;
    if b.get(i) != Some(&b' ') {
        return None;
    }
    let (os, oe, mut end) = vllm_origin(s, i + 1)?;
    if b.get(end) == Some(&b' ') {
        end += 1;
    }
    Some(Read {
        len: end,
        fields: Fields {
            level: Level::parse(&s[..lvl_end]),
            timestamp: Some(&s[t..t + 14]),
            origin: Some(&s[os..oe]),
            ..Fields::default()
        },
    })
}
