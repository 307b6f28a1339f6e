//! `crashdoc corpus run` / `corpus add` and the CI output formats, through the binary
//! (the whole corpus is replayed by the binary once per test that needs it; JUnit and
//! the README's table read one in-process run, checked equal to the binary's).
//!
//! - the regression gate: a copy of the embedded library with one signature broken on
//!   purpose must fail the run against the committed baseline and name the incidents;
//! - JUnit and SARIF are parsed back (roxmltree; serde_json and serde-sarif's
//!   schema-derived types) and checked for the fields their formats require;
//! - GitHub annotations stay within GitHub's limit and are escaped;
//! - the README's corpus table is the command's current output.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use crashdoc::corpus::run::{run_corpus, Run};
use crashdoc::corpus::{self, baseline, render};
use crashdoc::engine::matcher::EngineKind;
use crashdoc::knowledge::signature::{self, load::builtin_files};

use crate::util::{crashdoc, root};

/// The signature broken on purpose, and how: its category is edited to a wrong one, so
/// its patterns still match the incidents it explains and give them a confident wrong
/// answer. (Breaking its patterns instead no longer regresses anything: with the
/// signature silent, the category model infers `gpu-oom` from the same lines.)
const BROKEN: &str = "torch-cuda-out-of-memory";

fn break_signature(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with("category:") {
                "category: disk-full".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The embedded library's files written to a folder, one signature broken.
fn broken_library() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut broke = 0;
    for (name, text) in builtin_files() {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        let text = if name.ends_with(&format!("/{BROKEN}.yaml")) {
            let t = break_signature(text);
            assert_ne!(&t, text, "the signature's patterns were found and altered");
            broke += 1;
            t
        } else {
            text.to_string()
        };
        std::fs::write(&p, text).expect("write");
    }
    assert_eq!(broke, 1, "{BROKEN}.yaml is in the embedded library");
    dir
}

#[test]
fn the_regression_gate_fails_and_names_the_incidents_a_broken_signature_breaks() {
    let saved = baseline::read(&root().join("corpus/baseline.json")).expect("baseline");
    // the incidents the broken signature was right about
    let exposed: BTreeSet<String> = saved
        .incidents
        .iter()
        .filter(|i| i.ok && i.signatures.first().map(String::as_str) == Some(BROKEN))
        .map(|i| i.name.clone())
        .collect();
    assert!(!exposed.is_empty(), "{BROKEN} is right on some incident");

    let lib = broken_library();
    let out = crashdoc()
        .args([
            "corpus",
            "run",
            "corpus",
            "--baseline",
            "corpus/baseline.json",
        ])
        .arg("--no-builtin")
        .arg("--signatures")
        .arg(lib.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "the gate fails");
    let err = String::from_utf8_lossy(&out.stderr);
    let named: BTreeSet<String> = err
        .lines()
        .filter_map(|l| l.strip_prefix("REGRESSION "))
        .filter_map(|l| l.split(':').next())
        .map(str::to_string)
        .collect();
    assert!(!named.is_empty(), "regressions are named:\n{err}");
    // only incidents the broken signature was the answer of can regress …
    assert!(named.is_subset(&exposed), "{named:?} ⊄ {exposed:?}");
    // … and the summary line names each
    let summary = err
        .lines()
        .find(|l| l.contains("regressed against"))
        .expect("summary line");
    for n in &named {
        assert!(summary.contains(n.as_str()), "{summary}");
    }

    // the same through the library API, in memory: the same regressions
    let files: Vec<signature::load::LibraryFile> = builtin_files()
        .iter()
        .map(|(n, t)| signature::load::LibraryFile {
            name: n.to_string(),
            text: if n.ends_with(&format!("/{BROKEN}.yaml")) {
                break_signature(t)
            } else {
                t.to_string()
            },
        })
        .collect();
    let broken = crashdoc::knowledge::signature::docs::with_model(
        signature::load::compile_files(&files).expect("compiles"),
    );
    let incidents = corpus::load_dir(&root().join("corpus")).expect("corpus");
    let broken = crashdoc::engine::matcher::Compiled::new(&broken).expect("compiled");
    let run = run_corpus(
        &broken,
        EngineKind::Prefilter,
        &incidents,
        &indicatif::ProgressBar::hidden(),
    );
    let cmp = baseline::compare(&saved, &run.report);
    let api: BTreeSet<String> = cmp.regressions.iter().map(|c| c.name.clone()).collect();
    assert_eq!(api, named);
    assert!(!cmp.passed());
}

/// The corpus replayed once with the embedded library, in process, shared by the tests
/// that read a whole run (JUnit, the README's table). The CLI's own run is checked
/// against it once, in [`the_committed_baseline_passes_and_update_rewrites_it`].
static RUN: LazyLock<Run> = LazyLock::new(|| {
    let incidents = corpus::load_dir(&root().join("corpus")).expect("corpus");
    run_corpus(
        crate::util::compiled(),
        EngineKind::Prefilter,
        &incidents,
        &indicatif::ProgressBar::hidden(),
    )
});

/// A corpus of two real incidents of the repository's corpus, in a temporary folder
/// (for what does not depend on the corpus's size: `--update`, a corrupt baseline).
fn two_incidents() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["vllm-gpu-oom", "bert-none-finetune-complete"] {
        let to = dir.path().join(name);
        std::fs::create_dir(&to).expect("mkdir");
        for f in ["log.txt", "expected.yaml"] {
            std::fs::copy(root().join("corpus").join(name).join(f), to.join(f)).expect("copy");
        }
    }
    dir
}

