//! Where a command's report goes: standard output, a file (`-o FILE`), or nowhere
//! (`-q`: the exit code only).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use crate::knowledge::files;

#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE", conflicts_with = "quiet")]
    pub output: Option<PathBuf>,
    /// Print nothing on standard output: the exit code is the answer (errors still go
    /// to standard error).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl OutputArgs {
    /// Opens the destination. A file (`-o FILE`) is written to a temporary file beside
    /// it and renamed over it by [`Output::finish`] (a reader never sees half a report;
    /// a failed run leaves the old file). `-o` refuses a symlink to a regular file (or a
    /// dangling one); a device or a pipe (`-o /dev/stdout`) is written directly.
    pub fn open(&self) -> anyhow::Result<Output> {
        if self.quiet {
            return Ok(Output::Plain(Box::new(std::io::sink())));
        }
        let Some(p) = &self.output else {
            return Ok(Output::Plain(Box::new(std::io::stdout().lock())));
        };
        let err = |e: std::io::Error| anyhow::anyhow!("{}: cannot write: {e}", p.display());
        match std::fs::metadata(p) {
            Ok(m) if !m.is_file() && !m.is_dir() => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .map_err(err)?;
                Ok(Output::Plain(Box::new(std::io::BufWriter::new(f))))
            }
            _ => Ok(Output::File(files::AtomicFile::create(p).map_err(err)?)),
        }
    }
    /// [`OutputArgs::open`] for a report written as it goes (`--follow`): a file is
    /// created (or emptied) and written directly, each piece flushed by the caller, so
    /// what was written survives the process being stopped; no temporary file exists to
    /// be left behind. A symlink is refused here too (`O_NOFOLLOW`).
    pub fn open_streaming(&self) -> anyhow::Result<Output> {
        let Some(p) = self.output.as_ref().filter(|_| !self.quiet) else {
            return self.open();
        };
        if std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            return self.open();
        }
        let err = |e: std::io::Error| anyhow::anyhow!("{}: cannot write: {e}", p.display());
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NOFOLLOW);
        let f = o.open(p).map_err(err)?;
        Ok(Output::Plain(Box::new(std::io::BufWriter::new(f))))
    }

    /// Whether the report goes to a terminal (colour, width).
    pub fn to_terminal(&self) -> bool {
        !self.quiet && self.output.is_none() && std::io::stdout().is_terminal()
    }
}

/// Where a report is being written.
pub enum Output {
    /// Standard output, nothing, or a device.
    Plain(Box<dyn Write>),
    /// A file, renamed into place by [`Output::finish`].
    File(files::AtomicFile),
}

impl Output {
    /// Flushes; a file is renamed into place.
    pub fn finish(self) -> std::io::Result<()> {
        match self {
            Output::Plain(mut w) => w.flush(),
            Output::File(f) => f.commit(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Plain(w) => w.write(buf),
            Output::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Plain(w) => w.flush(),
            Output::File(f) => f.flush(),
        }
    }
}

/// The narrowest `--width` accepted.
const MIN_WIDTH: usize = 40;

/// How wide the text report is.
#[derive(Args, Debug, Clone, Default)]
pub struct WidthArgs {
    /// Fit the text report into N columns (default: the terminal's width; whole lines
    /// when the output is not a terminal).
    #[arg(long, value_name = "N", value_parser = parse_width)]
    pub width: Option<usize>,
}

fn parse_width(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= MIN_WIDTH => Ok(n),
        Ok(_) => Err(format!("must be at least {MIN_WIDTH}")),
        Err(e) => Err(e.to_string()),
    }
}

impl WidthArgs {
    /// `--width`, else the terminal's width when the report goes to one, else none.
    pub fn resolve(&self, terminal: bool) -> Option<usize> {
        self.width.or_else(|| {
            terminal
                .then(terminal_size::terminal_size)
                .flatten()
                .map(|(w, _)| usize::from(w.0))
        })
    }
}
