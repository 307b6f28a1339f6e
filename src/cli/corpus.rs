//! `crashdoc corpus run` and `crashdoc corpus add`.
//!
//! `run` replays every incident of a corpus folder (in parallel), prints the score table
//! in the chosen format on stdout and, with `--baseline`, the comparison on stderr; it
//! exits 1 on any regression so CI fails and names each. `add` files a new incident
//! with the current diagnosis as the proposed expectation.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{print, EngineArgs, LibraryArgs, EXIT_FOUND, EXIT_NONE};
use crate::corpus::{self, add, baseline, invariance, render, run::run_corpus};
use crate::engine::diagnosis::BuildOptions;
use crate::engine::ingest::{LineReader, Source};
use crate::engine::matcher::Compiled;
use crate::engine::pipeline::Engine;
use crate::knowledge::signature::Category;

#[derive(Subcommand, Debug)]
pub enum CorpusCommand {
    /// Replay every incident, print the score table, gate regressions with --baseline.
    Run(RunArgs),
    /// File a new incident from a log (the expectation proposed from the diagnosis).
    Add(AddArgs),
    /// Group the failures nothing in the library explains, over an archive of logs, by
    /// shape; rank them by how many logs they occur in, each with a `sig new` draft.
    Cluster(super::corpus_cluster::ClusterArgs),
    /// Regenerate every file derived from the library and the corpus (baselines, the
    /// examples' metamorphic record, docs/signatures.md, the schemas, the README's
    /// tables and sample) in a crashdoc checkout; `--check` only lists the stale ones.
    Bless(super::bless::BlessArgs),
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CorpusFormat {
    #[default]
    Text,
    /// The full result (the baseline format).
    Json,
    /// JUnit XML: one test case per incident.
    Junit,
    Markdown,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The corpus folder: one sub-folder per incident with log.txt and expected.yaml.
    #[arg(value_name = "DIR", default_value = "corpus")]
    pub dir: PathBuf,
    #[arg(long, short, value_enum, default_value_t = CorpusFormat::Text)]
    pub format: CorpusFormat,
    /// A saved result (JSON) to compare with; exits 1 if an incident right there is wrong now.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write this run's result to the --baseline file (never fails on regressions).
    #[arg(long, requires = "baseline")]
    pub update: bool,
    /// Presentation invariance instead of accuracy: every transformation (quoting,
    /// wrapping, prefixes, truncation, CRLF, interleaving, burying in noise) applied to
    /// every log must keep the plain log's top cause and key line; with --baseline, a
    /// pair that held there and fails now is a regression.
    #[arg(long)]
    pub metamorphic: bool,
    /// Generalization instead of accuracy: each incident is diagnosed without the
    /// signature that explains it (and every signature sharing one of its example
    /// texts); prints top-1 category, no cause and confident wrong, per category.
    #[arg(long, conflicts_with_all = ["metamorphic", "baseline"])]
    pub knockout: bool,
    #[command(flatten)]
    pub library: LibraryArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Args, Debug, Clone)]
pub struct AddArgs {
    /// The log to file (copied byte for byte).
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    /// Where the log comes from (the issue thread's address).
    #[arg(long)]
    pub source: String,
    /// The category, when you know it (default: the top cause's; required when no cause
    /// matched — `none` for a healthy log, `other` for a code bug).
    #[arg(long)]
    pub category: Option<String>,
    /// The incident's folder name (default: <category>-<log file stem>).
    #[arg(long)]
    pub name: Option<String>,
    /// How the log was read from its source, recorded in expected.yaml: `read_file` or
    /// `search` (the search tool's look-up verbs: a public thread's text is copied through
    /// them, never from a fetched snapshot), or `own` (a log of your own).
    #[arg(long, value_enum)]
    pub via: ViaArg,
    /// The corpus folder.
    #[arg(long, value_name = "DIR", default_value = "corpus")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub library: LibraryArgs,
}

/// `--via`: how the log was read from its source.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViaArg {
    /// The search tool's `read_file`: a repository's committed file.
    #[value(name = "read_file")]
    ReadFile,
    /// The search tool's `search` or `find_string`: an excerpt of a public page or file.
    Search,
    /// A log of your own (your CI archive, your machine).
    Own,
}

