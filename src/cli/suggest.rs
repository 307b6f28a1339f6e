//! A mistyped subcommand. `crashdoc FILE` diagnoses FILE, so `crashdoc diagnos x.log`
//! would read `diagnos` as a file name; a first argument that is not an existing file
//! but is close to a subcommand name is taken for a mistyped subcommand instead, and
//! clap's error with the suggestion is printed.

use std::ffi::OsString;
use std::path::Path;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

/// Edits (insertions, deletions, substitutions) allowed between a word and a
/// subcommand name for the word to be taken as that name mistyped: one for names of up
/// to [`SHORT_NAME`] characters (`sig`, `rules`), two for longer ones.
const MAX_EDITS: usize = 2;
const SHORT_NAME: usize = 5;

/// The error to print when `args[1]` looks like a mistyped subcommand.
pub fn mistyped_subcommand(args: &[OsString]) -> Option<clap::Error> {
    let first = args.get(1)?.to_str()?;
    if first.starts_with('-') || first.contains(['.', '/', '\\']) || Path::new(first).exists() {
        return None;
    }
    let mut cmd = super::Cli::command();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .chain(std::iter::once("help".to_string()))
        .collect();
    if names.iter().any(|n| n == first) {
        return None;
    }
    let best = names
        .iter()
        .map(|n| (crate::knowledge::text::edit_distance(first, n), n))
        .filter(|(d, n)| *d <= if n.len() <= SHORT_NAME { 1 } else { MAX_EDITS })
        .min_by_key(|(d, _)| *d)?
        .1
        .clone();
    let mut err = clap::Error::new(ErrorKind::InvalidSubcommand).with_cmd(&cmd);
    err.insert(
        ContextKind::InvalidSubcommand,
        ContextValue::String(first.to_string()),
    );
    err.insert(
        ContextKind::SuggestedSubcommand,
        ContextValue::Strings(vec![best]),
    );
    err.insert(
        ContextKind::Usage,
        ContextValue::StyledStr(cmd.render_usage()),
    );
    Some(err)
}

#[cfg(test)]
mod tests {

    #[test]
    fn distance() {
        assert_eq!(
            crate::knowledge::text::edit_distance("diagnos", "diagnose"),
            1
        );
        assert_eq!(crate::knowledge::text::edit_distance("sgi", "sig"), 1);
        assert_eq!(crate::knowledge::text::edit_distance("log", "sig"), 2);
        assert_eq!(crate::knowledge::text::edit_distance("", "abc"), 3);
    }
}
