//! `crashdoc run -- CMD ARGS…` (issue 31): the command's output passed through
//! unchanged, its exit status kept, signals forwarded, and a diagnosis when it fails.
//! The commands run are `sh` one-liners (constructed); the failure line they print is
//! line 225 of the shipped scenario journal (real).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::util::{bin, code, crashdoc, no_panic, repo, stderr};

/// The flashinfer-cubin mismatch line of the scenario journal (real, line 225).
fn flash() -> String {
    let j = std::fs::read_to_string(repo("tests/data/scenario/journal.txt")).expect("journal");
    let line = j.lines().nth(224).expect("line 225");
    assert!(line.contains("flashinfer-cubin version (0.6.3)"), "{line}");
    line.to_string()
}

#[test]
fn a_failing_command_keeps_its_status_and_is_diagnosed() {
    let o = crashdoc()
        .env("FLASH", flash())
        .args([
            "run",
            "--",
            "sh",
            "-c",
            "echo started; echo \"$FLASH\" >&2; exit 3",
        ])
        .output()
        .expect("run");
    no_panic(&o);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(o.stdout, b"started\n", "stdout is the command's only");
    let e = stderr(&o);
    assert!(e.starts_with(&flash()), "the command's stderr first: {e}");
    assert!(e.contains("flashinfer-cubin-version-mismatch"), "{e}");
    assert!(e.contains("sh (exit status 3)"), "{e}");
}

#[test]
fn output_passes_through_byte_for_byte() {
    // invalid UTF-8, a carriage return, ANSI colour and no final newline: all unchanged
    let o = crashdoc()
        .args([
            "run",
            "--",
            "sh",
            "-c",
            "printf 'a\\377b\\r\\n\\033[31mred\\033[0m'; printf 'err-no-newline' >&2",
        ])
        .output()
        .expect("run");
    assert_eq!(code(&o), 0);
    assert_eq!(o.stdout, b"a\xffb\r\n\x1b[31mred\x1b[0m");
    assert_eq!(o.stderr, b"err-no-newline", "a success prints no diagnosis");
}

#[test]
fn exit_statuses_are_the_shells() {
    let killed = crashdoc()
        .args(["run", "--", "sh", "-c", "kill -9 $$"])
        .output()
        .expect("run");
    assert_eq!(code(&killed), 128 + 9);
    assert!(stderr(&killed).contains("killed by SIGKILL"));
    let missing = crashdoc()
        .args(["run", "--", "no-such-program-crashdoc-test"])
        .output()
        .expect("run");
    assert_eq!(code(&missing), 127);
    assert!(stderr(&missing).contains("command not found"));
    let dir = crashdoc().args(["run", "--", "/"]).output().expect("run");
    assert_eq!(code(&dir), 126, "{}", stderr(&dir));
    let usage = crashdoc().args(["run"]).output().expect("run");
    assert_eq!(code(&usage), 2, "no command is a usage error");
}

#[test]
fn json_report_goes_to_the_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("d.json");
    let o = crashdoc()
        .env("FLASH", flash())
        .args(["run", "--format", "json", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", "echo \"$FLASH\"; exit 1"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 1);
    assert_eq!(o.stderr, b"", "the report went to the file");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("json");
    assert_eq!(
        v["causes"][0]["signature"], "flashinfer-cubin-version-mismatch",
        "{v:#}"
    );
}

#[test]
fn the_tail_is_bounded_and_keeps_line_numbers() {
    let o = crashdoc()
        .env("FLASH", flash())
        .args(["run", "--tail-bytes", "2K", "--format", "json", "--"])
        .args(["sh", "-c", "seq 1 50000; echo \"$FLASH\"; exit 1"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 1);
    let e = stderr(&o);
    let v: serde_json::Value = serde_json::from_str(e.trim()).expect("json on stderr");
    assert_eq!(
        v["causes"][0]["signature"],
        "flashinfer-cubin-version-mismatch"
    );
    assert!(
        e.contains("50001"),
        "the line keeps its number in the whole output"
    );
}

#[test]
fn env_reports_are_read_after_the_command_ends() {
    let dir = tempfile::tempdir().expect("tmp");
    let env = dir.path().join("pip.txt");
    let o = crashdoc()
        .env("FLASH", flash())
        .env("ENVFILE", &env)
        .args(["run", "--format", "json", "--env"])
        .arg(&env)
        .args(["--", "sh", "-c"])
        .arg("printf 'flashinfer-cubin==0.6.3\\nflashinfer-python==0.6.4\\n' > \"$ENVFILE\"; echo \"$FLASH\"; exit 1")
        .output()
        .expect("run");
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stderr(&o).trim()).expect("json");
    let pk = v["environment"]["packages"].to_string();
    assert!(pk.contains("flashinfer-python"), "{v:#}");
}

#[test]
fn sigterm_is_forwarded_to_the_command() {
    let mut child = Command::new(bin())
        .args(["run", "--", "sh", "-c"])
        .arg("trap 'echo got-term; exit 42' TERM; echo ready; while :; do sleep 0.05; done")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("ready");
    assert_eq!(line, "ready\n");
    // SAFETY: the pid is our child's
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    line.clear();
    out.read_line(&mut line).expect("read");
    assert_eq!(line, "got-term\n", "the command got the signal");
    let status = child.wait().expect("wait");
    assert_eq!(
        status.code(),
        Some(42),
        "crashdoc exits with the command's status"
    );
}
