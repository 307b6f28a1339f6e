//! The embedded library as a whole: loads, passes its own examples through the real
//! pipeline, covers the taxonomy, and the README's list is current.

use crashdoc::knowledge::signature::{self, Category, LibrarySource, Severity};

#[test]
fn builtin_library_loads_and_covers_the_taxonomy() {
    let lib = crate::util::library();
    assert!(
        lib.signatures.len() >= 80,
        "{} signatures",
        lib.signatures.len()
    );
    let benign = lib
        .signatures
        .iter()
        .filter(|s| s.severity == Severity::Benign)
        .count();
    assert!(benign >= 15, "{benign} benign signatures");
    for &c in Category::ALL {
        if c == Category::Other {
            continue;
        }
        let n = lib
            .signatures
            .iter()
            .filter(|s| s.category == c && s.severity != Severity::Benign)
            .count();
        assert!(n >= 2, "category {c} has {n} signatures");
    }
    // code-table entries are one row of a table each (their renderings are shared and
    // exercised by the signatures' real examples); the rule is for signature files
    for s in lib
        .signatures
        .iter()
        .filter(|s| s.layer == signature::table::Layer::Signature)
    {
        let need = crashdoc::tools::lint_content::min_examples(s.rare);
        assert!(
            s.examples.matches.len() >= need,
            "{}: fewer than {need} examples",
            s.id
        );
        assert!(!s.examples.no_match.is_empty(), "{}: no near-miss", s.id);
        assert!(!s.prose.references.is_empty(), "{}: no reference", s.id);
    }
}

#[test]
fn every_signature_passes_its_examples() {
    let rep = crashdoc::tools::examples::test_signatures(crate::util::compiled(), None);
    let fails: Vec<&String> = rep
        .messages
        .iter()
        .filter(|m| m.starts_with("FAIL"))
        .collect();
    assert!(
        rep.failed == 0,
        "{} failed:\n{}",
        rep.failed,
        fails
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(rep.passed >= 240, "only {} examples passed", rep.passed);
}

#[test]
fn docs_list_the_library() {
    let want = crashdoc::cli::sig::library_markdown(crate::util::library());
    let have = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/signatures.md"))
        .unwrap_or_default();
    assert!(
        have == want,
        "docs/signatures.md is stale: regenerate it with `cargo run -- sig list --format markdown > docs/signatures.md`"
    );
}

/// Regexes are built on first use; the loader builds at once only those whose parsed
/// form could come near the size limit. Every regex of the library must build under
/// the limit, and the deferred ones must be far below it.
#[test]
fn every_regex_of_the_library_builds_under_the_size_limit() {
    // a load of its own, from the YAML (the frozen form defers every regex): other tests
    // build the shared library's regexes as they match
    let lib =
        signature::load::load_yaml(&[LibrarySource::Builtin]).expect("the embedded library loads");
    let mut deferred = 0;
    for s in &lib.signatures {
        for r in s.regexes() {
            if !r.is_built() {
                deferred += 1;
            }
            let built = regex::RegexBuilder::new(r.as_str())
                .size_limit(signature::compile::REGEX_SIZE_LIMIT / 8)
                .build();
            assert!(
                built.is_ok(),
                "{}: `{}` is not far below the limit",
                s.id,
                r.as_str()
            );
            assert!(r.force().is_ok(), "{}: `{}`", s.id, r.as_str());
        }
    }
    assert!(deferred > 100, "{deferred} regexes deferred");
}

/// The frozen library (compiled by build.rs, read at start-up) is what the YAML compiles
/// to: the same signatures, rules, regex patterns, atoms, templates and examples, in the
/// same order (compared in their serialized form).
#[test]
fn the_frozen_library_is_the_yaml_compiled() {
    use crashdoc::knowledge::frozen;
    use crashdoc::knowledge::rules::{self, RulesSource};
    let thawed = crashdoc::knowledge::signature::load::frozen_builtin()
        .expect("build.rs froze the embedded library");
    let parsed = signature::load::load_yaml(&[LibrarySource::Builtin]).expect("the YAML loads");
    assert_eq!(thawed.signatures.len(), parsed.signatures.len());
    for (a, b) in thawed.signatures.iter().zip(parsed.signatures.iter()) {
        assert_eq!(
            frozen::freeze(a).expect("serializes"),
            frozen::freeze(b).expect("serializes"),
            "{} differs from its YAML",
            b.id
        );
    }
    assert_eq!(thawed.plumbing, parsed.plumbing);
    let thawed =
        crashdoc::knowledge::rules::frozen_builtin().expect("build.rs froze the embedded rules");
    let parsed = rules::load_yaml(&[RulesSource::Builtin]).expect("the rules load");
    assert_eq!(
        frozen::freeze(&thawed).expect("serializes"),
        frozen::freeze(&parsed).expect("serializes")
    );
    // and a load of the embedded library alone is the frozen one
    let loaded = signature::load(&[LibrarySource::Builtin]).expect("loads");
    assert!(loaded
        .signatures
        .iter()
        .all(|s| s.regexes().iter().all(|r| !r.is_built())));
}

/// The content lints (E019 references, E020 examples and near-miss, E021 unfilled
/// placeholders in commands, E022 environment changes without a check or fact
/// condition) are clean on the embedded library: `cargo run -- sig lint` names each.
#[test]
fn library_is_clean_of_content_lints() {
    use crashdoc::knowledge::signature::load::{builtin_files, LibraryFile};
    use crashdoc::tools::lint::lint;
    let files: Vec<LibraryFile> = builtin_files()
        .iter()
        .map(|(n, t)| LibraryFile {
            name: n.to_string(),
            text: t.to_string(),
        })
        .collect();
    let r = lint(&files, &[]);
    let bad: Vec<String> = r
        .diagnostics
        .iter()
        .filter(|d| matches!(d.code.as_str(), "E019" | "E020" | "E021" | "E022"))
        .map(|d| format!("{}:{}: {} {}", d.file, d.line, d.code, d.message))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
