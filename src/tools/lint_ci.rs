//! The checks of `sig lint` that need the compiled library: CI runs every example of
//! the library through the real pipeline (`sig test`, and `cargo test`'s
//! `every_signature_passes_its_examples`) and requires every regex to build far below
//! the size limit (`every_regex_of_the_library_builds_under_the_size_limit`). Lint runs
//! the same checks on the files it lints, so that a file it passes passes CI:
//!
//! | code | check |
//! | --- | --- |
//! | E024 | an example that does not behave as its list says (judged as `sig test` judges it, with the whole loaded library, so an example another signature wins is caught) |
//! | E005 | a regex that builds, but not under an eighth of the size limit ([`FAR_BELOW`]) |
//!
//! Running the examples costs about 0.3 ms each (the whole embedded library, 2,500
//! examples, in under a second), so lint always runs them.

use crate::engine::matcher::{Compiled, EngineKind};
use crate::engine::pipeline::Engine;
use crate::knowledge::signature::compile::REGEX_SIZE_LIMIT;
use crate::knowledge::signature::error::{Code, Diagnostic};
use crate::knowledge::signature::load::LibraryFile;
use crate::knowledge::signature::{Library, Signature};
use crate::tools::examples::{judge_signature, WithExamples};

/// The share of the regex size limit a library regex must build under.
pub const FAR_BELOW: usize = 8;

/// The 1-based line of the first line starting with `key` (`examples:`), else 0.
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(key))
        .map_or(0, |i| i + 1)
}

fn examples_of(engine: &mut Engine<'_>, s: &Signature, f: &LibraryFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for ex in s.examples() {
        if let Err(why) = judge_signature(engine, s, &ex).verdict {
            out.push(
                Diagnostic::new(
                    Code::E024,
                    &f.name,
                    format!(
                        "{why}: fix the regex (`crashdoc explain --signature {} LOG` says why a log does not match) or replace the example",
                        s.id
                    ),
                )
                .at(&f.text, line_of(&f.text, "examples:"), 1),
            );
        }
    }
    out
}

fn size_of(s: &Signature, f: &LibraryFile) -> Vec<Diagnostic> {
    s.regexes()
        .into_iter()
        .filter(|r| {
            regex::RegexBuilder::new(r.as_str())
                .size_limit(REGEX_SIZE_LIMIT / FAR_BELOW)
                .build()
                .is_err()
        })
        .map(|r| {
            Diagnostic::new(
                Code::E005,
                &f.name,
                format!(
                    "regex `{}` is too close to the size limit once compiled (it must build under an eighth of it): bound its repetitions (`{{1,64}}` rather than `{{1,4096}}`), drop nested ones, or split it into an `all:` of smaller regexes",
                    r.as_str()
                ),
            )
        })
        .collect()
}

/// E024 and E005 (size) for the signatures of `files` in the compiled `lib`.
pub fn check(lib: &Library, files: &[LibraryFile]) -> Vec<Diagnostic> {
    let Ok(compiled) = Compiled::new(lib) else {
        // the prefilter could not be built: the loader's own errors say why
        return Vec::new();
    };
    let by_name: std::collections::HashMap<&str, &LibraryFile> =
        files.iter().map(|f| (f.name.as_str(), f)).collect();
    let mut engine = Engine::new(&compiled, EngineKind::Prefilter);
    let mut out = Vec::new();
    for s in &lib.signatures {
        let Some(f) = by_name.get(s.file.as_str()).copied() else {
            continue;
        };
        out.extend(size_of(s, f));
        out.extend(examples_of(&mut engine, s, f));
    }
    out
}
