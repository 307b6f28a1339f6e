//! Ingest: bytes in, numbered lines out.
//!
//! Every input (a path, or `-` for standard input) is read as a stream of lines. A
//! gzip stream is recognised by its magic bytes and decompressed on the fly. Lines are
//! split on `\n`; the `\r`s that end a line are dropped (a CRLF log, and one converted
//! twice, `\r\r\n`, as Travis CI's macOS and Windows jobs show a program's CRLF output:
//! a carriage return before the newline overwrites nothing); invalid UTF-8 is decoded
//! lossily (each bad sequence becomes U+FFFD) so that line numbering never shifts. ANSI escape sequences
//! and NUL bytes are removed from the text that later stages read.
//!
//! Memory is bounded per line: a line longer than [`MAX_LINE_BYTES`] keeps its first
//! [`MAX_LINE_BYTES`] bytes (the rest is counted, not stored), so a 200 MB single line
//! costs 1 MiB. Nothing else is buffered: a line is handed on and forgotten.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

/// Bytes of one line kept for matching and evidence; the rest of a longer line is dropped
/// and the line is marked as truncated.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// One line of input, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number within its input.
    pub number: usize,
    /// The text, lossily decoded, without the line terminator, ANSI escapes or NULs.
    pub text: String,
    /// How many bytes of the original line were dropped past [`MAX_LINE_BYTES`].
    pub truncated: usize,
}

/// Where an input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Stdin,
    Path(PathBuf),
}

impl Source {
    pub fn parse(arg: &str) -> Self {
        if arg == "-" {
            Source::Stdin
        } else {
            Source::Path(PathBuf::from(arg))
        }
    }

    /// A name for messages and reports.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::Path(p) => p.display().to_string(),
        }
    }
}

/// Errors reading an input. Each names the input.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("{path}: is a directory, not a log file")]
    IsDirectory { path: String },
    #[error("{path}: cannot open: {source}")]
    Open { path: String, source: io::Error },
    #[error("{path}: is {format}-compressed, which crashdoc does not decode (gzip only): decompress it first, e.g. `{tool} -dc FILE | crashdoc`")]
    Compressed {
        path: String,
        format: &'static str,
        tool: &'static str,
    },
    #[error("{path}: is a binary file, not a log (a NUL byte at offset {offset}; {percent}% of the other bytes of its first 8 KiB are control bytes or invalid UTF-8): nothing diagnosed")]
    Binary {
        path: String,
        offset: usize,
        percent: usize,
    },
    #[error("{path}: read error after line {line}: {source}")]
    Read {
        path: String,
        line: usize,
        source: io::Error,
    },
}

/// An input's name as an error shows it (control, bidi and zero-width characters escaped:
/// a newline in a file name must not start a line of its own, e.g. a `::error::`).
fn shown(name: &str) -> String {
    crate::knowledge::text::escape_control(name)
}

/// A streaming line reader over one input.
pub struct LineReader {
    inner: Box<dyn BufRead + Send>,
    name: String,
    number: usize,
    buf: Vec<u8>,
}

impl LineReader {
    /// Opens an input; gzip is detected from the first two bytes.
    pub fn open(source: &Source) -> Result<Self, IngestError> {
        let name = source.name();
        let raw: Box<dyn Read + Send> = match source {
            Source::Stdin => Box::new(io::stdin()),
            Source::Path(p) => Box::new(open_file(p)?),
        };
        Self::from_reader(raw, name)
    }

    /// Wraps any reader (gzip detected as for files).
    pub fn from_reader(raw: Box<dyn Read + Send>, name: String) -> Result<Self, IngestError> {
        let mut buffered = BufReader::with_capacity(256 * 1024, raw);
        let is_gzip = {
            let head = buffered.fill_buf().map_err(|source| IngestError::Read {
                path: shown(&name),
                line: 0,
                source,
            })?;
            if let Some((format, tool)) = other_compression(head) {
                return Err(IngestError::Compressed {
                    path: shown(&name),
                    format,
                    tool,
                });
            }
            let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
            if let Some((offset, percent)) = binary(head).filter(|_| !gzip) {
                return Err(IngestError::Binary {
                    path: shown(&name),
                    offset,
                    percent,
                });
            }
            gzip
        };
        let inner: Box<dyn BufRead + Send> = if is_gzip {
            Box::new(BufReader::with_capacity(
                256 * 1024,
                MultiGzDecoder::new(buffered),
            ))
        } else {
            Box::new(buffered)
        };
        Ok(LineReader {
            inner,
            name,
            number: 0,
            buf: Vec::with_capacity(4096),
        })
    }

