//! The contributor's commands: `sig new`, `sig lint`, `sig schema`, `sig test DIR…` and
//! `explain`. The work is done by library modules ([`crate::tools::draft`],
//! [`crate::tools::lint`], [`crate::tools::schema`], [`crate::tools::explain`]); this
//! module parses arguments, reads files and maps outcomes to exit codes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::{CliError, LibraryArgs, EXIT_FOUND, EXIT_NONE};
use crate::engine::ingest::{LineReader, Source};
use crate::knowledge::signature::load::{builtin_files, read_dir_files, LibraryFile};
use crate::knowledge::signature::{Library, LoadErrors};
use crate::knowledge::sources::{read_library_file, Kind};
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

fn stem(name: &str) -> &str {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    base.strip_suffix(".yaml")
        .or_else(|| base.strip_suffix(".yml"))
        .unwrap_or(base)
}

/// The folders' files by stem: their texts (a stem may come twice: that is E004 later).
/// A map, not a scan per embedded file: with 10,000 files that scan was most of a run.
fn stems(ours: &[LibraryFile]) -> std::collections::HashMap<&str, Vec<&str>> {
    let mut m: std::collections::HashMap<&str, Vec<&str>> = std::collections::HashMap::new();
    for f in ours {
        m.entry(stem(&f.name)).or_default().push(f.text.as_str());
    }
    m
}

/// The embedded library's files, minus those a folder file overrides (same file stem):
/// testing or linting a working copy of `signatures/` sees the edited version.
pub fn builtin_context(ours: &[LibraryFile]) -> Vec<LibraryFile> {
    builtin_minus(&stems(ours))
}

/// The embedded library's files whose stem is not in `stems`, named as every embedded
/// file is ([`Kind::builtin_file`]).
fn builtin_minus(stems: &std::collections::HashMap<&str, Vec<&str>>) -> Vec<LibraryFile> {
    builtin_files()
        .iter()
        .filter(|(n, _)| !stems.contains_key(stem(n)))
        .map(|(n, t)| Kind::Signatures.builtin_file(n, t))
        .collect()
}

fn read_dirs(dirs: &[PathBuf]) -> anyhow::Result<Vec<LibraryFile>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for d in dirs {
        if !d.is_dir() && d.exists() {
            match read_library_file(d, Kind::Signatures) {
                Ok(f) => files.push(f),
                Err(e) => errors.push(e),
            }
            continue;
        }
        let (mut f, mut e) = read_dir_files(d, Kind::Signatures);
        files.append(&mut f);
        errors.append(&mut e);
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(CliError::Unreadable(LoadErrors(errors)).into())
    }
}

/// The embedded library (minus overridden files) with the folders' files, compiled
/// (through the cache of compiled libraries in `cache`, see
/// [`crate::knowledge::cache::compile_cached`]); also the folders' file names and the ids
/// of the built-in signatures they replace.
pub fn library_with_dirs(
    dirs: &[PathBuf],
    cache: Option<&Path>,
) -> anyhow::Result<(Library, Vec<String>, Vec<String>)> {
    let ours = read_dirs(dirs)?;
    let stems = stems(&ours);
    let mut all = builtin_minus(&stems);
    // an identical copy (a checkout's `signatures/`) replaces nothing worth a note
    let replaced: Vec<String> = builtin_files()
        .iter()
        .filter(|(n, t)| {
            stems
                .get(stem(n))
                .is_some_and(|texts| texts.iter().any(|text| text != t))
        })
        .map(|(n, _)| stem(n).to_string())
        .collect();
    let names: Vec<String> = ours.iter().map(|f| f.name.clone()).collect();
    all.extend(ours);
    let mut note = |n: String| {
        eprintln!(
            "crashdoc: note: {}",
            crate::knowledge::text::escape_control(&n)
        )
    };
    let lib =
        crate::knowledge::cache::compile_cached(&all, cache, &mut note).map_err(|errors| {
            CliError::Broken {
                what: "the signature library has",
                errors,
            }
        })?;
    Ok((
        crate::knowledge::signature::docs::with_model(lib),
        names,
        replaced,
    ))
}

pub fn run_new(a: &NewArgs) -> anyhow::Result<ExitCode> {
    // inside a library, its folder too: a failure a signature drafted there explains is
    // never drafted twice
    let lib = a.library.in_checkout().load()?;
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
    if !crate::knowledge::sources::valid_id(&d.id) {
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
            builtin_context(&files)
        };
        (files, context)
    };
    let rep = lint::lint(&files, &context);
    match a.format {
        LintFormat::Json => {
            super::print(&format!("{}\n", serde_json::to_string_pretty(&rep)?))?;
        }
        LintFormat::Sarif => {
            let v = lint_sarif(&rep);
            super::print(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
        }
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

/// `sig lint --format sarif`: SARIF 2.1.0, one rule per code, one result per diagnostic.
fn lint_sarif(rep: &lint::LintReport) -> serde_json::Value {
    use crate::knowledge::signature::error::Level;
    let mut codes: Vec<&str> = rep.diagnostics.iter().map(|d| d.code.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    let rules: Vec<serde_json::Value> = codes
        .iter()
        .map(|c| serde_json::json!({ "id": c, "helpUri": "CONTRIBUTING.md" }))
        .collect();
    let results: Vec<serde_json::Value> = rep
        .diagnostics
        .iter()
        .map(|d| {
            let level = match d.level {
                Level::Error => "error",
                Level::Warning => "warning",
            };
            serde_json::json!({
                "ruleId": d.code.as_str(),
                "level": level,
                "message": { "text": d.message },
                "locations": [{ "physicalLocation": {
                    "artifactLocation": { "uri": d.file },
                    "region": { "startLine": d.line.max(1), "startColumn": d.column.max(1) },
                }}],
            })
        })
        .collect();
    serde_json::json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "crashdoc sig lint",
                "rules": rules,
            }},
            "results": results,
        }],
    })
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
