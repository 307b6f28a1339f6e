//! Broken signature libraries: every kind of broken file is reported with its code, its
//! file and the line:column of the offending text, and the CLI refuses a broken library
//! with exit code 3. The Display output of each `LoadErrors` is a golden snapshot
//! (`tests/integration/snapshots/integration__signature_errors__*.snap`), with the temporary folder replaced by a
//! fixed placeholder.
//!
//! Every file written here is constructed test input, not a real signature.

use std::path::Path;

use crashdoc::knowledge::signature::{self, Diagnostic, LibrarySource, LoadErrors};
use tempfile::TempDir;

const MODELINE: &str = "# yaml-language-server: $schema=../schema.json\n";

/// A minimal valid signature (the modeline, then the required fields).
fn valid(id: &str) -> String {
    format!(
        "{MODELINE}id: {id}
title: Disk quota exceeded
category: disk-full
severity: error
match:
  message: 'Disk quota exceeded'
explain: The user's disk quota is used up.
"
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write a library file");
}

/// A library folder holding the given files.
fn library(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().expect("temp dir");
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    dir
}

/// Loads the folders as one library; it must fail.
fn load_err(dirs: &[&Path]) -> LoadErrors {
    let sources: Vec<LibrarySource> = dirs
        .iter()
        .map(|d| LibrarySource::Dir(d.to_path_buf()))
        .collect();
    match signature::load(&sources) {
        Ok(lib) => panic!(
            "the broken library loaded ({} signatures)",
            lib.signatures.len()
        ),
        Err(e) => e,
    }
}

/// The Display output with the temporary folders replaced by `<LIB>` (or `<LIB1>`,
/// `<LIB2>`… when there are several).
fn golden(e: &LoadErrors, dirs: &[&Path]) -> String {
    let mut s = e.to_string();
    for (i, d) in dirs.iter().enumerate() {
        let name = if dirs.len() == 1 {
            "<LIB>".to_string()
        } else {
            format!("<LIB{}>", i + 1)
        };
        s = s.replace(&d.display().to_string(), &name);
    }
    s
}

/// The only diagnostic; checks its code, file name and position.
fn single<'a>(
    e: &'a LoadErrors,
    code: &str,
    file: &str,
    line: usize,
    column: usize,
) -> &'a Diagnostic {
    assert_eq!(e.0.len(), 1, "expected one diagnostic, got:\n{e}");
    let d = &e.0[0];
    assert_eq!(d.code, code, "{d}");
    assert!(
        Path::new(&d.file).file_name().and_then(|n| n.to_str()) == Some(file),
        "diagnostic names {:?}, expected {file}",
        d.file
    );
    assert_eq!((d.line, d.column), (line, column), "{d}");
    d
}

/// Loads a one-folder library of these files, checks the single diagnostic and
/// snapshots the Display output.
macro_rules! check {
    ($snap:literal, $files:expr, $code:literal, $file:literal, $line:literal : $col:literal) => {{
        let dir = library($files);
        let e = load_err(&[dir.path()]);
        let d = single(&e, $code, $file, $line, $col).clone();
        insta::assert_snapshot!($snap, golden(&e, &[dir.path()]));
        d
    }};
}

#[test]
fn bad_yaml_syntax() {
    let text = format!(
        "{MODELINE}id: disk-quota
title: Disk quota exceeded
category: disk-full
severity: error: fatal
match:
  message: 'Disk quota exceeded'
explain: The user's disk quota is used up.
"
    );
    check!("bad_yaml_syntax", &[("disk-quota.yaml", &text)], "E001", "disk-quota.yaml", 5:16);
}

#[test]
fn unknown_field() {
    let text =
        valid("disk-quota").replace("severity: error\n", "severity: error\nowner: ops-team\n");
    let d = check!("unknown_field", &[("disk-quota.yaml", &text)], "E001", "disk-quota.yaml", 6:1);
    assert!(d.message.contains("owner"), "{d}");
}

