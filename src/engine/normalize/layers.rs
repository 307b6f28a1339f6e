//! The prefix layers, by name: one parser each (a byte parser in [`super::bytes`] on the
//! hot path, else an anchored regex), a guard that keeps the parser off lines it cannot
//! read, the order they are tried in ([`ORDER`]) and how what a layer read joins what
//! the layers before it read ([`Layer::apply`]).

use std::sync::LazyLock;

use regex::{Captures, Regex};

pub(super) use super::bytes::{Fields, Read};
use super::{bytes, Level};

/// A prefix layer, named by the format it reads. Formats (ASCII digit classes; "blank"
/// is Unicode whitespace):
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layer {
    /// `kubectl logs --prefix`: `[pod/NAME/CONTAINER] ` (NAME a DNS name, CONTAINER
    /// `[A-Za-z0-9][A-Za-z0-9_.-]*`) → identifier `NAME/CONTAINER`.
    Kubectl,
    /// journald `short-iso`: `YYYY-MM-DDTHH:MM:SS[.frac]±HH[:]MM host ident[pid]: ` →
    /// timestamp, host, identifier, pid.
    JournalIso,
    /// `YYYY-MM-DDTHH:MM:SS[.frac]Z ` (GitHub Actions, `docker logs --timestamps`) →
    /// timestamp.
    IsoTimestamp,
    /// GitHub Actions' `##[error]`, `##[warning]` (→ level), `##[notice]`, `##[debug]`,
    /// `##[group]`, `##[endgroup]`.
    GithubActions,
    /// journald `short`/`short-precise` and classic syslog: `Mon DD HH:MM:SS[.frac] host
    /// ident[pid]:[ ]` → timestamp, host, identifier, pid. The host is non-blank, does
    /// not start with `[` (a kernel's `[seconds]` stamp) and does not end with `:`.
    Syslog,
    /// docker compose: `name  | ` (name `[A-Za-z0-9][A-Za-z0-9_.-]*`, blanks, `| `, the
    /// bar within the first 64 bytes) → identifier.
    Compose,
    /// NCCL: `host:pid:tid [dev] ` (host `[A-Za-z0-9][A-Za-z0-9._-]*`, a `[` within the
    /// first 48 bytes) → host, pid.
    NcclHostPid,
    /// vLLM/Ray process tags: `(Tag[ pid=N][, ip=ADDR])[ ]` → worker, pid.
    ProcTag,
    /// torchrun: `[rankN]:[ ]` or `[defaultN]:[ ]` → rank.
    Rank,
    /// glog in brackets (PyTorch C++): `[LMMDD HH:MM:SS.frac[ tid] file:N][ ]` → level,
    /// timestamp, origin.
    GlogBracket,
    /// Older PyTorch C++: `[L file:N][ ]` → level, origin.
    OldTorch,
    /// vLLM's logger: `LEVEL MM-DD HH:MM:SS[.frac] [origin][ ]` or the older `… file.py:N][ ]`
    /// → level, timestamp, origin.
    Vllm,
    /// Python logging's `YYYY-MM-DD HH:MM:SS[,ms] - name - LEVEL - ` → timestamp, origin
    /// (the logger name), level.
    PythonLogging,
    /// TensorFlow's C++ logger (`tensorflow/core/platform/default/logging.cc`, later
    /// `tsl`): `YYYY-MM-DD HH:MM:SS.micros: L[ tid] file:N] ` → timestamp, level, origin.
    /// Its `I` lines are what a healthy start prints (libraries opened, CPU features); a
    /// line with an error word among them is no failure, and its `E` lines are.
    Tensorflow,
    /// DeepSpeed: `[YYYY-MM-DD HH:MM:SS,ms] [LEVEL] [origin] ` → timestamp, level, origin.
    DeepSpeed,
    /// glog: `LMMDD HH:MM:SS.frac  tid file:N] ` → level, timestamp, origin.
    GlogLetter,
    /// Python logging's default format: `LEVEL:name:` → level, origin.
    PythonBasic,
    /// `LEVEL:` and blanks (uvicorn) → level.
    LevelColon,
    /// `[YYYY-MM-DD[T ]HH:MM:SS[.,frac][Z|±HH[:]MM]] ` → timestamp.
    IsoBracket,
    /// `[file.py:N] ` → origin, unless a layer before named one.
    BareOrigin,
    /// A bare `Mon DD HH:MM:SS[.frac] ` (CI logs) where no syslog prefix reads →
    /// timestamp.
    BareTime,
}

