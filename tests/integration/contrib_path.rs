//! Issue 31's contributor path and output shortfalls: `sig new` on a log already
//! explained (shortfall 5), `--width 80` (shortfall 7), rare signatures and the
//! seen/unseen split (shortfall 3), and the whole contributor path on a fresh signature
//! in a temporary copy of the repository (Deliver item 4).

use std::path::Path;
use std::process::Output;

use crate::util::{code, crashdoc, repo, stderr};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Display columns of a line (East Asian wide characters count two), ANSI styles
/// removed.
fn columns(line: &str) -> usize {
    let plain = regex::Regex::new("\x1b\\[[0-9;]*m")
        .expect("regex")
        .replace_all(line, "");
    plain
        .chars()
        .map(|c| {
            let wide = matches!(c as u32, 0x1100..=0x115F | 0x2E80..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x1F300..=0x1FAFF | 0x20000..=0x3FFFD);
            if wide {
                2
            } else {
                1
            }
        })
        .sum()
}

/// A line allowed over the width: a printed command (pasted whole) or a single
/// unbreakable token (a path, a URL) after the indentation.
fn unbreakable(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("$ ") || !t.contains(' ')
}

/// Shortfall 7: `--width 80` prints no line over 80 columns in the text report (the
/// diagnosis and the extraction view), on reports of several shapes: a crash loop with
/// noise, a known cause with long commands and URLs, a no-cause report with an inferred
/// cause, a wide-character log; colored or not.
#[test]
fn width_80_prints_no_line_over_80_columns() {
    let logs = [
        "tests/data/scenario/journal.txt",
        "corpus/vllm-other/log.txt",
        "corpus/bitsandbytes-missing-shared-library/log.txt",
        "corpus/continuon-transformers-version-mismatch-numpy2-abi/log.txt",
        "corpus/inkypi-host-oom/log.txt",
        "corpus/facechain-version-mismatch/log.txt",
        "tests/data/contrib/nanochat-rotary-cache.log",
    ];
    let mut checked = 0;
    for log in logs {
        for args in [
            &["--width", "80", "--top", "5"][..],
            &["--width", "80", "--color", "always"][..],
            &["extract", "--width", "80"][..],
        ] {
            let o = crashdoc().args(args).arg(repo(log)).output().expect("run");
            assert!(code(&o) <= 1, "{log}: {}", stderr(&o));
            let t = stdout(&o);
            for l in t.lines() {
                checked += 1;
                assert!(
                    columns(l) <= 80 || unbreakable(l),
                    "{log} {args:?}: {} columns: {l}",
                    columns(l)
                );
            }
        }
    }
    assert!(checked > 300, "only {checked} lines");
}

