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
            for s in &lib.signatures {
                println!(
                    "{:<50} {:<32} {:<8} {}",
                    s.id,
                    s.category.as_str(),
                    s.severity.as_str(),
                    s.title
                );
            }
            println!("{} signatures", lib.signatures.len());
            ExitCode::from(EXIT_FOUND)
        }
        SigCommand::Atoms(a) => {
            let lib = match a.library.load() {
                Ok(l) => l,
                Err(c) => return c,
            };
            let m = Matcher::new(&lib, EngineKind::Prefilter);
            for a in m.prefilter().atoms() {
                println!("{a}");
            }
            ExitCode::from(EXIT_FOUND)
        }
        SigCommand::Test(a) => {
            let lib = match a.library.load() {
                Ok(l) => l,
                Err(c) => return c,
            };
            let report = test_library(&lib, a.filter.as_deref());
            for line in &report.messages {
                println!("{line}");
            }
            println!("{} passed, {} failed", report.passed, report.failed);
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