    /// Numbers the lines from `first` on: a window of a longer stream (`--follow`)
    /// keeps the stream's line numbers.
    pub fn numbered_from(mut self, first: usize) -> Self {
        self.number = first.saturating_sub(1);
        self
    }

    /// The input's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads the next line; `Ok(None)` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<Line>, IngestError> {
        match self.next_raw()? {
            None => Ok(None),
            Some(r) => Ok(Some(r.into_line())),
        }
    }

    /// Reads the next line without copying it: the fast path of the pipeline looks at
    /// most lines only this way. [`RawLine::clean`] is the text when it needs no
    /// cleaning (valid UTF-8 without escapes or NULs).
    pub fn next_raw(&mut self) -> Result<Option<RawLine<'_>>, IngestError> {
        let mut buf = std::mem::take(&mut self.buf);
        let read = self.read_into(&mut buf);
        self.buf = buf;
        Ok(read?.map(|p| RawLine {
            number: p.number,
            bytes: &self.buf,
            truncated: p.truncated,
        }))
    }

    /// Reads the next line into `out` (cleared first, no terminator, `\r` dropped) and
    /// returns its number; `Ok(None)` at the end of the input. The rejoin stage
    /// ([`crate::engine::rejoin`]) reads ahead with it into buffers of its own.
    pub fn read_into(&mut self, out: &mut Vec<u8>) -> Result<Option<Physical>, IngestError> {
        out.clear();
        let truncated = match read_bounded_line(&mut self.inner, out, MAX_LINE_BYTES) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(None),
            Err(source) => {
                return Err(IngestError::Read {
                    path: shown(&self.name),
                    line: self.number,
                    source,
                })
            }
        };
        self.number += 1;
        while out.last() == Some(&b'\r') {
            out.pop();
        }
        Ok(Some(Physical {
            number: self.number,
            truncated,
        }))
    }
}

/// A compression format crashdoc does not decode, recognised by its magic bytes (the
/// format's name and its command-line tool): xz, zstd, bzip2 (its stream header `BZh`, a
/// block size digit, then a block or end-of-stream magic, so that no text line is taken
/// for one).
fn other_compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const XZ: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
    const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
    const BZ2_BLOCK: &[u8] = &[0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
    const BZ2_END: &[u8] = &[0x17, 0x72, 0x45, 0x38, 0x50, 0x90];
    if head.starts_with(XZ) {
        return Some(("xz", "xz"));
    }
    if head.starts_with(ZSTD) {
        return Some(("zstd", "zstd"));
    }
    let bz2 = head.len() >= 10
        && head.starts_with(b"BZh")
        && (b'1'..=b'9').contains(&head[3])
        && (head[4..10] == *BZ2_BLOCK || head[4..10] == *BZ2_END);
    bz2.then_some(("bzip2", "bzip2"))
}

/// How much of an input's start [`binary`] looks at.
const BINARY_SNIFF: usize = 8 << 10;
/// The share (in percent) of control bytes and invalid UTF-8 among the bytes that are
/// not NUL, above which a start with a NUL byte is binary.
const BINARY_PERCENT: usize = 10;