impl From<ViaArg> for add::Via {
    fn from(v: ViaArg) -> Self {
        match v {
            ViaArg::ReadFile => add::Via::ReadFile,
            ViaArg::Search => add::Via::Search,
            ViaArg::Own => add::Via::Own,
        }
    }
}

pub fn run(c: CorpusCommand) -> anyhow::Result<ExitCode> {
    match c {
        CorpusCommand::Run(a) => run_run(&a),
        CorpusCommand::Add(a) => run_add(&a),
        CorpusCommand::Cluster(a) => super::corpus_cluster::run(&a),
        CorpusCommand::Bless(a) => super::bless::run(&a),
    }
}

/// A run shorter than this shows no bar at all (no flash on a 0.05 s run).
const PROGRESS_DELAY: std::time::Duration = std::time::Duration::from_secs(2);

/// A bar on stderr, drawn only on a terminal and only once the run has lasted
/// [`PROGRESS_DELAY`].
fn progress(n: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} {elapsed}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix("replaying incidents");
    let later = pb.clone();
    std::thread::spawn(move || {
        std::thread::sleep(PROGRESS_DELAY);
        if !later.is_finished() {
            later.set_draw_target(ProgressDrawTarget::stderr());
        }
    });
    pb
}

fn run_run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    if a.metamorphic {
        return run_metamorphic(a);
    }
    if a.knockout {
        return run_knockout(a);
    }
    let incidents = corpus::load_dir(&a.dir)?;
    if incidents.is_empty() {
        anyhow::bail!(
            "{}: no incidents (sub-folders with expected.yaml and log.txt)",
            a.dir.display()
        );
    }
    // read the baseline before the run, so a bad file fails fast
    let saved = match (&a.baseline, a.update) {
        (Some(p), false) => Some(baseline::read(p)?),
        // --update rewrites it: an unreadable old one is said, not compared
        (Some(p), true) if p.exists() => match baseline::read(p) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("crashdoc: {e} (it is rewritten)");
                None
            }
        },
        _ => None,
    };
    let lib = a.library.load()?;
    let pb = progress(incidents.len());
    let compiled = Compiled::new(&lib)?;
    let run = run_corpus(&compiled, a.engine.kind(), &incidents, &pb);
    let heading = format!(
        "crashdoc corpus run: {} incidents from {} in {:.2} s ({} threads)",
        incidents.len(),
        a.dir.display(),
        run.total.as_secs_f64(),
        rayon::current_num_threads()
    );
    let out = match a.format {
        CorpusFormat::Text => render::text(&run.report, &heading),
        CorpusFormat::Json => baseline::to_json(&run.report)?,
        CorpusFormat::Junit => crate::corpus::junit::render(&run, "crashdoc corpus"),
        CorpusFormat::Markdown => render::markdown(&run.report),
    };
    print(&out)?;
    let mut code = EXIT_FOUND;
    if let Some(p) = &a.baseline {
        let name = p.display().to_string();
        if let Some(b) = &saved {
            let cmp = baseline::compare(b, &run.report);
            eprint!("{}", render::comparison(&cmp, &name));
            if !cmp.passed() && !a.update {
                eprintln!(
                    "crashdoc: {} incident(s) regressed against {name}: {}",
                    cmp.regressions.len(),
                    cmp.regressions
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                code = EXIT_NONE;
            }
        }
        if a.update {
            baseline::write(p, &run.report)?;
            eprintln!("crashdoc: wrote {name}");
        }
    }
    Ok(ExitCode::from(code))
}

/// `corpus run --knockout`.
fn run_knockout(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let incidents = corpus::load_dir(&a.dir)?;
    if incidents.is_empty() {
        anyhow::bail!(
            "{}: no incidents (sub-folders with expected.yaml and log.txt)",
            a.dir.display()
        );
    }
    let lib = a.library.load()?;
    let start = std::time::Instant::now();
    let ks = crate::corpus::knockout::run(&lib, a.engine.kind(), &incidents, &a.dir);
    eprintln!(
        "crashdoc corpus run --knockout: {} incidents from {} in {:.2} s",
        ks.len(),
        a.dir.display(),
        start.elapsed().as_secs_f64()
    );
    print(&crate::corpus::knockout::render(&ks))?;
    Ok(ExitCode::from(EXIT_FOUND))
}

