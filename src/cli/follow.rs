//! `journalctl -fu UNIT | crashdoc --follow`: a diagnosis as soon as a crash attempt
//! ends, then on to the next one, for as long as the stream runs.
//!
//! A reading thread hands the lines of standard input over a bounded channel; the lines
//! of the attempt under way are kept in a [`Window`] of at most [`WINDOW_BYTES`] (the
//! oldest lines go first past it). An attempt ends:
//! - when systemd says the unit's process ended (`Main process exited`, `Failed with
//!   result`, `Deactivated successfully`…): the window is diagnosed when the unit starts
//!   again or after [`SETTLE`] with no new line (systemd writes its exit lines together),
//!   and the diagnosis is always printed;
//! - when systemd starts the unit again without such a line, or after `--idle SECS` with
//!   no new line: the diagnosis is printed only when it finds a cause (a quiet healthy
//!   server prints nothing; after an idle gap with no cause the window is kept);
//! - at the end of the stream: printed when it finds a cause, or when nothing was
//!   printed before.
//!
//! Each window is diagnosed by a fresh pass of the engine with the stream's own line
//! numbers, then dropped: memory is the window ([`WINDOW_BYTES`]), the channel
//! ([`CHANNEL_BYTES`]: bounded in bytes, not only in lines) and one pass, whatever the
//! length of the stream or of its lines.
//!
//! `-o FILE` is written as the stream goes: each attempt's diagnosis is appended and
//! flushed when it is made, so stopping the follower (Ctrl-C, SIGTERM) loses nothing
//! already diagnosed and leaves no temporary file behind (there is none).

use std::collections::VecDeque;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;

use super::diagnose::DiagnoseArgs;
use super::emit::{combined_exit, renderer, Emitter};
use crate::engine::diagnosis::{BuildOptions, Diagnosis};
use crate::engine::extract::shapes;
use crate::engine::ingest::{IngestError, Line, LineReader, Source};
use crate::engine::matcher::Compiled;
use crate::engine::normalize;
use crate::engine::pipeline::Engine;

/// Bytes of the attempt under way kept for its diagnosis (the oldest lines go first).
pub const WINDOW_BYTES: usize = 4 << 20;
/// How long after systemd's exit lines the attempt is diagnosed when the unit does not
/// start again first.
pub const SETTLE: Duration = Duration::from_secs(1);
/// Lines read ahead of the diagnosis.
const CHANNEL_LINES: usize = 4096;
/// Bytes read ahead of the diagnosis: the reader waits past them (a line longer than
/// this still passes alone). Lines are at most 1 MiB
/// ([`crate::engine::ingest::MAX_LINE_BYTES`]), so a count of lines alone once let 4,096
/// of them — 4 GiB — queue up while a diagnosis ran.
pub const CHANNEL_BYTES: usize = 4 << 20;

/// The bytes in the channel, shared by the reading thread and the follower.
#[derive(Default)]
struct Budget {
    used: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Budget {
    /// Waits until `n` more bytes fit (or nothing is queued), then takes them.
    fn take(&self, n: usize) {
        let Ok(mut used) = self.used.lock() else {
            return;
        };
        while *used > 0 && *used + n > CHANNEL_BYTES {
            used = match self.freed.wait(used) {
                Ok(u) => u,
                Err(_) => return,
            };
        }
        *used += n;
    }

    fn give(&self, n: usize) {
        if let Ok(mut used) = self.used.lock() {
            *used = used.saturating_sub(n);
            self.freed.notify_one();
        }
    }
}

/// What systemd writes when the unit's main process has ended.
const EXIT_MARKERS: [&str; 6] = [
    "Main process exited",
    "Failed with result",
    "Deactivated successfully",
    "Scheduled restart job",
    "Start request repeated too quickly",
    "entered failed state",
];

/// What a line means for the attempt under way.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// systemd starts the unit.
    Start,
    /// systemd says the unit's process ended.
    Exit,
    Other,
}

fn kind(line: &Line) -> Kind {
    if !line.text.contains("systemd") {
        return Kind::Other;
    }
    let rec = normalize::normalize(line.clone());
    if rec.stream.ident.as_deref() != Some("systemd") {
        return Kind::Other;
    }
    if shapes::is_systemd_start(&rec) {
        Kind::Start
    } else if EXIT_MARKERS.iter().any(|m| rec.message.contains(m)) {
        Kind::Exit
    } else {
        Kind::Other
    }
}

/// Why a window is diagnosed now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// systemd's exit lines (printed always).
    Exit,
    /// systemd started the unit again without exit lines (printed when found).
    Restart,
    /// The idle gap passed (printed when found; the window is kept when not).
    Idle,
    /// The end of the stream.
    End,
}

