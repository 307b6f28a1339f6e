//! Presentation transformations: the ways a real log is reshaped before it reaches
//! crashdoc (pasted into a GitHub issue, read from journald or a container, cut off,
//! mixed with another process's output). Each is a pure, named function text → text,
//! deterministic for a given seed; the metamorphic harness ([`super::invariance`])
//! requires a log to get the same diagnosis whatever transformation it went through.
//!
//! The noise two of them add (interleaving, burying) is real: lines of the healthy logs
//! of the corpus (the `category: none` incidents), repeated as often as needed, never
//! written by hand. The prefixes the others add are the formats' own syntax with a
//! fixed host, unit and pid; the log's lines themselves are never edited, only
//! framed, split or cut.

use std::fmt::Write as _;

/// What a transformation may use besides the log.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// Seeds every random choice (wrap points, cut points, timestamps).
    pub seed: u64,
    /// A real healthy log of another stream (interleaved line by line).
    pub healthy: &'a [String],
    /// Real healthy serving lines (cycled to bury the log).
    pub noise: &'a [String],
    /// How many noise lines bury the log.
    pub bury_lines: usize,
}

/// A named transformation. `apply` returns `None` when it does not apply to the log
/// (a truncation of a log without traceback) or would leave it as it is.
#[derive(Debug, Clone, Copy)]
pub struct Transform {
    pub name: &'static str,
    pub apply: fn(&str, &Ctx<'_>) -> Option<String>,
}

/// Lines of burying noise in `corpus run --metamorphic`.
pub const BURY_LINES: usize = 10_000;

/// Every transformation, in the order of the report.
pub const ALL: &[Transform] = &[
    Transform {
        name: "markdown-quote",
        apply: markdown_quote,
    },
    Transform {
        name: "markdown-fence",
        apply: markdown_fence,
    },
    Transform {
        name: "wrap-80",
        apply: |t, c| wrap(t, c, 80, false),
    },
    Transform {
        name: "wrap-120-indent",
        apply: |t, c| wrap(t, c, 120, true),
    },
    Transform {
        name: "wrap-160",
        apply: |t, c| wrap(t, c, 160, false),
    },
    Transform {
        name: "github-space-runs",
        apply: space_runs,
    },
    Transform {
        name: "one-line-traceback",
        apply: one_line_traceback,
    },
    Transform {
        name: "journald-short",
        apply: |t, c| prefixed(t, c, Prefix::JournaldShort),
    },
    Transform {
        name: "journald-iso",
        apply: |t, c| prefixed(t, c, Prefix::JournaldIso),
    },
    Transform {
        name: "journald-precise",
        apply: |t, c| prefixed(t, c, Prefix::JournaldPrecise),
    },
    Transform {
        name: "journald-json",
        apply: journald_json,
    },
    Transform {
        name: "syslog",
        apply: |t, c| prefixed(t, c, Prefix::Syslog),
    },
    Transform {
        name: "docker-timestamps",
        apply: |t, c| prefixed(t, c, Prefix::Docker),
    },
    Transform {
        name: "kubectl-prefix",
        apply: |t, c| prefixed(t, c, Prefix::Kubectl),
    },
    Transform {
        name: "github-actions",
        apply: |t, c| prefixed(t, c, Prefix::GithubActions),
    },
    Transform {
        name: "bare-ci-timestamp",
        apply: |t, c| prefixed(t, c, Prefix::BareTimestamp),
    },
    Transform {
        name: "torchrun-rank",
        apply: |t, c| prefixed(t, c, Prefix::Rank),
    },
    Transform {
        name: "vllm-worker-tag",
        apply: |t, c| prefixed(t, c, Prefix::VllmWorker),
    },
    Transform {
        name: "truncate-head",
        apply: truncate_head,
    },
    Transform {
        name: "truncate-tail",
        apply: truncate_tail,
    },
    Transform {
        name: "crlf",
        apply: crlf,
    },
    Transform {
        name: "interleave-healthy",
        apply: interleave,
    },
    Transform {
        name: "bury-in-noise",
        apply: bury,
    },
];

/// The transformation of that name.
pub fn get(name: &str) -> Option<&'static Transform> {
    ALL.iter().find(|t| t.name == name)
}

/// A seed mixed with the log's bytes, so that every log gets its own cut points.
fn rng(t: &str, c: &Ctx<'_>) -> fastrand::Rng {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ c.seed;
    for b in t.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    fastrand::Rng::with_seed(h)
}