#[test]
fn unknown_category() {
    let text = valid("disk-quota").replace("category: disk-full", "category: disk-melted");
    let d =
        check!("unknown_category", &[("disk-quota.yaml", &text)], "E001", "disk-quota.yaml", 4:11);
    assert!(d.message.contains("disk-melted"), "{d}");
}

#[test]
fn id_not_kebab_case() {
    let text = valid("Disk_Quota");
    check!("id_not_kebab_case", &[("Disk_Quota.yaml", &text)], "E002", "Disk_Quota.yaml", 2:5);
}

#[test]
fn id_differs_from_file_name() {
    let text = valid("disk-quota");
    check!("id_differs_from_file_name", &[("quota-exceeded.yaml", &text)], "E003", "quota-exceeded.yaml", 2:5);
}

#[test]
fn duplicate_id_across_two_libraries() {
    let a = library(&[("disk-quota.yaml", &valid("disk-quota"))]);
    let b = TempDir::new().expect("temp dir");
    std::fs::create_dir(b.path().join("storage")).expect("subfolder");
    write(
        &b.path().join("storage"),
        "disk-quota.yaml",
        &valid("disk-quota"),
    );
    let e = load_err(&[a.path(), b.path()]);
    let d = single(&e, "E004", "disk-quota.yaml", 2, 5);
    assert!(d.file.starts_with(&b.path().display().to_string()), "{d}");
    assert!(
        d.message.contains(&format!(
            "{}:2:5",
            a.path().join("disk-quota.yaml").display()
        )),
        "the first definition is located: {d}"
    );
    insta::assert_snapshot!(
        "duplicate_id_across_two_libraries",
        golden(&e, &[a.path(), b.path()])
    );
}

#[test]
fn invalid_regex() {
    let text = valid("disk-quota").replace(
        "message: 'Disk quota exceeded'",
        r"message: 'Disk quota exceeded \((?P<user>[a-z]+\)'",
    );
    check!("invalid_regex", &[("disk-quota.yaml", &text)], "E005", "disk-quota.yaml", 7:12);
}

#[test]
fn regex_over_the_size_limit() {
    let text = valid("disk-quota").replace(
        "message: 'Disk quota exceeded'",
        r"message: 'Disk quota exceeded for \w{5000}'",
    );
    let d = check!("regex_over_the_size_limit", &[("disk-quota.yaml", &text)], "E005", "disk-quota.yaml", 7:12);
    assert!(d.message.contains("too big"), "{d}");
}

#[test]
fn no_usable_atom_kind_only() {
    let text = valid("any-signal").replace("message: 'Disk quota exceeded'", "kind: signal");
    check!("no_usable_atom_kind_only", &[("any-signal.yaml", &text)], "E006", "any-signal.yaml", 2:5);
}

#[test]
fn no_usable_atom_dot_star() {
    let text = valid("anything").replace("message: 'Disk quota exceeded'", "message: '.*'");
    check!("no_usable_atom_dot_star", &[("anything.yaml", &text)], "E006", "anything.yaml", 2:5);
}

#[test]
fn undefined_template_variable() {
    let text = valid("disk-quota").replace(
        "message: 'Disk quota exceeded'",
        r"message: 'Disk quota exceeded for user (?P<user>[a-z]+)'",
    ) + "remediation:
  - description: Raise the quota
    command: 'setquota -u {{usr}} 0 0 0 0 /home'
";
    let d = check!("undefined_template_variable", &[("disk-quota.yaml", &text)], "E007", "disk-quota.yaml", 11:14);
    assert!(d.message.contains("`usr`"), "{d}");
}

#[test]
fn bad_template_syntax() {
    let text = valid("disk-quota").replace(
        "message: 'Disk quota exceeded'",
        r"message: 'Disk quota exceeded for user (?P<user>[a-z]+)'",
    ) + "remediation:
  - description: Raise the quota
    command: 'setquota -u {{user 0 0 0 0 /home'
";
    check!("bad_template_syntax", &[("disk-quota.yaml", &text)], "E007", "disk-quota.yaml", 11:14);
}

