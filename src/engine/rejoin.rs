//! Rejoin: physical lines that a terminal, a pager, `fold` or a mail client cut at a
//! fixed width are put back together into the one logical line they were, before
//! anything reads them.
//!
//! A log copied out of an 80-column terminal, folded by `fold -w`/`fold -s`, or sent as
//! `format=flowed` mail has its long lines cut; the two halves of an error line are
//! then two lines, and a condition that needs the whole message (or a key line that must
//! be shown as evidence) is lost. A cut leaves two kinds of trace, and this stage
//! recognises both:
//!
//! - **Hard wrap** (a terminal's or `fold -w`'s copy): the head is exactly `W`
//!   characters, cut anywhere (inside a word too). `W` is a common terminal or editor
//!   width ([`COMMON_WIDTHS`]) or any width of at least [`MIN_HARD`] characters that
//!   the input has already shown on another line (a run of cut lines has one width).
//! - **Soft wrap** (`fold -s`, `format=flowed`, a mail client): the head was cut at a
//!   space and keeps it at its end, and the next line's first word would not have fit
//!   on the head at the width `W` (`head + word > W`): that is why the wrapper broke
//!   there. `W` is a common width or the longest line seen so far.
//!   A head shorter than [`MIN_SOFT`] (down to [`MIN_SHORT_SOFT`]) is one only before
//!   a line that is a single word or starts with a long one (at least [`MIN_SOFT`]
//!   columns): a long word (a path, a URL, a hash) is moved whole, and cut when longer
//!   than a line, however short the head; or before the rest of a
//!   prefix the cut split (the two pieces joined start with a prefix that [`normalize`]
//!   reads past the head: TensorFlow's `2020-11-11 10:46:37.467224: E ` cut before its
//!   `cuda_driver.cc:314] `, a head with no message of its own).
//!
//! Both need the width to be consistent with the input seen so far (no line was longer
//! than `W + 1`: a log cut at `W` has no longer line), and a next line that continues
//! the head: not blank, not longer than `W + 1`, and not the start of a record of its
//! own: no prefix [`normalize`] recognises (timestamp, level, journald/syslog, process
//! tag, rank, markdown…), not a traceback header, frame or chaining line, not an
//! exception line (`…Error: …`) — unless the head is a prefix with no message of its
//! own and the next line has no prefix (a process tag and a level cut before the
//! text). A head that is a frame or a rule (first and last
//! character the same punctuation: `+----+`, `| … |`, `=====`) is never joined, so an
//! `nvidia-smi` table of equal-width rows stays a table. A log whose own lines happen
//! to have one length is therefore not merged: its lines start with a prefix, or its
//! longer lines rule the width out.
//!
//! **Behind a collector's prefix.** A line cut *before* journald, a container runtime,
//! `kubectl --prefix`, compose, torchrun, Ray or a CI runner prefixed it has a prefix on
//! every piece, so each piece starts a record of its own. When a hard head's whole-line
//! reading fails, it is read once more behind the prefixes ([`Widths::continues`]): the
//! next piece must carry a transport prefix of the same stream
//! ([`normalize::transport`]: host, identifier, pid, process tag, rank), the widths are
//! the messages', and the whole line's width must have been learned from the input (a
//! run of pieces behind one stream's prefix has one whole length; a common whole-line
//! width says nothing of its message). Only such a failed head is parsed, so ordinary
//! lines still cost one length test.
//!
//! **Line numbers.** A logical line carries the number of its first physical line
//! (where its text starts: evidence points there). The physical lines it absorbed are
//! not numbered again, and the line after it keeps its own physical number, so the
//! numbers shown always point into the input file and a gap after an evidence line
//! shows how many lines it spans. [`Rejoiner::joins`] counts the lines absorbed.
//!
//! **Text.** A hard wrap is joined as it was cut (the halves of a word rejoin); a
//! continuation indented by two or more columns past the logical line's own indentation
//! (an editor's hanging indent) loses that indentation. A soft wrap keeps the head's
//! trailing space and drops the continuation's indentation.
//!
//! **Cost.** A line shorter than [`MIN_HARD`] bytes that does not end with a space is
//! handed on untouched (one length test, one byte test); only a line of a candidate
//! width reads the next line ahead (into a second buffer: the buffers are swapped, not
//! copied, when the next line does not continue).

