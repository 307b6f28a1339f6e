//! The command line a person reaches for (issue 18): install, conventions, readable
//! output, formats, the contributor path, team setup, `--follow`. Everything through the
//! CLI, as a user runs it.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

const SCENARIO: &str = "tests/data/scenario/journal.txt";

fn crashdoc() -> Command {
    let mut c = Command::cargo_bin("crashdoc").expect("binary");
    c.env("NO_COLOR", "1")
        .env_remove("CRASHDOC_SIGNATURES")
        .env("COLUMNS", "100");
    c
}

fn read(p: &str) -> String {
    std::fs::read_to_string(repo(p)).expect("read")
}

// ── 1. install and size ─────────────────────────────────────────────────────────────

#[test]
fn readme_says_how_to_install_right_after_the_first_commands() {
    let readme = read("README.md");
    let first_block = readme.find("cargo test").expect("the first commands");
    let install = readme
        .find("cargo install --locked --path .")
        .expect("the install command");
    let sample = readme.find("```text").expect("the sample output");
    assert!(
        first_block < install && install < sample,
        "install comes right after the first commands"
    );
    assert!(readme.contains("~/.cargo/bin/crashdoc"));
}

#[test]
fn release_profile_has_no_debug_info_and_profiling_keeps_it() {
    let toml = read("Cargo.toml");
    let rel = toml.split("[profile.release]").nth(1).expect("release");
    let rel = rel.split("\n[").next().unwrap_or(rel);
    assert!(!rel.contains("debug = 1"), "{rel}");
    let prof = toml.split("[profile.profiling]").nth(1).expect("profiling");
    assert!(prof.contains("inherits = \"release\"") && prof.contains("debug = 1"));
    assert!(read("benches/run.sh").contains("--profile profiling"));
}

