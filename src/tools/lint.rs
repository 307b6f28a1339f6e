//! Lint: every check the loader makes, and advice the loader does not enforce.
//!
//! `crashdoc sig lint` first loads the files as a library (so every `E0xx` the loader
//! reports is reported here, located) and then, for each signature file that parses,
//! adds warnings:
//!
//! | code | check |
//! | --- | --- |
//! | W001 | weak atom: an atom (given or derived) shorter than [`MIN_STRONG_ATOM`] characters or one of [`COMMON_TOKENS`] — it fires the prefilter on ordinary log lines |
//! | W002 | capture never used: a named capture inside `not:` (it can never yield a value), or a name an earlier regex already captures (the first value wins) |
//! | W005 | a regex uses a Unicode class (`\d`, `\w`, `\b`…) where an ASCII one would do |
//!
//! and the errors CI enforces on a signature file (the loader does not: a team's own
//! folder still loads without them), so that lint's exit code is CI's verdict:
//!
//! | code | check |
//! | --- | --- |
//! | E019–E022 | references, examples and near-misses, placeholders and unguarded environment changes ([`super::lint_content`]) |
//! | E023 | the file does not start with the `yaml-language-server` modeline |
//! | E024, E005 | an example that does not behave as its list says, a regex near the size limit ([`super::lint_ci`]) |
//!
//! Warnings do not fail the lint (exit 0); errors do. The `COMMON_TOKENS` list is short
//! and deliberate: words that appear on many lines of ordinary logs (levels, Python
//! traceback scaffolding, generic verbs), so an atom made only of one of them would make
//! the signature a candidate almost everywhere. A template variable that is not a
//! capture is already an error of the loader (E007). A capture that no command uses is
//! not flagged: every capture is shown in the report ("Read from the log: …").

use regex_syntax::ast::{self, Ast};

use crate::knowledge::reading::{file_stem, is_yaml};
use crate::knowledge::signature::compile;
use crate::knowledge::signature::error::{Code, Diagnostic};
use crate::knowledge::signature::load::{compile_files, parse_signature, LibraryFile};
use crate::knowledge::signature::model::{Condition, SignatureFile, Text};

/// Atoms shorter than this are weak (the loader refuses those under 3).
pub const MIN_STRONG_ATOM: usize = 5;

/// Tokens too common in ordinary logs to be an atom on their own.
pub const COMMON_TOKENS: &[&str] = &[
    "error",
    "errors",
    "failed",
    "failure",
    "fatal",
    "warning",
    "warn",
    "info",
    "debug",
    "exception",
    "traceback",
    "most recent call last",
    "file",
    "line",
    "module",
    "return",
    "raise",
    "self",
    "none",
    "true",
    "false",
    "null",
    "python",
    "torch",
    "cuda",
    "import",
    "from",
    "cannot",
    "could not",
    "unable",
    "invalid",
    "not found",
    "killed",
    "process",
    "worker",
    "started",
    "starting",
    "stopped",
    "service",
    "runtimeerror",
    "valueerror",
    "keyerror",
    "oserror",
    "typeerror",
    "assertionerror",
];

/// Whether an atom is weak: too short, or one of the common tokens.
pub fn weak_atom(atom: &str) -> bool {
    let t = atom.trim().to_ascii_lowercase();
    t.len() < MIN_STRONG_ATOM || COMMON_TOKENS.contains(&t.as_str())
}

/// The modeline every signature file starts with.
pub const MODELINE: &str = "# yaml-language-server: $schema=../schema.json";

fn at(d: Diagnostic, f: &LibraryFile, t: &Text) -> Diagnostic {
    d.at(
        &f.text,
        t.referenced.line() as usize,
        t.referenced.column() as usize,
    )
}

/// Every regex of a condition tree, with whether it sits under a `not:` and under an `any:`.
fn regexes<'a>(c: &'a Condition, negated: bool, alt: bool, out: &mut Vec<(&'a Text, bool, bool)>) {
    match c {
        Condition::Message(t) | Condition::Text(t) | Condition::Stream(t) => {
            out.push((t, negated, alt))
        }
        Condition::Frame(fr) => {
            out.extend(fr.file.iter().map(|t| (t, negated, alt)));
            out.extend(fr.function.iter().map(|t| (t, negated, alt)));
        }
        Condition::All(v) => v.iter().for_each(|c| regexes(c, negated, alt, out)),
        Condition::Any(v) => v.iter().for_each(|c| regexes(c, negated, true, out)),
        Condition::Not(b) => regexes(b, true, alt, out),
        Condition::Contains(_)
        | Condition::Exception(_)
        | Condition::Kind(_)
        | Condition::Package(_)
        | Condition::GpuCapability(_)
        | Condition::Driver(_)
        | Condition::TorchCuda(_) => {}
    }
}