use crate::engine::ingest::{IngestError, LineReader, Physical, RawLine, MAX_LINE_BYTES};
use crate::engine::normalize;

/// Terminal and editor widths a hard or soft wrap is recognised at without the input
/// showing the width first: the VT100/`fold` 80, the wide terminals' 100, 120, 132
/// (VT100 wide mode), 160 and 200.
pub const COMMON_WIDTHS: &[usize] = &[80, 100, 120, 132, 160, 200];

/// The shortest width a hard wrap is recognised at (narrower cuts are ordinary short
/// lines far too often).
pub const MIN_HARD: usize = 60;

/// The shortest head of a soft wrap, in characters: a wrapper that breaks at the last
/// space leaves at least this much before a long word at the widths it is used with.
pub const MIN_SOFT: usize = 40;

/// The shortest head of a soft wrap before a line that is one long word (a path, a
/// URL, a hash: the wrapper broke before it however short the head was, `[Errno 13]
/// Permission denied: ` then the path, cut at the width when longer).
pub const MIN_SHORT_SOFT: usize = 16;

/// Widths whose line counts are kept (a hard wrap at a wider, uncommon width is not
/// recognised).
const TRACKED_WIDTHS: usize = 512;

/// How many lines of one uncommon width make it a wrap width.
const REPEATS: u32 = 2;

/// A physical line that may have been cut: its width in characters and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Characters (ANSI escapes not counted).
    pub chars: usize,
    /// Exactly a wrap width: a hard cut.
    pub hard: bool,
    /// Its width was learned from the input (lines of this width seen before), not only
    /// a common one.
    pub learned: bool,
    /// Ends with a space after text: a cut at a space.
    pub soft: bool,
    /// Ends with a space after text, shorter than [`MIN_SOFT`]: a cut at a space only
    /// before a line that is one word.
    pub short_soft: bool,
    /// Columns of leading whitespace.
    pub indent: usize,
    /// A complete traceback frame line (`…, line 12, in run`).
    pub frame: bool,
    /// Bytes of markdown quote markers (`> `, `> > `) before the text.
    pub quote: usize,
    /// The stream of the transport prefix the width was measured after (a line a
    /// collector prefixed after it was cut, [`normalize::transport`]); `None`: measured
    /// on the whole line.
    pub stream: Option<u64>,
}

/// Bytes of markdown quote markers (`> `, nested `> > `) a pasted line starts with: a
/// quoted paste is cut and rejoined inside its quote.
pub fn quote_len(bytes: &[u8]) -> usize {
    let mut n = 0;
    while bytes[n..].starts_with(b"> ") {
        n += 2;
    }
    n
}

/// What the stage has learned of the input's widths.
#[derive(Debug, Clone)]
pub struct Widths {
    /// Distinct lines seen per width (`0..TRACKED_WIDTHS`): a line equal, at both
    /// ends, to the last one of its width (a repeated frame or warning) is not counted.
    seen: Vec<u32>,
    /// A digest of the ends of the last line of each width.
    last: Vec<u64>,
    /// The longest line seen, in characters.
    max: usize,
}

impl Default for Widths {
    fn default() -> Self {
        Widths {
            seen: vec![0; TRACKED_WIDTHS],
            last: vec![0; TRACKED_WIDTHS],
            max: 0,
        }
    }
}

/// Bytes at each end of a line that tell two lines of one width apart.
const ENDS: usize = 12;

/// A digest of a line's first and last [`ENDS`] bytes.
fn ends_digest(bytes: &[u8]) -> u64 {
    let head = &bytes[..bytes.len().min(ENDS)];
    let tail = &bytes[bytes.len().saturating_sub(ENDS)..];
    head.iter()
        .chain(tail)
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Characters of a line as a terminal shows them: UTF-8 lead bytes, CSI escapes
/// (`ESC [ … final`) not counted.
pub fn columns(bytes: &[u8]) -> usize {
    if memchr::memchr(0x1b, bytes).is_none() {
        if bytes.is_ascii() {
            return bytes.len();
        }
        // characters = bytes that do not continue one; counted in blocks of 255 into
        // byte-wide sums, which the compiler vectorizes (a sum per byte into a `usize`
        // it did not: this count was a tenth of a serving journal's time)
        return bytes
            .chunks(255)
            .map(|c| usize::from(c.iter().fold(0u8, |n, &b| n + u8::from((b as i8) >= -0x40))))
            .sum::<usize>();
    }
    let mut n = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            i += 2;
            while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                i += 1;
            }
        } else if (bytes[i] as i8) >= -0x40 {
            n += 1;
        }
        i += 1;
    }
    n
}

