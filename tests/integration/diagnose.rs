//! The headline scenario and golden reports, through the CLI as a user runs it.

use crate::util::{crashdoc, repo};

const SCENARIO: &str = "tests/data/scenario/journal.txt";

fn json_of(log: &str) -> serde_json::Value {
    let out = crashdoc()
        .args(["diagnose", "--format", "json"])
        .arg(repo(log))
        .output()
        .expect("run");
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn scenario_ranks_the_flashinfer_mismatch_first_with_its_fix() {
    let v = json_of(SCENARIO);
    let c = &v["causes"][0];
    assert_eq!(c["signature"], "flashinfer-cubin-version-mismatch");
    assert_eq!(c["category"], "version-mismatch");
    assert_eq!(c["confidence"], "high");
    assert_eq!(c["captures"]["cubin"], "0.6.3");
    assert_eq!(c["captures"]["python"], "0.6.4");
    assert_eq!(c["attempts"], 2);
    assert_eq!(c["crash_site"]["line"], 932);
    assert!(c["crash_site"]["file"]
        .as_str()
        .is_some_and(|f| f.ends_with("deepseek_v2.py")));
    assert_eq!(c["importing"], "flashinfer");
    let cmds: Vec<&str> = c["remediation"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["command"].as_str())
        .collect();
    assert_eq!(
        cmds.first(),
        Some(&"pip install \"flashinfer-cubin==0.6.4\""),
        "{cmds:?}"
    );
    assert!(
        cmds.contains(&"systemctl restart vllm-kimi-k25"),
        "{cmds:?}"
    );
    // the version-check bypass is offered last, as the fallback
    let last = c["remediation"]
        .as_array()
        .and_then(|s| s.last())
        .expect("last step");
    assert!(last["command"]
        .as_str()
        .is_some_and(|s| s.contains("FLASHINFER_DISABLE_VERSION_CHECK=1")));
    // the evidence is the raw line of the final exception
    assert!(c["evidence"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("RuntimeError: flashinfer-cubin version (0.6.3)")));
    // consequences are folded, not causes
    let causes: Vec<&str> = v["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["signature"].as_str())
        .collect();
    for c in &causes {
        assert!(
            !c.contains("engine-core") && !c.contains("workerproc"),
            "consequence ranked as a cause: {causes:?}"
        );
    }
    let conseq: Vec<String> = c["consequences"]
        .as_array()
        .expect("consequences")
        .iter()
        .map(|q| q["text"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        conseq
            .iter()
            .any(|q| q.contains("Engine core initialization failed")),
        "{conseq:?}"
    );
    assert!(
        conseq
            .iter()
            .any(|q| q.contains("WorkerProc initialization failed")),
        "{conseq:?}"
    );
    // benign warnings are explained noise
    let noise: Vec<&str> = v["noise"]
        .as_array()
        .expect("noise")
        .iter()
        .filter_map(|n| n["signature"].as_str())
        .collect();
    assert!(noise.iter().any(|n| n.contains("symm-mem")), "{noise:?}");
    assert!(
        noise.iter().any(|n| n.contains("custom-allreduce")),
        "{noise:?}"
    );
}

#[test]
fn scenario_text_report_says_8_of_8_workers_in_2_attempts() {
    let out = crashdoc().arg(repo(SCENARIO)).output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("8/8 workers in each of 2 attempts (a crash loop)"),
        "{text}"
    );
    assert!(text.contains("crash site deepseek_v2.py:932"), "{text}");
    assert!(
        text.lines().count() < 60,
        "the scenario report should fit one screen:\n{text}"
    );
}

#[test]
fn stdin_is_read_when_no_file_is_given() {
    let log = std::fs::read(repo(SCENARIO)).expect("log");
    let out = crashdoc().write_stdin(log).output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("flashinfer-cubin-version-mismatch"));
}

#[test]
fn no_cause_exits_1_and_shows_the_final_exception() {
    let out = crashdoc()
        .arg(repo("corpus/deepspeed-other/log.txt"))
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(1) {
        assert!(
            text.contains("No known cause. The failure, line 3:"),
            "{text}"
        );
        assert!(text.contains("UnboundLocalError"), "{text}");
    } else {
        assert!(
            !text.contains("high"),
            "a code bug must not get a high-confidence cause:\n{text}"
        );
    }
}

#[test]
fn input_errors_exit_2_and_name_the_file() {
    let out = crashdoc()
        .arg("/nonexistent/log.txt")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/log.txt"));
    let empty = tempfile::TempDir::new().expect("tmp");
    let out = crashdoc().arg(empty.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
}

fn golden(name: &str, log: &str, format: &str) {
    let out = crashdoc()
        .args(["diagnose", "--format", format])
        .arg(log)
        .current_dir(repo(""))
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    insta::assert_snapshot!(format!("{name}-{format}"), text);
}

#[test]
fn golden_reports() {
    golden("scenario", SCENARIO, "text");
    golden("scenario", SCENARIO, "markdown");
    for inc in [
        "vllm-kv-cache-insufficient",
        "inkypi-host-oom",
        "pytorch-permission-denied",
        "facechain-version-mismatch",
    ] {
        let log = format!("corpus/{inc}/log.txt");
        golden(inc, &log, "text");
        golden(inc, &log, "json");
        golden(inc, &log, "markdown");
    }
}

/// `crashdoc --format json LOG | head -c 10`: the reader goes away after 10 bytes; the
/// rest of the report (about 90 KB, more than a pipe holds) meets a closed pipe.
#[test]
fn a_closed_stdout_ends_quietly_with_0() {
    use std::io::Read;
    use std::process::Stdio;
    for args in [
        &["--format", "json"][..],
        &["extract", "--format", "json"][..],
    ] {
        let mut child = std::process::Command::new(crate::util::bin())
            .args(args)
            .arg(repo(SCENARIO))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut head = [0u8; 10];
        child
            .stdout
            .take()
            .expect("stdout")
            .read_exact(&mut head)
            .expect("10 bytes");
        let o = child.wait_with_output().expect("wait");
        assert_eq!(&head[..1], b"{", "{args:?}");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{args:?}");
    }
}

/// Diagnoses constructed text given on standard input, as JSON.
fn json_of_stdin(text: &str) -> serde_json::Value {
    let out = crashdoc()
        .args(["--format", "json"])
        .write_stdin(text.as_bytes().to_vec())
        .output()
        .expect("run");
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn a_signal_never_outranks_the_failure_printed_before_it() {
    // Constructed (the shape of a C++ abort in a PyTorch process): the CUDA error is
    // printed, then the process aborts. Both match signatures with the same score; the
    // abort follows from the error, so the error is the top cause and the primary block.
    let log = "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: an illegal memory access was encountered\nAborted (core dumped)\n";
    let d = json_of_stdin(log);
    let causes = d["causes"].as_array().expect("causes");
    assert!(causes.len() >= 2, "{d}");
    assert_eq!(causes[0]["evidence"][0]["line"], 2, "{d}");
    assert_eq!(d["primary"]["start"], 2, "{d}");
}

#[test]
fn the_primary_block_of_a_ci_log_is_the_failing_steps_error() {
    // Constructed, in Travis CI's format: an error in an earlier, passing step, then the
    // failing step's compiler error, make's summary and the runner's verdict.
    let log = "\
$ ./install.sh
warning: could not find optional tool, continuing
The command \"./install.sh\" exited with 0.
$ make
cc -c src/a.c
src/a.c:3:5: error: expected ';' before '}' token
    3 |   return 0
      |           ^
make: *** [a.o] Error 1
The command \"make\" exited with 2.
";
    let d = json_of_stdin(log);
    // no signature names it (an inferred cause may say what its words suggest)
    let causes = d["causes"].as_array().expect("causes");
    assert!(causes.iter().all(|c| c["layer"] == "inferred"), "{d}");
    assert_eq!(d["primary"]["start"], 6, "{d}");
    assert_eq!(d["primary"]["end"], 9, "{d}");
    assert_eq!(d["primary"]["from"], "structure", "{d}");
    let text = crashdoc()
        .write_stdin(log.as_bytes().to_vec())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("No known cause. The failure, lines 6\u{2013}9:"),
        "{text}"
    );
    assert!(text.contains("error: expected ';'"), "{text}");
}

#[test]
fn a_retried_failure_leads_at_its_last_try() {
    // Constructed, in the format GitHub Actions prints a job container's pull: docker's
    // error, the runner's back-off, the same error at the last try, the runner giving up.
    // The cause's evidence is the first try; the report leads with the last.
    let log = "\
##[command]/usr/bin/docker pull python:3.14t
Error response from daemon: manifest for python:3.14t not found: manifest unknown: manifest unknown
##[warning]Docker pull failed with exit code 1, back off 7.078 seconds before retry.
##[command]/usr/bin/docker pull python:3.14t
Error response from daemon: manifest for python:3.14t not found: manifest unknown: manifest unknown
##[error]Docker pull failed with exit code 1
";
    let d = json_of_stdin(log);
    assert_eq!(d["causes"][0]["evidence"][0]["line"], 2, "{d}");
    assert_eq!(d["primary"]["start"], 5, "{d}");
    assert_eq!(
        d["primary"]["failure"], d["causes"][0]["failures"][0],
        "{d}"
    );
}

#[test]
fn a_weak_signature_match_leads_where_the_log_shows_no_step() {
    // Real (the first two lines of the corpus's ollama-unsupported-config-grok-fa-forced-
    // off-q8-kv-cache-panic log): llama.cpp turns flash attention off for the model (the
    // first line with error words), then refuses the quantized V cache that needs it. No
    // CI step structure; a signature names the second line, weakly: it leads the report,
    // not the first line that has error words.
    let log = "\
Mar 24 21:17:29 jarvis ollama[2742822]: llama_init_from_model: flash_attn is not compatible with Grok - forcing off
Mar 24 21:17:29 jarvis ollama[2742822]: llama_init_from_model: V cache quantization requires flash_attn
";
    let d = json_of_stdin(log);
    assert_eq!(d["failures"][0]["first"]["line"], 1, "{d}");
    assert_eq!(d["causes"][0]["confidence"], "low", "{d}");
    assert_eq!(d["primary"]["from"], "cause", "{d}");
    assert_eq!(d["primary"]["start"], 2, "{d}");
}