fn lines(t: &str) -> Vec<&str> {
    t.lines().collect()
}

fn join(v: &[String]) -> String {
    let mut s = v.join("\n");
    s.push('\n');
    s
}

fn changed(before: &str, after: String) -> Option<String> {
    (after.trim_end() != before.trim_end()).then_some(after)
}

/// `> ` before every line (an e-mail or GitHub quote).
fn markdown_quote(t: &str, _: &Ctx<'_>) -> Option<String> {
    let v: Vec<String> = lines(t)
        .iter()
        .map(|l| {
            if l.is_empty() {
                ">".into()
            } else {
                format!("> {l}")
            }
        })
        .collect();
    Some(join(&v))
}

/// The log inside a fenced code block, with the reporter's words around it.
fn markdown_fence(t: &str, _: &Ctx<'_>) -> Option<String> {
    Some(format!(
        "### Describe the bug\n\nThe server crashes at start-up. Full log:\n\n```text\n{}\n```\n\n### Environment\n",
        t.trim_end()
    ))
}

/// Where to break a line of more than `width` characters: the last space at or before
/// the width, else (one long word) the width itself. A char index.
fn break_at(chars: &[char], width: usize) -> usize {
    let cut = chars[..=width.min(chars.len() - 1)]
        .iter()
        .rposition(|c| *c == ' ')
        .filter(|&i| i > width / 4);
    cut.map_or(width, |i| i + 1)
}

/// Soft-wrapping at `width` columns (a terminal or mail client's copy), at spaces when
/// there are any; `indent` puts the continuation lines under the line's own
/// indentation plus two spaces (an editor's hanging indent).
fn wrap(t: &str, _: &Ctx<'_>, width: usize, indent: bool) -> Option<String> {
    let mut out = Vec::new();
    for l in lines(t) {
        let lead: String = l.chars().take_while(|c| c.is_whitespace()).collect();
        let pad = if indent {
            format!("{lead}  ")
        } else {
            String::new()
        };
        let mut rest: Vec<char> = l.chars().collect();
        let mut first = true;
        loop {
            let room = if first {
                width
            } else {
                width.saturating_sub(pad.len()).max(20)
            };
            if rest.len() <= room {
                let s: String = rest.iter().collect();
                out.push(if first { s } else { format!("{pad}{s}") });
                break;
            }
            let at = break_at(&rest, room);
            let head: String = rest[..at].iter().collect();
            out.push(if first { head } else { format!("{pad}{head}") });
            rest.drain(..at);
            first = false;
        }
    }
    changed(t, join(&out))
}

/// GitHub's rendered-paste artefact: a long line broken inside a word by a run of
/// spaces where the browser wrapped it (`get_confi                g`).
fn space_runs(t: &str, c: &Ctx<'_>) -> Option<String> {
    let mut r = rng(t, c);
    let v: Vec<String> = lines(t)
        .iter()
        .map(|l| {
            let chars: Vec<char> = l.chars().collect();
            if chars.len() < 100 {
                return (*l).to_string();
            }
            let mut s = String::new();
            let mut next = r.usize(70..100);
            for (i, ch) in chars.iter().enumerate() {
                if i == next {
                    s.push_str(&" ".repeat(r.usize(8..24)));
                    next += r.usize(70..100);
                }
                s.push(*ch);
            }
            s
        })
        .collect();
    changed(t, join(&v))
}

/// Each Python traceback: the index of its header line and of its final exception line
/// (the first line after the header whose text, from the header's column on, is not
/// indented), or of the log's last line when the traceback is cut (`complete` false).
/// The column lets a framework's per-line prefix (`(Worker pid=1) ERROR … `) stand in
/// front of every line.
fn tracebacks(v: &[&str]) -> Vec<Tb> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let Some(col) = v[i].find(TB_HEADER) else {
            i += 1;
            continue;
        };
        let mut j = i + 1;
        while j < v.len() && v[j].get(col..).is_some_and(|b| b.starts_with(' ')) {
            j += 1;
        }
        let complete = j < v.len();
        let end = j.min(v.len() - 1);
        out.push(Tb {
            start: i,
            end,
            complete,
        });
        i = end + 1;
    }
    out
}

const TB_HEADER: &str = "Traceback (most recent call last)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tb {
    start: usize,
    end: usize,
    complete: bool,
}

