//! Where a command's report goes: standard output, a file (`-o FILE`), or nowhere
//! (`-q`: the exit code only).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

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
    /// Opens the destination (a file is created, or truncated, now).
    pub fn open(&self) -> anyhow::Result<Box<dyn Write>> {
        if self.quiet {
            return Ok(Box::new(std::io::sink()));
        }
        match &self.output {
            Some(p) => std::fs::File::create(p)
                .map(|f| Box::new(std::io::BufWriter::new(f)) as Box<dyn Write>)
                .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", p.display())),
            None => Ok(Box::new(std::io::stdout().lock())),
        }
    }

    /// Whether the report goes to a terminal (colour, width).
    pub fn to_terminal(&self) -> bool {
        !self.quiet && self.output.is_none() && std::io::stdout().is_terminal()
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
