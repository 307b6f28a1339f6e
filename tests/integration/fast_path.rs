//! The fast path against an independent oracle.
//!
//! `normalize` peels prefix layers with one parser per layer (byte parsers for the hot
//! layers); `normalize::view` reads the common layer stack with the same parsers without
//! allocating, and the pipeline builds records from it (`View::record`). The oracle
//! ([`oracle`]) is a second implementation of prefix peeling written from the documented
//! formats only: one regex per layer, the same order and join rules, its own markdown
//! and journald JSON readers. The tests compare the record fields (message, timestamp,
//! unit, host, identifier, pid, worker, rank, level, origin) of `normalize` with the
//! oracle, and `view` with `normalize`, on
//! - every line of every log in the repository (`corpus/*/log.txt`, the scenario
//!   journal, the contributor, environment and metamorphic test logs under
//!   `tests/data`), all of them, not a sample;
//! - every line of a generated benchmark log (`crashdoc bench gen-log`'s generator,
//!   2 MB);
//! - CONSTRUCTED lines from a property test that composes random prefixes of every
//!   layer (with near misses, cuts and stray characters) before messages; its case
//!   count is small (48 batches of 64 lines in a release build, `PROPTEST_CASES`
//!   overrides) to keep `cargo test --release` fast.

use std::path::{Path, PathBuf};

use crashdoc::engine::ingest::{Line, LineReader, Source};
use crashdoc::engine::normalize::{self, Level, Record};
use proptest::prelude::*;

mod oracle {
    //! Prefix peeling from the documented formats (`docs/architecture.md`, the layer
    //! list in `engine::normalize`), with regexes only.

    use std::sync::LazyLock;

    use regex::{Captures, Regex};

    use super::{Level, Record};

    /// The fields compared.
    #[derive(Debug, Default, Clone, PartialEq, Eq)]
    pub struct Peeled {
        pub message: String,
        pub timestamp: Option<String>,
        pub unit: Option<String>,
        pub host: Option<String>,
        pub ident: Option<String>,
        pub pid: Option<u32>,
        pub worker: Option<String>,
        pub rank: Option<u32>,
        pub level: Option<Level>,
        pub origin: Option<String>,
    }

    impl Peeled {
        pub fn of(r: &Record) -> Peeled {
            Peeled {
                message: r.message.clone(),
                timestamp: r.timestamp.clone(),
                unit: r.stream.unit.clone(),
                host: r.stream.host.clone(),
                ident: r.stream.ident.clone(),
                pid: r.stream.pid,
                worker: r.stream.worker.clone(),
                rank: r.stream.rank,
                level: r.level,
                origin: r.origin.clone(),
            }
        }
    }