/// The order layers are tried in, at each point of a line; each applies at most
/// [`Layer::times`] (once, but for a process tag).
///
/// Outer layers first, as logs nest them: the transport (journald, syslog, CI and docker
/// timestamps, compose, NCCL's host tag), then process tags (vLLM/Ray, torchrun ranks),
/// then loggers. On a typical line the parser that reads is among the first few tried.
/// The order decides between layers that can read the same start:
/// - `DeepSpeed` before `IsoBracket`: `[2023-12-31 16:33:59,636] [INFO] [x.py:1] ` is one
///   DeepSpeed prefix, not a bracketed timestamp followed by a message `[INFO] …`;
/// - `Vllm` and `PythonBasic` before `LevelColon`: the more specific `LEVEL` forms first;
/// - `GlogBracket`, `OldTorch`, `DeepSpeed` before `BareOrigin`, and `Syslog` before
///   `BareTime` (which declines a syslog reading anyway): generic shapes last.
pub(super) const ORDER: &[Layer] = &[
    Layer::Kubectl,
    Layer::JournalIso,
    Layer::IsoTimestamp,
    Layer::GithubActions,
    Layer::Syslog,
    Layer::Compose,
    Layer::NcclHostPid,
    Layer::ProcTag,
    Layer::Rank,
    Layer::GlogBracket,
    Layer::OldTorch,
    Layer::Vllm,
    Layer::PythonLogging,
    Layer::Tensorflow,
    Layer::DeepSpeed,
    Layer::GlogLetter,
    Layer::PythonBasic,
    Layer::LevelColon,
    Layer::IsoBracket,
    Layer::BareOrigin,
    Layer::BareTime,
];

/// Bytes from the start within which docker compose's bar must be.
const COMPOSE_BAR_WITHIN: usize = 64;
/// Bytes from the start within which NCCL's device bracket must be.
const NCCL_BRACKET_WITHIN: usize = 48;

impl Layer {
    /// A bit of its own in a set of layers.
    pub fn bit(self) -> u32 {
        1 << self as u32
    }

    /// How many times one line may present the layer: a process tag twice (Ray's actor
    /// tag around a vLLM worker's, `(vLLMHttpServer pid=542833) (Worker pid=550429)`; the
    /// inner one names the stream), every other layer once.
    pub fn times(self) -> u32 {
        match self {
            Layer::ProcTag => 2,
            _ => 1,
        }
    }

    /// A cheap test that keeps the parser off lines it cannot read (`first` is the
    /// first byte of `s`). For `Compose` and `NcclHostPid` it is part of the format (the
    /// bar or bracket must come early): a long name is a message, not a prefix.
    pub fn guard(self, first: u8, s: &str) -> bool {
        match self {
            Layer::Kubectl => first == b'[' && s.starts_with("[pod/"),
            Layer::JournalIso | Layer::IsoTimestamp => first.is_ascii_digit() && iso_date(s),
            Layer::GithubActions => first == b'#',
            Layer::Syslog | Layer::BareTime => first.is_ascii_uppercase(),
            Layer::Compose => first.is_ascii_alphanumeric() && near(s, b'|', COMPOSE_BAR_WITHIN),
            Layer::NcclHostPid => {
                first.is_ascii_alphanumeric() && near(s, b'[', NCCL_BRACKET_WITHIN)
            }
            Layer::ProcTag => first == b'(',
            Layer::Rank
            | Layer::GlogBracket
            | Layer::OldTorch
            | Layer::DeepSpeed
            | Layer::IsoBracket
            | Layer::BareOrigin => first == b'[',
            Layer::Vllm | Layer::PythonBasic | Layer::LevelColon => {
                first.is_ascii_uppercase() && level_word(s)
            }
            Layer::PythonLogging | Layer::Tensorflow => {
                first.is_ascii_digit() && s.as_bytes().get(4) == Some(&b'-')
            }
            Layer::GlogLetter => {
                matches!(first, b'I' | b'W' | b'E' | b'F')
                    && s.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
            }
        }
    }

