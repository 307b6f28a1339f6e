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
    pub fn open(&self) -> Result<Box<dyn Write>, String> {
        if self.quiet {
            return Ok(Box::new(std::io::sink()));
        }
        match &self.output {
            Some(p) => std::fs::File::create(p)
                .map(|f| Box::new(std::io::BufWriter::new(f)) as Box<dyn Write>)
                .map_err(|e| format!("{}: cannot write: {e}", p.display())),
            None => Ok(Box::new(std::io::stdout().lock())),
        }
    }

    /// Whether the report goes to a terminal (colour, width).
    pub fn to_terminal(&self) -> bool {
        !self.quiet && self.output.is_none() && std::io::stdout().is_terminal()
    }
}