#[test]
fn the_committed_baseline_passes_and_update_rewrites_it() {
    let out = crashdoc()
        .args([
            "corpus",
            "run",
            "corpus",
            "--format",
            "markdown",
            "--baseline",
            "corpus/baseline.json",
        ])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("0 regression(s)"), "{err}");
    // the binary's run is the in-process run the other tests read
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        render::markdown(&RUN.report)
    );

    let small = two_incidents();
    let tmp = tempfile::tempdir().expect("tempdir");
    let b = tmp.path().join("b.json");
    crashdoc()
        .args(["corpus", "run"])
        .arg(small.path())
        .args(["--format", "json", "--update", "--baseline"])
        .arg(&b)
        .assert()
        .success();
    let written = baseline::read(&b).expect("readable");
    assert_eq!(written.incidents.len(), 2);
    let committed = baseline::read(&root().join("corpus/baseline.json")).expect("baseline");
    for i in &written.incidents {
        let c = committed.get(&i.name).expect("a committed incident");
        assert_eq!((i.ok, &i.signatures), (c.ok, &c.signatures), "{}", i.name);
    }
    // a corrupt baseline is an input error naming the file
    std::fs::write(&b, "{\"format\": 1, \"summary\": ").expect("write");
    let out = crashdoc()
        .args(["corpus", "run"])
        .arg(small.path())
        .arg("--baseline")
        .arg(&b)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("b.json:1:"));
}

#[test]
fn junit_output_parses_and_has_the_required_fields() {
    let xml = crashdoc::corpus::junit::render(&RUN, "crashdoc corpus");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let top = doc.root_element();
    assert_eq!(top.tag_name().name(), "testsuites");
    let suites: Vec<_> = top
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1);
    let suite = suites[0];
    let num = |n: roxmltree::Node<'_, '_>, a: &str| -> usize {
        n.attribute(a)
            .unwrap_or_else(|| panic!("{} has no {a}", n.tag_name().name()))
            .parse()
            .expect("a number")
    };
    assert!(suite.attribute("name").is_some_and(|s| !s.is_empty()));
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let incidents = corpus::load_dir(&root().join("corpus")).expect("corpus");
    assert_eq!(num(suite, "tests"), incidents.len());
    assert_eq!(cases.len(), incidents.len());
    let mut failures = 0;
    let mut errors = 0;
    for c in &cases {
        assert!(c.attribute("name").is_some_and(|s| !s.is_empty()));
        assert!(c
            .attribute("classname")
            .is_some_and(|s| s.starts_with("corpus.")));
        let t: f64 = c.attribute("time").expect("time").parse().expect("seconds");
        assert!(t >= 0.0);
        for f in c.children().filter(|n| n.is_element()) {
            match f.tag_name().name() {
                "failure" => failures += 1,
                "error" => errors += 1,
                other => panic!("unexpected <{other}> in a testcase"),
            }
            assert!(f.attribute("message").is_some_and(|m| !m.is_empty()));
            assert!(f.attribute("type").is_some());
        }
    }
    assert_eq!(num(suite, "failures"), failures);
    assert_eq!(num(suite, "errors"), errors);
    assert_eq!(num(suite, "skipped"), 0);
    assert_eq!(num(top, "tests"), incidents.len());
    // the failures are the wrong incidents of the committed baseline
    let saved = baseline::read(&root().join("corpus/baseline.json")).expect("baseline");
    assert_eq!(
        failures + errors,
        saved.incidents.iter().filter(|i| !i.ok).count()
    );
}