fn indent_of(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
}

/// A frame, table row or rule line: its first and last visible characters are the
/// same punctuation (`+---+`, `| … |`, `=====`, `### … ###`), or it ends with a column
/// bar (`name: | a | b |`).
fn ruled(bytes: &[u8]) -> bool {
    let t = bytes.trim_ascii();
    match (t.first(), t.last()) {
        (_, Some(b'|')) => true,
        (Some(a), Some(b)) => a == b && b"+|=-*#~_".contains(a),
        _ => false,
    }
}

/// Bytes that two records of one format share at their start (after indentation).
const SAME_START: usize = 4;

/// Whether two lines start alike (`step 00002/…`, `step 00003/…`; two timestamps of one
/// year): records of one format, not a line and its continuation.
///
/// Two absolute paths share more than four bytes before they are one format
/// (`/usr/local/…` twice): their first three directories (a wrapped compiler command's
/// `-isystem ` then `/usr/include/…` or `/usr/local/lib/…` after a line that began
/// `/usr/local/cuda/…` is one line).
fn same_start(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (a.trim_ascii_start(), b.trim_ascii_start());
    let n = if a.first() == Some(&b'/') {
        a.iter()
            .enumerate()
            .filter(|(_, c)| **c == b'/')
            .nth(3)
            .map_or(a.len(), |(i, _)| i + 1)
            .max(SAME_START)
    } else {
        SAME_START
    };
    a.len() >= n && b.len() >= n && a[..n].eq_ignore_ascii_case(&b[..n])
}

/// A complete traceback frame line: `File "…", line N, in NAME` (Python) or
/// `path.py:N: in NAME` (pytest), ending with the name.
fn complete_frame(bytes: &[u8]) -> bool {
    let t = bytes.trim_ascii_end();
    if t.len() != bytes.len() {
        return false;
    }
    let name = t
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'<' | b'>'))
        .count();
    let before = &t[..t.len() - name];
    name > 0 && (before.ends_with(b", in ") || before.ends_with(b": in "))
}

impl Widths {
    /// Notes a physical line's width and says whether it may be the head of a wrap.
    /// Every physical line passes here once, in order.
    pub fn observe(&mut self, line: &[u8]) -> Option<Head> {
        let quote = quote_len(line);
        let bytes = &line[quote..];
        let n = bytes.len();
        // one trailing space, or two (a cut after a sentence's double space: PyTorch's
        // `fragmentation.  See documentation for Memory Management  (https://…)`)
        let soft_end = n >= MIN_SHORT_SOFT
            && bytes[n - 1] == b' '
            && (bytes[n - 2] != b' ' || bytes[n - 3] != b' ');
        if n < MIN_HARD && !soft_end {
            return None;
        }
        let chars = columns(bytes);
        self.max = self.max.max(chars);
        if chars < TRACKED_WIDTHS {
            let d = ends_digest(bytes);
            if self.last[chars] != d {
                self.last[chars] = d;
                self.seen[chars] = self.seen[chars].saturating_add(1);
            }
        }
        // a complete-looking traceback frame is a hard head at a common width only: a
        // traceback repeats frames of one width
        let frame = bytes.trim_ascii_start().starts_with(b"File \"");
        let learned = !frame && self.seen.get(chars).is_some_and(|&c| c >= REPEATS);
        let width_known = COMMON_WIDTHS.contains(&chars) || learned;
        let hard = chars >= MIN_HARD && width_known && self.max <= chars + 1;
        let soft = soft_end && chars >= MIN_SOFT;
        let short_soft = soft_end && !soft;
        if !(hard || soft || short_soft) || ruled(bytes) {
            return None;
        }
        Some(Head {
            chars,
            hard,
            learned,
            soft,
            short_soft,
            indent: indent_of(bytes),
            frame: complete_frame(bytes),
            quote,
            stream: None,
        })
    }