/// Whether an input's first bytes are those of a binary file (a core dump, an
/// executable, a checkpoint), as git and ripgrep tell: a NUL byte, here together with
/// more than [`BINARY_PERCENT`]% of the other bytes being control bytes (not tab,
/// newline, carriage return, form feed or escape) or invalid UTF-8. A log with a block
/// of NULs (the zero-filled end of a file cut by a crash or a power loss) is text; so is
/// UTF-16 (a BOM, or NULs on one parity, as PowerShell's `>` writes): their NULs are
/// dropped. Returns the first NUL's offset and that share.
fn binary(head: &[u8]) -> Option<(usize, usize)> {
    let head = &head[..head.len().min(BINARY_SNIFF)];
    let first_nul = memchr::memchr(0, head)?;
    if head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]) {
        return None;
    }
    let nuls = head.iter().filter(|&&b| b == 0).count();
    let odd = head.iter().skip(1).step_by(2).filter(|&&b| b == 0).count();
    if nuls * 10 >= head.len() * 4 && (odd * 10 >= nuls * 9 || odd * 10 <= nuls) {
        return None; // UTF-16 without a BOM: every other byte is NUL
    }
    let mut odd_bytes = 0;
    for chunk in head.utf8_chunks() {
        odd_bytes += chunk.invalid().len();
        odd_bytes += chunk
            .valid()
            .bytes()
            .filter(|&b| {
                (b < 0x20 && !matches!(b, 0 | b'\t' | b'\n' | b'\r' | 0x0c | 0x1b)) || b == 0x7f
            })
            .count();
    }
    let others = (head.len() - nuls).max(1);
    let percent = odd_bytes * 100 / others;
    (percent > BINARY_PERCENT).then_some((first_nul, percent))
}

/// What [`LineReader::read_into`] tells of the line it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Physical {
    /// 1-based line number within the input.
    pub number: usize,
    /// Bytes dropped past [`MAX_LINE_BYTES`].
    pub truncated: usize,
}

/// A line borrowed from the reader's buffer.
pub struct RawLine<'a> {
    pub number: usize,
    pub bytes: &'a [u8],
    pub truncated: usize,
}

impl<'a> RawLine<'a> {
    /// The text, when it is valid UTF-8 with nothing to strip.
    pub fn clean(&self) -> Option<&'a str> {
        if memchr::memchr2(0x1b, 0, self.bytes).is_some() {
            return None;
        }
        std::str::from_utf8(self.bytes).ok()
    }

    pub fn into_line(self) -> Line {
        Line {
            number: self.number,
            text: clean_text(self.bytes),
            truncated: self.truncated,
        }
    }
}

fn open_file(path: &Path) -> Result<File, IngestError> {
    let name = shown(&path.display().to_string());
    if path.is_dir() {
        return Err(IngestError::IsDirectory { path: name });
    }
    crate::knowledge::files::open_regular(path)
        .map_err(|source| IngestError::Open { path: name, source })
}

/// Reads up to and including the next `\n`, storing at most `max` bytes in `out`
/// (without the `\n`). Returns the number of bytes dropped, or `None` at EOF with
/// nothing read.
fn read_bounded_line(
    r: &mut dyn BufRead,
    out: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<usize>> {
    let mut dropped = 0usize;
    let mut any = false;
    loop {
        let (done, used) = {
            let avail = match r.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                return Ok(if any { Some(dropped) } else { None });
            }
            any = true;
            let (chunk, done, used) = match memchr::memchr(b'\n', avail) {
                Some(i) => (&avail[..i], true, i + 1),
                None => (avail, false, avail.len()),
            };
            let room = max.saturating_sub(out.len());
            if chunk.len() <= room {
                out.extend_from_slice(chunk);
            } else {
                out.extend_from_slice(&chunk[..room]);
                dropped += chunk.len() - room;
            }
            (done, used)
        };
        r.consume(used);
        if done {
            return Ok(Some(dropped));
        }
    }
}

/// Lossy UTF-8 decoding with ANSI escape sequences and NUL bytes removed.
pub fn clean_text(bytes: &[u8]) -> String {
    let needs_strip = memchr::memchr2(0x1b, 0, bytes).is_some();
    let text = String::from_utf8_lossy(bytes);
    if !needs_strip {
        return text.into_owned();
    }
    strip_ansi(&text)
}

/// Removes CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL|ESC \`) and two-byte escapes,
/// and NUL characters.
///
/// A sequence *inside* a token — between two characters that are neither white space
/// nor the punctuation colours are put around (quotes, brackets, `:`, `,`, `=`…) — is
/// not deleted: it is replaced by one ESC character. Colour codes wrap words, so deleting
/// them is right, but a path on disk may itself hold `ESC [ 0 m`
/// (`/home/alice/\e[0mprojects`): deleting it would make the value name another, real
/// path. The ESC left in its place is escaped in display and makes a command refuse the
/// value, as every control character does.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            skip_escape(&mut chars);
            let inside = out.chars().next_back().is_some_and(in_token)
                && chars.peek().is_some_and(|&n| in_token(n));
            if inside {
                out.push('\u{1b}');
            }
        } else if c != '\0' {
            out.push(c);
        }
    }
    out
}

