//! `crashdoc corpus cluster PATH…`: the arguments, the inputs (files, folders, tar
//! archives), the progress bar, and the `sig new` draft of each shown cluster (drafting
//! is the tools layer's, clustering the corpus layer's: they meet here).
//!
//! Exit codes: 0 when at least one shape occurs in `--min-count` logs, 1 when none
//! does, 2 when an input could not be read (the others are still clustered and shown).

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{print, LibraryArgs, EXIT_FOUND, EXIT_INPUT, EXIT_NONE};
use crate::corpus::cluster::{self, Cluster, DraftView, Options, Shown};
use crate::engine::matcher::Compiled;
use crate::knowledge::signature::Library;
use crate::tools::draft::{self, Seed};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClusterFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Logs (plain or gzip), folders of them (`*.log`, `*.txt`, `*.gz`, recursively) and
    /// tar archives of them (`.tar`, `.tar.gz`, `.tgz`).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    #[arg(long, short, value_enum, default_value_t = ClusterFormat::Text)]
    pub format: ClusterFormat,
    /// Show only the shapes that occur in at least this many logs.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub min_count: usize,
    /// Show at most this many clusters (0: all of at least --min-count).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Members kept per cluster: the draft's examples (the first logs in input order).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..))]
    pub examples: u16,
    /// Cluster every unexplained error line, also those that only mention an error.
    #[arg(long)]
    pub every_line: bool,
    /// Cluster warnings too.
    #[arg(long)]
    pub warnings: bool,
    #[command(flatten)]
    pub library: LibraryArgs,
}

/// The file name endings read from a folder.
const FOLDER_EXTENSIONS: [&str; 3] = ["log", "txt", "gz"];

fn wanted(p: &Path) -> bool {
    cluster::is_archive(p)
        || p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| FOLDER_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// Files named, and the files of folders named (in name order); the names that cannot
/// be used, each as a message.
fn expand(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let shown = |p: &Path| crate::knowledge::text::escape_control(&p.display().to_string());
    let (mut files, mut errors) = (Vec::new(), Vec::new());
    for p in paths {
        if p.is_dir() {
            let w = crate::knowledge::files::walk(p, &wanted);
            errors.extend(w.errors.iter().map(|(q, e)| format!("{}: {e}", shown(q))));
            if w.files.is_empty() {
                errors.push(format!(
                    "{}: is a folder with no log file or archive in it",
                    shown(p)
                ));
            }
            files.extend(w.files);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            errors.push(format!("{}: no such file or folder", shown(p)));
        }
    }
    (files, errors)
}

/// A bar on stderr counting logs, drawn only on a terminal.
fn progress() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} logs {elapsed}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix("clustering");
    pb
}

/// A cluster's draft: every member as an example, its source the log and line.
fn draft_of(lib: &Library, c: &Cluster, taken: &mut BTreeSet<String>) -> Result<DraftView, String> {
    let first = c.members.first().ok_or("no member kept")?;
    let seed = Seed {
        exception: c.key.exception.clone(),
        message: first.message.clone(),
        kind: c.key.kind,
        chained: c.chained,
        examples: c
            .members
            .iter()
            .map(|m| (format!("{}:{}", m.log, m.line), m.text.clone()))
            .collect(),
    };
    let d = draft::draft_seed(lib, &seed, None, taken).map_err(|e| e.to_string())?;
    let (covers, examples) = draft::coverage(&d).map_err(|e| e.to_string())?;
    taken.insert(d.id.clone());
    Ok(DraftView {
        id: d.id,
        covers,
        examples,
        yaml: d.yaml,
    })
}

pub fn run(a: &ClusterArgs) -> anyhow::Result<ExitCode> {
    let (files, mut errors) = expand(&a.paths);
    let lib = a.library.load()?;
    let compiled = Compiled::new(&lib)?;
    let opts = Options {
        examples: usize::from(a.examples),
        every_line: a.every_line,
        warnings: a.warnings,
    };
    let start = std::time::Instant::now();
    let pb = progress();
    let c = cluster::cluster(&compiled, &files, &opts, &pb);
    let elapsed = start.elapsed();
    let top = if a.top == 0 { usize::MAX } else { a.top };
    let mut taken = BTreeSet::new();
    let shown: Vec<Shown<'_>> = c
        .clusters
        .iter()
        .filter(|k| k.logs >= a.min_count)
        .take(top)
        .enumerate()
        .map(|(i, k)| Shown::new(i + 1, k, draft_of(&lib, k, &mut taken)))
        .collect();
    let out = match a.format {
        ClusterFormat::Json => cluster::to_json(&c, a.min_count, &shown)?,
        ClusterFormat::Text => {
            let heading = format!(
                "crashdoc corpus cluster: {} logs in {:.1} s ({} threads): {} failures, {} unexplained, {} clustered into {} shapes; {} in at least {} logs{}",
                c.logs,
                elapsed.as_secs_f64(),
                rayon::current_num_threads(),
                c.failures,
                c.unexplained,
                c.clustered,
                c.shapes,
                cluster::recurring(&c, a.min_count),
                a.min_count,
                if shown.len() < cluster::recurring(&c, a.min_count) {
                    format!(" (the top {} shown)", shown.len())
                } else {
                    String::new()
                }
            );
            cluster::text(&c, &heading, &shown)
        }
    };
    print(&out)?;
    errors.extend(c.errors.iter().cloned());
    for e in &errors {
        eprintln!("crashdoc: {e}");
    }
    Ok(ExitCode::from(if !errors.is_empty() {
        EXIT_INPUT
    } else if shown.is_empty() {
        EXIT_NONE
    } else {
        EXIT_FOUND
    }))
}
