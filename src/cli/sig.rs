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
        SigCommand::Test(a) => {
            let lib = match a.library.load() {
                Ok(l) => l,
                Err(c) => return c,
            };
            let report = test_library(&lib, a.filter.as_deref());
            let mut text = String::new();
            for line in &report.messages {
                text.push_str(line);
                text.push('\n');
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
    pub messages: Vec<String>,
}

/// Runs every example of every signature through the pipeline (prefilter included).
pub fn test_library(lib: &crate::signature::Library, filter: Option<&str>) -> TestReport {
    let mut engine = Engine::new(lib, EngineKind::Prefilter);
    let mut rep = TestReport::default();
    let opts = BuildOptions { top: usize::MAX };
    for s in &lib.signatures {
        if filter.is_some_and(|f| !s.id.contains(f)) {
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
                    rep.messages.push(format!(
                        "note {}: example match #{} is won by {} (overlap)",
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