    /// The common width a soft-wrapped head of `chars` columns was cut at, when one
    /// fits: a width `W` with `chars - 1 <= W < chars + word` (the head, perhaps with its
    /// space in column `W + 1`, fit; the next word did not), no line seen longer than
    /// `W + 1`, and the next line (`next` columns) within it too: the narrowest such
    /// width (a head of 98 columns before a word of 63 and a line of 136 was cut at 160,
    /// not 100). (An uncommon width is not learned for soft wraps: their lines have no
    /// one length to repeat.)
    fn soft_width(&self, chars: usize, word: usize, next: usize) -> Option<usize> {
        let fits =
            |w: usize| chars <= w + 1 && chars + word > w && self.max <= w + 1 && next <= w + 1;
        COMMON_WIDTHS.iter().copied().find(|&w| fits(w))
    }

    /// Whether `next` continues the cut `head` (the last piece of the logical line
    /// `first`); how to join it when it does.
    ///
    /// A hard cut of a line that a collector prefixed afterwards (each piece got a
    /// prefix of its own: a paste folded at a width, or `rich` at its 80 columns, then
    /// journald, a container runtime, torchrun or Ray) is read behind the prefixes when
    /// the whole lines do not continue: `next` must have a transport prefix of the same
    /// stream ([`normalize::transport`]), and the widths are the messages'. The whole
    /// line's width is the one learned: a run of pieces behind one stream's prefix has
    /// one length too. (Only a head that failed is parsed: the stage stays a length
    /// test on ordinary lines.)
    ///
    /// Returns the join and the bytes of `next` to drop before appending it (its quote
    /// markers or its prefix).
    pub fn continues(&self, first: &[u8], head: Head, next: &[u8]) -> Option<(Join, usize)> {
        self.continues_as(first, head, next).or_else(|| {
            if !head.hard || head.stream.is_some() || head.quote > 0 {
                return None;
            }
            let t = transport_of(next)?;
            let chars = head.chars.checked_sub(columns(&next[..t.len]))?;
            // the head's own message: the logical line's, behind its prefix (it ends
            // where the head does)
            let message = &first[transport_of(first)?.len..];
            let common = COMMON_WIDTHS.contains(&chars);
            // the whole line's width is a cut's when the input repeated it (a common
            // width of the whole line says nothing of its message); a traceback frame
            // only at a common width, as on a whole line (a traceback repeats frames of
            // one width)
            let frame = message.trim_ascii_start().starts_with(b"File \"");
            if !common && (!head.learned || frame) {
                return None;
            }
            let framed = Head {
                chars,
                indent: indent_of(message),
                frame: complete_frame(message),
                quote: 0,
                stream: Some(t.stream),
                ..head
            };
            self.continues_as(first, framed, next)
        })
    }

    fn continues_as(&self, first: &[u8], head: Head, next: &[u8]) -> Option<(Join, usize)> {
        let (skip_first, skip_next) = match head.stream {
            // behind a transport prefix, the continuation has one of the same stream
            Some(stream) => {
                let (a, b) = (transport_of(first)?, transport_of(next)?);
                (a.stream == stream && b.stream == stream).then_some((a.len, b.len))?
            }
            // inside a quote, the continuation is quoted alike
            None => {
                let q = head.quote;
                if quote_len(next) != q || next.get(..q) != first.get(..q) {
                    return None;
                }
                (q, q)
            }
        };
        let (first, next) = (&first[skip_first..], &next[skip_next..]);
        let body = next.trim_ascii_start();
        if body.is_empty() || ruled(next) || same_start(first, next) {
            return None;
        }
        let cols = columns(next);
        let width = if head.hard && cols <= head.chars {
            Some((head.chars, Join::Hard))
        } else {
            None
        };
        let width = width.or_else(|| {
            let word = columns(body.split(|b| *b == b' ').next().unwrap_or(body));
            let w = self.soft_width(head.chars, word, cols)?;
            // a short head only before a line that starts with a long word (a path, a URL,
            // a hash: moved whole because it did not fit after the head) or is one word,
            // or before the rest of a prefix the cut split (TensorFlow's `… .467224: E `
            // cut before its `file.cc:314] `)
            let moved_word = word >= MIN_SOFT || !body.trim_ascii_end().contains(&b' ');
            let short = head.short_soft && (moved_word || prefix_spans(first, body));
            (head.soft || short).then_some((w, Join::Soft))
        });
        let (w, join) = width?;
        // a frame and its source line, indented under it, are Python's layout
        let source_line = indent_of(next) > head.indent && head.frame;
        if cols > w + 1 || source_line || (starts_record(body) && !message_of(first, body)) {
            return None;
        }
        let join = match join {
            Join::Hard if indent_of(next) >= indent_of(first).min(head.indent) + 2 => Join::Soft,
            j => j,
        };
        Some((join, skip_next))
    }
}

