//! A tool people pick up (issue 31): installing it where ML engineers live (a wheel),
//! the README's commands working on a fresh `$HOME`, and the shortfalls a new user met.

use crate::util::{bin, repo};

fn read(p: &str) -> String {
    std::fs::read_to_string(repo(p)).expect("read")
}

/// The README's fenced block that follows `marker`.
fn block_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text.find(marker).expect("marker");
    let start = at + text[at..].find("```sh\n").expect("a block") + 6;
    let end = start + text[start..].find("```").expect("block end");
    &text[start..end]
}

#[test]
fn the_wheel_holds_the_binary_and_ci_installs_it() {
    let py = read("pyproject.toml");
    assert!(py.contains("build-backend = \"maturin\""), "{py}");
    assert!(py.contains("bindings = \"bin\""), "{py}");
    assert!(py.contains("name = \"crashdoc\""));
    assert!(
        py.contains("dynamic = [\"version\"]"),
        "one version: Cargo.toml's"
    );
    let ci = read(".ci/run");
    for needle in [
        "maturin\" build --release",
        "python3 -m venv",
        "crashdoc\" --version",
    ] {
        assert!(ci.contains(needle), "CI: {needle}");
    }
    assert!(
        ci.contains("crashdoc\" run -- sh -c"),
        "CI diagnoses from the wheel"
    );
    assert!(ci.contains("step wheel_check"));
}

#[test]
fn install_leads_with_pip_then_cargo() {
    let readme = read("README.md");
    let pip = readme.find("pip install .").expect("pip");
    let uv = readme.find("uv tool install .").expect("uv");
    let cargo = readme.find("cargo install --locked").expect("cargo");
    assert!(pip < cargo && uv < cargo, "pip/uv first, then cargo");
}

#[test]
fn completion_and_man_commands_work_on_a_fresh_home() {
    let readme = read("README.md");
    let b = block_after(&readme, "Shell\ncompletions and the man page");
    let mut redirects = 0;
    for line in b.lines().filter(|l| l.contains(" > ~/")) {
        redirects += 1;
        let dest = line.split(" > ").nth(1).expect("destination");
        let dest = dest.split_whitespace().next().expect("path");
        let folder = &dest[..dest.rfind('/').expect("a folder")];
        assert!(
            line.starts_with(&format!("mkdir -p {folder} && ")),
            "the folder is created first: {line}"
        );
    }
    assert_eq!(redirects, 4, "bash, zsh, fish, man: {b}");
    assert!(
        b.contains("MANPATH=\"$HOME/.local/share/man:\""),
        "man finds the page"
    );
}

#[test]
fn readme_binary_size_is_the_release_binarys() {
    let b = bin();
    if !b.to_string_lossy().contains("/release/") {
        return; // a debug binary is several times larger: only the release one is compared
    }
    let size = std::fs::metadata(&b).expect("binary").len() as f64 / 1e6;
    let readme = read("README.md");
    let at = readme.find(" MB on x86-64 Linux").expect("the size");
    let figure: f64 = readme[..at]
        .rsplit(' ')
        .next()
        .and_then(|w| w.parse().ok())
        .expect("a number before MB");
    assert!(
        (size - figure).abs() / size < 0.2,
        "README says {figure} MB, the release binary is {size:.1} MB"
    );
}

// ── shortfall 1: folded YAML (`description: >`) ends with a newline ─────────────────

#[test]
fn folded_prose_is_printed_without_a_trailing_newline() {
    for s in crate::util::library().signatures.iter() {
        let mut prose = vec![("title", s.title.as_str()), ("explain", &s.prose.explain)];
        for st in &s.prose.remediation {
            prose.push(("description", &st.description));
            prose.extend(st.when.as_deref().map(|w| ("when", w)));
        }
        for (field, t) in prose {
            assert_eq!(t, t.trim(), "{}: {field} is not trimmed", s.id);
        }
    }
    // through the CLI: the example of pip-externally-managed-environment (copied from
    // https://github.com/markus-perl/ffmpeg-build-script/issues/212), whose third step
    // is a folded `description: >`
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("pip.log");
    std::fs::write(
        &log,
        "$ pip3 install pip setuptools --quiet --upgrade --no-cache-dir --disable-pip-version-check\n\
         error: externally-managed-environment\n\n\
         × This environment is externally managed\n\
         ╰─> To install Python packages system-wide, try apt install\n    \
         python3-xyz, where xyz is the package you are trying to\n    install.\n",
    )
    .expect("write");
    for format in ["text", "markdown"] {
        let o = crate::util::crashdoc()
            .args(["--format", format, "--top", "1"])
            .arg(&log)
            .output()
            .expect("run");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("PIP_BREAK_SYSTEM_PACKAGES"), "{out}");
        assert!(!out.contains("\\n"), "a literal \\n in {format}: {out}");
    }
}

