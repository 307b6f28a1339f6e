//! `crashdoc diagnose` and `crashdoc extract`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::{ColorChoice, EngineArgs, LibraryArgs, EXIT_FOUND, EXIT_NONE};
use crate::engine::diagnosis::{BuildOptions, Diagnosis};
use crate::engine::ingest::{LineReader, Source};
use crate::engine::pipeline::Engine;
use crate::report::{self, text::Style};

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

impl Format {
    /// Formats that render all inputs together, at the end.
    fn collects(self) -> bool {
        matches!(self, Format::Sarif | Format::Github)
    }
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

/// One diagnosis in a per-input format (the collecting formats render at the end).
fn render_one(a: &DiagnoseArgs, d: &Diagnosis, style: Style) -> anyhow::Result<String> {
    Ok(match a.format {
        Format::Text if !d.findings.is_empty() => {
            report::text::render(d, style)
                + "Environment problems (compatibility rules on the facts given):\n"
                + &super::preflight::render_findings(&d.findings)
        }
        Format::Text => report::text::render(d, style),
        Format::Json => report::json(d)? + "\n",
        Format::Markdown => report::markdown::render(d),
        Format::Jsonl => serde_json::to_string(d)? + "\n",
        Format::Sarif | Format::Github => String::new(),
    })
}

pub fn run_diagnose(a: &DiagnoseArgs) -> anyhow::Result<ExitCode> {
    let inputs = sources(&a.files)?;
    let lib = a.library.load()?;
    let facts = super::preflight::read_envs(&a.env)?;
    let rules = a.rules.load()?;
    let mut engine = Engine::new(&lib, a.engine.engine).with_facts(facts);
    let style = Style {
        color: a.color.enabled(),
    };
    let mut any_found = false;
    let mut collected = Vec::new();
    let mut stdout = std::io::stdout().lock();
    for (i, s) in inputs.iter().enumerate() {
        let mut r = LineReader::open(s)?;
        let mut d = engine.diagnose(&mut r, BuildOptions { top: a.top })?;
        d.findings = crate::engine::findings::check(&rules, &d.environment);
        any_found |= d.found();
        if a.format.collects() {
            collected.push(d);
            continue;
        }
        let out = render_one(a, &d, style)?;
        if i > 0 && !matches!(a.format, Format::Json | Format::Jsonl) {
            writeln!(stdout)?;
        }
        stdout.write_all(out.as_bytes())?;
    }
    let out = match a.format {
        Format::Sarif => report::sarif::render(&collected)?,
        Format::Github => report::github::render(&collected),
        _ => String::new(),
    };
    stdout.write_all(out.as_bytes())?;
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
    let mut engine = Engine::new(&lib, crate::engine::matcher::EngineKind::Prefilter);
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
