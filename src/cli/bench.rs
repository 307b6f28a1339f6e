//! `crashdoc bench …`: generators for the benchmarks (see benches/README.md).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::EXIT_FOUND;
use crate::tools::bench::{write_profile_log, LogProfile};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Write a deterministic, realistic multi-process vLLM journal of about SIZE bytes
    /// (`--profile serving`, `warnings` or `failures`).
    GenLog(GenLogArgs),
    /// Write COUNT synthetic signatures (built like real ones) into DIR/synthetic/.
    GenLib(GenLibArgs),
}

#[derive(Args, Debug)]
pub struct GenLogArgs {
    /// Size, with an optional K/M/G suffix (powers of 1024): 10M, 1G.
    #[arg(long)]
    pub size: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Which mix of lines: `serving` (~3 % warnings) or `warnings` (a healthy server
    /// whose log is a quarter WARNING lines).
    #[arg(long, value_enum, default_value_t = LogProfile::Serving)]
    pub profile: LogProfile,
    /// Output file (standard output when absent).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct GenLibArgs {
    #[arg(long)]
    pub count: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, short)]
    pub out: PathBuf,
}

fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

pub fn run(c: BenchCommand) -> anyhow::Result<ExitCode> {
    match c {
        BenchCommand::GenLog(a) => {
            let Some(size) = parse_size(&a.size) else {
                anyhow::bail!(
                    "--size {}: expected a number with an optional K, M or G suffix",
                    a.size
                );
            };
            let res = match &a.out {
                Some(p) => std::fs::File::create(p)
                    .and_then(|mut f| write_profile_log(&mut f, size, a.seed, a.profile)),
                None => write_profile_log(&mut std::io::stdout().lock(), size, a.seed, a.profile),
            };
            match res {
                Ok(_) => Ok(ExitCode::from(EXIT_FOUND)),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(e.into()),
                Err(e) => anyhow::bail!("cannot write the log: {e}"),
            }
        }
        BenchCommand::GenLib(a) => {
            crate::tools::bench::write_library(&a.out, a.count, a.seed)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", a.out.display()))?;
            Ok(ExitCode::from(EXIT_FOUND))
        }
    }
}
