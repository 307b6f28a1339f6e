//! Read-only collection of facts on this machine, for `crashdoc preflight`.
//!
//! Only fixed argument vectors run, without a shell, each under a timeout:
//!
//! - `PYTHON -m pip list --format json` (PYTHON is `--python`, default `python3`);
//! - `PYTHON -m pip show NAME…` for the installed packages the rules mention (who
//!   requires them);
//! - `nvidia-smi` and `nvidia-smi --query-gpu=index,name,compute_cap,driver_version
//!   --format=csv`, when `nvidia-smi` exists (a machine without a GPU is not an error).
//!
//! Output goes through the same parsers as a report given with `--env`; nothing is
//! installed, changed or imported.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::facts::Facts;
use super::parse::Scanner;

/// A collection step failed.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("`{cmd}`: cannot run: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("`{cmd}`: cannot read its output: {source}")]
    Read { cmd: String, source: std::io::Error },
    #[error("`{cmd}`: timed out after {secs} s")]
    Timeout { cmd: String, secs: u64 },
    #[error("`{cmd}` failed ({status}): {stderr}")]
    Failed {
        cmd: String,
        status: String,
        stderr: String,
    },
}

/// Runs `argv` with a timeout; `Ok(None)` when the program does not exist.
pub fn run(argv: &[&str], timeout: Duration) -> Result<Option<String>, CollectError> {
    let cmd = argv.join(" ");
    let Some((prog, args)) = argv.split_first() else {
        return Ok(None);
    };
    let mut child = match Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(CollectError::Spawn { cmd, source }),
    };
    // read both pipes on threads so that a chatty child never blocks on a full pipe
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(p) = out_pipe.as_mut() {
            p.read_to_end(&mut s)?;
        }
        Ok::<_, std::io::Error>(s)
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(p) = err_pipe.as_mut() {
            p.read_to_end(&mut s)?;
        }
        Ok::<_, std::io::Error>(s)
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CollectError::Timeout {
                    cmd,
                    secs: timeout.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => return Err(CollectError::Spawn { cmd, source }),
        }
    };
    let joined = |t: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
        t.join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the reading thread panicked")))
            .map_err(|source| CollectError::Read {
                cmd: cmd.clone(),
                source,
            })
    };
    let out = joined(out_t)?;
    let err = joined(err_t)?;
    if !status.success() {
        let stderr = String::from_utf8_lossy(&err);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        return Err(CollectError::Failed {
            cmd,
            status: status.to_string(),
            stderr: last.unwrap_or("").trim().to_string(),
        });
    }
    Ok(Some(String::from_utf8_lossy(&out).into_owned()))
}

fn scan(name: &str, text: &str, into: &mut Facts) {
    let f = super::parse::parse_text(name, text);
    into.merge(f);
}

/// What was collected, and the steps that were skipped (with why).
#[derive(Debug, Default)]
pub struct Collected {
    pub facts: Facts,
    pub notes: Vec<String>,
}

/// Collects facts: packages with `python`, then who requires `names` (those installed),
/// then the GPU with `nvidia-smi`. A missing or failing Python is an error (there is
/// nothing to check); a missing `nvidia-smi` is a note.
pub fn collect(
    python: &str,
    names: &[String],
    timeout: Duration,
) -> Result<Collected, CollectError> {
    let mut c = Collected::default();
    let list = [python, "-m", "pip", "list", "--format", "json"];
    match run(&list, timeout)? {
        Some(out) => scan(&list.join(" "), &out, &mut c.facts),
        None => {
            return Err(CollectError::Spawn {
                cmd: list.join(" "),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such program"),
            })
        }
    }
    let installed: Vec<&str> = names
        .iter()
        .filter(|n| c.facts.package(n).is_some())
        .map(String::as_str)
        .collect();
    if !installed.is_empty() {
        let mut show = vec![python, "-m", "pip", "show"];
        show.extend(installed.iter().copied());
        match run(&show, timeout) {
            Ok(Some(out)) => {
                let mut s = Scanner::new(&show.join(" "));
                for (i, l) in out.lines().enumerate() {
                    s.push(i + 1, l);
                }
                c.facts.merge(s.finish());
            }
            Ok(None) => {}
            Err(e) => c.notes.push(format!("skipped: {e}")),
        }
    }
    let smi = ["nvidia-smi"];
    match run(&smi, timeout) {
        Ok(Some(out)) => {
            scan("nvidia-smi", &out, &mut c.facts);
            let q = [
                "nvidia-smi",
                "--query-gpu=index,name,compute_cap,driver_version",
                "--format=csv",
            ];
            match run(&q, timeout) {
                Ok(Some(out)) => scan(&q.join(" "), &out, &mut c.facts),
                Ok(None) => {}
                Err(e) => c.notes.push(format!("skipped: {e}")),
            }
        }
        Ok(None) => c
            .notes
            .push("nvidia-smi not found: GPU and driver checks skipped".into()),
        Err(e) => c.notes.push(format!("skipped: {e}")),
    }
    Ok(c)
}
