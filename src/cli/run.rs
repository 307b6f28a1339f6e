//! `crashdoc run -- CMD ARGS…`: runs a job and diagnoses it where it fails.
//!
//! The command runs as a child of crashdoc, with its standard input inherited and its
//! standard output and error each through a pipe: every byte read is written at once,
//! unchanged, to crashdoc's own stdout or stderr (each stream in its order; between the
//! two streams, in the order crashdoc reads them, as any tool that captures a command's
//! output through pipes sees them). The same bytes, cut into lines, go into one bounded
//! tail ([`Tail`]: the last `--tail-bytes` bytes of complete lines, in arrival order),
//! so a job that runs for days costs a fixed amount of memory.
//!
//! When the command ends:
//! - its exit status is crashdoc's (a death by signal N is 128+N, as shells say it; a
//!   command that cannot be found is 127, one that cannot be run 126);
//! - when it failed (a status other than 0), the tail is diagnosed as `crashdoc
//!   diagnose` would diagnose a file of it (line numbers count every line the command
//!   wrote), and the report goes to stderr, or to `-o FILE` in `--format`. A job the
//!   user interrupted (SIGINT) is not diagnosed.
//!
//! Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to crashdoc by another process
//! (`kill`, a scheduler, systemd) are forwarded to the child, and crashdoc keeps waiting
//! for it. One the terminal generates (Ctrl-C) already reaches the child, which is in
//! the same foreground process group, so it is not sent twice (`si_code` tells the two
//! apart).
//!
//! `--env FILE` reads an environment report as `diagnose --env` does (read after the
//! command ends, so the job itself may write it); `--env` without a value collects the
//! facts on this machine, read-only, as `crashdoc preflight` does, when the command has
//! failed.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use clap::Args;

use super::diagnose::parse_top;
use super::emit::{renderer, Emitter, Format};
use super::output::{OutputArgs, WidthArgs};
use super::{ColorChoice, EngineArgs, LibraryArgs};
use crate::engine::diagnosis::{BuildOptions, Diagnosis};
use crate::engine::ingest::{LineReader, MAX_LINE_BYTES};
use crate::engine::matcher::Compiled;
use crate::engine::pipeline::Engine;
use crate::env::Facts;
use crate::knowledge::text::escape_control;
use crate::report::text::Style;

/// The exit status of a command that cannot be found (as shells say it).
pub const EXIT_NOT_FOUND: u8 = 127;
/// The exit status of a command that cannot be run (as shells say it).
pub const EXIT_CANNOT_RUN: u8 = 126;
/// How long the output of an ended command is still read: a background process it left
/// behind may hold its pipes open for ever.
const DRAIN: Duration = Duration::from_secs(2);

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The format of the diagnosis.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// How many causes to show (at least 1).
    #[arg(long, default_value_t = 3, value_parser = parse_top)]
    pub top: usize,
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(flatten)]
    pub library: LibraryArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// An environment report (pip list/freeze/show, collect_env, nvidia-smi; read
    /// when the command has ended; repeatable). `--env` alone collects the facts on
    /// this machine when the command fails (pip list with `--python`, nvidia-smi).
    #[arg(long = "env", value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    pub env: Vec<PathBuf>,
    /// The Python whose packages `--env` collects (a venv's `bin/python`).
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: String,
    #[command(flatten)]
    pub rules: super::preflight::RulesArgs,
    /// Write the diagnosis to FILE instead of standard error.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub width: WidthArgs,
    /// How much of the command's output is kept for the diagnosis: its last BYTES bytes
    /// (whole lines; suffixes K, M, G).
    #[arg(long, value_name = "BYTES", default_value = "4M", value_parser = parse_bytes)]
    pub tail_bytes: usize,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// `--tail-bytes`: a number of bytes, with an optional K, M or G suffix (powers of 1024).
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let (digits, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], c.to_ascii_uppercase()),
        _ => (s, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => return Err(format!("unknown unit `{unit}` (use K, M or G)")),
    };
    let n: usize = digits.parse().map_err(|e| format!("{e}"))?;
    match n.checked_shl(shift).filter(|v| v >> shift == n) {
        Some(0) => Err("must be at least 1 byte".to_string()),
        Some(v) => Ok(v),
        None => Err("too large".to_string()),
    }
}