/// The lines of the attempt under way.
#[derive(Default)]
struct Window {
    /// Shared with the reader of a diagnosis while it runs (no copy).
    lines: Arc<VecDeque<String>>,
    /// The stream's number of the first line kept.
    first: usize,
    bytes: usize,
    /// Lines dropped from the front past [`WINDOW_BYTES`].
    dropped: usize,
    /// Lines other than systemd's start lines.
    content: usize,
    /// systemd said the process ended.
    exited: bool,
    /// Lines arrived since the last diagnosis.
    fresh: bool,
}

impl Window {
    fn push(&mut self, line: Line, content: bool) {
        let lines = Arc::make_mut(&mut self.lines);
        if lines.is_empty() {
            self.first = line.number;
        }
        self.bytes += line.text.len() + 1;
        lines.push_back(line.text);
        while self.bytes > WINDOW_BYTES {
            let Some(old) = lines.pop_front() else { break };
            self.bytes -= old.len() + 1;
            self.first += 1;
            self.dropped += 1;
        }
        self.content += usize::from(content);
        self.fresh = true;
    }

    fn last(&self) -> usize {
        self.first + self.lines.len().saturating_sub(1)
    }
}

/// Reads a window as the lines it holds, each ended by `\n`.
struct WindowReader {
    lines: Arc<VecDeque<String>>,
    next: usize,
    pos: usize,
}

impl Read for WindowReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let Some(line) = self.lines.get(self.next) else {
                break;
            };
            let rest = line.as_bytes().get(self.pos..).unwrap_or_default();
            if rest.is_empty() {
                buf[n] = b'\n';
                n += 1;
                self.next += 1;
                self.pos = 0;
                continue;
            }
            let k = rest.len().min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&rest[..k]);
            self.pos += k;
            n += k;
        }
        Ok(n)
    }
}

enum Msg {
    Line(Line),
    Failed(IngestError),
}

/// The reading thread: standard input, line by line, until its end; at most
/// [`CHANNEL_LINES`] lines and [`CHANNEL_BYTES`] bytes ahead (the follower gives each
/// line's bytes back to `budget` as it takes it).
fn spawn_reader(budget: Arc<Budget>) -> Receiver<Msg> {
    let (tx, rx) = sync_channel(CHANNEL_LINES);
    std::thread::spawn(move || {
        let mut r = match LineReader::open(&Source::Stdin) {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send(Msg::Failed(e));
                return;
            }
        };
        loop {
            let msg = match r.next_line() {
                Ok(Some(l)) => {
                    budget.take(l.text.len());
                    Msg::Line(l)
                }
                Ok(None) => return,
                Err(e) => Msg::Failed(e),
            };
            let failed = matches!(msg, Msg::Failed(_));
            if tx.send(msg).is_err() || failed {
                return;
            }
        }
    });
    rx
}

/// The follower's state: the engine, where diagnoses go, the window.
struct Follower<'c> {
    engine: Engine<'c>,
    emit: Emitter,
    top: usize,
    window: Window,
    /// Attempts diagnosed so far.
    attempts: usize,
    printed: usize,
    any_found: bool,
}

impl Follower<'_> {
    fn line(&mut self, line: Line) -> anyhow::Result<()> {
        match kind(&line) {
            Kind::Start => {
                if self.window.exited {
                    self.diagnose(Trigger::Exit)?;
                } else if self.window.content > 0 {
                    self.diagnose(Trigger::Restart)?;
                }
                self.window.push(line, false);
            }
            Kind::Exit => {
                self.window.push(line, true);
                self.window.exited = true;
            }
            Kind::Other => self.window.push(line, true),
        }
        Ok(())
    }

    /// How long to wait for the next line before diagnosing (`None`: until it comes).
    fn wait(&self, idle: Option<Duration>) -> Option<Duration> {
        if self.window.exited {
            Some(idle.map_or(SETTLE, |i| i.min(SETTLE)))
        } else if self.window.fresh && self.window.content > 0 {
            idle
        } else {
            None
        }
    }

    fn timeout(&mut self) -> anyhow::Result<()> {
        let t = if self.window.exited {
            Trigger::Exit
        } else {
            Trigger::Idle
        };
        self.diagnose(t)
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        if self.window.exited {
            self.diagnose(Trigger::Exit)
        } else if self.window.content > 0 && (self.window.fresh || self.printed == 0) {
            self.diagnose(Trigger::End)
        } else {
            Ok(())
        }
    }

    /// Diagnoses the window; prints and drops it, or keeps it (an idle gap with no
    /// cause).
    fn diagnose(&mut self, why: Trigger) -> anyhow::Result<()> {
        let w = &self.window;
        let name = format!("<stdin> lines {}–{}", w.first, w.last());
        if w.dropped > 0 {
            eprintln!(
                "crashdoc: note: the first {} line(s) of this attempt were dropped (more than {} MiB)",
                w.dropped,
                WINDOW_BYTES >> 20
            );
        }
        let reader = WindowReader {
            lines: Arc::clone(&w.lines),
            next: 0,
            pos: 0,
        };
        let first = w.first;
        let mut r = LineReader::from_reader(Box::new(reader), name)?.numbered_from(first);
        let mut d = self
            .engine
            .diagnose(&mut r, BuildOptions { top: self.top })?;
        drop(r);
        let found = d.found();
        let print = match why {
            Trigger::Exit => true,
            Trigger::Restart | Trigger::Idle => found,
            Trigger::End => found || self.printed == 0,
        };
        if why == Trigger::Idle && !found {
            self.window.fresh = false;
            return Ok(());
        }
        self.attempts += 1;
        renumber(&mut d, first, self.attempts);
        if print {
            self.printed += 1;
            self.emit.diagnosis(d)?;
        }
        self.any_found |= found;
        self.window = Window::default();
        Ok(())
    }
}