    /// How a layer's fields join what the layers before it read.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Join {
        /// journald/syslog: timestamp, host, identifier and pid replaced, even by none.
        Writer,
        /// Timestamp, host, identifier kept when known; the rest replaced when named.
        Inner,
        /// As `Inner`, but the origin is kept when known.
        OriginFallback,
        /// As `Inner`, and read twice at most (a Ray actor's tag around a vLLM worker's).
        Nested,
    }

    /// A condition beyond the regex.
    #[derive(Clone, Copy)]
    enum Bound {
        None,
        /// The compose bar is within the first N bytes.
        BarWithin(usize),
        /// NCCL's device bracket is within the first N bytes.
        BracketWithin(usize),
        /// No syslog prefix reads at the same point.
        NoSyslog,
        /// The match, when it ends with the closing bracket, is not followed by
        /// punctuation (`(OOM), …` is prose).
        NoPunctAfter,
    }

    struct Layer {
        re: Regex,
        join: Join,
        bound: Bound,
    }

    /// `\d` is written for ASCII digits.
    fn re(p: &str) -> Regex {
        Regex::new(&p.replace(r"\d", "[0-9]")).expect("oracle regex")
    }

    const SYSLOG: &str = r"^(?P<ts>[A-Z][a-z][a-z] [ 0-3]\d \d\d:\d\d:\d\d(?:\.\d+)?) (?P<host>[^\s\[]\S*[^\s:]|[^\s:\[]) (?P<ident>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: ?";
    const LEVELS: &str = "DEBUG|INFO|WARNING|ERROR|CRITICAL";

    /// The layers' formats (`LEVELS` stands for the level words), in the documented
    /// order.
    const FORMATS: &[(&str, Join, Bound)] = &[
        // kubectl logs --prefix
        (
            r"^\[pod/(?P<ident>[a-z0-9][a-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)\] ",
            Join::Inner,
            Bound::None,
        ),
        // journald short-iso
        (
            r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d:?\d\d) (?P<host>\S+) (?P<ident>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: ?",
            Join::Writer,
            Bound::None,
        ),
        // GitHub Actions / docker timestamps
        (
            r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ",
            Join::Inner,
            Bound::None,
        ),
        (
            r"^##\[(?:(?P<level>error|warning)|notice|debug|group|endgroup)\]",
            Join::Inner,
            Bound::None,
        ),
        (SYSLOG, Join::Writer, Bound::None),
        // docker compose
        (
            r"^(?P<ident>[A-Za-z0-9][A-Za-z0-9_.-]*)\s+\| ",
            Join::Inner,
            Bound::BarWithin(64),
        ),
        // NCCL
        (
            r"^(?P<host>[A-Za-z0-9][A-Za-z0-9._-]*):(?P<pid>\d+):\d+ \[\d+\] ",
            Join::Inner,
            Bound::BracketWithin(48),
        ),
        // vLLM/Ray process tag
        (
            r"^\((?P<worker>[A-Za-z][A-Za-z0-9_]*)(?: pid=(?P<pid>\d+))?(?:, ip=[0-9A-Fa-f.:]+)?\) ?",
            Join::Nested,
            Bound::NoPunctAfter,
        ),
        (
            r"^\[(?:rank|default)(?P<rank>\d+)\]: ?",
            Join::Inner,
            Bound::None,
        ),
        // glog in brackets
        (
            r"^\[(?P<level>[IWEF])(?P<ts>\d{4} \d\d:\d\d:\d\d\.\d+)(?: \d+)? (?P<origin>[^\]\s]+:\d+)\] ?",
            Join::Inner,
            Bound::None,
        ),
        // older PyTorch C++
        (
            r"^\[(?P<level>[IWEF]) (?P<origin>[^\]\s]+:\d+)\] ?",
            Join::Inner,
            Bound::None,
        ),
        // vLLM logger, new and old origin
        (
            r"^(?P<level>LEVELS|WARN) (?P<ts>\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? (?:\[(?P<origin>[^\]]+)\]|(?P<origin2>[A-Za-z0-9_.]+:\d+)\]) ?",
            Join::Inner,
            Bound::None,
        ),
        // Python logging
        (
            r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?) - (?P<origin>\S+) - (?P<level>LEVELS) - ",
            Join::Inner,
            Bound::None,
        ),
        // TensorFlow's C++ logger
        (
            r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}): (?P<level>[IWEF])(?: +\d+)? (?P<origin>[^\]\s]+:\d+)\] ?",
            Join::Inner,
            Bound::None,
        ),
        // DeepSpeed
        (
            r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+)\] \[(?P<level>LEVELS)\] \[(?P<origin>[^\]]+)\] ",
            Join::Inner,
            Bound::None,
        ),
        // glog
        (
            r"^(?P<level>[IWEF])(?P<ts>\d{4} \d\d:\d\d:\d\d\.\d+)\s+\d+ (?P<origin>[^\]\s]+:\d+)\] ",
            Join::Inner,
            Bound::None,
        ),
        // Python logging's basicConfig
        (
            r"^(?P<level>LEVELS):(?P<origin>[A-Za-z_][A-Za-z0-9_.]*):",
            Join::Inner,
            Bound::None,
        ),
        // uvicorn
        (r"^(?P<level>LEVELS):\s+", Join::Inner, Bound::None),
        (
            r"^\[(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\] ",
            Join::Inner,
            Bound::None,
        ),
        (
            r"^\[(?P<origin>[A-Za-z0-9_.-]+\.py:\d+)\] ",
            Join::OriginFallback,
            Bound::None,
        ),
        // a bare syslog-style timestamp (CI logs)
        (
            r"^(?P<ts>[A-Z][a-z][a-z] [ 0-3]\d \d\d:\d\d:\d\d(?:\.\d+)?) ",
            Join::Inner,
            Bound::NoSyslog,
        ),
    ];

    static LAYERS: LazyLock<Vec<Layer>> = LazyLock::new(|| {
        FORMATS
            .iter()
            .map(|&(p, join, bound)| Layer {
                re: re(&p.replace("LEVELS", LEVELS)),
                join,
                bound,
            })
            .collect()
    });

    static SYSLOG_RE: LazyLock<Regex> = LazyLock::new(|| re(SYSLOG));
    static UNIT: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^(?P<unit>[A-Za-z0-9@._:\\-]+\.(?:service|scope|slice|socket|timer|mount)): ")
    });
    static QUOTE: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:> )*(?:>$)?"));
    static FENCE: LazyLock<Regex> = LazyLock::new(|| re(r"^ {0,3}(?:`{3,}|~{3,})"));
    static INFO_STRING: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z0-9_+.-]*\s*$"));

    fn level(word: &str) -> Option<Level> {
        Some(match word {
            "DEBUG" => Level::Debug,
            "I" | "INFO" => Level::Info,
            "W" | "WARN" | "WARNING" | "warning" => Level::Warning,
            "E" | "ERROR" | "error" => Level::Error,
            "F" | "CRITICAL" => Level::Critical,
            _ => return None,
        })
    }

    fn bound_holds(bound: Bound, c: &Captures<'_>, s: &str) -> bool {
        let whole = c.get(0).map_or("", |m| m.as_str());
        match bound {
            Bound::None => true,
            Bound::BarWithin(n) => whole.len() - 2 < n,
            Bound::BracketWithin(n) => whole.find(" [").is_some_and(|i| i + 1 < n),
            Bound::NoSyslog => !SYSLOG_RE.is_match(s),
            Bound::NoPunctAfter => {
                whole.ends_with(' ')
                    || !matches!(s[whole.len()..].chars().next(), Some(',' | '.' | ';' | ':'))
            }
        }
    }

    fn join(join: Join, c: &Captures<'_>, p: &mut Peeled) {
        let get = |n: &str| c.name(n).map(|m| m.as_str().to_string());
        let num = |n: &str| c.name(n).and_then(|m| m.as_str().parse::<u32>().ok());
        if join == Join::Writer {
            p.timestamp = get("ts");
            p.host = get("host");
            p.ident = get("ident");
            p.pid = num("pid");
        } else {
            p.timestamp = p.timestamp.take().or_else(|| get("ts"));
            p.host = p.host.take().or_else(|| get("host"));
            p.ident = p.ident.take().or_else(|| get("ident"));
            p.pid = num("pid").or(p.pid);
        }
        p.worker = get("worker").or(p.worker.take());
        p.rank = num("rank").or(p.rank);
        p.level = c.name("level").and_then(|m| level(m.as_str())).or(p.level);
        let origin = get("origin").or_else(|| get("origin2"));
        p.origin = if join == Join::OriginFallback {
            p.origin.take().or(origin)
        } else {
            origin.or(p.origin.take())
        };
    }

    /// Peels `text` from `start` into `p`; returns where the message begins.
    fn peel(text: &str, mut start: usize, p: &mut Peeled) -> usize {
        let mut used = vec![0u8; LAYERS.len()];
        loop {
            let s = &text[start..];
            let hit = LAYERS
                .iter()
                .enumerate()
                .filter(|&(i, l)| used[i] < if l.join == Join::Nested { 2 } else { 1 })
                .find_map(|(i, l)| {
                    let c = l.re.captures(s)?;
                    bound_holds(l.bound, &c, s).then_some((i, c))
                });
            let Some((i, c)) = hit.filter(|_| !s.is_empty()) else {
                break;
            };
            used[i] += 1;
            join(LAYERS[i].join, &c, p);
            start += c.get(0).map_or(0, |m| m.len());
        }
        if p.unit.is_none() && p.ident.as_deref() == Some("systemd") {
            p.unit = UNIT
                .captures(&text[start..])
                .and_then(|c| c.name("unit"))
                .map(|m| m.as_str().to_string());
        }
        start
    }

    /// Where the message starts after markdown quote markers and a code fence.
    fn markdown(text: &str) -> usize {
        let q = QUOTE.find(text).map_or(0, |m| m.end());
        let Some(f) = FENCE.find(&text[q..]) else {
            return q;
        };
        let after = q + f.end();
        if INFO_STRING.is_match(&text[after..]) {
            text.len()
        } else {
            after
        }
    }

    /// A journald `-o json` line: its fields, when every one read is a string.
    fn journal(text: &str, p: &mut Peeled) -> Option<String> {
        if !text.starts_with("{\"") || !text.contains("\"MESSAGE\"") {
            return None;
        }
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let o = v.as_object()?;
        let field = |k: &str| match o.get(k) {
            None | Some(serde_json::Value::Null) => Some(None),
            Some(serde_json::Value::String(s)) => Some(Some(s.clone())),
            Some(_) => None,
        };
        let [pid, ident, unit, priority, host, ts] = [
            "_PID",
            "SYSLOG_IDENTIFIER",
            "_SYSTEMD_UNIT",
            "PRIORITY",
            "_HOSTNAME",
            "__REALTIME_TIMESTAMP",
        ]
        .map(field);
        let message = match o.get("MESSAGE")? {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) => {
                let bytes: Vec<u8> = a
                    .iter()
                    .filter_map(|b| b.as_u64().and_then(|n| u8::try_from(n).ok()))
                    .collect();
                crashdoc::engine::ingest::clean_text(&bytes)
            }
            _ => return None,
        };
        p.pid = pid?.and_then(|s| s.parse().ok());
        p.ident = ident?;
        p.unit = unit?;
        p.level = match priority?.as_deref() {
            Some("0" | "1" | "2") => Some(Level::Critical),
            Some("3") => Some(Level::Error),
            Some("4") => Some(Level::Warning),
            Some("7") => Some(Level::Debug),
            _ => None,
        };
        p.host = host?;
        p.timestamp = ts?;
        Some(message)
    }

    /// The oracle's reading of one line.
    pub fn read(text: &str) -> Peeled {
        let mut p = Peeled::default();
        let q = markdown(text);
        if q == 0 {
            let mut j = Peeled::default();
            if let Some(m) = journal(text, &mut j) {
                let start = peel(&m, 0, &mut j);
                j.message = m[start..].to_string();
                return j;
            }
        }
        let start = peel(text, q, &mut p);
        p.message = text[start..].to_string();
        p
    }
}

fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            logs(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "txt" || x == "log" || x == "gz")
        {
            out.push(p);
        }
    }
}

/// Lines checked, lines the view read.
#[derive(Default)]
struct Tally {
    lines: usize,
    viewed: usize,
}

/// Checks one line: `normalize` against the oracle, and the view (when it reads the
/// line) against `normalize`.
fn check_line(name: &str, line: Line, clean: Option<&str>, t: &mut Tally) {
    t.lines += 1;
    let number = line.number;
    let truncated = line.truncated;
    let expected = oracle::read(&line.text);
    let full = normalize::normalize(line);
    assert_eq!(
        oracle::Peeled::of(&full),
        expected,
        "{name}: line {number} {:?}: normalize differs from the oracle",
        full.raw
    );
    let Some(text) = clean else {
        return;
    };
    let Some(v) = normalize::view(text) else {
        return;
    };
    t.viewed += 1;
    assert_eq!(
        v.record(number, text, truncated),
        full,
        "{name}: line {number}: view"
    );
    let mut key = String::from("stale");
    v.key_into(&mut key);
    assert_eq!(key, full.stream.key(), "{name}: line {number} key");
    assert_eq!(
        v.key_hash(),
        normalize::stream_key_hash(&key),
        "{name}: line {number} key hash"
    );
}