/// Every traceback collapsed onto one line (a paste that lost its newlines).
fn one_line_traceback(t: &str, _: &Ctx<'_>) -> Option<String> {
    let v = lines(t);
    let tbs = tracebacks(&v);
    if tbs.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 0;
    for Tb {
        start: a, end: b, ..
    } in tbs
    {
        out.extend(v[i..a].iter().map(|s| s.to_string()));
        let joined: Vec<&str> = v[a..=b]
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect();
        out.push(joined.join(" "));
        i = b + 1;
    }
    out.extend(v[i..].iter().map(|s| s.to_string()));
    changed(t, join(&out))
}

/// The log starting inside its first traceback: the header and the first frames cut
/// off (a paste that begins mid-way).
fn truncate_head(t: &str, c: &Ctx<'_>) -> Option<String> {
    let v = lines(t);
    let Tb {
        start: a, end: b, ..
    } = *tracebacks(&v).first()?;
    if b <= a + 1 {
        return None;
    }
    let cut = rng(t, c).usize(a + 1..b);
    changed(
        t,
        join(&v[cut..].iter().map(|s| s.to_string()).collect::<Vec<_>>()),
    )
}

/// The log ending before the final exception line of its last traceback (a paste cut
/// off at the bottom).
fn truncate_tail(t: &str, _: &Ctx<'_>) -> Option<String> {
    let v = lines(t);
    let Tb {
        start: a,
        end: b,
        complete,
    } = *tracebacks(&v).last()?;
    if !complete || b <= a {
        return None;
    }
    changed(
        t,
        join(&v[..b].iter().map(|s| s.to_string()).collect::<Vec<_>>()),
    )
}

fn crlf(t: &str, _: &Ctx<'_>) -> Option<String> {
    Some(lines(t).iter().fold(String::new(), |mut s, l| {
        let _ = write!(s, "{l}\r\n");
        s
    }))
}

/// Line by line with a real healthy log of another stream (cycled as needed).
fn interleave(t: &str, c: &Ctx<'_>) -> Option<String> {
    if c.healthy.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (i, l) in lines(t).iter().enumerate() {
        out.push(c.healthy[i % c.healthy.len()].clone());
        out.push((*l).to_string());
    }
    Some(join(&out))
}

/// The log at a random place inside `bury_lines` lines of real healthy serving noise.
fn bury(t: &str, c: &Ctx<'_>) -> Option<String> {
    if c.noise.is_empty() || c.bury_lines == 0 {
        return None;
    }
    let at = rng(t, c).usize(0..=c.bury_lines);
    let noise = |range: std::ops::Range<usize>| range.map(|i| c.noise[i % c.noise.len()].clone());
    let mut out: Vec<String> = noise(0..at).collect();
    out.extend(lines(t).iter().map(|s| s.to_string()));
    out.extend(noise(at..c.bury_lines));
    Some(join(&out))
}

/// The prefix families crashdoc reads.
#[derive(Debug, Clone, Copy)]
enum Prefix {
    JournaldShort,
    JournaldIso,
    JournaldPrecise,
    Syslog,
    Docker,
    Kubectl,
    GithubActions,
    BareTimestamp,
    Rank,
    VllmWorker,
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A wall clock starting at a seeded time, one tick per line.
struct Clock {
    month: usize,
    day: usize,
    secs: usize,
    micros: usize,
}

impl Clock {
    fn new(r: &mut fastrand::Rng) -> Self {
        Clock {
            month: r.usize(0..12),
            day: r.usize(1..29),
            secs: r.usize(0..80_000),
            micros: 0,
        }
    }

    fn tick(&mut self, r: &mut fastrand::Rng) {
        self.micros += r.usize(0..400_000);
        self.secs += self.micros / 1_000_000;
        self.micros %= 1_000_000;
    }

    fn hms(&self) -> String {
        let s = self.secs % 86_400;
        format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    }