/// W001: weak atoms, given or derived (the derived ones only when the file gives none).
fn weak_atoms(f: &LibraryFile, s: &SignatureFile, out: &mut Vec<Diagnostic>) {
    let name = f.name.as_str();
    if !s.atoms.is_empty() {
        for a in &s.atoms {
            if a.value.len() >= crate::knowledge::signature::atoms::MIN_ATOM_LEN
                && weak_atom(&a.value)
            {
                out.push(at(
                    Diagnostic::new(
                        Code::W001,
                        name,
                        format!("weak atom `{}`: too short or too common in ordinary logs; give a longer, rarer literal", a.value),
                    ),
                    f,
                    a,
                ));
            }
        }
    } else if let Ok(sig) = compile::compile(s, name, &f.text, file_stem(name)) {
        let weak: Vec<&String> = sig.atoms.iter().filter(|a| weak_atom(a)).collect();
        if !weak.is_empty() {
            let mut texts = Vec::new();
            literal_texts(&s.condition, &mut texts);
            let loc = texts
                .iter()
                .find(|t| {
                    let low = t.value.to_ascii_lowercase();
                    weak.iter().any(|w| low.contains(w.trim()))
                })
                .copied()
                .unwrap_or(&s.id);
            out.push(at(
                Diagnostic::new(
                    Code::W001,
                    name,
                    format!(
                        "weak derived atom{} {}: too short or too common in ordinary logs; add a longer literal to the regex or give `atoms:`",
                        if weak.len() > 1 { "s" } else { "" },
                        weak.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ")
                    ),
                ),
                f,
                loc,
            ));
        }
    }
}

/// Every literal-bearing condition value (for locating a derived atom).
fn literal_texts<'a>(c: &'a Condition, out: &mut Vec<&'a Text>) {
    match c {
        Condition::Message(t)
        | Condition::Text(t)
        | Condition::Contains(t)
        | Condition::Exception(t) => out.push(t),
        Condition::Frame(fr) => out.extend(fr.file.iter().chain(fr.function.iter())),
        Condition::All(v) | Condition::Any(v) => v.iter().for_each(|c| literal_texts(c, out)),
        Condition::Not(_)
        | Condition::Kind(_)
        | Condition::Stream(_)
        | Condition::Package(_)
        | Condition::GpuCapability(_)
        | Condition::Driver(_)
        | Condition::TorchCuda(_) => {}
    }
}

/// Unicode-aware constructs of a pattern: (offset, text).
pub fn unicode_classes(pattern: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    if pattern.contains("(?-u") {
        return out;
    }
    let Ok(parsed) = ast::parse::Parser::new().parse(pattern) else {
        return out;
    };
    let mut stack = vec![&parsed];
    let mut push = |span: &ast::Span| {
        out.push((
            span.start.offset,
            pattern[span.start.offset..span.end.offset].to_string(),
        ));
    };
    while let Some(a) = stack.pop() {
        match a {
            Ast::ClassPerl(p) if !matches!(p.kind, ast::ClassPerlKind::Space) => push(&p.span),
            Ast::Assertion(x) => {
                use ast::AssertionKind as K;
                if !matches!(
                    x.kind,
                    K::StartLine | K::EndLine | K::StartText | K::EndText
                ) {
                    push(&x.span);
                }
            }
            Ast::ClassBracketed(b) => {
                let mut items = vec![&b.kind];
                while let Some(set) = items.pop() {
                    match set {
                        ast::ClassSet::Item(item) => {
                            let mut list = vec![item];
                            while let Some(i) = list.pop() {
                                match i {
                                    ast::ClassSetItem::Perl(p)
                                        if !matches!(p.kind, ast::ClassPerlKind::Space) =>
                                    {
                                        push(&p.span)
                                    }
                                    ast::ClassSetItem::Union(u) => list.extend(u.items.iter()),
                                    ast::ClassSetItem::Bracketed(bb) => items.push(&bb.kind),
                                    _ => {}
                                }
                            }
                        }
                        ast::ClassSet::BinaryOp(op) => {
                            items.push(&op.lhs);
                            items.push(&op.rhs);
                        }
                    }
                }
            }
            Ast::Group(g) => stack.push(&g.ast),
            Ast::Concat(c) => stack.extend(c.asts.iter()),
            Ast::Alternation(c) => stack.extend(c.asts.iter()),
            Ast::Repetition(r) => stack.push(&r.ast),
            _ => {}
        }
    }
    out.sort();
    out
}

fn capture_names(pattern: &str) -> Vec<String> {
    regex::Regex::new(pattern)
        .map(|r| r.capture_names().flatten().map(str::to_string).collect())
        .unwrap_or_default()
}

