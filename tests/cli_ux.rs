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
