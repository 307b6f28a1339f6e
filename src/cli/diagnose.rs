//! `crashdoc diagnose` and `crashdoc extract`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::inputs::Inputs;
use super::output::{OutputArgs, WidthArgs};
use super::{ColorChoice, EngineArgs, LibraryArgs, EXIT_FOUND, EXIT_INPUT, EXIT_NONE};
use crate::engine::diagnosis::BuildOptions;
use crate::engine::ingest::LineReader;
use crate::engine::matcher::Compiled;
use crate::engine::pipeline::Engine;
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
    pub follow: super::follow::FollowArgs,
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

/// Says each input that cannot be read; returns how many.
fn report_input_errors(inputs: &Inputs) -> usize {
    for e in &inputs.errors {
        eprintln!("crashdoc: {e}");
    }
    inputs.errors.len()
}

/// The renderer of the chosen format.
pub(super) fn renderer(format: Format, style: Style) -> Box<dyn Render> {
    match format {
        Format::Text => Box::new(report::text::Text { style }),
        Format::Json => Box::new(report::Json),
        Format::Markdown => Box::new(report::markdown::Markdown),
        Format::Sarif => Box::new(report::sarif::Sarif),
        Format::Github => Box::new(report::github::Github),
        Format::Jsonl => Box::new(report::Jsonl),
    }
}

pub fn run_diagnose(a: &DiagnoseArgs) -> anyhow::Result<ExitCode> {
    if a.follow.follow {
        return super::follow::run(a);
    }
    let inputs = Inputs::expand(&a.files);
    let lib = super::process_long(a.library.load()?);
    let facts = super::preflight::read_envs(&a.env)?;
    let rules = a.rules.load()?;
    let mut out = a.output.open()?;
    let compiled = Compiled::new(&lib)?;
    let mut engine = Engine::new(&compiled, a.engine.engine)
        .with_facts(facts)
        .with_rules(&rules);
    let terminal = a.output.to_terminal();
    let style = Style {
        color: a.color.enabled_for(terminal),
        width: a.width.resolve(terminal),
    };
    let render: Box<dyn Render> = if a.format == Format::Json && inputs.sources.len() > 1 {
        Box::new(report::JsonArray)
    } else {
        renderer(a.format, style)
    };
    let mut errors = report_input_errors(&inputs);
    let mut any_found = false;
    let mut collected = Vec::new();
    let mut printed = 0;
    for s in &inputs.sources {
        let d = super::progress::open(s).and_then(|(mut r, bar)| {
            let d = engine.diagnose(&mut r, BuildOptions { top: a.top });
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            d
        });
        let d = match d {
            Ok(d) => d,
            Err(e) => {
                eprintln!("crashdoc: {e}");
                errors += 1;
                continue;
            }
        };
        any_found |= d.found();
        if render.collects() {
            collected.push(d);
            continue;
        }
        if printed > 0 {
            out.write_all(render.separator().as_bytes())?;
        }
        printed += 1;
        out.write_all(render.one(&d)?.as_bytes())?;
    }
    if render.collects() {
        out.write_all(render.all(&collected)?.as_bytes())?;
    }
    out.finish()
        .map_err(|e| anyhow::anyhow!("cannot write the report: {e}"))?;
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
