//! Rejoin on real wrapped logs: corpus incidents whose reporters pasted lines a terminal
//! had cut at its width (each log is verbatim from its thread; `source:` in the
//! incident's expected.yaml).

use std::path::Path;

use crashdoc::engine::ingest::{LineReader, Source};
use crashdoc::engine::rejoin::Rejoiner;

/// The logical lines of a corpus log: (number, text).
fn logical(incident: &str) -> Vec<(usize, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(incident)
        .join("log.txt");
    let mut r = LineReader::open(&Source::Path(path)).expect("open");
    let mut j = Rejoiner::new(&mut r);
    let mut out = Vec::new();
    while let Some(l) = j.next_raw().expect("read") {
        out.push((l.number, String::from_utf8_lossy(l.bytes).into_owned()));
    }
    out
}

#[test]
fn a_deepspeed_launcher_line_cut_at_204_columns_is_one_line() {
    // https://github.com/CASIA-LMC-Lab/AnomalyGPT/issues/43: lines 4-6 are 204 columns,
    // line 7 is the end of the launcher's message
    let v = logical("anomalygpt-deepspeed-host-oom-return-code-9");
    let numbers: Vec<usize> = v.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    let last = &v[3].1;
    assert!(last.starts_with("[2023-11-13 16:59:55,650] [ERROR] [launch.py:320:sigkill_handler]"));
    assert!(last.ends_with("'./ckpt/train_mvtec/log_rest/'] exits with return code = -9"));
    assert!(
        last.contains("'--max_tgt_len', '1024'"),
        "the halves of a word rejoin"
    );
}

#[test]
fn a_vllm_frame_cut_inside_its_function_name_is_one_line() {
    // https://github.com/SergiioB/intel-arc-pro-b70-inference-cookbook/issues/4
    let v = logical("vllm-kv-cache-insufficient");
    let frame = v
        .iter()
        .find(|(n, _)| *n == 11)
        .expect("line 11 starts a logical line");
    assert!(frame.1.ends_with("line 2193, in get_kv_cache_configs"));
    assert!(v.iter().all(|(n, _)| *n != 12), "line 12 was absorbed");
}

#[test]
fn most_corpus_logs_are_read_line_for_line() {
    // a log nobody cut is not merged: every corpus log but the few wrapped ones keeps
    // its physical lines
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut joined = Vec::new();
    let mut logs = 0;
    for e in std::fs::read_dir(&root).expect("corpus").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.path().join("log.txt").is_file() {
            continue;
        }
        logs += 1;
        let v = logical(&name);
        let bytes = std::fs::read(e.path().join("log.txt")).expect("read");
        let physical = String::from_utf8_lossy(&bytes).lines().count();
        if v.len() != physical {
            joined.push(name);
        }
    }
    assert!(
        joined.len() * 10 <= logs,
        "{} of {logs} logs had lines joined: {joined:?}",
        joined.len()
    );
}