/// The last lines of the command's output, at most `cap` bytes of them (a line longer
/// than that is cut to it), and how many lines went before them.
#[derive(Debug)]
pub struct Tail {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    cap: usize,
    dropped: usize,
}

impl Tail {
    pub fn new(cap: usize) -> Self {
        Tail {
            lines: VecDeque::new(),
            bytes: 0,
            cap: cap.max(1),
            dropped: 0,
        }
    }

    /// Adds one line (without its newline); the oldest lines go once over the cap.
    pub fn push(&mut self, mut line: Vec<u8>) {
        line.truncate(self.cap);
        self.bytes += line.len() + 1;
        self.lines.push_back(line);
        while self.bytes > self.cap + 1 && self.lines.len() > 1 {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.len() + 1;
                self.dropped += 1;
            }
        }
    }

    /// The number of the first kept line in the whole output (1-based).
    pub fn first_line(&self) -> usize {
        self.dropped + 1
    }

    /// The kept lines, each ended by a newline.
    pub fn text(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.bytes);
        for l in &self.lines {
            v.extend_from_slice(l);
            v.push(b'\n');
        }
        v
    }
}

/// Copies one stream of the child to `to` as it comes and its lines into `tail`. When
/// `to` is closed (`crashdoc run -- CMD | head`), reading stops, so that the command
/// sees its pipe closed as it would without crashdoc.
fn pump(mut from: impl Read, mut to: impl Write, tail: &Mutex<Tail>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        if to.write_all(chunk).and_then(|()| to.flush()).is_err() {
            return;
        }
        let mut rest = chunk;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            extend_capped(&mut partial, &rest[..i]);
            let line = std::mem::take(&mut partial);
            lock(tail).push(line);
            rest = &rest[i + 1..];
        }
        extend_capped(&mut partial, rest);
    }
    if !partial.is_empty() {
        lock(tail).push(partial);
    }
}

/// A line being read grows up to the longest line the engine reads, no further.
fn extend_capped(partial: &mut Vec<u8>, bytes: &[u8]) {
    let room = MAX_LINE_BYTES.saturating_sub(partial.len());
    partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

fn lock(tail: &Mutex<Tail>) -> std::sync::MutexGuard<'_, Tail> {
    // a pump that panicked leaves the tail as it was: still worth diagnosing
    tail.lock().unwrap_or_else(|p| p.into_inner())
}

/// The child being run (0: none yet), for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// The last signal crashdoc received while the child ran (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The signals forwarded to the child.
const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The handler: records the signal and sends it on to the child when another process
/// sent it (`si_code` ≤ 0: `kill`, `sigqueue`); one the kernel generated for the
/// terminal's foreground process group has reached the child already. Only
/// async-signal-safe calls (an atomic, `kill`).
extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    RECEIVED.store(sig, Ordering::SeqCst);
    let pid = CHILD.load(Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler
    let sent = info.is_null() || unsafe { (*info).si_code } <= 0;
    if pid > 0 && sent {
        // SAFETY: kill is async-signal-safe; pid is our child's
        unsafe { libc::kill(pid, sig) };
    }
}

/// Installs [`forward`] for the [`FORWARDED`] signals.
fn install_forwarding() {
    for sig in FORWARDED {
        // SAFETY: a zeroed sigaction with a valid handler and flags; the handler only
        // does async-signal-safe work
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = forward as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// A signal's name for messages (`SIGKILL`), or its number.
fn signal_name(sig: i32) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGTERM, "SIGTERM"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == sig)
        .map_or_else(|| format!("signal {sig}"), |(_, s)| (*s).to_string())
}