fn some_logs() -> Vec<String> {
    [
        "vllm-gpu-oom",
        "inkypi-host-oom",
        "facechain-version-mismatch",
        "club-3090-none",
    ]
    .iter()
    .map(|n| format!("corpus/{n}/log.txt"))
    .collect()
}

#[test]
fn sarif_output_parses_and_has_the_required_fields() {
    let logs = some_logs();
    let out = crashdoc()
        .args(["diagnose", "--format", "sarif"])
        .args(&logs)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    // the schema-derived object model accepts it (required fields are not optional there)
    let typed: serde_sarif::sarif::Sarif = serde_json::from_str(&text).expect("SARIF");
    assert_eq!(typed.runs.len(), 1);

    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"].as_str().is_some_and(|s| s.contains("2.1.0")));
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "crashdoc");
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let ids: Vec<&str> = rules
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "one rule per signature");
    let lib = crate::util::library();
    for r in rules {
        let id = r["id"].as_str().expect("id");
        assert!(lib.get(id).is_some(), "rule {id} is a signature");
        assert!(r["shortDescription"]["text"]
            .as_str()
            .is_some_and(|s| !s.is_empty()));
    }
    let results = run["results"].as_array().expect("results");
    assert!(results.len() >= 3, "a result per cause");
    let mut files_seen = BTreeSet::new();
    for res in results {
        let id = res["ruleId"].as_str().expect("ruleId");
        let idx = res["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(ids[idx], id);
        let sig = lib.get(id).expect("signature");
        let want = match sig.severity {
            signature::Severity::Warning => "warning",
            signature::Severity::Benign => "note",
            _ => "error",
        };
        assert_eq!(res["level"], want);
        assert!(res["message"]["text"]
            .as_str()
            .is_some_and(|s| !s.is_empty()));
        for loc in res["locations"].as_array().expect("locations") {
            let p = &loc["physicalLocation"];
            let uri = p["artifactLocation"]["uri"].as_str().expect("uri");
            assert!(logs.iter().any(|l| l == uri), "{uri} is an input");
            files_seen.insert(uri.to_string());
            let line = p["region"]["startLine"].as_u64().expect("startLine") as usize;
            assert!(line >= 1);
            // the region really is the evidence line of that log
            let raw = std::fs::read_to_string(root().join(uri)).expect("log");
            let at = raw.lines().nth(line - 1).expect("line exists");
            let snippet = p["region"]["snippet"]["text"].as_str().expect("snippet");
            assert!(
                at.contains(snippet.trim()) || snippet.contains(at.trim()),
                "{uri}:{line}: {at:?} vs {snippet:?}"
            );
        }
    }
    // the healthy log has no result; the three failing ones do
    assert_eq!(files_seen.len(), 3, "{files_seen:?}");
}

#[test]
fn github_annotations_stay_within_the_limit_and_are_escaped() {
    let incidents = corpus::load_dir(&root().join("corpus")).expect("corpus");
    let logs: Vec<String> = incidents
        .iter()
        .map(|i| format!("corpus/{}/log.txt", i.name))
        .collect();
    let out = crashdoc()
        .args(["diagnose", "--format", "github"])
        .args(&logs)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let commands: Vec<&str> = text.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(
        commands.len(),
        10,
        "GitHub shows at most 10 per step:\n{text}"
    );
    assert!(text.contains("more cause(s) not annotated"));
    let shape = regex::Regex::new(
        r"^::(error|warning|notice) (file=[^,:]+,(line=[0-9]+,)?)?title=[^,:]*::[^\r\n]+$",
    )
    .expect("regex");
    for c in &commands {
        assert!(shape.is_match(c), "{c}");
        let (props, _) = c[2..].split_once("::").expect("two parts");
        if let Some(f) = props.split(',').find_map(|p| p.split_once("file=")) {
            assert!(root().join(f.1).exists(), "{}", f.1);
        }
    }
}