/// `corpus run --metamorphic`.
fn run_metamorphic(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let incidents = corpus::load_dir(&a.dir)?;
    if incidents.is_empty() {
        anyhow::bail!(
            "{}: no incidents (sub-folders with expected.yaml and log.txt)",
            a.dir.display()
        );
    }
    let saved = match (&a.baseline, a.update) {
        (Some(p), false) => Some(invariance::read(p).map_err(anyhow::Error::msg)?),
        _ => None,
    };
    let lib = a.library.load()?;
    let start = std::time::Instant::now();
    let compiled = Compiled::new(&lib)?;
    let v = invariance::run_corpus(&compiled, &incidents);
    let (held, total) = v.totals();
    let heading = format!(
        "crashdoc corpus run --metamorphic: {} incidents × {} transformations from {}: {held}/{total} pairs held in {:.2} s",
        incidents.len(),
        v.rows.len(),
        a.dir.display(),
        start.elapsed().as_secs_f64()
    );
    print(&match a.format {
        CorpusFormat::Json => invariance::to_json(&v),
        CorpusFormat::Markdown => render::invariance_markdown(&v),
        CorpusFormat::Text | CorpusFormat::Junit => render::invariance_text(&v, &heading),
    })?;
    metamorphic_gate(a, saved.as_ref(), &v)
}

/// The metamorphic gate: a pair that held in the baseline and fails now is a regression.
fn metamorphic_gate(
    a: &RunArgs,
    saved: Option<&invariance::Invariance>,
    v: &invariance::Invariance,
) -> anyhow::Result<ExitCode> {
    let Some(p) = &a.baseline else {
        return Ok(ExitCode::from(EXIT_FOUND));
    };
    let name = p.display().to_string();
    if a.update {
        crate::knowledge::files::write_atomic(p, invariance::to_json(v).as_bytes())
            .map_err(|e| anyhow::anyhow!("{name}: cannot write the baseline: {e}"))?;
        eprintln!("crashdoc: wrote {name}");
        return Ok(ExitCode::from(EXIT_FOUND));
    }
    let regressions = saved
        .map(|b| invariance::regressions(b, v))
        .unwrap_or_default();
    for (t, f) in &regressions {
        eprintln!(
            "REGRESSION {t} on {}: held in {name}, fails now: {}",
            f.log, f.reason
        );
    }
    eprintln!(
        "metamorphic baseline {name}: {} regression(s)",
        regressions.len()
    );
    Ok(ExitCode::from(if regressions.is_empty() {
        EXIT_FOUND
    } else {
        EXIT_NONE
    }))
}

fn valid_category(c: &str) -> bool {
    c == "none" || Category::ALL.iter().any(|k| k.as_str() == c)
}

fn run_add(a: &AddArgs) -> anyhow::Result<ExitCode> {
    if let Some(c) = &a.category {
        if !valid_category(c) {
            let all: Vec<&str> = Category::ALL.iter().map(|k| k.as_str()).collect();
            anyhow::bail!(
                "unknown category {c:?}; use none or one of: {}",
                all.join(", ")
            );
        }
    }
    // the library being edited: a signature just drafted in `./signatures` counts
    let lib = a.library.load_here()?;
    let compiled = Compiled::new(&lib)?;
    let mut engine = Engine::new(&compiled, crate::engine::matcher::EngineKind::Prefilter);
    let mut r = LineReader::open(&Source::Path(a.log.clone()))?;
    let d = engine.diagnose(&mut r, BuildOptions { top: 3 })?;
    let n = add::NewIncident {
        corpus: Path::new(&a.dir),
        log: &a.log,
        source: &a.source,
        category: a.category.as_deref(),
        name: a.name.as_deref(),
        via: a.via.into(),
    };
    let dir = add::add(&n, &d).map_err(|e| match e {
        add::AddError::NeedsCategory if super::local_signatures().is_none() => {
            anyhow::anyhow!(
                "{e}\n  (no ./signatures folder here: if a signature of yours explains this log, \
                 run this in its repository or give --signatures DIR)"
            )
        }
        e => e.into(),
    })?;
    print(&format!(
        "filed {}: review {} against {} before committing\n",
        dir.display(),
        dir.join("expected.yaml").display(),
        a.source
    ))?;
    Ok(ExitCode::from(EXIT_FOUND))
}