    /// The layer's parser, on the start of `s`.
    pub fn parse(self, s: &str) -> Option<Read<'_>> {
        match self {
            Layer::Kubectl => kubectl(s),
            Layer::JournalIso => journal_iso(s),
            Layer::IsoTimestamp => timestamp_only(&ISO_Z, s),
            Layer::GithubActions => github_actions(s),
            Layer::Syslog => bytes::syslog(s),
            Layer::Compose => bytes::compose(s),
            Layer::NcclHostPid => bytes::nccl(s),
            Layer::ProcTag => bytes::proc_tag(s),
            Layer::Rank => rank(s),
            Layer::GlogBracket => level_time_origin(&GLOG_BRACKET, s),
            Layer::OldTorch => old_torch(s),
            Layer::Vllm => bytes::vllm(s),
            Layer::PythonLogging => python_logging(s),
            Layer::Tensorflow => level_time_origin(&TENSORFLOW, s),
            Layer::DeepSpeed => level_time_origin(&DEEPSPEED, s),
            Layer::GlogLetter => level_time_origin(&GLOG, s),
            Layer::PythonBasic => python_basic(s),
            Layer::LevelColon => bytes::level_colon(s),
            Layer::IsoBracket => timestamp_only(&ISO_BRACKET, s),
            Layer::BareOrigin => bare_origin(s),
            Layer::BareTime => bytes::bare_time(s),
        }
    }

    /// The guard, then the parser.
    pub fn read(self, first: u8, s: &str) -> Option<Read<'_>> {
        if self.guard(first, s) {
            self.parse(s)
        } else {
            None
        }
    }

    /// Joins what this layer read into what the layers before it read. journald and
    /// syslog name the writer wholesale (timestamp, host, identifier, pid, even none);
    /// other layers fill a timestamp, host or identifier only when none is known, and
    /// replace the level, pid, worker, rank and origin they name (`BareOrigin` only
    /// fills an origin).
    pub fn apply<'a>(self, read: &Fields<'a>, f: &mut Fields<'a>) {
        if matches!(self, Layer::JournalIso | Layer::Syslog) {
            f.timestamp = read.timestamp;
            f.host = read.host;
            f.ident = read.ident;
            f.pid = read.pid;
        } else {
            f.timestamp = f.timestamp.or(read.timestamp);
            f.host = f.host.or(read.host);
            f.ident = f.ident.or(read.ident);
            f.pid = read.pid.or(f.pid);
        }
        f.worker = read.worker.or(f.worker);
        f.rank = read.rank.or(f.rank);
        f.level = read.level.or(f.level);
        f.origin = if self == Layer::BareOrigin {
            f.origin.or(read.origin)
        } else {
            read.origin.or(f.origin)
        };
    }
}

fn iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 10 && b[4] == b'-' && b[7] == b'-'
}

fn near(s: &str, byte: u8, within: usize) -> bool {
    let b = s.as_bytes();
    memchr::memchr(byte, &b[..b.len().min(within)]).is_some()
}