    fn iso(&self) -> String {
        format!("2025-{:02}-{:02}T{}", self.month + 1, self.day, self.hms())
    }
}

fn prefix(p: Prefix, k: &Clock) -> String {
    let (mon, day, hms) = (MONTHS[k.month], k.day, k.hms());
    match p {
        Prefix::JournaldShort => format!("{mon} {day:02} {hms} gpu-node-3 vllm[216054]: "),
        Prefix::JournaldIso => format!("{}+0000 gpu-node-3 vllm[216054]: ", k.iso()),
        Prefix::JournaldPrecise => {
            format!(
                "{mon} {day:02} {hms}.{:06} gpu-node-3 vllm[216054]: ",
                k.micros
            )
        }
        Prefix::Syslog => format!("{mon} {day:>2} {hms} gpu-node-3 python3: "),
        Prefix::Docker => format!("{}.{:06}123Z ", k.iso(), k.micros),
        Prefix::Kubectl => "[pod/vllm-7d9f8b6c4-x2x9q/vllm] ".to_string(),
        Prefix::GithubActions => format!("{}.{:06}0Z ", k.iso(), k.micros),
        Prefix::BareTimestamp => format!("{mon} {day:02} {hms} "),
        Prefix::Rank => "[rank0]: ".to_string(),
        Prefix::VllmWorker => "(Worker_TP0 pid=4242) ".to_string(),
    }
}

/// Every line behind the family's prefix.
fn prefixed(t: &str, c: &Ctx<'_>, p: Prefix) -> Option<String> {
    let mut r = rng(t, c);
    let mut k = Clock::new(&mut r);
    let v: Vec<String> = lines(t)
        .iter()
        .map(|l| {
            k.tick(&mut r);
            format!("{}{l}", prefix(p, &k))
        })
        .collect();
    Some(join(&v))
}

/// `journalctl -o json`: one object per line, the line in `MESSAGE`.
fn journald_json(t: &str, c: &Ctx<'_>) -> Option<String> {
    let mut r = rng(t, c);
    let mut k = Clock::new(&mut r);
    let base: u64 = 1_755_000_000_000_000;
    let v: Vec<String> = lines(t)
        .iter()
        .map(|l| {
            k.tick(&mut r);
            let at = base + (k.secs as u64) * 1_000_000 + k.micros as u64;
            serde_json::json!({
                "__REALTIME_TIMESTAMP": at.to_string(),
                "_HOSTNAME": "gpu-node-3",
                "SYSLOG_IDENTIFIER": "vllm",
                "_PID": "216054",
                "_SYSTEMD_UNIT": "vllm.service",
                "PRIORITY": "6",
                "MESSAGE": l,
            })
            .to_string()
        })
        .collect();
    Some(join(&v))
}

/// Whitespace removed: how the harness finds a line's content in text that was
/// wrapped, prefixed or joined.
pub fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TB: &str = "INFO starting\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    main()\n  File \"b.py\", line 2, in main\n    raise RuntimeError(\"boom\")\nRuntimeError: boom\nINFO after\n";

    fn ctx<'a>(h: &'a [String]) -> Ctx<'a> {
        Ctx {
            seed: 7,
            healthy: h,
            noise: h,
            bury_lines: 10,
        }
    }

    #[test]
    fn tracebacks_end_at_the_exception_line() {
        let v = lines(TB);
        assert_eq!(
            tracebacks(&v),
            vec![Tb {
                start: 1,
                end: 6,
                complete: true
            }]
        );
    }

    #[test]
    fn every_transformation_is_deterministic_and_keeps_the_words() {
        let h = vec!["(EngineCore pid=9) INFO 05-04 01:03:11 [core.py:1] ok".to_string()];
        let c = ctx(&h);
        for t in ALL {
            let a = (t.apply)(TB, &c);
            assert_eq!(a, (t.apply)(TB, &c), "{}", t.name);
            let Some(a) = a else { continue };
            if !t.name.starts_with("truncate") {
                assert!(
                    squeeze(&a).contains(&squeeze("RuntimeError: boom")),
                    "{}: {a}",
                    t.name
                );
            }
        }
    }

    #[test]
    fn cuts_and_joins() {
        let c = ctx(&[]);
        let tail = truncate_tail(TB, &c).expect("applies");
        assert!(!tail.contains("RuntimeError: boom") && tail.contains("raise RuntimeError"));
        let head = truncate_head(TB, &c).expect("applies");
        assert!(!head.contains("Traceback") && head.contains("RuntimeError: boom"));
        let one = one_line_traceback(TB, &c).expect("applies");
        assert_eq!(one.lines().count(), 3);
        assert!(wrap("short\n", &c, 80, false).is_none());
        let long = format!("{}\n", "word ".repeat(60));
        let w = wrap(&long, &c, 80, true).expect("wraps");
        assert!(w.lines().all(|l| l.chars().count() <= 80));
        assert!(w.lines().skip(1).all(|l| l.starts_with("  ")));
    }
}