/// The transport prefix of a line ([`normalize::transport`]).
fn transport_of(line: &[u8]) -> Option<normalize::Transport> {
    std::str::from_utf8(line)
        .ok()
        .and_then(normalize::transport)
}

/// How a continuation is appended to its head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// As it is (a cut inside the text).
    Hard,
    /// Without its leading whitespace (a cut at a space, or a hanging indent).
    Soft,
}

/// Python's traceback structure lines (each starts a record of its own).
const TRACEBACK_STARTS: &[&str] = &[
    "Traceback (most recent call last)",
    "File \"",
    "During handling of the above exception",
    "The above exception was the direct cause",
];

/// The messages a shell or a launcher prints itself (`Killed`, `Segmentation fault (core
/// dumped)` when its child dies, `nohup: ignoring input` when it starts one): written
/// around the child's output, never a part of it.
pub const SHELL_STATUS: &[&str] = &[
    "Killed",
    "Terminated",
    "Aborted",
    "Segmentation fault",
    "Bus error",
    "Illegal instruction",
    "Floating point exception",
    "zsh: ",
    "bash: ",
    "nohup: ",
];

/// Whether a line (without its indentation) starts a record of its own: a prefix
/// [`normalize`] peels, a timestamp or bracketed stamp of a format it does not know
/// (`2023-02-02 07:33:14.789112: I …`, `[  +0.000006]`, `[2025-02-01 07:03:54 TP5]`),
/// a traceback structure line, an exception line, a Python warning
/// (`path.py:12: UserWarning: …`) or a shell's own status message (`Killed`).
pub fn starts_record(body: &[u8]) -> bool {
    let text = crate::engine::ingest::clean_text(body);
    let text = text.trim_start();
    if TRACEBACK_STARTS.iter().any(|s| text.starts_with(s))
        || SHELL_STATUS.iter().any(|s| text.starts_with(s))
        || exception_line(text)
        || stamp(text.as_bytes())
        || python_warning(text)
    {
        return true;
    }
    let rec = normalize::normalize_text(0, text);
    rec.message.len() != rec.raw.len()
}

/// Whether `next`, which starts like a record (an exception line, a stamp), is the
/// message of a head that is a recognised prefix and nothing else: vLLM's `(Worker_TP2
/// pid=211810) ERROR 07-17 15:09:17 [multiproc_executor.py:1007] ` cut before
/// `torch.OutOfMemoryError: …`. Never when `next` has a prefix of its own (the next
/// record of a log whose lines may have no message).
fn message_of(head: &[u8], next: &[u8]) -> bool {
    let read =
        |b: &[u8]| normalize::normalize_text(0, crate::engine::ingest::clean_text(b).trim_start());
    let h = read(head);
    let n = read(next);
    h.message.trim().is_empty() && h.message.len() != h.raw.len() && n.message.len() == n.raw.len()
}

/// Whether the head and the next line's text, joined, start with a prefix [`normalize`]
/// reads that ends past the head: the cut fell inside the prefix (a stamp and a level
/// whose origin moved to the next line), so the head has no message of its own.
fn prefix_spans(head: &[u8], body: &[u8]) -> bool {
    let head = crate::engine::ingest::clean_text(head);
    let mut text = head.trim_start().to_string();
    let kept = text.trim_end().len();
    text.push_str(&crate::engine::ingest::clean_text(body.trim_ascii_end()));
    let rec = normalize::normalize_text(0, &text);
    rec.raw.len().saturating_sub(rec.message.len()) > kept
}

