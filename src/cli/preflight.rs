//! `crashdoc preflight` (check an environment against the rules before anything runs)
//! and `crashdoc rules …` (the rules' own tools).
//!
//! Exit codes of preflight, for `ExecStartPre=` and CI: 0 no problem (warnings are
//! printed but pass), 1 a fatal or error rule is broken, 2 usage or input error (an
//! unreadable `--env` file, no Python to ask), 3 the rules do not load.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use super::{CliError, EXIT_FOUND, EXIT_NONE};
use crate::engine::findings;
use crate::env::{read_env_file, Facts};
use crate::knowledge::rules::{self, Rules, RulesSource};
use crate::knowledge::text::escape_control;
use crate::report::wire;
use crate::tools::examples;

/// Which rules to load.
#[derive(Args, Debug, Clone, Default)]
pub struct RulesArgs {
    /// Add a rules folder (repeatable).
    #[arg(long = "rules", value_name = "DIR")]
    pub rules: Vec<PathBuf>,
    /// Do not load the embedded rules.
    #[arg(long)]
    pub no_builtin_rules: bool,
}

impl RulesArgs {
    pub fn load(&self) -> anyhow::Result<Rules> {
        let mut v = Vec::new();
        if !self.no_builtin_rules {
            v.push(RulesSource::Builtin);
        }
        v.extend(self.rules.iter().cloned().map(RulesSource::Dir));
        rules::load(&v).map_err(|errors| {
            CliError::Broken {
                what: "the rules have",
                errors,
            }
            .into()
        })
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreflightFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct PreflightArgs {
    /// Environment reports to check (pip list/freeze/show, collect_env, nvidia-smi;
    /// repeatable). Without it, the facts are collected on this machine.
    #[arg(long = "env", value_name = "FILE")]
    pub env: Vec<PathBuf>,
    /// The Python whose packages are checked (a venv's `bin/python`). It runs isolated
    /// (`-I`) in `/`: nothing in the current directory is imported.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: String,
    /// Seconds each collection command may take (its whole process group is killed then).
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Warnings fail too.
    #[arg(long)]
    pub strict: bool,
    #[arg(long, short, value_enum, default_value_t = PreflightFormat::Text)]
    pub format: PreflightFormat,
    #[command(flatten)]
    pub rules: RulesArgs,
}

/// Reads every `--env` file into one set of facts (later files win).
pub fn read_envs(paths: &[PathBuf]) -> anyhow::Result<Facts> {
    let mut facts = Facts::default();
    for p in paths {
        facts.merge(read_env_file(p)?);
    }
    Ok(facts)
}

pub fn run_preflight(a: &PreflightArgs) -> anyhow::Result<ExitCode> {
    let rules = a.rules.load()?;
    let mut notes = Vec::new();
    let facts = if a.env.is_empty() {
        match crate::env::collect::collect(
            &a.python,
            &rules.package_names(),
            Duration::from_secs(a.timeout.max(1)),
        ) {
            Ok(c) => {
                notes = c.notes;
                c.facts
            }
            Err(e) => anyhow::bail!(
                "cannot collect the environment: {}\ncrashdoc: give a report instead: crashdoc preflight --env pip-list.txt",
                escape_control(&e.to_string())
            ),
        }
    } else {
        read_envs(&a.env)?
    };
    let findings = findings::check(&rules, &facts);
    let failing = findings.iter().filter(|f| f.fails() || a.strict).count();
    match a.format {
        PreflightFormat::Json => {
            let findings: Vec<wire::Finding> = findings.iter().map(wire::Finding::from).collect();
            let v = serde_json::json!({
                "version": wire::VERSION,
                "ok": failing == 0,
                "findings": findings,
                "notes": notes,
                "environment": wire::Environment::from(&facts),
            });
            super::print(&(serde_json::to_string_pretty(&v)? + "\n"))?;
        }
        PreflightFormat::Text => {
            let mut out = String::new();
            let _ = writeln!(
                out,
                "crashdoc preflight: {} packages, {} GPU(s), {} rules checked",
                facts.packages.len(),
                facts.gpus.len(),
                rules.rules.len()
            );
            for r in &facts.reports {
                let _ = writeln!(out, "  read {}", escape_control(r));
            }
            for n in &notes {
                let _ = writeln!(out, "  note: {}", escape_control(n));
            }
            out.push('\n');
            if findings.is_empty() {
                let _ = writeln!(out, "OK: no known incompatibility.");
            } else {
                out.push_str(&crate::report::text::findings(&findings));
                let _ = writeln!(
                    out,
                    "\n{} problem(s) found; {} fail the check.",
                    findings.len(),
                    failing
                );
            }
            super::print(&out)?;
        }
    }
    Ok(ExitCode::from(if failing == 0 {
        EXIT_FOUND
    } else {
        EXIT_NONE
    }))
}

#[derive(Subcommand, Debug)]
pub enum RulesCommand {
    /// List the loaded rules (loading lints them: errors are located, exit 3).
    List(RulesListArgs),
    /// Run each rule's examples (reports it must fail and pass).
    Test(RulesTestArgs),
}

#[derive(Args, Debug)]
pub struct RulesListArgs {
    #[command(flatten)]
    pub rules: RulesArgs,
    /// `text`, or `json` (one object per rule: id, category, severity, title).
    #[arg(long, value_enum, default_value_t = RulesListFormat::Text)]
    pub format: RulesListFormat,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesListFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct RulesTestArgs {
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Only test rules whose id contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// `text`, or `json` (passed, failed, overlaps, messages).
    #[arg(long, value_enum, default_value_t = super::sig::TestFormat::Text)]
    pub format: super::sig::TestFormat,
}

pub fn run_rules(c: RulesCommand) -> anyhow::Result<ExitCode> {
    match c {
        RulesCommand::List(a) => {
            let rules = a.rules.load()?;
            if a.format == RulesListFormat::Json {
                let v: Vec<serde_json::Value> = rules
                    .rules
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "id": r.id, "category": r.category.as_str(),
                            "severity": r.severity.as_str(), "title": r.title,
                        })
                    })
                    .collect();
                super::print(&(serde_json::to_string_pretty(&v)? + "\n"))?;
                return Ok(ExitCode::from(EXIT_FOUND));
            }
            let mut out = String::new();
            for r in &rules.rules {
                let _ = writeln!(
                    out,
                    "{:<44} {:<32} {:<8} {}",
                    r.id,
                    r.category.as_str(),
                    r.severity.as_str(),
                    r.title
                );
            }
            let _ = writeln!(out, "{} rules", rules.rules.len());
            super::print(&out)?;
            Ok(ExitCode::from(EXIT_FOUND))
        }
        RulesCommand::Test(a) => {
            let rules = a.rules.load()?;
            let rep = examples::test_rules(&rules, a.filter.as_deref());
            super::sig::print_test_report(&rep, a.format)
        }
    }
}
