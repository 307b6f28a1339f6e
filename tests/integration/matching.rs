//! Matching that survives real presentations of a log (issue 15): a bare CI timestamp
//! is not a syslog host, a cut-off traceback's preamble is matchable, a paste's
//! space runs are folded, markdown around a log is peeled, a collapsed traceback is
//! still read by its final exception, and precedence between causes.

use crashdoc::engine::diagnosis::{BuildOptions, Diagnosis};
use crashdoc::engine::matcher::EngineKind;
use crashdoc::engine::pipeline::Engine;
use crashdoc::knowledge::signature::Library;

fn library() -> &'static Library {
    crate::util::library()
}

fn diagnose(lib: &Library, kind: EngineKind, log: &str) -> Diagnosis {
    let compiled = crate::util::compiled();
    assert!(std::ptr::eq(compiled.library, lib), "the shared library");
    Engine::new(compiled, kind).diagnose_text("log", log, BuildOptions::default())
}

/// The top cause's signature, the same with both engines.
fn top(lib: &Library, log: &str) -> Option<String> {
    let a = diagnose(lib, EngineKind::Prefilter, log);
    let b = diagnose(lib, EngineKind::Brute, log);
    let ids =
        |d: &Diagnosis| -> Vec<String> { d.causes.iter().map(|c| c.signature.clone()).collect() };
    assert_eq!(
        ids(&a),
        ids(&b),
        "prefilter and brute force agree on {log:?}"
    );
    a.causes.first().map(|c| c.signature.clone())
}

// Source of the message: https://github.com/AlwaysFHao/Mamba-Install/issues/3 (an
// example of python-shared-library-not-found). CONSTRUCTED: the bare CI timestamp in
// front of it (the shape of issue 15).
#[test]
fn a_bare_ci_timestamp_keeps_the_message_head() {
    let lib = library();
    let log = "Aug 16 14:45:47 ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n";
    assert_eq!(
        top(lib, log).as_deref(),
        Some("python-shared-library-not-found")
    );
}

// Source of line 1: https://github.com/gpustack/gpustack/issues/1540 (an example of
// cuda-forward-compat-unsupported-hw). CONSTRUCTED: the traceback after it, cut off
// before its exception line (frames as torch prints them for set_device).
#[test]
fn a_cut_off_tracebacks_preamble_is_matched() {
    let lib = library();
    let log = "\
ERROR 03-26 05:25:01 engine.py:389] Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW
ERROR 03-26 05:25:01 engine.py:389] Traceback (most recent call last):
ERROR 03-26 05:25:01 engine.py:389]   File \"/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py\", line 478, in set_device
ERROR 03-26 05:25:01 engine.py:389]     torch._C._cuda_setDevice(device)
";
    assert_eq!(
        top(lib, log).as_deref(),
        Some("cuda-forward-compat-unsupported-hw")
    );
    let d = diagnose(lib, EngineKind::Prefilter, log);
    assert!(
        d.failures
            .iter()
            .all(|f| !f.headline.contains("_cuda_setDevice")),
        "a source line is never a failure's headline"
    );
}

// Source: https://github.com/AlwaysFHao/Mamba-Install/issues/3 (as above). CONSTRUCTED:
// GitHub's rendered-paste space run inside a word, and the same line quoted and fenced.
#[test]
fn space_runs_quotes_and_fences_do_not_change_the_cause() {
    let lib = library();
    let line =
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory";
    let runs = "ImportError: libcudart.so.12: cannot open shared ob                 ject file: No such file or directory";
    let quoted = format!("> ```text\n> {line}\n> ```\n");
    let fenced = format!("```\nTraceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n{line}\n```\n");
    for log in [format!("{line}\n"), format!("{runs}\n"), quoted, fenced] {
        assert_eq!(
            top(lib, &log).as_deref(),
            Some("python-shared-library-not-found"),
            "{log}"
        );
    }
}

// Source: https://github.com/NVIDIA/nccl/issues/1059 (an example of the benign
// nccl-net-plugin-not-found): a healthy run with NCCL_DEBUG=INFO prints it.
#[test]
fn the_nccl_plugin_info_line_alone_gives_no_cause() {
    let lib = library();
    let log = "MLVM2: MLVM2:10792:10792 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory\n";
    for kind in [EngineKind::Prefilter, EngineKind::Brute] {
        let d = diagnose(lib, kind, log);
        assert!(
            d.causes.is_empty(),
            "{:?}",
            d.causes.iter().map(|c| &c.signature).collect::<Vec<_>>()
        );
        assert!(d
            .noise
            .iter()
            .any(|n| n.signature == "nccl-net-plugin-not-found"));
    }
}

// Source of the exception: https://github.com/deepseek-ai/DeepSeek-V3/issues/205 (an
// example of torch-cuda-out-of-memory). CONSTRUCTED: the traceback around it, then
// collapsed onto one line as a paste that lost its newlines.
#[test]
fn a_traceback_collapsed_onto_one_line_is_read_by_its_final_exception() {
    let lib = library();
    let exc = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 380.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which 14.81 MiB is free.";
    let log = format!("Traceback (most recent call last): File \"/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py\", line 478, in set_device torch._C._cuda_setDevice(device) {exc}\n");
    assert_eq!(top(lib, &log).as_deref(), Some("torch-cuda-out-of-memory"));
    let d = diagnose(lib, EngineKind::Prefilter, &log);
    let f = &d.failures[0];
    assert_eq!(f.headline, exc);
    assert_eq!(f.chain.last().map(|e| e.frames.len()), Some(1));
}

