//! `crashdoc diagnose` and `crashdoc extract`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::{ColorChoice, EngineArgs, LibraryArgs, EXIT_FOUND, EXIT_NONE};
use crate::engine::diagnosis::BuildOptions;
use crate::engine::ingest::{LineReader, Source};
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
    /// How many causes to show.
    #[arg(long, default_value_t = 3)]
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
    pub library: LibraryArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExtractFormat {
    #[default]
    Text,
    Json,
}

/// The inputs named on the command line, or standard input.
pub fn sources(files: &[String]) -> anyhow::Result<Vec<Source>> {
    if files.is_empty() {
        if std::io::stdin().is_terminal() {
            anyhow::bail!(
                "no input: give a log file, or pipe one in (journalctl -u UNIT | crashdoc)"
            );
        }
        return Ok(vec![Source::Stdin]);
    }
    Ok(files.iter().map(|f| Source::parse(f)).collect())
}

/// The renderer of the chosen format.
fn renderer(format: Format, style: Style) -> Box<dyn Render> {
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
    let inputs = sources(&a.files)?;
    let lib = a.library.load()?;
    let facts = super::preflight::read_envs(&a.env)?;
    let rules = a.rules.load()?;
    let compiled = Compiled::new(&lib)?;
    let mut engine = Engine::new(&compiled, a.engine.engine)
        .with_facts(facts)
        .with_rules(&rules);
    let render = renderer(
        a.format,
        Style {
            color: a.color.enabled(),
        },
    );
    let mut any_found = false;
    let mut collected = Vec::new();
    let mut stdout = std::io::stdout().lock();
    for (i, s) in inputs.iter().enumerate() {
        let mut r = LineReader::open(s)?;
        let d = engine.diagnose(&mut r, BuildOptions { top: a.top })?;
        any_found |= d.found();
        if render.collects() {
            collected.push(d);
            continue;
        }
        if i > 0 {
            stdout.write_all(render.separator().as_bytes())?;
        }
        stdout.write_all(render.one(&d)?.as_bytes())?;
    }
    if render.collects() {
        stdout.write_all(render.all(&collected)?.as_bytes())?;
    }
    stdout.flush()?;
    Ok(ExitCode::from(if any_found {
        EXIT_FOUND
    } else {
        EXIT_NONE
    }))
}

pub fn run_extract(a: &ExtractArgs) -> anyhow::Result<ExitCode> {
    let inputs = sources(&a.files)?;
    let lib = a.library.load()?;
    let compiled = Compiled::new(&lib)?;
    let mut engine = Engine::new(&compiled, crate::engine::matcher::EngineKind::Prefilter);
    let style = Style {
        color: a.color.enabled(),
    };
    let mut stdout = std::io::stdout().lock();
    for s in &inputs {
        let mut r = LineReader::open(s)?;
        let x = engine.extract(&mut r)?;
        let out = match a.format {
            ExtractFormat::Text => report::text::render_extraction(&s.name(), &x, style),
            ExtractFormat::Json => serde_json::to_string_pretty(&x)? + "\n",
        };
        stdout.write_all(out.as_bytes())?;
    }
    stdout.flush()?;
    Ok(ExitCode::from(EXIT_FOUND))
}