// ── shortfall 6: `{{capture}}` in a title or explain ────────────────────────────────

/// A signature folder with one signature (constructed), whose title and explain use
/// `{{name}}` names given by the test.
fn prose_library(title_var: &str, explain_var: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let sig = format!(
        "id: demo-widget-failed
title: 'widget {{{{{title_var}}}}} failed'
category: other
severity: error
match:
  message: 'DemoWidgetError: widget (?P<widget>[a-z]+) failed'
explain: >
  The widget {{{{{explain_var}}}}} failed (constructed signature).
remediation:
  - description: Restart widget {{{{widget}}}}
references: [https://example.org/constructed]
"
    );
    std::fs::create_dir(dir.path().join("sigs")).expect("mkdir");
    std::fs::write(dir.path().join("sigs/demo-widget-failed.yaml"), sig).expect("write");
    let log = dir.path().join("demo.log");
    std::fs::write(&log, "DemoWidgetError: widget gears failed\n").expect("write");
    (dir, log)
}

#[test]
fn captures_fill_the_title_and_explain() {
    let (dir, log) = prose_library("widget", "widget");
    let o = crate::util::crashdoc()
        .args(["--no-builtin", "--signatures"])
        .arg(dir.path().join("sigs"))
        .arg(&log)
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(crate::util::code(&o), 0, "{out}{}", crate::util::stderr(&o));
    assert!(out.contains("widget gears failed"), "title: {out}");
    assert!(out.contains("The widget gears failed"), "explain: {out}");
    assert!(out.contains("Restart widget gears"), "description: {out}");
    assert!(!out.contains("{{"), "{out}");
}

#[test]
fn lint_refuses_a_prose_variable_that_is_not_a_capture() {
    let (dir, _) = prose_library("widgte", "widget");
    let o = crate::util::crashdoc()
        .args(["sig", "lint"])
        .arg(dir.path().join("sigs/demo-widget-failed.yaml"))
        .output()
        .expect("run");
    let e = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        crate::util::stderr(&o)
    );
    assert_ne!(crate::util::code(&o), 0, "{e}");
    assert!(
        e.contains("E007") && e.contains("`{{widgte}}` in title"),
        "{e}"
    );
    assert!(e.contains("known: widget"), "{e}");
}

/// The flashinfer-cubin mismatch line of the shipped scenario journal (real, line 225).
fn flash_line() -> String {
    let j = read("tests/data/scenario/journal.txt");
    j.lines().nth(224).expect("line 225").to_string()
}

// ── shortfall 13: several inputs in JSON are one JSON value ─────────────────────────

#[test]
fn json_of_several_inputs_is_one_array() {
    let o = crate::util::crashdoc()
        .args(["--format", "json"])
        .args([
            "tests/data/scenario/journal.txt",
            "tests/data/scenario/journal.txt",
        ])
        .output()
        .expect("run");
    assert_eq!(crate::util::code(&o), 0);
    let v = crate::util::json(&o);
    let a = v.as_array().expect("one array");
    assert_eq!(a.len(), 2);
    assert_eq!(
        a[1]["causes"][0]["signature"],
        "flashinfer-cubin-version-mismatch"
    );
    let one = crate::util::crashdoc()
        .args(["--format", "json", "tests/data/scenario/journal.txt"])
        .output()
        .expect("run");
    assert!(crate::util::json(&one).is_object(), "one input: one object");
}

// ── shortfall 14: a folder's .out/.err/.md files are read ───────────────────────────