/// Whether a character is part of a token (a value an escape sequence could sit inside).
fn in_token(c: char) -> bool {
    !c.is_whitespace()
        && !c.is_control()
        && !matches!(
            c,
            '"' | '\''
                | '`'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '<'
                | '>'
                | ':'
                | ';'
                | ','
                | '='
                | '|'
        )
}

/// Skips the rest of an escape sequence whose ESC was just read.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek() {
        Some('[') => {
            chars.next();
            // parameters and intermediates, then one final byte in @..~
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(bytes: &[u8]) -> Vec<Line> {
        let mut r = LineReader::from_reader(Box::new(io::Cursor::new(bytes.to_vec())), "t".into())
            .expect("open");
        let mut v = Vec::new();
        while let Some(l) = r.next_line().expect("read") {
            v.push(l);
        }
        v
    }

    #[test]
    fn crlf_and_missing_final_newline() {
        let v = lines_of(b"a\r\nb\r\nc");
        let t: Vec<_> = v.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(t, ["a", "b", "c"]);
        assert_eq!(v[2].number, 3);
    }

    /// A CRLF line converted again (`\r\r\n`) ends as plainly as any: no carriage
    /// return is left for a matcher to read (it made Travis's macOS `command not found`
    /// lines resemble a CRLF script's `$'\r': command not found`).
    #[test]
    fn every_carriage_return_before_the_newline_is_dropped() {
        let v = lines_of(b"yarn: command not found\r\r\nprogress 50%\rdone\r\n\r\r\n");
        let t: Vec<_> = v.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(t, ["yarn: command not found", "progress 50%\rdone", ""]);
    }

    #[test]
    fn invalid_utf8_keeps_numbering() {
        let v = lines_of(b"ok\n\xff\xfebad\nnext\n");
        assert_eq!(v.len(), 3);
        assert_eq!(v[1].text, "\u{fffd}\u{fffd}bad");
        assert_eq!(v[2].number, 3);
    }

    #[test]
    fn ansi_and_nul_are_removed() {
        let v = lines_of(b"\x1b[31mERROR\x1b[0m x\0y\n\x1b]0;title\x07z\n");
        assert_eq!(v[0].text, "ERROR xy");
        assert_eq!(v[1].text, "z");
    }

    #[test]
    fn an_escape_inside_a_token_is_kept_as_esc_and_colours_around_words_go() {
        let v = lines_of(
            b"\x1b[1;35mValueError\x1b[0m: File \x1b[35m\"/app/x.py\"\x1b[0m, line \x1b[35m3\x1b[0m\n\
              denied: '/home/alice/\x1b[0mprojects'\n\x1b[36mmod\x1b[0m:\x1b[36mf\x1b[0m:\x1b[36m42\x1b[0m\n",
        );
        assert_eq!(v[0].text, "ValueError: File \"/app/x.py\", line 3");
        assert_eq!(v[1].text, "denied: '/home/alice/\u{1b}projects'");
        assert_eq!(v[2].text, "mod:f:42");
    }

    #[test]
    fn gzip_is_detected() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"one\ntwo\n").expect("write");
        let gz = enc.finish().expect("finish");
        let v = lines_of(&gz);
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].text, "two");
    }

    #[test]
    fn truncated_gzip_is_an_error_not_a_panic() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&b"line of text\n".repeat(1000))
            .expect("write");
        let gz = enc.finish().expect("finish");
        let cut = &gz[..gz.len() / 2];
        let mut r = LineReader::from_reader(Box::new(io::Cursor::new(cut.to_vec())), "t.gz".into())
            .expect("open");
        let mut err = None;
        loop {
            match r.next_line() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        let e = err.expect("a truncated gzip stream must be reported");
        assert!(
            e.to_string().starts_with("t.gz: read error after line"),
            "{e}"
        );
    }

    #[test]
    fn long_lines_are_bounded() {
        let mut big = vec![b'x'; MAX_LINE_BYTES + 10];
        big.extend_from_slice(b"\nnext\n");
        let v = lines_of(&big);
        assert_eq!(v[0].text.len(), MAX_LINE_BYTES);
        assert_eq!(v[0].truncated, 10);
        assert_eq!(v[1].text, "next");
    }
}
