//! Which systemd unit a failure's process belongs to.
//!
//! A fix that restarts, edits or resets a unit must name the unit whose process wrote
//! the failure, never merely the first unit a journal mentions (in an unfiltered journal
//! that can be `systemd-networkd.service`). A failure's unit is *established* only by:
//!
//! 1. the line itself: journald's `_SYSTEMD_UNIT` (`journalctl -o json`), or the unit a
//!    systemd line names (`systemd[1]: vllm.service: Main process exited…`);
//! 2. its journald identifier, when it is the name of exactly one unit the log names
//!    (`vllm[1234]` and `vllm.service`), or the start of exactly one such name at a `-`
//!    (`vllm-kimi[1234]` and `vllm-kimi-k25.service`). The identifiers of systemd itself
//!    and of the kernel never count. The service's own name outranks a pid match;
//! 3. its pid, when a systemd or kernel line ties that pid to a unit (`vllm.service:
//!    Killing process 1234 (python3)…`, `oom-kill:…task_memcg=/system.slice/vllm.service,
//!    task=python3,pid=1234`) *within that process's lifetime in the log*: pids are
//!    reused, so a link holds only between the unit's start lines (`Started`, `Starting`:
//!    a restart is a new lifetime), and a line that kills or reaps the process
//!    (`Killing process`, `left-over process`, the OOM kill) holds for the lines before
//!    it only — `sshd.service: Killing process 216054` at 19:02 says nothing of pid
//!    216054 at 23:31.
//!
//! Otherwise the unit stays unknown and a command that needs it shows its template with
//! a note. The tables are capped: a link past the cap is not kept (the unit may then be
//! unknown, never wrong).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::engine::normalize::Record;

/// Distinct unit names kept.
const MAX_UNITS: usize = 256;
/// pid → unit links kept.
const MAX_PIDS: usize = 4096;

/// A systemd line naming one of its unit's processes by pid; group 1 is set when the
/// line ends that process.
static SYSTEMD_PID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?:([Kk]illing process|left-over process)|[Mm]ain process|Main PID:|[Cc]ontrol process) ([0-9]+)\b",
    )
    .ok()
});

/// systemd starting a unit (`systemd[1]: Started vllm.service - vLLM.`,
/// `Starting vllm.service…`): a new lifetime of its processes.
static SYSTEMD_START: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^Start(?:ed|ing) ([A-Za-z0-9@._:\\-]+\.service)\b").ok());

/// The kernel's oom-kill summary: the victim's memory cgroup (its unit) and pid.
static KERNEL_OOM: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"task_memcg=[^,\s]*/([A-Za-z0-9@._:\\-]+\.service),task=[^,]*,pid=([0-9]+)").ok()
});

/// Who wrote the line a failure starts at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owner {
    pub unit: Option<String>,
    pub ident: Option<String>,
    pub pid: Option<u32>,
    /// The line, for the pid's lifetime.
    pub line: usize,
}

impl Owner {
    pub fn of(rec: &Record) -> Owner {
        Owner {
            unit: rec.stream.unit.clone(),
            ident: rec.stream.ident.clone(),
            pid: rec.stream.pid,
            line: rec.line,
        }
    }
}

/// A line placing a pid in a unit.
#[derive(Debug, Clone)]
struct PidLink {
    unit: String,
    line: usize,
    /// The line kills or reaps the process: it holds for earlier lines only.
    ends: bool,
}

/// What the log ties to units: the units it names, the pids it places in them, and
/// where each unit was (re)started.
#[derive(Debug, Default)]
pub struct UnitLinks {
    units: Vec<String>,
    pids: HashMap<u32, Vec<PidLink>>,
    starts: HashMap<String, Vec<usize>>,
}

/// Links kept per pid (a pid reused again and again keeps its first ones).
const LINKS_PER_PID: usize = 8;

impl UnitLinks {
    /// Learns from one record (every record the extractor sees).
    pub fn note(&mut self, rec: &Record) {
        if let Some(u) = &rec.stream.unit {
            if self.units.len() < MAX_UNITS && !self.units.contains(u) {
                self.units.push(u.clone());
            }
        }
        match rec.stream.ident.as_deref() {
            Some("systemd") => self.note_systemd(rec),
            Some("kernel") | None => {
                if !rec.message.contains("task_memcg=") {
                    return;
                }
                let Some(c) = KERNEL_OOM.as_ref().and_then(|re| re.captures(&rec.message)) else {
                    return;
                };
                if let Ok(pid) = c[2].parse() {
                    self.link(pid, c[1].to_string(), rec.line, true);
                }
            }
            _ => {}
        }
    }

    fn note_systemd(&mut self, rec: &Record) {
        if let Some(c) = SYSTEMD_START
            .as_ref()
            .and_then(|re| re.captures(&rec.message))
        {
            let u = c[1].to_string();
            if self.units.len() < MAX_UNITS && !self.units.contains(&u) {
                self.units.push(u.clone());
            }
            if self.starts.len() < MAX_UNITS || self.starts.contains_key(&u) {
                let v = self.starts.entry(u).or_default();
                if v.len() < MAX_PIDS {
                    v.push(rec.line);
                }
            }
            return;
        }
        let (Some(u), Some(re)) = (&rec.stream.unit, SYSTEMD_PID.as_ref()) else {
            return;
        };
        if let Some(c) = re.captures(&rec.message) {
            if let Ok(pid) = c[2].parse() {
                self.link(pid, u.clone(), rec.line, c.get(1).is_some());
            }
        }
    }

    fn link(&mut self, pid: u32, unit: String, line: usize, ends: bool) {
        if self.pids.len() >= MAX_PIDS && !self.pids.contains_key(&pid) {
            return;
        }
        let v = self.pids.entry(pid).or_default();
        if v.len() < LINKS_PER_PID {
            v.push(PidLink { unit, line, ends });
        }
    }

