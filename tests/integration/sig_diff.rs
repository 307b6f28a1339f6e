//! `crashdoc sig diff`: the corpus replayed with the library at a git revision and now.

use std::path::Path;

use crate::util::{code, crashdoc, root, stderr};

/// A corpus of two real incidents of the repository's corpus, in a temporary folder.
fn small_corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in [
        "chatglm3-pytorch-cuda-driver-too-old-11060",
        "bert-none-finetune-complete",
    ] {
        let to = dir.path().join(name);
        std::fs::create_dir(&to).expect("mkdir");
        for f in ["log.txt", "expected.yaml"] {
            std::fs::copy(root().join("corpus").join(name).join(f), to.join(f)).expect("copy");
        }
    }
    dir
}

fn git_checkout() -> bool {
    root().join(".git").exists()
}

#[test]
fn the_committed_library_against_itself_moves_nothing() {
    if !git_checkout() {
        return;
    }
    let corpus = small_corpus();
    let out = crashdoc()
        .args([
            "sig",
            "diff",
            "HEAD",
            "--signatures",
            "signatures",
            "--no-builtin",
            "--corpus",
        ])
        .arg(corpus.path())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(text.contains("before: signatures at HEAD"), "{text}");
    assert!(
        text.contains("0 broken, 0 fixed, 0 moved, 0 added, 0 removed, 2 same"),
        "{text}"
    );
}

#[test]
fn a_library_that_loses_a_signature_shows_the_incident_it_breaks() {
    if !git_checkout() {
        return;
    }
    let corpus = small_corpus();
    // "now": the committed library without the signature the chatglm3 incident rests on
    let lib = tempfile::tempdir().expect("tempdir");
    copy_dir(&root().join("signatures"), lib.path());
    let gone = lib.path().join("gpu/torch-nvidia-driver-too-old.yaml");
    std::fs::remove_file(&gone).expect("the signature exists");
    let out = crashdoc()
        .args([
            "sig",
            "diff",
            "HEAD",
            "--no-builtin",
            "--format",
            "json",
            "--signatures",
        ])
        .arg(lib.path())
        .arg("--corpus")
        .arg(corpus.path())
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let row = &v["changed"][0];
    assert_eq!(
        row["incident"],
        "chatglm3-pytorch-cuda-driver-too-old-11060"
    );
    assert_eq!(row["before"]["top"], "torch-nvidia-driver-too-old");
    assert_ne!(row["after"]["top"], "torch-nvidia-driver-too-old");
    // another layer (the CUDA code table) may still name the category: then it only moved
    let broken = row["change"] == "broken";
    assert!(broken || row["change"] == "moved", "{row}");
    assert_eq!(code(&out), if broken { 1 } else { 0 }, "{}", stderr(&out));
    assert_eq!(v["same"], 1);
}

#[test]
fn an_unknown_revision_is_a_clear_input_error() {
    if !git_checkout() {
        return;
    }
    let corpus = small_corpus();
    let out = crashdoc()
        .args(["sig", "diff", "no-such-revision-xyz", "--corpus"])
        .arg(corpus.path())
        .output()
        .expect("run");
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("no-such-revision-xyz:signatures"), "{err}");
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            std::fs::create_dir_all(&t).expect("mkdir");
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).expect("copy");
        }
    }
}
