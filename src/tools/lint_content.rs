//! Lint checks on what a signature says rather than how it matches (`crashdoc sig lint`
//! errors, listed with the others in CONTRIBUTING.md). They are errors because CI
//! enforces them on the library (`tests/integration/library.rs`): a file `sig lint`
//! passes must pass CI, so lint's exit code is CI's verdict.
//!
//! | code | check |
//! | --- | --- |
//! | E019 | no `references:` |
//! | E020 | fewer than [`MIN_EXAMPLES`] positive examples (one with `rare: true`), or no near-miss (`examples.no_match`) |
//! | E021 | a `command:` holds an unfilled `<placeholder>`: it would be printed as runnable; put the guidance in `description:` or fill it from a capture (`{{name}}`) |
//! | E022 | a `command:` that changes the environment (installs, removes or force-reinstalls a package, points pip at another index, changes owners, permissions, kernel modules, users, or reboots) with neither an `if:` fact condition nor a read-only check before it (an earlier step's command, or earlier in the same command: `pip show`, `nvidia-smi`, `lsmod \| grep … \|\| …`) |

use std::sync::LazyLock;

use regex::Regex;

use crate::knowledge::signature::error::{Code, Diagnostic};
use crate::knowledge::signature::load::LibraryFile;
use crate::knowledge::signature::model::{SignatureFile, Step, Text};

/// Positive examples a signature needs (E020).
pub const MIN_EXAMPLES: usize = 2;

/// Positive examples a signature needs: [`MIN_EXAMPLES`], or one for a `rare: true`
/// signature (a rare failure may have a single public source).
pub fn min_examples(rare: bool) -> usize {
    if rare {
        1
    } else {
        MIN_EXAMPLES
    }
}

#[allow(clippy::expect_used)]
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<[A-Za-z][A-Za-z0-9_ ./-]*[A-Za-z0-9_]>").expect("built-in placeholder regex")
});

#[allow(clippy::expect_used)]
static CHANGES_ENV: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:^|[\s;&|(])(?:",
        r"(?:pip3?|uv pip|python3? -m pip|conda|mamba|apt|apt-get|yum|dnf) (?:[^;&|]* )?(?:install|uninstall|remove)\b",
        r"|rm -|chown |chmod |usermod |rmmod |modprobe |dkms |reboot\b|apt-mark |add-apt-repository ",
        r"|nvidia-ctk runtime configure",
        r")|--force-reinstall|--(?:extra-)?index-url"
    ))
    .expect("built-in environment-change regex")
});

#[allow(clippy::expect_used)]
static READ_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^\s*(?:sudo )?(?:",
        r"pip3? (?:show|list|freeze|check|index versions|--version)|python3? -m pip (?:show|list|check|--version)",
        r"|python3? -m bitsandbytes\b|which\b|command -v\b",
        r"|python3? -c|nvidia-smi|nvcc --version|conda list|ls\b|df\b|du\b|cat\b|grep\b|id\b",
        r"|stat\b|ldd\b|ldconfig -p|lsmod\b|dpkg -l|apt list|uname\b|docker info|getent\b|findmnt\b",
        r"|namei\b|strings\b|ds_report\b|gcc --version|curl (?:-g )?-sSI\b|cat /proc/",
        r")"
    ))
    .expect("built-in read-only regex")
});

fn located(d: Diagnostic, f: &LibraryFile, t: &Text) -> Diagnostic {
    d.at(
        &f.text,
        t.referenced.line() as usize,
        t.referenced.column() as usize,
    )
}

/// Whether a command starts with a read-only check.
pub fn is_read_only(cmd: &str) -> bool {
    READ_ONLY.is_match(cmd)
        && !CHANGES_ENV.is_match(cmd.split(['&', '|', ';']).next().unwrap_or(cmd))
}