#[test]
fn jsonl_is_one_diagnosis_per_line() {
    let logs = some_logs();
    let out = crashdoc()
        .args(["diagnose", "--format", "jsonl"])
        .args(&logs)
        .output()
        .expect("run");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), logs.len());
    for (l, log) in lines.iter().zip(&logs) {
        let v: serde_json::Value = serde_json::from_str(l).expect("a JSON document per line");
        assert_eq!(v["input"], log.as_str());
        assert!(v["causes"].is_array());
    }
}

/// `crashdoc corpus add LOG ARGS… --dir DIR`.
fn corpus_add(log: &std::path::Path, args: &[&str], dir: &std::path::Path) -> std::process::Output {
    crashdoc()
        .args(["corpus", "add"])
        .arg(log)
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("run")
}

#[test]
fn corpus_add_files_an_incident_that_loads_and_scores() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let log = root().join("corpus/vllm-gpu-oom/log.txt");
    // re-files an incident of the corpus under its own source address
    let original = corpus::load_dir(&root().join("corpus"))
        .expect("corpus")
        .into_iter()
        .find(|i| i.name == "vllm-gpu-oom")
        .expect("vllm-gpu-oom");
    let src = original.expected.source.as_str();
    let refile = ["--source", src, "--via", "search", "--name", "refiled"];
    let o = corpus_add(&log, &refile, dir);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let all = corpus::load_dir(dir).expect("loads");
    assert_eq!(all.len(), 1);
    let inc = &all[0];
    assert_eq!(inc.expected.source, src);
    assert_eq!(inc.expected.via.as_deref(), Some("search"));
    assert_eq!(inc.expected.category, "gpu-oom");
    assert!(inc.expected.signature.is_some());
    assert_eq!(
        std::fs::read(&inc.log).expect("copy"),
        std::fs::read(&log).expect("original")
    );
    // the proposal, replayed, is right by construction
    let mut engine =
        crashdoc::engine::pipeline::Engine::new(crate::util::compiled(), EngineKind::Prefilter);
    let (o, _) = corpus::evaluate(&mut engine, inc).expect("diagnose");
    assert!(o.ok, "{:?}", o.problems);
    // how the log was read is asked for: without --via, nothing is filed
    let o = corpus_add(&log, &["--source", src, "--name", "unasked"], dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--via"));
    assert!(!dir.join("unasked").exists());
    // filing it again is refused; a bad category is an input error
    assert_eq!(corpus_add(&log, &refile, dir).status.code(), Some(2));
    let bad = ["--source", src, "--via", "search", "--category", "gpu-om"];
    assert_eq!(corpus_add(&log, &bad, dir).status.code(), Some(2));
    // a log nothing explains needs its category: it is not filed as healthy
    let healthy = root().join("corpus/vllm-none/log.txt");
    let unexplained = ["--source", src, "--via", "search", "--name", "unexplained"];
    let out = corpus_add(&healthy, &unexplained, dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--category"));
    assert!(!dir.join("unexplained").exists());
    let none = [
        "--source",
        src,
        "--via",
        "search",
        "--name",
        "healthy",
        "--category",
        "none",
    ];
    assert_eq!(corpus_add(&healthy, &none, dir).status.code(), Some(0));
}

#[test]
fn readme_shows_the_current_corpus_table() {
    let want = render::markdown(&RUN.report);
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let (start, end) = ("<!-- corpus:start -->\n", "<!-- corpus:end -->");
    let a = readme.find(start).expect("start marker") + start.len();
    let b = readme.find(end).expect("end marker");
    assert_eq!(
        &readme[a..b],
        want,
        "README's corpus table is stale: regenerate it with `crashdoc corpus run corpus --format markdown`"
    );
}