// Sources: the shutdown line, https://github.com/vllm-project/vllm/pull/43707 (an example
// of vllm-shutdown-signal-received); the EngineDeadError line,
// https://github.com/vllm-project/vllm/issues/27194 (an example of vllm-engine-dead-error).
// CONSTRUCTED: the two put together, in both orders.
#[test]
fn a_traceback_after_a_requested_shutdown_is_noise_and_one_before_it_a_cause() {
    let lib = library();
    let shutdown = "(APIServer pid=3945527) INFO 05-26 19:19:56 [launcher.py:100] [shutdown] API server: shutdown triggered";
    let dead = "(APIServer pid=1) ERROR 10-20 03:20:50 [async_llm.py:485[] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.";
    let after = format!("{shutdown}\n{dead}\n");
    assert_eq!(top(lib, &after), None, "folded under the shutdown marker");
    let d = diagnose(lib, EngineKind::Prefilter, &after);
    assert!(d
        .noise
        .iter()
        .any(|n| n.signature == "vllm-shutdown-signal-received"));
    let before = format!("{dead}\n{shutdown}\n");
    assert_eq!(top(lib, &before).as_deref(), Some("vllm-engine-dead-error"));
}

// ---- completion markers (`completes: true`) -------------------------------------------

/// A CONSTRUCTED completion marker (the shape of transformers' Trainer message), loaded
/// from a folder of its own next to the embedded library.
const MARKER: &str = r#"id: test-run-finished
title: the test trainer finished its loop
category: other
severity: benign
completes: true
info_evidence: true
match:
  message: 'TestTrainer: training loop finished after (?P<steps>[0-9]+) steps'
explain: the loop ended; what failed before it was survived
references: [https://example.org/constructed]
examples:
  match:
    - source: constructed
      log: "TestTrainer: training loop finished after 6 steps"
    - source: constructed
      log: "INFO TestTrainer: training loop finished after 60 steps"
  no_match:
    - source: constructed
      log: "TestTrainer: training loop started"
"#;

/// A real DataLoader failure line (corpus/verl-none-grpo-run-teardown-traceback, verl
/// run log) in a CONSTRUCTED traceback, and the CONSTRUCTED marker line.
const WORKER_KILLED: &str = "Traceback (most recent call last):\n  File \"/app/train.py\", line 9, in <module>\n    next(it)\nRuntimeError: DataLoader worker (pid 563735) is killed by signal: Killed.\n";
const FINISHED: &str = "TestTrainer: training loop finished after 6 steps\n";

fn with_marker(log: &str, marker: &str) -> std::process::Output {
    let tmp = tempfile::TempDir::new().expect("tempdir");
    let lib = tmp.path().join("lib");
    std::fs::create_dir(&lib).expect("mkdir");
    std::fs::write(lib.join("test-run-finished.yaml"), marker).expect("write");
    std::fs::write(tmp.path().join("run.log"), log).expect("write");
    crate::util::crashdoc()
        .arg("--signatures")
        .arg(&lib)
        .args(["--format", "json"])
        .arg(tmp.path().join("run.log"))
        .output()
        .expect("run")
}

fn causes(o: &std::process::Output) -> Vec<String> {
    crate::util::json(o)["causes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["signature"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_failure_before_a_completion_marker_was_survived() {
    let o = with_marker(&format!("{WORKER_KILLED}{FINISHED}"), MARKER);
    assert_eq!(
        causes(&o),
        Vec::<String>::new(),
        "{}",
        crate::util::stderr(&o)
    );
    // without the marker the same failure is a cause
    let o = with_marker(WORKER_KILLED, MARKER);
    assert_eq!(
        causes(&o).first().map(String::as_str),
        Some("torch-dataloader-worker-killed")
    );
}

#[test]
fn a_completion_marker_on_a_loose_line_folds_the_failure_before_it() {
    // blank lines end the exception's message: the marker is a line of its own, not a
    // continuation of the failure's text
    let o = with_marker(&format!("{WORKER_KILLED}\n\n{FINISHED}"), MARKER);
    assert_eq!(
        causes(&o),
        Vec::<String>::new(),
        "{}",
        crate::util::stderr(&o)
    );
}

#[test]
fn a_failure_after_a_completion_marker_still_ranks() {
    let o = with_marker(&format!("{FINISHED}{WORKER_KILLED}"), MARKER);
    assert_eq!(
        causes(&o).first().map(String::as_str),
        Some("torch-dataloader-worker-killed")
    );
}

#[test]
fn completes_on_a_signature_that_is_not_benign_is_e018() {
    let fatal = MARKER.replace("severity: benign", "severity: fatal");
    let o = with_marker(FINISHED, &fatal);
    let err = crate::util::stderr(&o);
    assert_eq!(crate::util::code(&o), 3, "{err}");
    assert!(
        err.contains("E018") && err.contains("test-run-finished.yaml"),
        "{err}"
    );
}

// Source of the traceback: corpus/frnet-port-in-use-dist-master-port (its last frame and
// exception line). CONSTRUCTED: a line of the llama.cpp server's healthy log in the corpus
// right after the exception line, as another process writing to the same terminal leaves
// it, which the parse reads as the message's second line.
#[test]
fn an_interleaved_line_after_the_exception_keeps_its_first_line_matchable() {
    let lib = library();
    let log = "\
Traceback (most recent call last):
  File \"/home/guye/anaconda3/envs/xavier37/lib/python3.7/site-packages/torch/distributed/rendezvous.py\", line 190, in _env_rendezvous_handler
    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)
RuntimeError: Address already in use
llama_perf_context_print:        load time =       0.58 ms
";
    assert_eq!(
        top(lib, log).as_deref(),
        Some("torch-distributed-store-port-in-use")
    );
}
