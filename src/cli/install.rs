//! `crashdoc completions SHELL` and `crashdoc man`: what a package or a person installs
//! beside the binary. Both are generated from the one clap definition ([`super::Cli`]),
//! so they list exactly the commands and options this binary has.
//!
//! ```text
//! crashdoc completions bash > ~/.local/share/bash-completion/completions/crashdoc
//! crashdoc completions zsh  > ~/.zfunc/_crashdoc        # a folder on $fpath
//! crashdoc completions fish > ~/.config/fish/completions/crashdoc.fish
//! crashdoc man > ~/.local/share/man/man1/crashdoc.1     # then `man crashdoc`
//! crashdoc man diagnose > ~/.local/share/man/man1/crashdoc-diagnose.1
//! ```

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, EXIT_FOUND};

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// A subcommand's page instead of the top-level one (`crashdoc man sig test`).
    #[arg(value_name = "SUBCOMMAND")]
    pub path: Vec<String>,
}

/// Writes the completion script of `shell` to standard output.
pub fn run_completions(a: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "crashdoc", &mut buf);
    std::io::stdout().lock().write_all(&buf)?;
    Ok(ExitCode::from(EXIT_FOUND))
}

/// Writes a man page (roff, section 1) to standard output: `crashdoc`'s, or with a
/// subcommand path, that subcommand's (named `crashdoc-sig-test` as git and cargo do).
pub fn run_man(a: &ManArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::examples::with_examples(Cli::command()).disable_help_subcommand(true);
    cmd.build();
    let mut name = String::from("crashdoc");
    for part in &a.path {
        let Some(sub) = cmd.find_subcommand(part).cloned() else {
            let known: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
            anyhow::bail!(
                "`{name} {part}`: no such subcommand (one of: {})",
                known.join(", ")
            );
        };
        name = format!("{name}-{part}");
        cmd = sub;
    }
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.name(name)).render(&mut buf)?;
    buf.extend_from_slice(super::examples::man_sections(&a.path.join(" ")).as_bytes());
    std::io::stdout().lock().write_all(&buf)?;
    Ok(ExitCode::from(EXIT_FOUND))
}