// ── 2. conventions ──────────────────────────────────────────────────────────────────

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn inputs_of_jsonl(o: &std::process::Output) -> Vec<String> {
    stdout(o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("jsonl");
            v["input"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

#[test]
fn keeps_going_past_unreadable_inputs_and_exits_2_at_the_end() {
    let d = tempfile::TempDir::new().expect("tmp");
    let missing = d.path().join("missing.log");
    let o = crashdoc()
        .args(["--format", "jsonl"])
        .arg(repo(SCENARIO))
        .arg(&missing)
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(
        inputs_of_jsonl(&o).len(),
        2,
        "both readable inputs diagnosed"
    );
    assert!(
        stderr(&o).contains("missing.log: cannot open"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_directory_is_read_as_its_logs_recursively_in_name_order() {
    let d = tempfile::TempDir::new().expect("tmp");
    let log = std::fs::read(repo(SCENARIO)).expect("scenario");
    std::fs::create_dir_all(d.path().join("b/c")).expect("mkdir");
    std::fs::write(d.path().join("a.log"), &log).expect("write");
    std::fs::write(d.path().join("b/c/deep.txt"), &log).expect("write");
    std::fs::write(d.path().join("image.bin"), [0u8, 1, 2]).expect("write");
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.path(), d.path().join("b/loop")).expect("symlink loop");
    let o = crashdoc()
        .args(["--format", "jsonl"])
        .arg(d.path())
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let names = inputs_of_jsonl(&o);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].ends_with("a.log") && names[1].ends_with("deep.txt"),
        "{names:?}"
    );
    let empty = tempfile::TempDir::new().expect("tmp");
    let o = crashdoc().arg(empty.path()).output().expect("run");
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("is a directory with no log file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn quiet_prints_nothing_and_answers_with_the_exit_code() {
    let o = crashdoc()
        .arg("-q")
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert_eq!(code(&o), 0);
    assert!(o.stdout.is_empty());
    let o = crashdoc()
        .args(["--quiet", "--no-builtin"])
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert_eq!(code(&o), 1);
    assert!(o.stdout.is_empty());
}

#[test]
fn output_writes_the_report_to_a_file() {
    let d = tempfile::TempDir::new().expect("tmp");
    let f = d.path().join("report.json");
    let o = crashdoc()
        .args(["--format", "json", "-o"])
        .arg(&f)
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).expect("report")).expect("json");
    assert_eq!(
        v["causes"][0]["signature"],
        "flashinfer-cubin-version-mismatch"
    );
    let o = crashdoc()
        .args(["--color", "auto", "--output"])
        .arg(&f)
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert_eq!(code(&o), 0);
    let text = std::fs::read_to_string(&f).expect("report");
    assert!(!text.contains('\u{1b}'), "no colour in a file");
}

#[test]
fn a_mistyped_subcommand_gets_a_suggestion_not_a_file_error() {
    let o = crashdoc().args(["diagnos", "x.log"]).output().expect("run");
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(e.contains("unrecognized subcommand 'diagnos'"), "{e}");
    assert!(e.contains("'diagnose'"), "{e}");
    assert!(!e.contains("cannot open"), "{e}");
    let o = crashdoc().args(["sgi", "list"]).output().expect("run");
    assert!(stderr(&o).contains("'sig'"), "{}", stderr(&o));
    // an existing file of that name is still a file
    let d = tempfile::TempDir::new().expect("tmp");
    std::fs::write(d.path().join("diagnos"), "").expect("write");
    let o = crashdoc()
        .arg("diagnos")
        .current_dir(d.path())
        .output()
        .expect("run");
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}

#[test]
fn top_zero_and_formats_that_do_not_apply_are_refused() {
    let o = crashdoc()
        .args(["--top", "0"])
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--top"), "{}", stderr(&o));
    let o = crashdoc()
        .args(["sig", "atoms", "--format", "markdown"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--format"), "{}", stderr(&o));
}

/// The table in README.md "Exit codes", row by row.
#[test]
fn exit_code_table_for_several_inputs() {
    let d = tempfile::TempDir::new().expect("tmp");
    let empty = d.path().join("empty.log");
    std::fs::write(&empty, "").expect("write");
    let missing = d.path().join("missing.log");
    let scenario = repo(SCENARIO);
    let bad_lib = d.path().join("lib");
    std::fs::create_dir_all(&bad_lib).expect("mkdir");
    std::fs::write(bad_lib.join("x.yaml"), "id: [").expect("write");
    let cases: [(&[&Path], &[&str], i32); 5] = [
        (&[&scenario, &empty], &[], 0),
        (&[&empty, &empty], &[], 1),
        (&[&scenario, &missing], &[], 2),
        (&[&empty, &missing], &[], 2),
        (&[&scenario], &["--signatures"], 3),
    ];
    for (files, extra, want) in cases {
        let mut c = crashdoc();
        c.arg("-q");
        if !extra.is_empty() {
            c.args(extra).arg(&bad_lib);
        }
        let o = c.args(files).output().expect("run");
        assert_eq!(code(&o), want, "{files:?} {extra:?}: {}", stderr(&o));
    }
    let readme = read("README.md");
    for row in [
        "| 0 | a cause was found in at least one input",
        "| 1 | no known cause found in any input",
        "| 2 | usage or input error",
        "| 3 | the signature library is broken",
    ] {
        assert!(readme.contains(row), "README exit-code table: {row}");
    }
}

// ── 3. output a person can read ─────────────────────────────────────────────────────

const SAMPLE_ARGS: [&str; 4] = ["--width", "100", "--top", "1"];

/// The README's sample output is the real output. `CRASHDOC_BLESS=1 cargo test --test
/// cli_ux readme_sample` rewrites it.
#[test]
fn readme_sample_output_is_the_real_output() {
    let o = crashdoc()
        .args(SAMPLE_ARGS)
        .arg(SCENARIO)
        .current_dir(repo(""))
        .output()
        .expect("run");
    let block = format!(
        "```text\n$ crashdoc {} {SCENARIO}\n{}```\n",
        SAMPLE_ARGS.join(" "),
        stdout(&o)
    );
    let readme = read("README.md");
    let (start, end) = ("<!-- sample:start -->\n", "<!-- sample:end -->");
    let a = readme.find(start).expect("start marker") + start.len();
    let b = readme.find(end).expect("end marker");
    if readme[a..b] != block && std::env::var_os("CRASHDOC_BLESS").is_some() {
        let new = format!("{}{block}{}", &readme[..a], &readme[b..]);
        std::fs::write(repo("README.md"), new).expect("write README");
        return;
    }
    assert!(
        readme[a..b] == block,
        "README's sample output differs from the real one: regenerate it with \
         `CRASHDOC_BLESS=1 cargo test --test integration cli_ux::readme_sample`"
    );
}

fn text_of(args: &[&str], log: &Path) -> String {
    let o = crashdoc().args(args).arg(log).output().expect("run");
    stdout(&o)
}

#[test]
fn evidence_keeps_the_message_and_shortens_the_prefix() {
    let t = text_of(&["--width", "100"], &repo(SCENARIO));
    let ev: Vec<&str> = t.lines().filter(|l| l.contains(" │ ")).collect();
    assert!(!ev.is_empty(), "{t}");
    for l in &ev {
        assert!(l.chars().count() <= 100, "fits 100 columns: {l}");
    }
    assert!(
        ev[0].contains("RuntimeError: flashinfer-cubin version (0.6.3) does not match"),
        "the message is shown, the prefix shortened: {}",
        ev[0]
    );
    // piped without --width: whole lines
    let t = text_of(&[], &repo(SCENARIO));
    assert!(t.contains(
        "(Worker_TP4 pid=216054) ERROR 02-20 23:31:36 [multiproc_executor.py:783] RuntimeError: \
         flashinfer-cubin version (0.6.3) does not match flashinfer version (0.6.4). Please \
         install the same version of both packages."
    ));
}

/// The explanation ends at the end of a sentence, never in the middle of one.
#[test]
fn why_is_never_cut_mid_sentence() {
    for log in [
        "corpus/inkypi-host-oom",
        "corpus/facechain-version-mismatch",
        "tests/data/scenario",
    ] {
        for width in [None, Some("80")] {
            let mut c = crashdoc();
            c.args(["--top", "5"]);
            if let Some(w) = width {
                c.args(["--width", w]);
            }
            let t = stdout(&c.arg(repo(log)).output().expect("run"));
            let mut whys = 0;
            let lines: Vec<&str> = t.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                if !l.starts_with("   Why: ") {
                    continue;
                }
                whys += 1;
                let mut last = *l;
                for next in &lines[i + 1..] {
                    if !next.starts_with("        ") || next.trim_start().starts_with('$') {
                        break;
                    }
                    last = next;
                }
                let end = last.trim_end();
                assert!(
                    end.ends_with('.')
                        || end.ends_with(".)")
                        || end.ends_with('`')
                        || end.ends_with("(… --format json for the rest)"),
                    "{log} width {width:?}: {l} … {end}"
                );
            }
            assert!(whys > 0, "{log}");
        }
    }
}

#[test]
fn the_gutter_fits_a_seven_digit_line_number() {
    let d = tempfile::TempDir::new().expect("tmp");
    let mut log = "\n".repeat(1_200_000).into_bytes();
    log.extend(std::fs::read(repo(SCENARIO)).expect("scenario"));
    let p = d.path().join("long.log");
    std::fs::write(&p, log).expect("write");
    let t = text_of(&["--width", "120"], &p);
    let ev: Vec<&str> = t.lines().filter(|l| l.contains(" │ ")).collect();
    assert!(ev.iter().any(|l| l.starts_with("   1200371 │ ")), "{ev:?}");
    let bar = ev.iter().map(|l| l.find('│')).collect::<Vec<_>>();
    assert!(bar.windows(2).all(|w| w[0] == w[1]), "aligned: {ev:?}");
}

#[test]
fn when_is_worded_as_a_phrase() {
    let t = text_of(&["--width", "100"], &repo(SCENARIO));
    assert!(!t.contains("when only if"), "{t}");
    assert!(!t.contains("when always"), "{t}");
    let o = crashdoc()
        .args(["--format", "markdown"])
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    let md = stdout(&o);
    assert!(
        !md.contains("when only if") && !md.contains("when always"),
        "{md}"
    );
}

// ── 6/7. an edited copy of a built-in signature, team folders ───────────────────────

/// A copy of the embedded library's folder with one signature edited (its title).
fn edited_library() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::TempDir::new().expect("tmp");
    let lib = d.path().join("signatures");
    let o = std::process::Command::new("cp")
        .arg("-r")
        .arg(repo("signatures"))
        .arg(&lib)
        .output()
        .expect("cp");
    assert!(o.status.success());
    let file = walk_find(&lib, "flashinfer-cubin-version-mismatch.yaml").expect("the file");
    let text = std::fs::read_to_string(&file).expect("read");
    let edited = text.replacen("title: ", "title: EDITED ", 1);
    std::fs::write(&file, edited).expect("write");
    (d, lib)
}

/// A folder library is compiled once and kept (`CRASHDOC_CACHE_DIR`); an edited file
/// compiles afresh under another name; the entry is what a run reads (an entry swapped in
/// shows); an entry that does not decode is compiled again and rewritten.
#[test]
fn a_folder_library_is_compiled_once_and_again_when_a_file_changes() {
    let (_d, lib) = edited_library();
    let cache = tempfile::TempDir::new().expect("tmp");
    let run = || {
        let o = crashdoc()
            .env("CRASHDOC_CACHE_DIR", cache.path())
            .args(["--top", "1", "--signatures"])
            .arg(&lib)
            .arg(repo(SCENARIO))
            .output()
            .expect("run");
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        stdout(&o)
    };
    let entries = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(cache.path())
            .expect("cache")
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    let first = run();
    assert!(first.contains("1. EDITED "), "{first}");
    let one = entries();
    assert_eq!(one.len(), 1, "{one:?}");
    assert_eq!(run(), first);
    assert_eq!(entries(), one);
    // an edit: a second entry, the edited title
    let file = walk_find(&lib, "flashinfer-cubin-version-mismatch.yaml").expect("the file");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(&file, text.replacen("EDITED ", "EDITED AGAIN ", 1)).expect("write");
    assert!(run().contains("1. EDITED AGAIN "));
    let two = entries();
    assert_eq!(two.len(), 2, "{two:?}");
    let new = two
        .iter()
        .find(|p| !one.contains(p))
        .expect("the new entry");
    // an entry carries the digest of its source files: the first library's bytes under
    // the new name are not used (issue 30, a planted entry), the files are compiled again
    std::fs::copy(&one[0], new).expect("swap");
    assert!(run().contains("1. EDITED AGAIN "));
    // bytes that do not decode: compiled again, rewritten
    std::fs::write(new, b"crashdoc-frozen-1\n\xff\xff").expect("garble");
    assert!(run().contains("1. EDITED AGAIN "));
    assert!(std::fs::metadata(new).expect("entry").len() > 1000);
}

fn walk_find(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = walk_find(&p, name) {
                return Some(f);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}

#[test]
fn an_edited_copy_of_the_library_replaces_the_builtin_signatures() {
    let (_d, lib) = edited_library();
    let o = crashdoc()
        .arg("--signatures")
        .arg(&lib)
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("1. EDITED "), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(
        e.contains("note: 1 built-in signature(s) replaced")
            && e.contains("flashinfer-cubin-version-mismatch"),
        "{e}"
    );
    // the same through CRASHDOC_SIGNATURES and through crashdoc.toml (found upward)
    let o = crashdoc()
        .env("CRASHDOC_SIGNATURES", &lib)
        .arg(repo(SCENARIO))
        .output()
        .expect("run");
    assert!(stdout(&o).contains("1. EDITED "), "{}", stderr(&o));
    let team = lib.parent().expect("parent");
    std::fs::write(
        team.join("crashdoc.toml"),
        "signatures = [\"signatures\"]\nformat = \"json\"\ntop = 1\n",
    )
    .expect("write");
    let sub = team.join("work/here");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let o = crashdoc()
        .arg(repo(SCENARIO))
        .current_dir(&sub)
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json by config");
    assert_eq!(v["causes"].as_array().map(Vec::len), Some(1), "top = 1");
    assert!(v["causes"][0]["title"]
        .as_str()
        .is_some_and(|t| t.starts_with("EDITED")));
    // the command line wins over the file
    let o = crashdoc()
        .args(["--format", "text", "--top", "2"])
        .arg(repo(SCENARIO))
        .current_dir(&sub)
        .output()
        .expect("run");
    assert!(stdout(&o).starts_with("crashdoc: "), "{}", stdout(&o));
    std::fs::write(team.join("crashdoc.toml"), "bogus = 1\n").expect("write");
    let o = crashdoc()
        .arg(repo(SCENARIO))
        .current_dir(&sub)
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
    assert!(
        // located (serde's deny_unknown_fields through the toml crate)
        stderr(&o).contains("crashdoc.toml:1:1: unknown field `bogus`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sig_lint_takes_files() {
    let (_d, lib) = edited_library();
    let file = walk_find(&lib, "flashinfer-cubin-version-mismatch.yaml").expect("file");
    let o = crashdoc()
        .args(["sig", "lint"])
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("in 1 file(s)"), "{}", stdout(&o));
}

// ── 4. formats for the library's tools ──────────────────────────────────────────────

fn json_out(args: &[&str]) -> (i32, serde_json::Value) {
    let o = crashdoc().args(args).output().expect("run");
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", stderr(&o)));
    (code(&o), v)
}

#[test]
fn sig_list_rules_list_and_sig_test_speak_json() {
    let (c, v) = json_out(&["sig", "list", "--format", "json"]);
    assert_eq!(c, 0);
    let sigs = v.as_array().expect("a list");
    assert!(sigs.len() > 100);
    assert!(sigs
        .iter()
        .any(|s| s["id"] == "flashinfer-cubin-version-mismatch"
            && s["category"] == "version-mismatch"));
    let (c, v) = json_out(&["rules", "list", "--format", "json"]);
    assert_eq!(c, 0);
    assert!(v
        .as_array()
        .is_some_and(|r| r.iter().all(|r| r["id"].is_string())));
    let (c, v) = json_out(&[
        "sig",
        "test",
        "--filter",
        "flashinfer-cubin-version-mismatch",
        "--format",
        "json",
    ]);
    assert_eq!(c, 0);
    assert!(v["passed"].as_u64().is_some_and(|n| n > 0), "{v}");
    assert_eq!(v["failed"], 0);
}

#[test]
fn sig_lint_writes_sarif() {
    let d = tempfile::TempDir::new().expect("tmp");
    // CONSTRUCTED: a signature with an unknown field (E001)
    std::fs::write(
        d.path().join("broken-one.yaml"),
        "id: broken-one\nflavour: sour\n",
    )
    .expect("write");
    let o = crashdoc()
        .args(["sig", "lint", "--no-builtin", "--format", "sarif"])
        .arg(d.path())
        .output()
        .expect("run");
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let log: serde_sarif::sarif::Sarif =
        serde_json::from_slice(&o.stdout).expect("valid SARIF 2.1.0");
    let v = serde_json::to_value(&log).expect("value");
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["level"], "error");
    assert!(r["ruleId"].as_str().is_some_and(|c| c.starts_with('E')));
    assert!(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .is_some_and(|u| u.ends_with("broken-one.yaml"))
    );
    // explain has no SARIF: one --format set per kind of output
    let o = crashdoc()
        .args(["explain", "--signature", "x", "--format", "sarif", "x.log"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
}

// ── 5/6. no bar when piped; sig new outside a library ───────────────────────────────

#[test]
fn sig_new_refuses_to_write_outside_a_signature_library() {
    let d = tempfile::TempDir::new().expect("tmp");
    let o = crashdoc()
        .args(["sig", "new", "--from"])
        .arg(repo("tests/data/contrib/nanochat-rotary-cache.log"))
        .current_dir(d.path())
        .output()
        .expect("run");
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--out DIR"), "{}", stderr(&o));
    assert!(!d.path().join("signatures").exists(), "nothing created");
}

#[test]
fn corpus_run_draws_no_bar_when_stderr_is_not_a_terminal() {
    let d = tempfile::TempDir::new().expect("tmp");
    let inc = d.path().join("inkypi-host-oom");
    std::fs::create_dir_all(&inc).expect("mkdir");
    for f in ["log.txt", "expected.yaml"] {
        std::fs::copy(repo(&format!("corpus/inkypi-host-oom/{f}")), inc.join(f)).expect("copy");
    }
    let o = crashdoc()
        .args(["corpus", "run", "--format", "json"])
        .arg(d.path())
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("replaying incidents"),
        "{}",
        stderr(&o)
    );
}

/// The completion scripts are generated from the clap definition and parse in their
/// shell (bash always; zsh and fish when installed, as CI installs them).
#[test]
fn completion_scripts_parse_in_their_shells() {
    for (shell, check) in [("bash", "bash"), ("zsh", "zsh"), ("fish", "fish")] {
        let o = crashdoc()
            .args(["completions", shell])
            .output()
            .expect("run");
        assert_eq!(code(&o), 0, "{shell}: {}", stderr(&o));
        let script = String::from_utf8(o.stdout).expect("utf-8");
        for sub in ["diagnose", "explain", "preflight", "corpus"] {
            assert!(script.contains(sub), "{shell} script lacks {sub}");
        }
        if std::process::Command::new(check)
            .arg("-c")
            .arg("true")
            .output()
            .is_err()
        {
            continue; // the shell is not installed here
        }
        let dir = tempfile::tempdir().expect("tmp");
        let f = dir.path().join(format!("crashdoc.{shell}"));
        std::fs::write(&f, &script).expect("write");
        let parsed = std::process::Command::new(check)
            .arg("-n")
            .arg(&f)
            .output()
            .expect("shell");
        assert!(
            parsed.status.success(),
            "{shell} -n: {}",
            String::from_utf8_lossy(&parsed.stderr)
        );
    }
    let o = crashdoc()
        .args(["completions", "tcsh"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
}

/// `crashdoc man` is a roff page naming every subcommand; `crashdoc man sig test` is that
/// subcommand's page; an unknown subcommand is an input error that lists the known ones.
#[test]
fn man_pages_cover_every_subcommand() {
    let o = crashdoc().arg("man").output().expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = String::from_utf8(o.stdout).expect("utf-8");
    assert!(
        page.contains(".TH crashdoc 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    for sub in [
        "diagnose",
        "extract",
        "sig",
        "corpus",
        "explain",
        "preflight",
        "rules",
    ] {
        assert!(page.contains(sub), "man page lacks {sub}");
    }
    let o = crashdoc()
        .args(["man", "sig", "test"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = String::from_utf8(o.stdout).expect("utf-8");
    assert!(page.contains(".TH crashdoc-sig-test 1"));
    assert!(page.contains("\\-\\-filter"), "the options are listed");
    let o = crashdoc().args(["man", "nope"]).output().expect("run");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no such subcommand") && stderr(&o).contains("diagnose"));
}