/// How the command ended: crashdoc's exit status and the words for the report.
fn ended(status: ExitStatus) -> (u8, String) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => (c.clamp(0, 255) as u8, format!("exit status {c}")),
        (None, Some(s)) => (
            (128 + s).clamp(0, 255) as u8,
            format!("killed by {}", signal_name(s)),
        ),
        _ => (1, "ended".to_string()),
    }
}

/// The program's name for messages and the report: its file name only (the arguments
/// may hold secrets, a token or a password, and the report is meant to be shared).
fn program_name(cmd: &OsString) -> String {
    let p = Path::new(cmd);
    let name = p.file_name().unwrap_or(p.as_os_str()).to_string_lossy();
    escape_control(&name)
}

/// What the command left: its status and its output's tail.
struct Finished {
    status: ExitStatus,
    tail: Tail,
}

/// Runs the command with its output passed through and its tail kept. A command that
/// cannot start is an error whose exit code is the shells' (127 or 126).
fn run_command(a: &RunArgs) -> Result<Finished, (u8, String)> {
    let prog = program_name(&a.command[0]);
    install_forwarding();
    let mut child = Command::new(&a.command[0])
        .args(&a.command[1..])
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => (EXIT_NOT_FOUND, format!("{prog}: command not found")),
            _ => (EXIT_CANNOT_RUN, format!("{prog}: cannot run: {e}")),
        })?;
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let tail = Arc::new(Mutex::new(Tail::new(a.tail_bytes)));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut pumps = 0;
    if let Some(out) = child.stdout.take() {
        let (tail, done) = (Arc::clone(&tail), done_tx.clone());
        std::thread::spawn(move || {
            pump(out, std::io::stdout(), &tail);
            let _ = done.send(());
        });
        pumps += 1;
    }
    if let Some(err) = child.stderr.take() {
        let (tail, done) = (Arc::clone(&tail), done_tx.clone());
        std::thread::spawn(move || {
            pump(err, std::io::stderr(), &tail);
            let _ = done.send(());
        });
        pumps += 1;
    }
    drop(done_tx);
    let status = loop {
        match child.wait() {
            Ok(s) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err((EXIT_CANNOT_RUN, format!("{prog}: cannot wait: {e}"))),
        }
    };
    CHILD.store(0, Ordering::SeqCst);
    for _ in 0..pumps {
        if done_rx.recv_timeout(DRAIN).is_err() {
            break;
        }
    }
    let tail = std::mem::replace(&mut *lock(&tail), Tail::new(1));
    Ok(Finished { status, tail })
}

pub fn run_run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    // the library and rules load before the job starts: a broken one is said at once
    let lib = super::process_long(a.library.load()?);
    let rules = a.rules.load()?;
    let f = match run_command(a) {
        Ok(f) => f,
        Err((code, msg)) => {
            eprintln!("crashdoc: {msg}");
            return Ok(ExitCode::from(code));
        }
    };
    let (code, how) = ended(f.status);
    if code == 0 {
        return Ok(ExitCode::from(0));
    }
    if RECEIVED.load(Ordering::SeqCst) == libc::SIGINT {
        eprintln!("crashdoc: interrupted ({how}): no diagnosis");
        return Ok(ExitCode::from(code));
    }
    let facts = env_facts(a, &rules)?;
    let compiled = Compiled::new(&lib)?;
    let mut engine = Engine::new(&compiled, a.engine.kind())
        .with_facts(facts)
        .with_rules(&rules);
    let name = format!("{} ({how})", program_name(&a.command[0]));
    let d = diagnose_tail(&mut engine, &f.tail, name, a.top)?;
    write_report(a, d)?;
    Ok(ExitCode::from(code))
}