/// Whether a command changes the environment, and no read-only check comes first in it.
pub fn changes_env_unchecked(cmd: &str) -> bool {
    let Some(m) = CHANGES_ENV.find(cmd) else {
        return false;
    };
    // `lsmod | grep nvidia || sudo modprobe nvidia`: the check runs first
    !is_read_only(&cmd[..m.start()])
}

fn placeholders(f: &LibraryFile, s: &SignatureFile, out: &mut Vec<Diagnostic>) {
    for c in s.remediation.iter().filter_map(|st| st.command.as_ref()) {
        if let Some(m) = PLACEHOLDER.find(&c.value) {
            out.push(located(
                Diagnostic::new(
                    Code::E021,
                    &f.name,
                    format!(
                        "command holds the unfilled placeholder `{}`: it would be printed as a runnable command; put the guidance in `description:` or fill the value from a capture (`{{{{name}}}}`)",
                        m.as_str()
                    ),
                ),
                f,
                c,
            ));
        }
    }
}

fn unguarded(f: &LibraryFile, steps: &[Step], out: &mut Vec<Diagnostic>) {
    let mut checked = false;
    for st in steps {
        let Some(c) = &st.command else { continue };
        if st.condition.is_none() && !checked && changes_env_unchecked(&c.value) {
            out.push(located(
                Diagnostic::new(
                    Code::E022,
                    &f.name,
                    "command changes the environment with neither an `if:` fact condition nor a read-only check before it: add the check that establishes it (`pip show …`, `nvidia-smi`, `python -c \"import torch; …\"`) as an earlier step, or an `if:`",
                ),
                f,
                c,
            ));
        }
        checked |= is_read_only(&c.value);
    }
}

/// The E019–E022 errors of one signature.
pub fn advise_content(f: &LibraryFile, s: &SignatureFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if s.references.is_empty() {
        out.push(located(
            Diagnostic::new(
                Code::E019,
                &f.name,
                "no `references:`: name where the message and the fix are confirmed (an upstream source file, an issue thread)",
            ),
            f,
            &s.id,
        ));
    }
    let need = min_examples(s.rare);
    if s.examples.matches.len() < need || s.examples.no_match.is_empty() {
        let rare = if s.rare {
            ""
        } else {
            "; a rare failure whose only public text is one report may say `rare: true` (one example, capped at `medium`)"
        };
        out.push(located(
            Diagnostic::new(
                Code::E020,
                &f.name,
                format!(
                    "{} positive example(s) and {} near-miss(es): add real log excerpts under `examples: match:` (at least {need}, from threads other than any corpus incident) and a near-miss under `examples: no_match:` that must not match{rare}",
                    s.examples.matches.len(),
                    s.examples.no_match.len()
                ),
            ),
            f,
            &s.id,
        ));
    }
    placeholders(f, s, &mut out);
    unguarded(f, &s.remediation, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_changes_and_checks() {
        for c in [
            "pip install -U nvidia-nccl-cu12",
            "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128",
            "sudo chown -R \"$(id -u)\" {{path}}",
            "sudo apt-get install -y libaio-dev",
            "sudo reboot",
        ] {
            assert!(changes_env_unchecked(c), "{c}");
        }
        for c in [
            "pip show torch",
            "python -m bitsandbytes",
            "which gcc cc clang; echo \"CC=$CC\"",
            "lsmod | grep nvidia || sudo modprobe nvidia",
            "nvidia-smi",
            "export NCCL_DEBUG=INFO",
            "df -h {{path}}",
        ] {
            assert!(!changes_env_unchecked(c), "{c}");
        }
        assert!(is_read_only("pip show nvidia-nccl-cu12 torch"));
        assert!(!is_read_only("pip install torch"));
        assert!(PLACEHOLDER.is_match("kubectl describe pod <pod>"));
        assert!(!PLACEHOLDER.is_match("pip install \"numpy<2\""));
        assert!(!PLACEHOLDER.is_match("vllm serve {{model}} 2>&1 >log"));
    }
}
