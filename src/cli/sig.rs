//! `crashdoc sig …`: the library's tools.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::{LibraryArgs, EXIT_FOUND, EXIT_NONE};
use crate::matcher::{EngineKind, Matcher};
use crate::pipeline::Engine;
use crate::report::BuildOptions;
use crate::signature::Severity;

#[derive(Subcommand, Debug)]
pub enum SigCommand {
    /// List the loaded signatures.
    List(ListArgs),
    /// Print the prefilter's atoms, one per line (for `rg -F -f` / `grep -F -f`).
    Atoms(ListArgs),
    /// Run each signature's examples through the real pipeline, prefilter included.
    Test(TestArgs),
    /// Draft a signature from the first failure of a log that the library does not explain.
    New(super::contrib::NewArgs),
    /// Check signature files: every loader error plus advice (weak atoms, unused captures…).
    Lint(super::contrib::LintArgs),
    /// Print the JSON Schema of the signature format (committed as signatures/schema.json).
    Schema,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub library: LibraryArgs,
    /// `text` (one line each) or `markdown` (by category, as in the README).
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    Text,
    Markdown,
}

/// The library by category, as Markdown (the README's list is this output).
pub fn library_markdown(lib: &crate::signature::Library) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let benign = lib
        .signatures
        .iter()
        .filter(|s| s.severity == Severity::Benign)
        .count();
    let _ = writeln!(
        out,
        "{} signatures ({} benign).\n",
        lib.signatures.len(),
        benign
    );
    for cat in crate::signature::Category::ALL {
        let mut sigs: Vec<_> = lib
            .signatures
            .iter()
            .filter(|s| s.category == cat && s.severity != Severity::Benign)
            .collect();
        if sigs.is_empty() {
            continue;
        }
        sigs.sort_by(|a, b| a.id.cmp(&b.id));
        let _ = writeln!(
            out,
            "- **{}** ({}): {}",
            cat.as_str(),
            sigs.len(),
            sigs.iter()
                .map(|s| format!("`{}`", s.id))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut b: Vec<_> = lib
        .signatures
        .iter()
        .filter(|s| s.severity == Severity::Benign)
        .collect();
    b.sort_by(|x, y| x.id.cmp(&y.id));
    if !b.is_empty() {
        let _ = writeln!(
            out,
            "- **benign noise** ({}): {}",
            b.len(),
            b.iter()
                .map(|s| format!("`{}`", s.id))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out
}

#[derive(Args, Debug)]
pub struct TestArgs {
    /// Library folders whose signatures are tested, loaded over the embedded library
    /// (a folder file replaces the embedded file of the same name).
    #[arg(value_name = "DIR")]
    pub dirs: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub library: LibraryArgs,
    /// Only test signatures whose id contains this.
    #[arg(long)]
    pub filter: Option<String>,
}

pub fn run(c: SigCommand) -> ExitCode {
    match c {
        SigCommand::List(a) => {
            let lib = match a.library.load() {
                Ok(l) => l,
                Err(c) => return c,
            };
            let mut text = String::new();
            if a.format == ListFormat::Markdown {
                text = library_markdown(&lib);
            } else {
                for s in &lib.signatures {
                    text.push_str(&format!(
                        "{:<50} {:<32} {:<8} {}\n",
                        s.id,
                        s.category.as_str(),
                        s.severity.as_str(),
                        s.title
                    ));
                }
                text.push_str(&format!("{} signatures\n", lib.signatures.len()));
            }
            super::print(&text);
            ExitCode::from(EXIT_FOUND)
        }
        SigCommand::Atoms(a) => {
            let lib = match a.library.load() {
                Ok(l) => l,
                Err(c) => return c,
            };
            let m = Matcher::new(&lib, EngineKind::Prefilter);
            let mut text = String::new();
            for a in m.prefilter().atoms() {
                text.push_str(a);
                text.push('\n');
            }
            super::print(&text);
            ExitCode::from(EXIT_FOUND)
        }
        SigCommand::New(a) => super::contrib::run_new(&a),
        SigCommand::Lint(a) => super::contrib::run_lint(&a),
        SigCommand::Schema => super::contrib::run_schema(),
        SigCommand::Test(a) => {
            let (lib, files) = if a.dirs.is_empty() {
                match a.library.load() {
                    Ok(l) => (l, None),
                    Err(c) => return c,
                }
            } else {
                match super::contrib::library_with_dirs(&a.dirs) {
                    Ok((l, f)) => (l, Some(f)),
                    Err(c) => return c,
                }
            };
            let filter = a.filter.as_deref();
            let report = test_library_where(&lib, |s| {
                filter.is_none_or(|f| s.id.contains(f))
                    && files.as_ref().is_none_or(|fs| fs.contains(&s.file))
            });
            let mut text = String::new();
            for line in &report.messages {
                text.push_str(line);
                text.push('\n');
            }
            if report.overlaps > 0 {
                text.push_str(&format!(
                    "{} overlap(s): a positive example won by another signature\n",
                    report.overlaps
                ));
            }
            text.push_str(&format!(
                "{} passed, {} failed\n",
                report.passed, report.failed
            ));
            super::print(&text);
            ExitCode::from(if report.failed == 0 {
                EXIT_FOUND
            } else {
                EXIT_NONE
            })
        }
    }
}

/// The outcome of `sig test`.
#[derive(Debug, Default)]
pub struct TestReport {
    pub passed: usize,
    pub failed: usize,
    /// Positive examples whose top cause is another signature.
    pub overlaps: usize,
    pub messages: Vec<String>,
}

/// Runs every example of every signature through the pipeline (prefilter included).
pub fn test_library(lib: &crate::signature::Library, filter: Option<&str>) -> TestReport {
    test_library_where(lib, |s| filter.is_none_or(|f| s.id.contains(f)))
}

/// Runs the examples of the signatures `select` picks (the whole library is loaded, so
/// overlaps with any signature are seen).
pub fn test_library_where(
    lib: &crate::signature::Library,
    select: impl Fn(&crate::signature::Signature) -> bool,
) -> TestReport {
    let mut engine = Engine::new(lib, EngineKind::Prefilter);
    let mut rep = TestReport::default();
    let opts = BuildOptions { top: usize::MAX };
    for s in &lib.signatures {
        if !select(s) {
            continue;
        }
        for (i, ex) in s.examples.matches.iter().enumerate() {
            let d = engine.diagnose_text(&format!("{}#match{}", s.id, i + 1), &ex.log, opts);
            let in_causes = d.causes.iter().position(|c| c.signature == s.id);
            let in_noise = d.noise.iter().any(|n| n.signature == s.id);
            let folded = d.causes.iter().any(|c| {
                c.consequences
                    .iter()
                    .any(|q| q.signature.as_deref() == Some(s.id.as_str()))
            });
            let ok = if s.severity == Severity::Benign {
                in_noise
            } else if ex.top {
                in_causes == Some(0)
            } else {
                in_causes.is_some() || folded
            };
            if ok {
                rep.passed += 1;
            } else {
                rep.failed += 1;
                let got: Vec<&str> = d.causes.iter().map(|c| c.signature.as_str()).collect();
                rep.messages.push(format!(
                    "FAIL {} ({}): example match #{} does not produce it (got causes: [{}]; first failure: {})",
                    s.id,
                    s.file,
                    i + 1,
                    got.join(", "),
                    d.failures.first().map_or("none".to_string(), |f| f.headline.clone())
                ));
            }
            if let Some(p) = in_causes {
                if p > 0 && !ex.top {
                    rep.overlaps += 1;
                    rep.messages.push(format!(
                        "overlap {}: example match #{} is won by {}",
                        s.id,
                        i + 1,
                        d.causes[0].signature
                    ));
                }
            }
        }
        for (i, ex) in s.examples.no_match.iter().enumerate() {
            let d = engine.diagnose_text(&format!("{}#no_match{}", s.id, i + 1), &ex.log, opts);
            let hit = d.causes.iter().any(|c| c.signature == s.id)
                || d.noise.iter().any(|n| n.signature == s.id)
                || d.causes.iter().any(|c| {
                    c.consequences
                        .iter()
                        .any(|q| q.signature.as_deref() == Some(s.id.as_str()))
                });
            if hit {
                rep.failed += 1;
                rep.messages.push(format!(
                    "FAIL {} ({}): near-miss #{} matches",
                    s.id,
                    s.file,
                    i + 1
                ));
            } else {
                rep.passed += 1;
            }
        }
    }
    rep
}