#[test]
fn folder_input_reads_slurm_out_err_and_markdown_files() {
    let dir = tempfile::tempdir().expect("tmp");
    for name in ["slurm-4242.out", "job.err", "issue.md"] {
        std::fs::write(dir.path().join(name), flash_line() + "\n").expect("write");
    }
    let o = crate::util::crashdoc()
        .args(["--format", "jsonl"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(crate::util::code(&o), 0, "{}", crate::util::stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 3, "{out}");
    for name in ["slurm-4242.out", "job.err", "issue.md"] {
        assert!(out.contains(name), "{name}: {out}");
    }
}

// ── shortfall 8: a step whose command cannot be filled ──────────────────────────────

#[test]
fn an_unfilled_command_is_a_note_in_text_and_markdown_alike() {
    // the flashinfer line outside systemd: step 4 (`systemctl restart {{unit}}`) has no unit
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("one.log");
    std::fs::write(&log, flash_line() + "\n").expect("write");
    for format in ["text", "markdown"] {
        let o = crate::util::crashdoc()
            .args(["--top", "1", "--format", format])
            .arg(&log)
            .output()
            .expect("run");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains("{{"), "{format}: a template leaked: {out}");
        assert!(
            out.contains("(command not shown: needs `unit`"),
            "{format}: the step says why it has no command: {out}"
        );
    }
}

// ── shortfall 12: --follow without --idle says what ends an attempt ─────────────────

#[test]
fn follow_without_idle_hints_at_idle() {
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("train.log");
    std::fs::write(&log, flash_line() + "\n").expect("write");
    let o = crate::util::crashdoc()
        .arg("--follow")
        .pipe_stdin(&log)
        .expect("stdin")
        .output()
        .expect("run");
    let e = crate::util::stderr(&o);
    assert!(e.contains("add --idle SECS"), "{e}");
    let o = crate::util::crashdoc()
        .args(["--follow", "--idle", "1"])
        .pipe_stdin(&log)
        .expect("stdin")
        .output()
        .expect("run");
    assert!(
        !crate::util::stderr(&o).contains("--idle SECS"),
        "no hint when given"
    );
}

// ── shortfall 15: hints a new user needs ────────────────────────────────────────────

#[test]
fn explain_suggests_the_id_meant_and_exits_1_on_a_non_match() {
    let o = crate::util::crashdoc()
        .args(["explain", "--signature", "flashinfer-cubin-mismatch"])
        .arg("tests/data/scenario/journal.txt")
        .output()
        .expect("run");
    assert_eq!(crate::util::code(&o), 2);
    let e = crate::util::stderr(&o);
    assert!(
        e.contains("did you mean `flashinfer-cubin-version-mismatch`?"),
        "{e}"
    );
    let o = crate::util::crashdoc()
        .args(["explain", "--signature", "torch-cuda-out-of-memory"])
        .arg("tests/data/scenario/journal.txt")
        .output()
        .expect("run");
    assert_eq!(crate::util::code(&o), 1, "a non-match is exit 1");
}

#[test]
fn lint_suggests_the_category_meant() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = read("signatures/python/pip-externally-managed-environment.yaml")
        .replace("category: permission-denied", "category: gpu-oomm");
    let f = dir.path().join("pip-externally-managed-environment.yaml");
    std::fs::write(&f, text).expect("write");
    let o = crate::util::crashdoc()
        .args(["sig", "lint"])
        .arg(&f)
        .output()
        .expect("run");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        crate::util::stderr(&o)
    );
    assert_ne!(crate::util::code(&o), 0);
    assert!(all.contains("(did you mean `gpu-oom`?)"), "{all}");
}

#[test]
fn a_fatal_badge_is_red_not_green() {
    let o = crate::util::crashdoc()
        .args(["--color", "always", "--top", "1"])
        .arg("tests/data/scenario/journal.txt")
        .env_remove("NO_COLOR")
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\x1b[1;31mfatal\x1b[0m"), "{out:?}");
    assert!(
        !out.contains("\x1b[1;32m[version-mismatch · fatal"),
        "{out:?}"
    );
}

// ── item 5: --help ends with examples; the man page has EXAMPLES and ENVIRONMENT ─────

#[test]
fn help_ends_with_examples_and_man_has_examples_and_environment() {
    for path in [
        &[][..],
        &["run"],
        &["diagnose"],
        &["sig", "new"],
        &["corpus", "add"],
        &["corpus", "bless"],
    ] {
        let o = crate::util::crashdoc()
            .args(path)
            .arg("--help")
            .output()
            .expect("run");
        let out = String::from_utf8_lossy(&o.stdout);
        let tail = out.rsplit("Examples:").next().expect("examples");
        assert!(out.contains("Examples:\n  "), "{path:?}: {out}");
        assert!(
            tail.lines().filter(|l| l.starts_with("  ")).count() >= 1,
            "{out}"
        );
    }
    let o = crate::util::crashdoc().arg("man").output().expect("run");
    let man = String::from_utf8_lossy(&o.stdout);
    assert!(
        man.contains(".SH EXAMPLES") && man.contains(".SH ENVIRONMENT"),
        "{man}"
    );
    for var in [
        "CRASHDOC_SIGNATURES",
        "CRASHDOC_CACHE_DIR",
        "XDG_CACHE_HOME",
        "NO_COLOR",
    ] {
        assert!(man.contains(var), "{var}");
    }
}