#[test]
fn unknown_consequence_of_id() {
    let text = valid("disk-quota").replace(
        "severity: error\n",
        "severity: error\nconsequence_of: [disk-full-root, no-such-signature]\n",
    );
    let files = [
        ("disk-quota.yaml", text.as_str()),
        ("disk-full-root.yaml", &valid("disk-full-root")),
    ];
    let d = check!("unknown_consequence_of_id", &files, "E008", "disk-quota.yaml", 6:34);
    assert!(d.message.contains("no-such-signature"), "{d}");
}

#[test]
fn unknown_kind() {
    let text = valid("disk-quota").replace(
        "  message: 'Disk quota exceeded'",
        "  all:\n    - kind: segfault\n    - message: 'Disk quota exceeded'",
    );
    let d = check!("unknown_kind", &[("disk-quota.yaml", &text)], "E009", "disk-quota.yaml", 8:13);
    assert!(d.message.contains("segfault"), "{d}");
}

#[test]
fn non_yaml_file_in_a_library_folder() {
    let files = [
        ("disk-quota.yaml", valid("disk-quota")),
        (
            "notes.txt",
            "remember to add the NFS quota signature\n".to_string(),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    check!("non_yaml_file_in_a_library_folder", &files, "E010", "notes.txt", 0:0);
}

#[test]
fn file_too_large() {
    // a well-formed signature whose explain makes it 2 MB
    let mut text = valid("disk-quota").replace(
        "explain: The user's disk quota is used up.\n",
        "explain: >\n",
    );
    let filler = "  The user's disk quota is used up, and this sentence repeats.\n";
    while text.len() < 2 << 20 {
        text.push_str(filler);
    }
    let d = check!("file_too_large", &[("disk-quota.yaml", &text)], "E011", "disk-quota.yaml", 0:0);
    assert!(d.message.contains(&text.len().to_string()), "{d}");
}

#[test]
fn yaml_alias_bomb() {
    // "billion laughs" inside the condition tree, where deserialization has to descend:
    // nine levels of nine aliases would expand to 9^9 `message` conditions (each a regex)
    let mut bomb = String::from("match:\n  any:\n");
    bomb.push_str("    - &c0 {any: [");
    bomb.push_str(&["{message: 'Disk quota exceeded'}"; 9].join(", "));
    bomb.push_str("]}\n");
    for i in 1..=9 {
        let p = format!("*c{}", i - 1);
        bomb.push_str(&format!(
            "    - &c{i} {{any: [{}]}}\n",
            [p.as_str(); 9].join(", ")
        ));
    }
    let text = valid("disk-quota").replace("match:\n  message: 'Disk quota exceeded'\n", &bomb);
    assert!(text.contains("&c9"), "{text}");
    let dir = library(&[("disk-quota.yaml", &text)]);
    let e = load_err(&[dir.path()]);
    // located at the alias whose expansion crosses the node budget
    let d = single(&e, "E001", "disk-quota.yaml", 11, 53);
    assert!(d.message.contains("budget"), "{d}");
    insta::assert_snapshot!("yaml_alias_bomb", golden(&e, &[dir.path()]));
}

#[test]
fn catastrophic_looking_regex_loads_and_matches_in_linear_time() {
    // `(a+)+$` backtracks exponentially in a backtracking engine; Rust's regex is linear
    let text = valid("many-as").replace(
        "message: 'Disk quota exceeded'",
        "all:\n    - exception: RuntimeError\n    - message: '(a+)+$'",
    );
    let dir = library(&[("many-as.yaml", &text)]);
    let lib = signature::load(&[LibrarySource::Dir(dir.path().to_path_buf())])
        .unwrap_or_else(|e| panic!("`(a+)+$` must load:\n{e}"));
    let sig = lib.get("many-as").expect("the signature");
    let signature::Cond::All(conds) = &sig.cond else {
        panic!("an `all` condition: {:?}", sig.cond);
    };
    let re = conds
        .iter()
        .find_map(|c| match c {
            signature::Cond::Leaf(signature::compile::Leaf::Message(re)) => Some(re),
            _ => None,
        })
        .expect("the message regex");
    // the classic worst case: a long run of `a` that the final `$` rejects
    let line = "a".repeat(100_000) + "!";
    assert!(!re.is_match(&line));
    assert!(re.is_match(&"a".repeat(100_000)));

    // and through the whole pipeline, on a 100 KB exception line
    let log = format!("RuntimeError: {}\n", "a".repeat(100_000));
    let compiled = crashdoc::engine::matcher::Compiled::new(&lib).expect("compiled");
    let mut engine = crashdoc::engine::pipeline::Engine::new(
        &compiled,
        crashdoc::engine::matcher::EngineKind::Prefilter,
    );
    let d = engine.diagnose_text("constructed.log", &log, Default::default());
    assert_eq!(
        d.causes.first().map(|c| c.signature.as_str()),
        Some("many-as"),
        "{:?}",
        d.causes
    );
}

#[test]
fn every_problem_of_every_file_is_reported_at_once() {
    let dir = library(&[
        ("Disk_Quota.yaml", &valid("Disk_Quota")),
        (
            "bad-kind.yaml",
            &valid("bad-kind").replace("message: 'Disk quota exceeded'", "kind: segfault"),
        ),
        ("misnamed.yaml", &valid("other-name")),
    ]);
    let e = load_err(&[dir.path()]);
    let codes: Vec<&str> = e.0.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["E002", "E009", "E003"], "{e}");
}

#[test]
fn cli_exits_3_and_prints_the_located_error() {
    let dir = library(&[(
        "disk-quota.yaml",
        &valid("disk-quota").replace("category: disk-full", "category: disk-melted"),
    )]);
    let logs = TempDir::new().expect("temp dir");
    let log = logs.path().join("constructed.log");
    // constructed test input, not a real log
    std::fs::write(&log, "OSError: [Errno 122] Disk quota exceeded\n").expect("log");
    let out = crate::util::crashdoc()
        .arg("--no-builtin")
        .arg("--signatures")
        .arg(dir.path())
        .arg(&log)
        .output()
        .expect("run crashdoc");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let file = dir.path().join("disk-quota.yaml");
    assert!(
        stderr.contains(&format!("{}:4:11: error[E001]", file.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("the signature library has 1 error(s)"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout: {out:?}");
}

#[test]
fn an_oversized_file_does_not_hide_the_other_files_errors() {
    // load.rs promises that loading "collects every error of every file before it fails"
    let mut big = valid("big-one");
    big.push_str(&"# padding\n".repeat((2 << 20) / 10));
    let dir = library(&[
        ("big-one.yaml", &big),
        (
            "bad-kind.yaml",
            &valid("bad-kind").replace("message: 'Disk quota exceeded'", "kind: segfault"),
        ),
    ]);
    let e = load_err(&[dir.path()]);
    let codes: Vec<&str> = e.0.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["E011", "E009"], "{e}");
}

#[test]
fn the_documented_codes_are_the_codes() {
    use crashdoc::knowledge::signature::error::{Code, Level};
    let doc = std::fs::read_to_string(crate::util::repo("CONTRIBUTING.md")).expect("read");
    let rows: Vec<(String, String, String)> = doc
        .lines()
        .filter(|l| l.starts_with("| E") || l.starts_with("| W"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let cell = |i: usize| cells.get(i).copied().unwrap_or_default().to_string();
            (cell(0), cell(1), cell(2))
        })
        .collect();
    let want: Vec<(String, String, String)> = Code::ALL
        .iter()
        .map(|c| {
            let level = match c.level() {
                Level::Error => "error",
                Level::Warning => "warning",
            };
            (c.to_string(), level.to_string(), c.title().to_string())
        })
        .collect();
    assert_eq!(rows, want, "CONTRIBUTING.md's code table differs from Code");
}
