//! Read-only collection of facts on this machine, for `crashdoc preflight`.
//!
//! Only fixed argument vectors run, without a shell, each under a timeout:
//!
//! - `PYTHON -I -m pip list --format json` (PYTHON is `--python`, default `python3`);
//! - `PYTHON -I -m pip show NAME…` for the installed packages the rules mention (who
//!   requires them);
//! - `nvidia-smi` and `nvidia-smi --query-gpu=index,name,compute_cap,driver_version
//!   --format=csv`, when `nvidia-smi` exists (a machine without a GPU is not an error).
//!
//! Python runs isolated (`-I`: no `PYTHON*` variables, no user site, neither the
//! working directory nor the script's folder on `sys.path`; a venv's own site-packages
//! are still seen), and every child runs in `/` in a process group of its own: a
//! `pip.py` in the caller's directory is never imported. Each stream of a child is
//! capped ([`OUTPUT_CAP`]: more is an error, the group is killed) and the whole group is
//! killed at the timeout, also when a grandchild keeps the pipes open.
//!
//! Output goes through the same parsers as a report given with `--env`; nothing is
//! installed, changed or imported.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::facts::Facts;
use super::parse::Scanner;

/// Most bytes read from one stream (stdout or stderr) of a collection command: `pip
/// list` of a large environment prints well under 1 MiB.
pub const OUTPUT_CAP: u64 = 8 << 20;
/// Most characters of a failing child's stderr line kept in the error.
const STDERR_KEPT: usize = 300;
/// How often the child is polled while its pipes are open.
const POLL: Duration = Duration::from_millis(20);
/// The working directory of every child: nothing there is imported or read.
const NEUTRAL_DIR: &str = "/";

/// A collection step failed.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("`{cmd}`: cannot run: {source}")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("`{cmd}`: cannot read its output: {source}")]
    Read { cmd: String, source: std::io::Error },
    #[error("`{cmd}`: timed out after {secs} s (its process group was killed)")]
    Timeout { cmd: String, secs: u64 },
    #[error("`{cmd}`: printed more than {cap} bytes on {stream}; stopped (its process group was killed)")]
    TooMuchOutput {
        cmd: String,
        stream: &'static str,
        cap: u64,
    },
    #[error("`{cmd}` failed ({status}): {stderr}")]
    Failed {
        cmd: String,
        status: String,
        stderr: String,
    },
}

/// Which pipe a reader thread read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Out => "stdout",
            Stream::Err => "stderr",
        }
    }
}

/// What a reader thread sends: its stream and what it read (at most `cap + 1` bytes).
type Piece = (Stream, std::io::Result<Vec<u8>>);

/// Reads at most `cap + 1` bytes of `pipe` on a thread and sends them.
fn spawn_reader<R: Read + Send + 'static>(pipe: R, which: Stream, cap: u64, tx: Sender<Piece>) {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let r = pipe.take(cap.saturating_add(1)).read_to_end(&mut buf);
        let _ = tx.send((which, r.map(|_| buf)));
    });
}

/// The program to spawn: a relative path with a `/` is made absolute against the
/// caller's directory (the child runs elsewhere); a bare name is looked up in `PATH`.
fn program_path(prog: &str) -> PathBuf {
    let p = PathBuf::from(prog);
    if p.is_relative() && prog.contains('/') {
        if let Ok(cwd) = std::env::current_dir() {
            return cwd.join(p);
        }
    }
    p
}

/// Kills the child's whole process group (the child leads it) and reaps the child.
fn kill_group(child: &mut Child) {
    if let Ok(pgid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group `pgid`, which
        // the child leads (spawned with `process_group(0)`); it touches no memory.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// What a finished child left: its status, stdout and stderr.
struct Finished {
    status: ExitStatus,
    out: Vec<u8>,
    err: Vec<u8>,
}

/// Waits until the child has exited and both pipes are closed, or the deadline passes
/// (the group is killed), or a stream goes over `cap` (the group is killed).
fn wait_child(
    child: &mut Child,
    rx: &Receiver<Piece>,
    timeout: Duration,
    cap: u64,
    cmd: &str,
) -> Result<Finished, CollectError> {
    let deadline = Instant::now() + timeout;
    let (mut out, mut err, mut status) = (None, None, None);
    loop {
        if status.is_none() {
            status = child.try_wait().map_err(|source| CollectError::Spawn {
                cmd: cmd.to_string(),
                source,
            })?;
        }
        if let (Some(status), Some(_), Some(_)) = (status, &out, &err) {
            let (out, err) = (out.unwrap_or_default(), err.unwrap_or_default());
            return Ok(Finished { status, out, err });
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(child);
            return Err(CollectError::Timeout {
                cmd: cmd.to_string(),
                secs: timeout.as_secs(),
            });
        }
        match rx.recv_timeout(POLL.min(deadline - now)) {
            Ok((which, Ok(buf))) if buf.len() as u64 > cap => {
                kill_group(child);
                return Err(CollectError::TooMuchOutput {
                    cmd: cmd.to_string(),
                    stream: which.name(),
                    cap,
                });
            }
            Ok((_, Err(source))) => {
                kill_group(child);
                return Err(CollectError::Read {
                    cmd: cmd.to_string(),
                    source,
                });
            }
            Ok((Stream::Out, Ok(buf))) => out = Some(buf),
            Ok((Stream::Err, Ok(buf))) => err = Some(buf),
            Err(RecvTimeoutError::Timeout) => {}
            // both pipes are read: only the exit is awaited
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(POLL.min(deadline - now)),
        }
    }
}

/// Runs `argv` in [`NEUTRAL_DIR`], in a process group of its own, with a timeout and
/// [`OUTPUT_CAP`]; `Ok(None)` when the program does not exist.
pub fn run(argv: &[&str], timeout: Duration) -> Result<Option<String>, CollectError> {
    let cmd = argv.join(" ");
    let Some((prog, args)) = argv.split_first() else {
        return Ok(None);
    };
    let mut child = match Command::new(program_path(prog))
        .args(args)
        .current_dir(NEUTRAL_DIR)
        .process_group(0)
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
    // both pipes are read on threads so that a chatty child never blocks on a full pipe
    let (tx, rx) = mpsc::channel();
    if let Some(p) = child.stdout.take() {
        spawn_reader(p, Stream::Out, OUTPUT_CAP, tx.clone());
    }
    if let Some(p) = child.stderr.take() {
        spawn_reader(p, Stream::Err, OUTPUT_CAP, tx);
    }
    let done = wait_child(&mut child, &rx, timeout, OUTPUT_CAP, &cmd)?;
    if !done.status.success() {
        let stderr = String::from_utf8_lossy(&done.err);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        return Err(CollectError::Failed {
            cmd,
            status: done.status.to_string(),
            stderr: last
                .unwrap_or("")
                .trim()
                .chars()
                .take(STDERR_KEPT)
                .collect(),
        });
    }
    Ok(Some(String::from_utf8_lossy(&done.out).into_owned()))
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
    let list = [python, "-I", "-m", "pip", "list", "--format", "json"];
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
        let mut show = vec![python, "-I", "-m", "pip", "show"];
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