fn check(name: &str, reader: &mut LineReader, t: &mut Tally) {
    while let Some(raw) = reader.next_raw().expect("read") {
        let clean = raw.clean().map(str::to_string);
        check_line(name, raw.into_line(), clean.as_deref(), t);
    }
}

#[test]
fn every_line_of_every_real_log_reads_as_the_oracle_reads_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["corpus", "tests/data"] {
        logs(&root.join(d), &mut files);
    }
    assert!(files.len() > 40, "the corpus and test logs are there");
    let mut t = Tally::default();
    for f in &files {
        let mut r = LineReader::open(&Source::Path(f.clone())).expect("open");
        check(&f.display().to_string(), &mut r, &mut t);
    }
    // the scenario journal alone has hundreds of lines in the fast layer stack
    assert!(
        t.viewed > 500,
        "{} of {} lines read by the view",
        t.viewed,
        t.lines
    );
}

#[test]
fn every_line_of_the_generated_log_reads_as_the_oracle_reads_it() {
    let mut bytes = Vec::new();
    crashdoc::tools::bench::write_log(&mut bytes, 2_000_000, 3).expect("generate");
    let mut r =
        LineReader::from_reader(Box::new(std::io::Cursor::new(bytes)), "gen".into()).expect("open");
    let mut t = Tally::default();
    check("generated", &mut r, &mut t);
    assert!(t.viewed * 10 > t.lines * 9, "{} of {}", t.viewed, t.lines);
}

