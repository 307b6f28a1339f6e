//! Helpers shared by the integration tests: where the repository is, the binary under
//! test, its output, and the embedded library (loaded once per test binary).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::LazyLock;

use assert_cmd::Command;
use crashdoc::engine::matcher::Compiled;
use crashdoc::knowledge::signature::load::{builtin_files, LibraryFile};
use crashdoc::knowledge::signature::{self, Library, LibrarySource};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path inside the repository.
pub fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The `crashdoc` binary under test.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("crashdoc")
}

/// The binary, run in the repository root, without colour.
pub fn crashdoc() -> Command {
    let mut c = Command::new(bin());
    c.env("NO_COLOR", "1");
    // no cache of compiled folder libraries in the user's ~/.cache (a test sets its own)
    c.env("CRASHDOC_CACHE_DIR", "");
    c.current_dir(root());
    c
}

/// The exit code (-1 when killed by a signal).
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The run neither panicked nor was killed by a signal.
pub fn no_panic(o: &Output) {
    let e = stderr(o);
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "crashdoc panicked: {e}"
    );
    assert!(
        o.status.code().is_some(),
        "killed by a signal: {:?}",
        o.status
    );
}

/// Standard output as JSON.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout[..o.stdout.len().min(500)])
        )
    })
}

static LIBRARY: LazyLock<Library> =
    LazyLock::new(|| signature::load(&[LibrarySource::Builtin]).expect("the embedded library"));

/// The embedded library, loaded once.
pub fn library() -> &'static Library {
    &LIBRARY
}

/// The embedded library's files, named as the loader names them.
pub fn builtin() -> Vec<LibraryFile> {
    builtin_files()
        .iter()
        .map(|(n, t)| LibraryFile {
            name: format!("<builtin>/{n}"),
            text: (*t).to_string(),
        })
        .collect()
}

static COMPILED: LazyLock<Compiled<'static>> =
    LazyLock::new(|| Compiled::new(library()).expect("the prefilter automaton"));

/// The embedded library compiled (prefilter automaton included), once.
pub fn compiled() -> &'static Compiled<'static> {
    &COMPILED
}
