//! Which systemd unit a failure's process belongs to.
//!
//! A fix that restarts, edits or resets a unit must name the unit whose process wrote
//! the failure, never merely the first unit a journal mentions (in an unfiltered journal
//! that can be `systemd-networkd.service`). A failure's unit is *established* only by:
//!
//! 1. the line itself: journald's `_SYSTEMD_UNIT` (`journalctl -o json`), or the unit a
//!    systemd line names (`systemd[1]: vllm.service: Main process exited…`);
//! 2. its pid, when a systemd or kernel line ties that pid to a unit (`vllm.service:
//!    Killing process 1234 (python3)…`, `oom-kill:…task_memcg=/system.slice/vllm.service,
//!    task=python3,pid=1234`);
//! 3. its journald identifier, when it is the name of exactly one unit the log names
//!    (`vllm[1234]` and `vllm.service`), or the start of exactly one such name at a `-`
//!    (`vllm-kimi[1234]` and `vllm-kimi-k25.service`). The identifiers of systemd itself
//!    and of the kernel never count.
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

/// A systemd line naming one of its unit's processes by pid.
static SYSTEMD_PID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?:[Kk]illing process|left-over process|[Mm]ain process|Main PID:|[Cc]ontrol process) ([0-9]+)\b",
    )
    .ok()
});

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
}

impl Owner {
    pub fn of(rec: &Record) -> Owner {
        Owner {
            unit: rec.stream.unit.clone(),
            ident: rec.stream.ident.clone(),
            pid: rec.stream.pid,
        }
    }
}

/// What the log ties to units: the units it names and the pids it places in them.
#[derive(Debug, Default)]
pub struct UnitLinks {
    units: Vec<String>,
    pids: HashMap<u32, String>,
}

impl UnitLinks {
    /// Learns from one record (every record the extractor sees).
    pub fn note(&mut self, rec: &Record) {
        if let Some(u) = &rec.stream.unit {
            if self.units.len() < MAX_UNITS && !self.units.contains(u) {
                self.units.push(u.clone());
            }
        }
        match rec.stream.ident.as_deref() {
            Some("systemd") => {
                let (Some(u), Some(re)) = (&rec.stream.unit, SYSTEMD_PID.as_ref()) else {
                    return;
                };
                if let Some(pid) = re.captures(&rec.message).and_then(|c| c[1].parse().ok()) {
                    self.link(pid, u.clone());
                }
            }
            Some("kernel") | None => {
                if !rec.message.contains("task_memcg=") {
                    return;
                }
                let Some(c) = KERNEL_OOM.as_ref().and_then(|re| re.captures(&rec.message)) else {
                    return;
                };
                if let Ok(pid) = c[2].parse() {
                    self.link(pid, c[1].to_string());
                }
            }
            _ => {}
        }
    }

    fn link(&mut self, pid: u32, unit: String) {
        if self.pids.len() < MAX_PIDS || self.pids.contains_key(&pid) {
            self.pids.insert(pid, unit);
        }
    }

    /// The unit a pid was placed in.
    pub fn of_pid(&self, pid: u32) -> Option<&str> {
        self.pids.get(&pid).map(String::as_str)
    }

    /// The unit of a failure's owner, when the log establishes it.
    pub fn resolve(&self, o: &Owner) -> Option<String> {
        if let Some(u) = &o.unit {
            return Some(u.clone());
        }
        if let Some(u) = o.pid.and_then(|p| self.of_pid(p)) {
            return Some(u.to_string());
        }
        let ident = o.ident.as_deref()?;
        if matches!(ident, "systemd" | "kernel") || ident.is_empty() {
            return None;
        }
        self.by_ident(ident)
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
        self.pids.iter().map(|(p, u)| (*p, u.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ingest::Line;
    use crate::engine::normalize::normalize;

    fn rec(text: &str) -> Record {
        normalize(Line {
            number: 1,
            text: text.to_string(),
            truncated: 0,
        })
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
}