fn is_signature_file(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    base != "frames.yaml" && is_yaml(base)
}

/// The lint warnings of one parsed signature file.
fn advise(f: &LibraryFile, s: &SignatureFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let name = f.name.as_str();
    if f.text.lines().next().map(str::trim_end) != Some(MODELINE) {
        out.push(
            Diagnostic::new(
                Code::E023,
                name,
                format!("the file does not start with the modeline `{MODELINE}` (editors then neither complete nor validate it): make it the first line"),
            )
            .at(&f.text, 1, 1),
        );
    }
    weak_atoms(f, s, &mut out);
    // W002: captures never used
    let mut res = Vec::new();
    regexes(&s.condition, false, false, &mut res);
    let mut seen: Vec<String> = Vec::new();
    for (t, negated, alt) in &res {
        for cap in capture_names(&t.value) {
            if *negated {
                out.push(at(
                    Diagnostic::new(
                        Code::W002,
                        name,
                        format!("capture `{cap}` is inside `not:` and never yields a value; make the group non-capturing `(?:...)`"),
                    ),
                    f,
                    t,
                ));
            } else if !alt && seen.contains(&cap) {
                out.push(at(
                    Diagnostic::new(
                        Code::W002,
                        name,
                        format!("capture `{cap}` is defined by an earlier regex too; the first value wins, so this one is never used: rename it or make it non-capturing `(?:...)`"),
                    ),
                    f,
                    t,
                ));
            } else if !alt {
                seen.push(cap);
            }
        }
        // W005: Unicode classes
        let uni = unicode_classes(&t.value);
        if !uni.is_empty() {
            let list: Vec<String> = uni
                .iter()
                .map(|(off, text)| format!("`{text}` (offset {off})"))
                .collect();
            out.push(at(
                Diagnostic::new(
                    Code::W005,
                    name,
                    format!("Unicode-aware {} where ASCII would do (slower to compile, larger): write `[0-9]` for `\\d`, `[A-Za-z0-9_]` for `\\w`, `(?-u:\\b)` for `\\b`", list.join(", ")),
                ),
                f,
                t,
            ));
        }
    }
    out
}

/// The result of a lint run.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LintReport {
    pub diagnostics: Vec<Diagnostic>,
    pub errors: usize,
    pub warnings: usize,
    pub files: usize,
}

/// Lints `files`; `context` (e.g. the embedded library) is loaded alongside, so that
/// duplicates and `consequence_of` links are checked against it, but is not reported on.
pub fn lint(files: &[LibraryFile], context: &[LibraryFile]) -> LintReport {
    let mut all: Vec<LibraryFile> = context
        .iter()
        .map(|f| LibraryFile {
            name: f.name.clone(),
            text: f.text.clone(),
        })
        .collect();
    all.extend(files.iter().map(|f| LibraryFile {
        name: f.name.clone(),
        text: f.text.clone(),
    }));
    let ours = |n: &str| files.iter().any(|f| f.name == n);
    let mut diags: Vec<Diagnostic> = match compile_files(&all) {
        // regexes are built on first use (`crate::knowledge::signature::lazy`): lint builds every one of its
        // files' regexes now, so that nothing is left to fail later
        Ok(lib) => lib
            .signatures
            .iter()
            .filter(|s| ours(&s.file))
            .flat_map(|s| s.regexes().into_iter().map(move |r| (s, r)))
            .filter_map(|(s, r)| {
                r.force().err().map(|e| {
                    let msg = e.to_string();
                    let detail = msg.lines().last().unwrap_or(&msg).trim().to_string();
                    Diagnostic::new(
                        Code::E005,
                        &s.file,
                        format!("regex `{}` cannot be built: {detail}", r.as_str()),
                    )
                })
            })
            .chain(super::lint_ci::check(&lib, files))
            .collect(),
        Err(e) => e.0.into_iter().filter(|d| ours(&d.file)).collect(),
    };
    for f in files {
        if !is_signature_file(&f.name) {
            continue;
        }
        if let Ok(s) = parse_signature(&f.name, &f.text) {
            diags.extend(advise(f, &s));
            diags.extend(super::lint_content::advise_content(f, &s));
        }
    }
    diags.sort_by(|a, b| {
        (a.file.as_str(), a.line, a.column, a.code).cmp(&(
            b.file.as_str(),
            b.line,
            b.column,
            b.code,
        ))
    });
    diags.dedup();
    let errors = diags
        .iter()
        .filter(|d| d.level == crate::knowledge::signature::error::Level::Error)
        .count();
    LintReport {
        warnings: diags.len() - errors,
        errors,
        diagnostics: diags,
        files: files.len(),
    }
}