/// CONSTRUCTED prefixes of every layer, with near misses (a `.` without digits, a host
/// ending in `:`, an empty `ip=`, a pid past `u32`, a name too long for compose).
mod gen {
    use fastrand::Rng;

    fn pick<'a>(r: &mut Rng, xs: &[&'a str]) -> &'a str {
        xs[r.usize(..xs.len())]
    }

    fn num(r: &mut Rng) -> String {
        pick(
            r,
            &[
                "0",
                "7",
                "216054",
                "4294967295",
                "4294967296",
                "99999999999",
                "",
            ],
        )
        .to_string()
    }

    fn frac(r: &mut Rng, sep: &str) -> String {
        match r.u8(..4) {
            0 => String::new(),
            1 => sep.to_string(),
            _ => format!("{sep}{}", r.u32(..1_000_000)),
        }
    }

    fn word(r: &mut Rng) -> String {
        pick(
            r,
            &[
                "llm-two",
                "vllm",
                "node08",
                "systemd",
                "kernel",
                "a",
                "host:",
                "x\u{a0}y",
                "vllm_1",
                "web.1",
                "h\u{b}t",
                "é",
                "ImportError:",
                "[188497.595099]",
                "averyveryveryveryveryveryveryveryveryveryveryveryverylongname",
            ],
        )
        .to_string()
    }

    fn hms(r: &mut Rng) -> String {
        format!("{:02}:{:02}:{:02}", r.u8(..24), r.u8(..60), r.u8(..60))
    }

    fn level(r: &mut Rng) -> &'static str {
        pick(
            r,
            &[
                "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "NOTICE", "Error",
            ],
        )
    }

    fn pid(r: &mut Rng) -> String {
        if r.bool() {
            String::new()
        } else {
            format!("[{}]", num(r))
        }
    }

    fn syslog_time(r: &mut Rng) -> String {
        let day = pick(r, &[" 1", "20", "31", "41", "01"]);
        let mon = pick(r, &["Feb", "Aug", "feb", "FEB"]);
        format!("{mon} {day} {}{}", hms(r), frac(r, "."))
    }

    fn ymd(r: &mut Rng) -> String {
        format!("20{:02}-{:02}-{:02}", r.u8(..30), r.u8(1..13), r.u8(1..29))
    }

    fn md(r: &mut Rng) -> String {
        format!(
            "{:02}{}{:02}",
            r.u8(1..13),
            pick(r, &["-", ""]),
            r.u8(1..29)
        )
    }

    fn journal_iso(r: &mut Rng) -> String {
        let zone = pick(r, &["+0000", "-05:00", "Z", "+1"]);
        format!(
            "{}T{}{}{zone} {} {}{}: ",
            ymd(r),
            hms(r),
            frac(r, "."),
            word(r),
            word(r),
            pid(r)
        )
    }

    fn iso_timestamp(r: &mut Rng) -> String {
        format!("{}T{}{}Z ", ymd(r), hms(r), frac(r, "."))
    }

    fn github_actions(r: &mut Rng) -> String {
        let cmd = pick(
            r,
            &[
                "error", "warning", "notice", "debug", "group", "endgroup", "fatal",
            ],
        );
        format!("##[{cmd}]")
    }

    fn syslog(r: &mut Rng) -> String {
        let sep = pick(r, &[" ", "", "  "]);
        format!("{} {} {}{}:{sep}", syslog_time(r), word(r), word(r), pid(r))
    }

    fn kubectl(r: &mut Rng) -> String {
        let pod = pick(r, &["vllm-7d9f8b6c4-x2x9q", "trainer-0", "a.b-c", "Upper"]);
        let container = pick(r, &["vllm", "main_1", "x.y-z", "-bad"]);
        format!("[pod/{pod}/{container}] ")
    }

    fn compose(r: &mut Rng) -> String {
        let ws = pick(r, &["  ", " ", "", "\u{a0}", "\t"]);
        format!("{}{ws}| ", word(r))
    }

    fn nccl(r: &mut Rng) -> String {
        format!("{}:{}:{} [{}] ", word(r), num(r), num(r), num(r))
    }

    fn proc_tag(r: &mut Rng) -> String {
        let tag = pick(
            r,
            &["Worker_TP4", "EngineCore", "RayWorkerWrapper", "_x", "9a"],
        );
        let pid = pick(r, &["", " pid=", " pid=216054", " pid=4294967296"]);
        let ip = pick(r, &["", ", ip=10.0.0.2", ", ip=", ", ip=fe80::1"]);
        format!("({tag}{pid}{ip}){}", pick(r, &[" ", "", ", ", ":"]))
    }

    fn rank(r: &mut Rng) -> String {
        let word = pick(r, &["rank", "default", "Rank"]);
        format!("[{word}{}]:{}", num(r), pick(r, &[" ", ""]))
    }

    fn glog_bracket(r: &mut Rng) -> String {
        let letter = pick(r, &["I", "W", "E", "F", "X"]);
        let tid = pick(r, &["", " 12345"]);
        let origin = pick(r, &["ProcessGroupNCCL.cpp:2068", "x.cpp", "a b:1"]);
        let md = md(r);
        format!(
            "[{letter}{md} {}{}{tid} {origin}]{}",
            hms(r),
            frac(r, "."),
            pick(r, &[" ", ""])
        )
    }

    fn old_torch(r: &mut Rng) -> String {
        let letter = pick(r, &["I", "E", "EE"]);
        let origin = pick(r, &["ProcessGroupNCCL.cpp:474", "x.cpp:"]);
        format!("[{letter} {origin}]{}", pick(r, &[" ", ""]))
    }

    fn vllm(r: &mut Rng) -> String {
        let lv = level(r);
        let origin = pick(
            r,
            &[
                "[multiproc_executor.py:783]",
                "worker_base.py:382]",
                "[]",
                "[a]b]",
                "x.py]",
                "x.py:1",
            ],
        );
        let md = md(r);
        format!(
            "{lv} {md} {}{} {origin}{}",
            hms(r),
            frac(r, "."),
            pick(r, &[" ", ""])
        )
    }

    fn python_logging(r: &mut Rng) -> String {
        let lv = level(r);
        format!(
            "{} {}{} - {} - {lv} - ",
            ymd(r),
            hms(r),
            frac(r, ","),
            word(r)
        )
    }

    fn tensorflow(r: &mut Rng) -> String {
        let letter = pick(r, &["I", "W", "E", "F", "X"]);
        let tid = pick(r, &["", " 1234567", "  42"]);
        let origin = pick(r, &["tensorflow/core/x.cc:314", "x.cc", "a b:1"]);
        format!(
            "{} {}{}: {letter}{tid} {origin}]{}",
            ymd(r),
            hms(r),
            frac(r, "."),
            pick(r, &[" ", ""])
        )
    }

    fn deepspeed(r: &mut Rng) -> String {
        let lv = level(r);
        let origin = pick(r, &["real_accelerator.py:161:get_accelerator", "", "x]"]);
        format!("[{} {}{}] [{lv}] [{origin}] ", ymd(r), hms(r), frac(r, ","))
    }

    fn glog_letter(r: &mut Rng) -> String {
        let letter = pick(r, &["I", "E", "F"]);
        let ws = pick(r, &[" ", "  ", ""]);
        let origin = pick(r, &["file.cpp:2068", "file.cpp"]);
        let md = md(r);
        format!(
            "{letter}{md} {}{}{ws}{} {origin}] ",
            hms(r),
            frac(r, "."),
            num(r)
        )
    }

    fn python_basic(r: &mut Rng) -> String {
        let lv = level(r);
        format!("{lv}:{}:", pick(r, &["root", "vllm.engine", "9x", ""]))
    }

    fn level_colon(r: &mut Rng) -> String {
        let lv = level(r);
        format!(
            "{lv}:{}",
            pick(r, &["     ", " ", "", "\u{a0}", "\u{3000} "])
        )
    }

    fn iso_bracket(r: &mut Rng) -> String {
        let t = pick(r, &["T", " ", "_"]);
        let sep = pick(r, &[".", ","]);
        let zone = pick(r, &["", "Z", "+00:00", "-0500", "+1"]);
        format!("[{}{t}{}{}{zone}] ", ymd(r), hms(r), frac(r, sep))
    }

    fn bare_origin(r: &mut Rng) -> String {
        format!(
            "[{}] ",
            pick(r, &["api_server.py:1", "x.py", "a-b.py:12", "x.pyc:1"])
        )
    }

    fn bare_time(r: &mut Rng) -> String {
        format!("{} ", syslog_time(r))
    }

    /// A prefix of each layer, in the documented order.
    const PREFIXES: &[fn(&mut Rng) -> String] = &[
        kubectl,
        journal_iso,
        iso_timestamp,
        github_actions,
        syslog,
        compose,
        nccl,
        proc_tag,
        rank,
        glog_bracket,
        old_torch,
        vllm,
        python_logging,
        tensorflow,
        deepspeed,
        glog_letter,
        python_basic,
        level_colon,
        iso_bracket,
        bare_origin,
        bare_time,
    ];

    const MESSAGES: &[&str] = &[
        "Traceback (most recent call last):",
        "  File \"x.py\", line 1, in <module>",
        "RuntimeError: CUDA error: out of memory",
        "[Rank 1] Watchdog caught collective operation timeout",
        "include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
        "ImportError: libfoo.so.7: cannot open shared object file",
        "vllm-kimi.service: Main process exited, code=exited, status=1/FAILURE",
        "",
        "(x",
        "# a comment",
    ];

    const STRAY: &[char] = &[
        ' ', ':', '[', ']', '|', '(', ')', '.', '\u{a0}', '\u{b}', '\t', '0', 'é', '>',
    ];

    /// A line: prefixes, a message, then maybe a cut, a stray character, a markdown
    /// quote or fence, or a journald JSON wrapping.
    pub fn line(seed: u64) -> String {
        let mut r = Rng::with_seed(seed);
        let mut s = String::new();
        for _ in 0..r.usize(..5) {
            let prefix = PREFIXES[r.usize(..PREFIXES.len())];
            s.push_str(&prefix(&mut r));
        }
        s.push_str(MESSAGES[r.usize(..MESSAGES.len())]);
        if r.u8(..4) == 0 {
            let cuts: Vec<usize> = (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect();
            let at = cuts[r.usize(..cuts.len())];
            let c = STRAY[r.usize(..STRAY.len())];
            if r.bool() {
                s.truncate(at);
            } else {
                s.insert(at, c);
            }
        }
        match r.u8(..10) {
            0 => format!("> {s}"),
            1 => format!("```{s}"),
            2 => {
                let mut o = serde_json::Map::new();
                o.insert("MESSAGE".into(), s.into());
                o.insert("PRIORITY".into(), r.u8(..8).to_string().into());
                o.insert("_PID".into(), "12".into());
                o.insert("SYSLOG_IDENTIFIER".into(), "vllm".into());
                serde_json::Value::Object(o).to_string()
            }
            _ => s,
        }
    }
}