/// Shortfall 5: `sig new` on a log a signature already explains says so and by what,
/// and never drafts from crashdoc's own text (`traceback cut off before its exception
/// line`, the extractor's name for a traceback of frames only); on a log whose failing
/// block nothing explains, it drafts from that block.
#[test]
fn sig_new_on_an_explained_log_says_by_what_and_drafts_from_the_failing_block() {
    let tmp = tempfile::tempdir().expect("tmp");
    for (log, by) in [
        (
            "corpus/bitsandbytes-missing-shared-library/log.txt",
            "python-shared-library-not-found",
        ),
        (
            "corpus/gpustack-unsupported-config/log.txt",
            "vllm-attention-heads-not-divisible-by-tp",
        ),
    ] {
        let out = tmp.path().join("explained");
        let o = crashdoc()
            .args(["sig", "new", "--from"])
            .arg(repo(log))
            .arg("--out")
            .arg(&out)
            .output()
            .expect("run");
        let e = stderr(&o);
        assert_eq!(code(&o), 2, "{log}: {e}");
        assert!(
            e.contains(&format!("already explained by `{by}`")),
            "{log}: {e}"
        );
        assert!(!e.contains("cut off before"), "{log}: {e}");
        assert!(!out.exists(), "{log}: nothing written");
    }
    let out = tmp.path().join("unexplained");
    let o = crashdoc()
        .args(["sig", "new", "--from"])
        .arg(repo("corpus/vllm-other/log.txt"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run");
    let e = stderr(&o);
    assert_eq!(code(&o), 0, "{e}");
    assert!(
        e.contains("drafted from the failing block, lines 2–12"),
        "{e}"
    );
    let path = stdout(&o).trim().to_string();
    let yaml = std::fs::read_to_string(&path).expect("draft");
    assert!(
        yaml.contains("EngineCore encountered a fatal error"),
        "{yaml}"
    );
    assert!(!yaml.contains("cut off before"), "{yaml}");
}

/// Shortfall 4: inside a signature library (a folder holding `signatures/`), `sig new`,
/// `sig test` and `corpus add` read that folder without `--signatures`: a second `sig
/// new` on the same log says the fresh draft explains it (no duplicate), `sig test`
/// tests the folder's signatures, and `corpus add` files the incident under the fresh
/// signature.
#[test]
fn contributor_commands_read_the_checkouts_signatures_folder() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    std::fs::create_dir_all(root.join("signatures")).expect("mkdir");
    let log = repo("tests/data/contrib/nanochat-rotary-cache.log");
    let run = |args: &[&str]| -> Output {
        crashdoc()
            .current_dir(root)
            .args(args)
            .arg(&log)
            .output()
            .expect("run")
    };
    let o = run(&["sig", "new", "--from"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let path = root.join(stdout(&o).trim());
    let id = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("id")
        .to_string();
    let o = run(&["sig", "new", "--from"]);
    let e = stderr(&o);
    assert_eq!(code(&o), 2, "{e}");
    assert!(e.contains("already explained") && e.contains(&id), "{e}");
    assert!(!e.contains("exists (give --force"), "{e}");
    let o = crashdoc()
        .current_dir(root)
        .args(["sig", "test"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).ends_with("1 passed, 0 failed\n"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "corpus",
        "add",
        "--via",
        "own",
        "--source",
        "https://example.invalid/constructed",
        "--name",
        "rotary",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let expected =
        std::fs::read_to_string(root.join("corpus/rotary/expected.yaml")).expect("filed");
    assert!(expected.contains(&id), "{expected}");
}

/// Shortfall 15 (the "Seen:" line): a cause first seen with no stream and no time says
/// `first at line N` (never `first: (line N)`), and a glog time (`0410 15:08:27.848000`)
/// is printed as a date a person reads (`Apr 10 15:08:27.848`).
#[test]
fn seen_names_where_and_when_in_words() {
    let glog = regex::Regex::new(r"at [01][0-9][0-3][0-9] [0-9]{2}:").expect("regex");
    let mut readable = 0;
    for log in [
        "corpus/miles-credit-other-diffusion-loss-device-mismatch-8-ranks/log.txt",
        "corpus/inkypi-host-oom/log.txt",
        "corpus/bitsandbytes-missing-shared-library/log.txt",
    ] {
        let o = crashdoc()
            .args(["--top", "3", "--width", "200"])
            .arg(repo(log))
            .output()
            .expect("run");
        let t = stdout(&o);
        for l in t.lines().filter(|l| l.trim_start().starts_with("Seen:")) {
            assert!(!l.contains("first: (line"), "{log}: {l}");
            assert!(!glog.is_match(l), "{log}: {l}");
            readable += usize::from(l.contains(" at ") || l.contains("first at line"));
        }
    }
    assert!(readable >= 2, "the logs' Seen lines say where and when");
}

/// Shortfall 3: an incident expected to be explained by a `rare: true` signature counts
/// as seen, whatever its lines (its signature's one public source is that incident);
/// the same signature without `rare` leaves it unseen.
#[test]
fn a_rare_signatures_incident_counts_as_seen() {
    use crashdoc::corpus::seen::{is_seen, ExampleText};
    use crashdoc::engine::diagnosis::{BuildOptions, Diagnosis};
    use crashdoc::engine::extract::Extraction;
    use crashdoc::knowledge::signature::load::{compile_files, LibraryFile};
    let base = std::fs::read_to_string(repo(
        "signatures/python/python-shared-library-not-found.yaml",
    ))
    .expect("a built-in signature");
    for (rare, want) in [(false, false), (true, true)] {
        let text = if rare {
            base.replacen("\nseverity:", "\nrare: true\nseverity:", 1)
        } else {
            base.clone()
        };
        let lib = compile_files(&[LibraryFile {
            name: "signatures/python/python-shared-library-not-found.yaml".into(),
            text,
        }])
        .expect("compiles");
        let d = Diagnosis::build(
            "x",
            &lib,
            Extraction::default(),
            Vec::new(),
            BuildOptions::default(),
        );
        let ex = ExampleText::of(&lib);
        assert_eq!(
            is_seen(&ex, Some("python-shared-library-not-found"), None, &d),
            want,
            "rare: {rare}"
        );
    }
}

// ── the whole contributor path ──────────────────────────────────────────────────────

/// Copies what the path reads and writes into `to`: the library, a few corpus
/// incidents (healthy ones among them, for the metamorphic run), README.md, docs/, the
/// scenario and the examples' metamorphic record.
fn repo_copy(to: &Path) {
    let cp = |from: &str, dest: &str| {
        let d = to.join(dest);
        if let Some(p) = d.parent() {
            std::fs::create_dir_all(p).expect("mkdir");
        }
        let ok = std::process::Command::new("cp")
            .arg("-R")
            .arg(repo(from))
            .arg(&d)
            .status()
            .expect("cp");
        assert!(ok.success(), "cp {from}");
    };
    for f in [
        "signatures",
        "README.md",
        "docs",
        "tests/data/scenario",
        "tests/data/metamorphic",
    ] {
        cp(f, f);
    }
    for inc in [
        "aigis-llama-cpp-none-vulkan-serving",
        "arno-vllm-none-rocm-serving",
        "augment-qa-vllm-none-serving",
        "bitsandbytes-missing-shared-library",
        "gpustack-unsupported-config",
        "inkypi-host-oom",
        "facechain-version-mismatch",
    ] {
        cp(&format!("corpus/{inc}"), &format!("corpus/{inc}"));
    }
}

/// The draft, edited as CONTRIBUTING.md's step 3 says: a title, an explanation and a
/// remediation written for it, the category picked, `rare: true` (the log is the only
/// public text of this failure), and a near-miss (a real log of another failure:
/// tests/data/contrib/vllm-keyerror-weight-scale.log, from llm-compressor#959).
fn edited(draft: &str) -> String {
    let line = |re: &str| regex::Regex::new(re).expect("regex");
    let t = line(r"(?m)^title: .*$").replace(
        draft,
        "title: A sequence is longer than the rotary embeddings cache the model was built with",
    );
    let t = line(r"(?m)^category: .*$").replace(&t, "category: unsupported-config");
    let t = t.replacen("severity: fatal\n", "severity: fatal\nrare: true\n", 1);
    let (a, b) = (
        t.find("explain: >").expect("explain"),
        t.find("references:").expect("references"),
    );
    let t = format!(
        "{}explain: >\n  The model's rotary position embeddings were precomputed for {{{{number2}}}} positions, and a sequence of {{{{number}}}} tokens went past them.\nremediation:\n  - description: Keep the sequences (the evaluation's context too) within the rotary cache, or build the model with a longer one\n{}",
        &t[..a],
        &t[b..]
    );
    let near = std::fs::read_to_string(repo("tests/data/contrib/vllm-keyerror-weight-scale.log"))
        .expect("near-miss log");
    let mut out = t.trim_end().to_string();
    out.push_str("\n  no_match:\n    - source: 'https://github.com/vllm-project/llm-compressor/issues/959'\n      log: |\n");
    for l in near.lines() {
        out.push_str("        ");
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Deliver item 4: the contributor path of CONTRIBUTING.md ends green, walked on a
/// fresh signature in a temporary copy of the repository: `sig new` → edit → `sig lint`
/// (which fails on the draft as CI would, and passes the edit) → `sig test` → `corpus
/// add` → `corpus bless` → CI's gate on the library and the corpus (`sig lint`, `sig
/// test`, `corpus run --baseline`, `corpus run --metamorphic --baseline`) and `corpus
/// bless --check` (every derived file current, as `cargo test` checks them).
#[test]
#[ignore = "heavy (the bless and the gates: about 50 s of CPU): cargo test --release -- --ignored"]
fn the_contributor_path_ends_green_on_a_fresh_signature() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    repo_copy(root);
    let log = repo("tests/data/contrib/nanochat-rotary-cache.log");
    let src = "https://github.com/kwizzlesurp10-ctrl/nanochatkwizzle/blob/369606cff2625517d8e4313bead20cbbfadb1162/browser_pretrain.log";
    let run = |args: &[&str]| -> Output {
        let mut c = crashdoc();
        c.current_dir(root).args(args);
        c.output().expect("run")
    };
    let ok = |args: &[&str]| -> Output {
        let o = run(args);
        assert_eq!(code(&o), 0, "{args:?}: {}{}", stdout(&o), stderr(&o));
        o
    };
    // 1–2. draft (into ./signatures/<area>, the folder of the checkout)
    let log_s = log.to_str().expect("utf-8 path");
    let o = ok(&["sig", "new", "--from", log_s, "--source", src]);
    let path = root.join(stdout(&o).trim());
    assert!(
        path.starts_with(root.join("signatures")),
        "{}",
        path.display()
    );
    let rel = path
        .strip_prefix(root)
        .expect("inside")
        .to_string_lossy()
        .to_string();
    // lint's verdict is CI's: the draft (one example, no near-miss) fails it
    let o = run(&["sig", "lint", &rel]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("[E020]"), "{}", stdout(&o));
    // 3. edit
    let draft = std::fs::read_to_string(&path).expect("draft");
    std::fs::write(&path, edited(&draft)).expect("edit");
    // 4–5. lint, test
    let o = ok(&["sig", "lint", &rel]);
    assert!(
        stdout(&o).ends_with("0 error(s), 0 warning(s) in 1 file(s)\n"),
        "{}",
        stdout(&o)
    );
    let o = ok(&["sig", "test", "signatures"]);
    assert!(stdout(&o).ends_with(" 0 failed\n"), "{}", stdout(&o));
    // 6. file the incident, 7. regenerate every derived file
    let name = "nanochat-unsupported-config-rotary-cache";
    ok(&[
        "corpus",
        "add",
        log_s,
        "--via",
        "own",
        "--source",
        src,
        "--name",
        name,
        "--category",
        "unsupported-config",
    ]);
    let expected = std::fs::read_to_string(root.join(format!("corpus/{name}/expected.yaml")))
        .expect("expected.yaml");
    let id = path.file_stem().and_then(|s| s.to_str()).expect("id");
    assert!(expected.contains(id), "{expected}");
    let o = ok(&["corpus", "bless"]);
    assert!(
        stderr(&o).contains("wrote    corpus/baseline.json"),
        "{}",
        stderr(&o)
    );
    // 8. the gate
    ok(&["sig", "lint"]);
    ok(&["sig", "test", "signatures"]);
    ok(&[
        "corpus",
        "run",
        "corpus",
        "--baseline",
        "corpus/baseline.json",
        "--signatures",
        "signatures",
    ]);
    ok(&[
        "corpus",
        "run",
        "corpus",
        "--metamorphic",
        "--baseline",
        "corpus/metamorphic.json",
        "--signatures",
        "signatures",
    ]);
    let o = ok(&["corpus", "bless", "--check"]);
    assert!(!stderr(&o).contains("stale"), "{}", stderr(&o));
    let docs = std::fs::read_to_string(root.join("docs/signatures.md")).expect("docs");
    assert!(
        docs.contains(id),
        "docs/signatures.md lists the new signature"
    );
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    assert!(
        readme.contains("8 incidents."),
        "the README's corpus table is the copy's"
    );
    // the new incident was learned from its only public source: it is seen, not unseen
    let o = ok(&[
        "corpus",
        "run",
        "corpus",
        "--format",
        "json",
        "--signatures",
        "signatures",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let inc = v["incidents"]
        .as_array()
        .and_then(|a| a.iter().find(|i| i["name"] == name))
        .cloned()
        .unwrap_or_default();
    assert_eq!(inc["seen"], true, "{inc}");
}