/// The attempts of a window's diagnosis as the stream's: the first starts at the
/// window's first line, and they are counted from the attempts before.
fn renumber(d: &mut Diagnosis, first: usize, attempt: usize) {
    for (i, a) in d.attempts.iter_mut().enumerate() {
        a.index = attempt + i;
        if i == 0 {
            a.first_line = first;
        }
    }
}

/// `crashdoc --follow`.
pub fn run(a: &DiagnoseArgs) -> anyhow::Result<ExitCode> {
    if a.files.iter().any(|f| f != "-") {
        bail!("--follow reads standard input: journalctl -fu UNIT | crashdoc --follow (for a file: tail -F FILE | crashdoc --follow)");
    }
    if std::io::stdin().is_terminal() {
        bail!("--follow reads standard input: journalctl -fu UNIT | crashdoc --follow");
    }
    let lib = a.library.load()?;
    let facts = super::preflight::read_envs(&a.env)?;
    let rules = a.rules.load()?;
    let compiled = Compiled::new(&lib)?;
    let render = renderer(a.format, a.style(), 1);
    if render.collects() {
        bail!("--follow prints one diagnosis per attempt: --format text, json, jsonl or markdown");
    }
    // one thread: a window is small, and a reading thread's batches would add to memory
    let engine = Engine::new(&compiled, a.engine.kind())
        .with_parallel_after(usize::MAX)
        .with_facts(facts)
        .with_rules(&rules);
    let mut f = Follower {
        engine,
        emit: Emitter::begin(render, a.output.open_streaming()?, true)?,
        top: a.top,
        window: Window::default(),
        attempts: 0,
        printed: 0,
        any_found: false,
    };
    let idle = a.follow.idle.map(Duration::from_secs);
    if idle.is_none() {
        // without --idle only systemd's exit lines end an attempt: say so once, or a
        // `tail -F train.log | crashdoc --follow` stays silent with no hint why
        eprintln!("crashdoc: note: an attempt is diagnosed when systemd says the unit's process ended; for a stream that is not a systemd unit's (tail -F FILE), add --idle SECS");
    }
    let budget = Arc::new(Budget::default());
    let rx = spawn_reader(Arc::clone(&budget));
    let mut errors = 0;
    loop {
        let msg = match f.wait(idle) {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match msg {
            Ok(Msg::Line(l)) => {
                budget.give(l.text.len());
                f.line(l)?;
            }
            Ok(Msg::Failed(e)) => {
                eprintln!("crashdoc: {e}");
                errors += 1;
                break;
            }
            Err(RecvTimeoutError::Timeout) => f.timeout()?,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    f.finish()?;
    let any_found = f.any_found;
    f.emit.finish()?;
    Ok(combined_exit(errors, any_found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_budget_holds_the_reader_past_its_bytes() {
        let b = Arc::new(Budget::default());
        b.take(CHANNEL_BYTES - 10);
        // a line that does not fit waits until the follower gives bytes back
        let (tx, rx) = std::sync::mpsc::channel();
        let b2 = Arc::clone(&b);
        let reader = std::thread::spawn(move || {
            b2.take(1 << 20);
            let _ = tx.send(());
        });
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        b.give(CHANNEL_BYTES - 10);
        assert!(rx.recv_timeout(Duration::from_secs(10)).is_ok());
        let _ = reader.join();
        // a line longer than the budget still passes alone
        b.give(1 << 20);
        b.take(CHANNEL_BYTES * 2);
    }
}
