//! `crashdoc diagnose` and `crashdoc extract` (`diagnose --follow` is [`super::follow`],
//! chosen by [`super::dispatch`]; both write through [`super::emit`]).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::emit::{combined_exit, renderer, Emitter, Format};
use super::inputs::Inputs;
use super::output::{OutputArgs, WidthArgs};
use super::{ColorChoice, EngineArgs, LibraryArgs};
use crate::engine::diagnosis::BuildOptions;
use crate::engine::ingest::LineReader;
use crate::engine::matcher::Compiled;
use crate::engine::pipeline::Engine;
use crate::report::{self, text::Style};

#[derive(Args, Debug, Clone, Default)]
pub struct DiagnoseArgs {
    /// Log files (plain or gzip); `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
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
    /// Environment reports of the crashed machine (pip list/freeze/show, collect_env,
    /// nvidia-smi; repeatable): the diagnosis uses them, and the compatibility rules
    /// are checked on them.
    #[arg(long = "env", value_name = "FILE")]
    pub env: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub rules: super::preflight::RulesArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub width: WidthArgs,
    #[command(flatten)]
    pub follow: FollowArgs,
}

impl DiagnoseArgs {
    /// Colour and width of the text report, for where it goes.
    pub fn style(&self) -> Style {
        let terminal = self.output.to_terminal();
        Style {
            color: self.color.enabled_for(terminal),
            width: self.width.resolve(terminal),
        }
    }
}

/// `--follow` and what goes with it (the reading is [`super::follow`]).
#[derive(Args, Debug, Clone, Default)]
pub struct FollowArgs {
    /// Read standard input as a live stream (`journalctl -fu UNIT | crashdoc --follow`):
    /// a diagnosis each time a crash attempt ends (systemd's exit lines), for as long as
    /// the stream runs.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: also end an attempt after SECS seconds without a new line (a
    /// diagnosis is printed when it finds a cause).
    #[arg(long, value_name = "SECS", requires = "follow", value_parser = clap::value_parser!(u64).range(1..))]
    pub idle: Option<u64>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct ExtractArgs {
    /// Log files (plain or gzip); `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    #[arg(long, short, value_enum, default_value_t = ExtractFormat::Text)]
    pub format: ExtractFormat,
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(flatten)]
    pub width: WidthArgs,
    #[command(flatten)]
    pub library: LibraryArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExtractFormat {
    #[default]
    Text,
    Json,
}

/// `--top N`: at least one cause.
pub fn parse_top(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (0 would hide every cause)".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Says each input that cannot be read; returns how many.
fn report_input_errors(inputs: &Inputs) -> usize {
    for e in &inputs.errors {
        eprintln!("crashdoc: {e}");
    }
    inputs.errors.len()
}

pub fn run_diagnose(a: &DiagnoseArgs) -> anyhow::Result<ExitCode> {
    crate::engine::warm_up_in_background();
    let inputs = Inputs::expand(&a.files);
    let lib = super::process_long(a.library.load()?);
    let facts = super::preflight::read_envs(&a.env)?;
    let rules = a.rules.load()?;
    let out = a.output.open()?;
    let compiled = Compiled::new(&lib)?;
    let mut engine = Engine::new(&compiled, a.engine.kind())
        .with_facts(facts)
        .with_rules(&rules);
    let render = renderer(a.format, a.style(), inputs.sources.len());
    let mut emit = Emitter::begin(render, out, false)?;
    let mut errors = report_input_errors(&inputs);
    for s in &inputs.sources {
        let d = super::progress::open(s).and_then(|(mut r, bar)| {
            let d = engine.diagnose(&mut r, BuildOptions { top: a.top });
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            d
        });
        match d {
            Ok(d) => emit.diagnosis(d)?,
            Err(e) => {
                eprintln!("crashdoc: {e}");
                errors += 1;
            }
        }
    }
    let any_found = emit.finish()?;
    Ok(combined_exit(errors, any_found))
}

pub fn run_extract(a: &ExtractArgs) -> anyhow::Result<ExitCode> {
    let inputs = Inputs::expand(&a.files);
    let lib = super::process_long(a.library.load()?);
    let compiled = Compiled::new(&lib)?;
    let mut engine = Engine::new(&compiled, crate::engine::matcher::EngineKind::Prefilter);
    let terminal = std::io::stdout().is_terminal();
    let style = Style {
        color: a.color.enabled_for(terminal),
        width: a.width.resolve(terminal),
    };
    let mut errors = report_input_errors(&inputs);
    let mut stdout = std::io::stdout().lock();
    for s in &inputs.sources {
        let x = match LineReader::open(s).and_then(|mut r| engine.extract(&mut r)) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("crashdoc: {e}");
                errors += 1;
                continue;
            }
        };
        let out = match a.format {
            ExtractFormat::Text => report::text::render_extraction(&s.name(), &x, style),
            ExtractFormat::Json => {
                serde_json::to_string_pretty(&report::wire::Extraction::from(&x))? + "\n"
            }
        };
        stdout.write_all(out.as_bytes())?;
    }
    stdout.flush()?;
    Ok(combined_exit(errors, true))
}