/// The facts of `--env`: each file read, and the machine's when `--env` has no value.
fn env_facts(a: &RunArgs, rules: &crate::knowledge::rules::Rules) -> anyhow::Result<Facts> {
    let mut facts = Facts::default();
    for p in &a.env {
        if !p.as_os_str().is_empty() {
            facts.merge(crate::env::read_env_file(p)?);
            continue;
        }
        match crate::env::collect::collect(
            &a.python,
            &rules.package_names(),
            Duration::from_secs(60),
        ) {
            Ok(c) => {
                for n in &c.notes {
                    eprintln!("crashdoc: note: {}", escape_control(n));
                }
                facts.merge(c.facts);
            }
            Err(e) => eprintln!(
                "crashdoc: note: cannot collect the environment: {}",
                escape_control(&e.to_string())
            ),
        }
    }
    Ok(facts)
}

/// Diagnoses the kept tail; its lines keep their numbers in the whole output.
fn diagnose_tail(
    engine: &mut Engine<'_>,
    tail: &Tail,
    name: String,
    top: usize,
) -> anyhow::Result<Diagnosis> {
    let text = tail.text();
    let mut r = LineReader::from_reader(Box::new(std::io::Cursor::new(text)), name)?
        .numbered_from(tail.first_line());
    Ok(engine.diagnose(&mut r, BuildOptions { top })?)
}

/// Writes the report to stderr, or to `-o FILE` (written whole, then renamed in place).
fn write_report(a: &RunArgs, d: Diagnosis) -> anyhow::Result<()> {
    let terminal = a.output.is_none() && std::io::stderr().is_terminal();
    let width = a.width.width.or_else(|| {
        terminal
            .then(|| terminal_size::terminal_size_of(std::io::stderr()))
            .flatten()
            .map(|(w, _)| usize::from(w.0))
    });
    let render = renderer(
        a.format,
        Style {
            color: a.color.enabled_for(terminal),
            width,
        },
        1,
    );
    match &a.output {
        Some(p) => {
            let dest = OutputArgs {
                output: Some(p.clone()),
                quiet: false,
            };
            let mut emit = Emitter::begin(render, dest.open()?, false)?;
            emit.diagnosis(d)?;
            emit.finish()?;
        }
        None => {
            let mut err = std::io::stderr().lock();
            // a blank line sets the report apart from the command's own output
            let _ = err.write_all(b"\n");
            let out = super::output::Output::Plain(Box::new(err));
            // a closed stderr loses the report, never the command's exit status
            let _ = Emitter::begin(render, out, false)
                .and_then(|mut e| e.diagnosis(d).and_then(|()| e.finish()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines_within_the_cap() {
        let mut t = Tail::new(10);
        for l in ["aaaa", "bbbb", "cccc"] {
            t.push(l.as_bytes().to_vec());
        }
        assert_eq!(t.text(), b"bbbb\ncccc\n");
        assert_eq!(t.first_line(), 2);
        t.push(vec![b'x'; 50]);
        assert_eq!(t.text().len(), 11, "a long line is cut to the cap");
        assert_eq!(t.first_line(), 4);
    }

    #[test]
    fn tail_bytes_units() {
        assert_eq!(parse_bytes("4M"), Ok(4 << 20));
        assert_eq!(parse_bytes("512k"), Ok(512 << 10));
        assert_eq!(parse_bytes("100"), Ok(100));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("3X").is_err());
        assert!(parse_bytes("99999999999999999999G").is_err());
    }

    #[test]
    fn pump_passes_bytes_through_and_keeps_lines() {
        let tail = Mutex::new(Tail::new(1 << 20));
        let mut out = Vec::new();
        pump(&b"one\ntwo\nno newline"[..], &mut out, &tail);
        assert_eq!(out, b"one\ntwo\nno newline");
        assert_eq!(lock(&tail).text(), b"one\ntwo\nno newline\n");
    }

    #[test]
    fn signal_deaths_are_128_plus_n() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ended(ExitStatus::from_raw(9)).0, 128 + 9);
        assert_eq!(ended(ExitStatus::from_raw(3 << 8)).0, 3);
    }
}