/// Cases per property: 16 batches in a debug build, 48 with `--release`;
/// `PROPTEST_CASES` overrides both.
fn cases() -> u32 {
    let default = if cfg!(debug_assertions) { 16 } else { 48 };
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Lines per property case.
const BATCH: u64 = 64;

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn composed_prefixes_read_as_the_oracle_reads_them(seed in any::<u64>()) {
        let mut t = Tally::default();
        let mut peeled = 0;
        for i in 0..BATCH {
            let text = gen::line(seed.wrapping_add(i));
            let line = Line { number: 1, text: text.clone(), truncated: 0 };
            peeled += usize::from(oracle::read(&text).message.len() < text.len());
            check_line(&format!("seed {}", seed.wrapping_add(i)), line, Some(&text), &mut t);
        }
        // many composed lines carry a layer both readers peel (a case of 64 lines with
        // none would mean the generator lost its prefixes)
        prop_assert!(peeled * 4 > t.lines, "{peeled} of {} lines peeled", t.lines);
    }
}

/// The oracle itself reads the documented formats (so that agreeing with it means
/// something).
#[test]
fn the_oracle_reads_the_documented_formats() {
    // Source: tests/data/scenario/journal.txt (line 39)
    let p = oracle::read("Feb 20 23:31:36 llm-two vllm-kimi[216054]: (Worker_TP4 pid=216054) ERROR 02-20 23:31:36 [multiproc_executor.py:783] Traceback (most recent call last):");
    assert_eq!(p.message, "Traceback (most recent call last):");
    assert_eq!(p.timestamp.as_deref(), Some("Feb 20 23:31:36"));
    assert_eq!(p.host.as_deref(), Some("llm-two"));
    assert_eq!(p.ident.as_deref(), Some("vllm-kimi"));
    assert_eq!(
        (p.pid, p.worker.as_deref()),
        (Some(216054), Some("Worker_TP4"))
    );
    assert_eq!(p.level, Some(Level::Error));
    assert_eq!(p.origin.as_deref(), Some("multiproc_executor.py:783"));
    // Source: crashdoc's normalize unit tests (torchrun rank, bracketed glog)
    let p = oracle::read("[rank2]:[E1128 21:12:49.422069862 ProcessGroupNCCL.cpp:2068] [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated");
    assert_eq!((p.rank, p.level), (Some(2), Some(Level::Error)));
    assert!(p.message.starts_with("[PG ID 0"));
    let p = oracle::read("[2023-12-31 16:33:59,636] [INFO] [real_accelerator.py:161:get_accelerator] Setting ds_accelerator to cuda (auto detect)");
    assert_eq!(p.message, "Setting ds_accelerator to cuda (auto detect)");
    assert_eq!(
        p.origin.as_deref(),
        Some("real_accelerator.py:161:get_accelerator")
    );
    let p =
        oracle::read("Aug 16 14:45:47 ImportError: libfoo.so.7: cannot open shared object file");
    assert_eq!(
        (p.host, p.timestamp.as_deref()),
        (None, Some("Aug 16 14:45:47"))
    );
    let p = oracle::read("> ```text");
    assert_eq!(p.message, "");
}