/// A date (`2023-02-02`, `2023/02/02`), a time (`07:33:14`) or a bracket opening on a
/// number, a space or a sign at the start of a line. A bracket opening on a word that
/// mixes digits and letters is an id, not a stamp (`[09c561ee-a44c-…]`, a task's UUID
/// that a wrap moved to the next line).
fn stamp(b: &[u8]) -> bool {
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let date = digits(0..4) && matches!(b.get(4), Some(b'-' | b'/')) && digits(5..7);
    let time = digits(0..2) && b.get(2) == Some(&b':') && digits(3..5);
    let number = |s: &[u8]| {
        s.iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .all(u8::is_ascii_digit)
    };
    let bracket = b.first() == Some(&b'[')
        && b.get(1).is_some_and(|c| {
            (c.is_ascii_digit() && number(&b[1..])) || matches!(c, b' ' | b'+' | b'-')
        });
    date || time || bracket
}

/// `file.py:12: SomeWarning: …`, as the `warnings` module prints it.
fn python_warning(text: &str) -> bool {
    let Some(i) = text.find(".py:") else {
        return false;
    };
    let rest = &text[i + 4..];
    let num = rest.bytes().take_while(u8::is_ascii_digit).count();
    num > 0
        && rest[num..].starts_with(": ")
        && rest[num + 2..]
            .split(':')
            .next()
            .is_some_and(|w| w.ends_with("Warning") && !w.contains(' '))
}

/// `pkg.SomeError: …` (or the name alone): a dotted identifier ending in one of
/// Python's exception suffixes, then a colon or the end of the line.
fn exception_line(text: &str) -> bool {
    let name = text
        .split(|c: char| c == ':' || c.is_whitespace())
        .next()
        .unwrap_or("");
    let rest = &text[name.len()..];
    let ident = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    ident
        && (rest.is_empty() || rest.starts_with(':'))
        && ["Error", "Exception", "Warning", "Interrupt", "Exit"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// The rejoin stage over a [`LineReader`]: [`Rejoiner::next_raw`] hands out logical
/// lines.
pub struct Rejoiner<'r> {
    reader: &'r mut LineReader,
    /// The logical line handed out last.
    cur: Vec<u8>,
    /// A physical line read ahead that did not continue the one before it.
    ahead: Vec<u8>,
    ahead_line: Option<Physical>,
    widths: Widths,
    joins: usize,
    /// The number of the last physical line read.
    physical: usize,
}

impl<'r> Rejoiner<'r> {
    pub fn new(reader: &'r mut LineReader) -> Self {
        Rejoiner {
            reader,
            cur: Vec::with_capacity(4096),
            ahead: Vec::with_capacity(4096),
            ahead_line: None,
            widths: Widths::default(),
            joins: 0,
            physical: 0,
        }
    }

    /// The input's name.
    pub fn name(&self) -> &str {
        self.reader.name()
    }

    /// The number of the last physical line read so far (a logical line carries its first
    /// line's number, so the input's length is this one).
    pub fn physical_lines(&self) -> usize {
        self.physical
    }

    /// Physical lines absorbed into the line before them so far.
    pub fn joins(&self) -> usize {
        self.joins
    }

    /// The next logical line (numbered by its first physical line); `Ok(None)` at the
    /// end of the input.
    pub fn next_raw(&mut self) -> Result<Option<RawLine<'_>>, IngestError> {
        let first = match self.ahead_line.take() {
            Some(p) => {
                std::mem::swap(&mut self.cur, &mut self.ahead);
                p
            }
            None => match self.reader.read_into(&mut self.cur)? {
                Some(p) => p,
                None => return Ok(None),
            },
        };
        self.physical = self.physical.max(first.number);
        let mut head = self.widths.observe(&self.cur);
        while let Some(h) = head {
            let Some(p) = self.reader.read_into(&mut self.ahead)? else {
                break;
            };
            self.physical = self.physical.max(p.number);
            let join = self.widths.continues(&self.cur, h, &self.ahead);
            let fits = self.cur.len() + self.ahead.len() <= MAX_LINE_BYTES;
            let Some((join, skip)) = join.filter(|_| fits && p.truncated == 0) else {
                self.ahead_line = Some(p);
                break;
            };
            head = self.widths.observe(&self.ahead);
            let unquoted = &self.ahead[skip..];
            let tail = match join {
                Join::Hard => unquoted,
                Join::Soft => unquoted.trim_ascii_start(),
            };
            self.cur.extend_from_slice(tail);
            self.joins += 1;
        }
        Ok(Some(RawLine {
            number: first.number,
            bytes: &self.cur,
            truncated: first.truncated,
        }))
    }
}

#[cfg(test)]
mod tests;