    /// The unit a pid was in at `line`: a link within the same lifetime (no start of
    /// its unit between the two lines; a line that ends the process holds for earlier
    /// lines only). Two units claiming it then: unknown.
    pub fn of_pid(&self, pid: u32, line: usize) -> Option<&str> {
        let mut found = self.pids.get(&pid)?.iter().filter(|l| {
            let (lo, hi) = (l.line.min(line), l.line.max(line));
            let restarted = self
                .starts
                .get(&l.unit)
                .is_some_and(|s| s.iter().any(|&n| lo < n && n <= hi));
            let reaped = l.ends && line > l.line;
            !(restarted || reaped)
        });
        let first = found.next()?;
        found
            .all(|l| l.unit == first.unit)
            .then_some(first.unit.as_str())
    }

    /// The unit of a failure's owner, when the log establishes it: the line's own unit,
    /// then the service named by its identifier, then its pid within its lifetime.
    pub fn resolve(&self, o: &Owner) -> Option<String> {
        if let Some(u) = &o.unit {
            return Some(u.clone());
        }
        let ident = o
            .ident
            .as_deref()
            .filter(|i| !matches!(*i, "systemd" | "kernel") && !i.is_empty());
        if let Some(u) = ident.and_then(|i| self.by_ident(i)) {
            return Some(u);
        }
        o.pid
            .and_then(|p| self.of_pid(p, o.line))
            .map(str::to_string)
    }

    fn by_ident(&self, ident: &str) -> Option<String> {
        let stem = |u: &str| u.rsplit_once('.').map_or(u, |(s, _)| s).to_string();
        if let Some(u) = self.units.iter().find(|u| stem(u) == ident) {
            return Some(u.clone());
        }
        let mut prefixed = self.units.iter().filter(|u| {
            stem(u)
                .strip_prefix(ident)
                .is_some_and(|rest| rest.starts_with('-'))
        });
        match (prefixed.next(), prefixed.next()) {
            (Some(u), None) => Some(u.clone()),
            _ => None,
        }
    }

    /// Every pid link, for the report (a captured `pid` names the process a cause is
    /// about, e.g. the OOM killer's victim).
    pub fn pid_units(&self) -> std::collections::BTreeMap<u32, String> {
        self.pids
            .iter()
            .filter_map(|(p, v)| {
                let first = v.first()?;
                v.iter()
                    .all(|l| l.unit == first.unit)
                    .then(|| (*p, first.unit.clone()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::normalize::normalize_text;

    fn rec(text: &str) -> Record {
        normalize_text(1, text)
    }

    #[test]
    fn units_are_tied_by_line_pid_and_identifier() {
        // CONSTRUCTED lines in journalctl's short format
        let mut l = UnitLinks::default();
        for t in [
            "Dec 01 10:00:00 h systemd[1]: systemd-networkd.service: Deactivated successfully.",
            "Dec 01 10:00:01 h systemd[1]: vllm-kimi-k25.service: Killing process 4242 (python3) with signal SIGKILL.",
        ] {
            l.note(&rec(t));
        }
        let owner = |t: &str| Owner::of(&rec(t));
        let by_pid = owner("Dec 01 10:00:00 h python3[4242]: Traceback (most recent call last):");
        assert_eq!(l.resolve(&by_pid).as_deref(), Some("vllm-kimi-k25.service"));
        let by_ident = owner("Dec 01 10:00:00 h vllm-kimi[7]: Traceback (most recent call last):");
        assert_eq!(
            l.resolve(&by_ident).as_deref(),
            Some("vllm-kimi-k25.service")
        );
        let unknown = owner("Dec 01 10:00:00 h python3[7]: Traceback (most recent call last):");
        assert_eq!(l.resolve(&unknown), None);
        let sd = owner("Dec 01 10:00:00 h systemd[1]: Failed to start foo.");
        assert_eq!(l.resolve(&sd), None);
    }

    fn rec_at(line: usize, text: &str) -> Record {
        normalize_text(line, text)
    }

    #[test]
    fn a_pid_holds_within_its_lifetime_only() {
        // CONSTRUCTED lines in journalctl's short format (the repro of issue 30)
        let lines = [
            "Feb 20 19:02:11 h systemd[1]: sshd.service: Killing process 216054 (sshd) with signal SIGKILL.",
            "Feb 20 23:31:30 h systemd[1]: Started vllm.service - vLLM server.",
            "Feb 20 23:31:36 h python3[216054]: RuntimeError: boom",
            "Feb 20 23:31:40 h systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE",
            "Feb 20 23:32:00 h systemd[1]: Started worker.service - w.",
            "Feb 20 23:32:05 h systemd[1]: worker.service: Main PID: 300 (python3)",
            "Feb 20 23:33:00 h systemd[1]: Started worker.service - w.",
        ];
        let mut l = UnitLinks::default();
        let recs: Vec<Record> = lines
            .iter()
            .enumerate()
            .map(|(i, t)| rec_at(i + 1, t))
            .collect();
        recs.iter().for_each(|r| l.note(r));
        assert_eq!(l.of_pid(216054, 1), Some("sshd.service"));
        assert_eq!(
            l.of_pid(216054, 3),
            None,
            "killed at line 1, reused at line 3"
        );
        assert_eq!(l.of_pid(300, 6), Some("worker.service"));
        assert_eq!(l.of_pid(300, 8), None, "restarted at line 7");
        let mut vllm = Owner::of(&recs[2]);
        assert_eq!(l.resolve(&vllm), None);
        vllm.ident = Some("vllm".into());
        assert_eq!(l.resolve(&vllm).as_deref(), Some("vllm.service"));
    }
}
