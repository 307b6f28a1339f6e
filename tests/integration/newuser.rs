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
