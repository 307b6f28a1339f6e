//! Where diagnoses go: the output formats of `diagnose`, `--follow` and `run`, and the
//! one loop that writes them ([`Emitter`]: a renderer's lifecycle over an output).
//!
//! The three commands differ only in where their diagnoses come from (the inputs one
//! after another, the attempts of a live stream, a failed command's tail); each hands
//! every diagnosis to an [`Emitter`], which begins the format once, writes each
//! diagnosis (flushed at once for a stream), finishes the format and then the output
//! (a file renamed into place), and tells whether any diagnosis found a cause.

use std::io::Write;
use std::process::ExitCode;

use clap::ValueEnum;

use super::output::Output;
use super::{EXIT_FOUND, EXIT_INPUT, EXIT_NONE};
use crate::engine::diagnosis::Diagnosis;
use crate::report::{self, text::Style, Render};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    Markdown,
    /// SARIF 2.1.0: one result per cause, all inputs in one log.
    Sarif,
    /// GitHub Actions workflow commands (annotations; at most 10).
    Github,
    /// One compact JSON diagnosis per line, one line per input (batch work).
    Jsonl,
}

/// The renderer of the chosen format; `inputs`: how many inputs will be diagnosed
/// (several JSON diagnoses make one array, [`report::JsonArray`]).
pub fn renderer(format: Format, style: Style, inputs: usize) -> Box<dyn Render> {
    match format {
        Format::Text => Box::new(report::text::Text::new(style)),
        Format::Json if inputs > 1 => Box::<report::JsonArray>::default(),
        Format::Json => Box::<report::Json>::default(),
        Format::Markdown => Box::<report::markdown::Markdown>::default(),
        Format::Sarif => Box::<report::sarif::Sarif>::default(),
        Format::Github => Box::<report::github::Github>::default(),
        Format::Jsonl => Box::<report::Jsonl>::default(),
    }
}

/// The combined exit code of several inputs: 2 when any could not be read (the others
/// were still diagnosed), else 0 when any has a cause, else 1.
pub fn combined_exit(input_errors: usize, any_found: bool) -> ExitCode {
    ExitCode::from(if input_errors > 0 {
        EXIT_INPUT
    } else if any_found {
        EXIT_FOUND
    } else {
        EXIT_NONE
    })
}

/// A renderer writing to an output, begun, fed and finished in that order.
pub struct Emitter {
    render: Box<dyn Render>,
    out: Output,
    /// Flush after each diagnosis (a live stream: what was diagnosed survives a stop).
    flush_each: bool,
    any_found: bool,
}

impl Emitter {
    /// Begins `render` on `out`.
    pub fn begin(
        mut render: Box<dyn Render>,
        mut out: Output,
        flush_each: bool,
    ) -> anyhow::Result<Emitter> {
        render.begin(&mut out)?;
        Ok(Emitter {
            render,
            out,
            flush_each,
            any_found: false,
        })
    }

    /// Writes one diagnosis (a collecting format keeps it for [`Emitter::finish`]).
    pub fn diagnosis(&mut self, d: Diagnosis) -> anyhow::Result<()> {
        self.any_found |= d.found();
        self.render.diagnosis(&mut self.out, d)?;
        if self.flush_each {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Finishes the format and the output; whether any diagnosis found a cause.
    pub fn finish(mut self) -> anyhow::Result<bool> {
        self.render.finish(&mut self.out)?;
        self.out
            .finish()
            .map_err(|e| anyhow::Error::new(e).context("cannot write the report"))?;
        Ok(self.any_found)
    }
}
