//! One library loader (`knowledge::sources::load`) behind every command, and the
//! working folder's own `./signatures` read by `sig new`, `sig test` and `corpus add`
//! when they run in a signature repository (issue 31, shortfall 4).

use std::path::Path;

use crate::util::{code, crashdoc, stderr};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/contrib");
/// A real log the embedded library does not explain (tests/data/contrib/SOURCES.md).
const LOG: &str = "nanochat-rotary-cache.log";
const SOURCE: &str = "https://github.com/kwizzlesurp10-ctrl/nanochatkwizzle/blob/369606cff2625517d8e4313bead20cbbfadb1162/browser_pretrain.log";

/// `crashdoc` run in `dir`, with no config discovery.
fn crashdoc_in(dir: &Path) -> assert_cmd::Command {
    let mut c = crashdoc();
    c.current_dir(dir).env("CRASHDOC_NO_CONFIG", "1");
    c
}

/// The YAML files under `dir`, recursively.
fn yaml_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(yaml_files(&p));
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// A signature repository: an empty `signatures/` only its owner may write.
fn repository() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let lib = tmp.path().join("signatures");
    std::fs::create_dir(&lib).expect("mkdir");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    tmp
}

#[test]
fn sig_new_twice_in_a_repository_does_not_draft_a_duplicate() {
    let repo = repository();
    let log = format!("{DATA}/{LOG}");
    crashdoc_in(repo.path())
        .args(["sig", "new", "--from", &log, "--source", SOURCE])
        .assert()
        .success();
    let drafted = yaml_files(&repo.path().join("signatures"));
    assert_eq!(drafted.len(), 1, "{drafted:?}");
    // another id for the same failure: the first draft explains it now, so no second
    // signature of the same failure is written
    let o = crashdoc_in(repo.path())
        .args(["sig", "new", "--from", &log, "--source", SOURCE])
        .args(["--id", "another-name-for-the-same-failure"])
        .output()
        .expect("run");
    assert_ne!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(yaml_files(&repo.path().join("signatures")), drafted);
}

#[test]
fn sig_test_and_corpus_add_read_the_repository_signatures() {
    let repo = repository();
    let log = format!("{DATA}/{LOG}");
    crashdoc_in(repo.path())
        .args(["sig", "new", "--from", &log, "--source", SOURCE])
        .assert()
        .success();
    let id = yaml_files(&repo.path().join("signatures"))[0]
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("stem")
        .to_string();
    // `sig test` with no folder tests the repository's signatures: the draft alone
    let t = crashdoc_in(repo.path())
        .args(["sig", "test"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&t.get_output().stdout).to_string();
    assert!(text.ends_with("1 passed, 0 failed\n"), "{text}");
    // `corpus add` files it with the draft as the expectation, no --signatures needed
    crashdoc_in(repo.path())
        .args([
            "corpus", "add", &log, "--source", SOURCE, "--via", "own", "--dir", "corpus",
        ])
        .assert()
        .success();
    let expected = yaml_files(&repo.path().join("corpus"))
        .into_iter()
        .find(|p| p.ends_with("expected.yaml"))
        .expect("expected.yaml written");
    let text = std::fs::read_to_string(expected).expect("read");
    assert!(text.contains(&id), "{text}");
}

#[test]
fn corpus_add_outside_a_repository_says_what_it_needs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // constructed: two lines in which nothing (signature or inferred layer) finds a cause
    let log = tmp.path().join("made-up.log");
    std::fs::write(&log, "starting job\nall done\n").expect("write");
    let o = crashdoc_in(tmp.path())
        .args(["corpus", "add"])
        .arg(&log)
        .args(["--source", SOURCE, "--via", "own", "--dir", "corpus"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(
        err.contains("--category") && err.contains("--signatures DIR"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_signatures_folder_others_may_write_is_not_read() {
    use std::os::unix::fs::PermissionsExt;
    let repo = repository();
    let lib = repo.path().join("signatures");
    std::fs::write(lib.join("x.yaml"), "not: a signature\n").expect("write");
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let o = crashdoc_in(repo.path())
        .args(["sig", "test", "--filter", "cublas-status-internal-error"])
        .output()
        .expect("run");
    let err = stderr(&o);
    assert!(
        err.contains("./signatures is not read: writable by other users"),
        "{err}"
    );
    // the broken file was never read: the embedded library's examples ran
    assert_eq!(code(&o), 0, "{err}");
}