#[test]
fn view_reads_levels_the_fast_path_relies_on() {
    // Source: tests/data/scenario/journal.txt (line 39)
    let line = "Feb 20 23:31:36 llm-two vllm-kimi[216054]: (Worker_TP4 pid=216054) ERROR 02-20 23:31:36 [multiproc_executor.py:783] Traceback (most recent call last):";
    let v = normalize::view(line).expect("the usual layers");
    assert_eq!(v.level, Some(Level::Error));
    assert_eq!(v.message, "Traceback (most recent call last):");
    assert_eq!(v.worker, Some("Worker_TP4"));
    assert_eq!(v.origin, Some("multiproc_executor.py:783"));
    // systemd's lines act on extraction through their identifier: never viewed
    assert!(normalize::view("Feb 20 23:31:36 llm-two systemd[1]: Started vllm.service.").is_none());
}

/// The two-thread pass (used past 10,000 lines) gives the same diagnosis and extraction
/// as one thread, on the generated log (with its restarts, tracebacks and NCCL blocks)
/// and on the scenario journal.
#[test]
fn two_threads_give_what_one_thread_gives() {
    use crashdoc::engine::diagnosis::BuildOptions;
    use crashdoc::engine::matcher::EngineKind;
    use crashdoc::engine::pipeline::Engine;
    let lib = crashdoc::knowledge::signature::load(&[
        crashdoc::knowledge::signature::LibrarySource::Builtin,
    ])
    .expect("library");
    let mut generated = Vec::new();
    crashdoc::tools::bench::write_log(&mut generated, 6_000_000, 11).expect("generate");
    let scenario = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scenario/journal.txt"),
    )
    .expect("scenario");
    let compiled = crashdoc::engine::matcher::Compiled::new(&lib).expect("compiled");
    for (name, bytes) in [("generated", generated), ("scenario", scenario)] {
        let render = |parallel_after: usize| {
            let mut e =
                Engine::new(&compiled, EngineKind::Prefilter).with_parallel_after(parallel_after);
            let mut r =
                LineReader::from_reader(Box::new(std::io::Cursor::new(bytes.clone())), name.into())
                    .expect("open");
            let d = e
                .diagnose(&mut r, BuildOptions::default())
                .expect("diagnose");
            // the wire form: what a user reads of it
            serde_json::to_string(&crashdoc::report::wire::Diagnosis::from(&d)).expect("json")
        };
        let one = render(usize::MAX);
        assert_eq!(render(0), one, "{name}: from the first line");
        assert_eq!(render(1000), one, "{name}: from line 1000");
    }
}