/// Whether `s` starts with a level word (`DEBUG`, `INFO`, `WARN…`, `ERROR`, `CRITICAL`).
pub(super) fn level_word(s: &str) -> bool {
    ["DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"]
        .iter()
        .any(|w| s.starts_with(w))
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
    KUBECTL,
    r"^\[pod/([a-z0-9][a-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)\] "
);
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
re!(RANK, r"^\[(?:rank|default)([0-9]+)\]: ?");
re!(
    GLOG_BRACKET,
    r"^\[(?P<level>[IWEF])(?P<ts>[0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+)(?: [0-9]+)? (?P<origin>[^\]\s]+:[0-9]+)\] ?"
);
re!(OLD_TORCH, r"^\[([IWEF]) ([^\]\s]+:[0-9]+)\] ?");
re!(
    PYLOG,
    r"^([0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:,[0-9]+)?) - (\S+) - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - "
);
re!(
    TENSORFLOW,
    r"^(?P<ts>[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]{6}): (?P<level>[IWEF])(?: +[0-9]+)? (?P<origin>[^\]\s]+:[0-9]+)\] ?"
);
re!(
    DEEPSPEED,
    r"^\[(?P<ts>[0-9]{4}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9],[0-9]+)\] \[(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[(?P<origin>[^\]]+)\] "
);
re!(
    GLOG,
    r"^(?P<level>[IWEF])(?P<ts>[0-9]{4} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+)\s+[0-9]+ (?P<origin>[^\]\s]+:[0-9]+)\] "
);
re!(
    PYLOG_BASIC,
    r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):([A-Za-z_][A-Za-z0-9_.]*):"
);

fn group<'a>(c: &Captures<'a>, i: usize) -> Option<&'a str> {
    c.get(i).map(|m| m.as_str())
}

fn named<'a>(c: &Captures<'a>, name: &str) -> Option<&'a str> {
    c.name(name).map(|m| m.as_str())
}

fn whole(c: &Captures<'_>) -> usize {
    c.get(0).map_or(0, |m| m.len())
}

fn journal_iso(s: &str) -> Option<Read<'_>> {
    let c = JOURNAL_ISO.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            timestamp: group(&c, 1),
            host: group(&c, 2),
            ident: group(&c, 3),
            pid: group(&c, 4).and_then(|p| p.parse().ok()),
            ..Fields::default()
        },
    })
}

/// A layer that names only a timestamp, in capture group 1.
fn timestamp_only<'a>(re: &Regex, s: &'a str) -> Option<Read<'a>> {
    let c = re.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            timestamp: group(&c, 1),
            ..Fields::default()
        },
    })
}

fn github_actions(s: &str) -> Option<Read<'_>> {
    let c = GHA.captures(s)?;
    let level = match group(&c, 1) {
        Some("error") => Some(Level::Error),
        Some("warning") => Some(Level::Warning),
        _ => None,
    };
    Some(Read {
        len: whole(&c),
        fields: Fields {
            level,
            ..Fields::default()
        },
    })
}

fn kubectl(s: &str) -> Option<Read<'_>> {
    let c = KUBECTL.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            ident: group(&c, 1),
            ..Fields::default()
        },
    })
}

fn rank(s: &str) -> Option<Read<'_>> {
    let c = RANK.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            rank: group(&c, 1).and_then(|r| r.parse().ok()),
            ..Fields::default()
        },
    })
}

/// A layer that names a level, a timestamp and an origin (in the named groups `level`,
/// `ts`, `origin`).
fn level_time_origin<'a>(re: &Regex, s: &'a str) -> Option<Read<'a>> {
    let c = re.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            level: named(&c, "level").and_then(Level::parse),
            timestamp: named(&c, "ts"),
            origin: named(&c, "origin"),
            ..Fields::default()
        },
    })
}

fn old_torch(s: &str) -> Option<Read<'_>> {
    let c = OLD_TORCH.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            level: group(&c, 1).and_then(Level::parse),
            origin: group(&c, 2),
            ..Fields::default()
        },
    })
}

fn python_logging(s: &str) -> Option<Read<'_>> {
    let c = PYLOG.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            timestamp: group(&c, 1),
            origin: group(&c, 2),
            level: group(&c, 3).and_then(Level::parse),
            ..Fields::default()
        },
    })
}

fn python_basic(s: &str) -> Option<Read<'_>> {
    let c = PYLOG_BASIC.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            level: group(&c, 1).and_then(Level::parse),
            origin: group(&c, 2),
            ..Fields::default()
        },
    })
}

fn bare_origin(s: &str) -> Option<Read<'_>> {
    let c = BARE_ORIGIN.captures(s)?;
    Some(Read {
        len: whole(&c),
        fields: Fields {
            origin: group(&c, 1),
            ..Fields::default()
        },
    })
}
