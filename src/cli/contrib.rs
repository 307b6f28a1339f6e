//! The contributor's commands: `sig new`, `sig lint`, `sig schema`, `sig test DIR…` and
//! `explain`. The work is done by library modules ([`crate::tools::draft`],
//! [`crate::tools::lint`], [`crate::tools::schema`], [`crate::tools::explain`]); this
//! module parses arguments, reads files and maps outcomes to exit codes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::{CliError, LibraryArgs, EXIT_FOUND, EXIT_NONE};
use crate::engine::ingest::{LineReader, Source};
use crate::knowledge::reading::{read_paths, Kind};
use crate::knowledge::signature::load::{builtin_files, LibraryFile};
use crate::knowledge::signature::LoadErrors;
use crate::tools::draft::{self, DraftOptions};
use crate::tools::lint;

#[derive(Args, Debug)]
pub struct NewArgs {
    /// The log to draft from: its failing block, or its failure the library does not
    /// explain (inside a signature library, `./signatures` is read too).
    #[arg(long = "from", value_name = "LOG")]
    pub from: String,
    /// The signature id (kebab-case); suggested from the failure when absent.
    #[arg(long)]
    pub id: Option<String>,
    /// Where to write `<id>.yaml` (default: `signatures/<area>`, the area guessed).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Where the log comes from (an issue thread URL): the example's source and the reference.
    #[arg(long)]
    pub source: Option<String>,
    /// Which failure to draft from, by its number in the list `sig new` prints when the
    /// log has several the library does not explain.
    #[arg(long, value_name = "N")]
    pub failure: Option<usize>,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub library: LibraryArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LintFormat {
    #[default]
    Text,
    Json,
    /// SARIF 2.1.0 (code scanning): one result per diagnostic, located in the file.
    Sarif,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExplainFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Signature files or library folders to lint (default: `./signatures` when it
    /// exists, else the embedded library).
    #[arg(value_name = "FILE_OR_DIR")]
    pub dirs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    pub format: LintFormat,
    /// Do not check the folders against the embedded library (duplicate ids, `consequence_of` links).
    #[arg(long)]
    pub no_builtin: bool,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The signature to explain.
    #[arg(long)]
    pub signature: String,
    /// The log (plain or gzip; `-` reads standard input).
    #[arg(value_name = "LOG")]
    pub log: String,
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    pub format: ExplainFormat,
    #[command(flatten)]
    pub library: LibraryArgs,
}

/// Reads a whole log through ingest (gzip, lossy UTF-8, ANSI removed).
pub fn read_log(arg: &str) -> anyhow::Result<(String, String)> {
    let src = Source::parse(arg);
    let mut r = LineReader::open(&src)?;
    let mut text = String::new();
    while let Some(l) = r.next_line()? {
        text.push_str(&l.text);
        text.push('\n');
    }
    Ok((src.name(), text))
}

/// The files of `dirs` (folders or single files); a path that cannot be read is
/// [`CliError::Unreadable`] (exit 2).
fn read_dirs(dirs: &[PathBuf]) -> anyhow::Result<Vec<LibraryFile>> {
    let (files, errors) = read_paths(dirs, Kind::Signatures);
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(CliError::Unreadable(LoadErrors(errors)).into())
    }
}

pub fn run_new(a: &NewArgs) -> anyhow::Result<ExitCode> {
    // the library being edited: a second `sig new` on the same log sees the first draft
    let lib = a.library.load_here()?;
    let (name, text) = read_log(&a.from)?;
    let opts = DraftOptions {
        id: a.id.clone(),
        source: a.source.clone(),
    };
    let d = draft::draft_choice(&lib, &name, &text, &opts, a.failure)?;
    let dir = match &a.out {
        Some(o) => o.clone(),
        None if Path::new("signatures").is_dir() => Path::new("signatures").join(d.area),
        None => anyhow::bail!(
            "no signature library here (no ./signatures folder): run it in a crashdoc \
             checkout or your team's signature repository, or give --out DIR"
        ),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    // the id names the file: kebab-case only, so it can never leave `dir`
    if !crate::knowledge::reading::valid_id(&d.id) {
        anyhow::bail!(
            "internal: the drafted id `{}` is not kebab-case",
            crate::knowledge::text::escape_control(&d.id)
        );
    }
    let path = dir.join(format!("{}.yaml", d.id));
    if std::fs::symlink_metadata(&path).is_ok() && !a.force {
        anyhow::bail!(
            "{} exists (give --force to overwrite, or --id for another name)",
            path.display()
        );
    }
    crate::knowledge::files::write_atomic(&path, d.yaml.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    eprintln!(
        "crashdoc: drafted from: {}\n  captures: {}",
        crate::knowledge::text::escape_control(&d.headline),
        if d.generalized.captures.is_empty() {
            "(none)".to_string()
        } else {
            d.generalized
                .captures
                .iter()
                .map(|(n, _, v)| format!("{n}={}", crate::knowledge::text::escape_control(v)))
                .collect::<Vec<_>>()
                .join("  ")
        }
    );
    if let Some(n) = &d.note {
        eprintln!("crashdoc: {}", n.trim_end());
    }
    super::print(&format!("{}\n", path.display()))?;
    Ok(ExitCode::from(EXIT_FOUND))
}

pub fn run_lint(a: &LintArgs) -> anyhow::Result<ExitCode> {
    let (files, context) = if a.dirs.is_empty() && !Path::new("signatures").is_dir() {
        let files: Vec<LibraryFile> = builtin_files()
            .iter()
            .map(|(n, t)| LibraryFile {
                name: format!("<builtin>/{n}"),
                text: (*t).to_string(),
            })
            .collect();
        (files, Vec::new())
    } else {
        let dirs = if a.dirs.is_empty() {
            vec![PathBuf::from("signatures")]
        } else {
            a.dirs.clone()
        };
        let files = read_dirs(&dirs)?;
        let context = if a.no_builtin {
            Vec::new()
        } else {
            crate::knowledge::sources::builtin_context(Kind::Signatures, &files).files
        };
        (files, context)
    };
    let rep = lint::lint(&files, &context);
    match a.format {
        LintFormat::Json => {
            super::print(&format!("{}\n", serde_json::to_string_pretty(&rep)?))?;
        }
        LintFormat::Sarif => super::print(&lint_sarif(&rep)?)?,
        LintFormat::Text => {
            let mut out = String::new();
            for d in &rep.diagnostics {
                out.push_str(&format!("{d}\n\n"));
            }
            out.push_str(&format!(
                "{} error(s), {} warning(s) in {} file(s)\n",
                rep.errors, rep.warnings, rep.files
            ));
            super::print(&out)?;
        }
    }
    Ok(ExitCode::from(if rep.errors == 0 {
        EXIT_FOUND
    } else {
        EXIT_NONE
    }))
}

/// `sig lint --format sarif`: SARIF 2.1.0 in the diagnosis's model
/// ([`crate::report::sarif::file_problems`]), one rule per code, one result per
/// diagnostic.
fn lint_sarif(rep: &lint::LintReport) -> anyhow::Result<String> {
    use crate::knowledge::signature::error::Level;
    use crate::report::sarif::{file_problems, FileProblem};
    let problems: Vec<FileProblem<'_>> = rep
        .diagnostics
        .iter()
        .map(|d| FileProblem {
            rule: d.code.as_str(),
            level: match d.level {
                Level::Error => "error",
                Level::Warning => "warning",
            },
            message: &d.message,
            file: &d.file,
            line: d.line,
            column: d.column,
        })
        .collect();
    Ok(file_problems(
        "crashdoc sig lint",
        "CONTRIBUTING.md",
        &problems,
    )?)
}

pub fn run_schema() -> anyhow::Result<ExitCode> {
    super::print(&crate::tools::schema::schema_json())?;
    Ok(ExitCode::from(EXIT_FOUND))
}

pub fn run_explain(a: &ExplainArgs) -> anyhow::Result<ExitCode> {
    let lib = a.library.load()?;
    let (name, text) = read_log(&a.log)?;
    let e = crate::tools::explain::explain(&lib, &a.signature, &name, &text)?;
    match a.format {
        ExplainFormat::Json => super::print(&format!("{}\n", serde_json::to_string_pretty(&e)?))?,
        ExplainFormat::Text => super::print(&crate::tools::explain::render(&e))?,
    }
    Ok(ExitCode::from(if e.matched {
        EXIT_FOUND
    } else {
        EXIT_NONE
    }))
}
