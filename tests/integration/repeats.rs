//! Repeats counted without extraction change nothing: a repeated one-line failure
//! (`engine::extract::Shape`) and a repeated multi-line block followed along a template
//! (`engine::extract::Key`) give the diagnosis the full path gives. Each test diagnoses
//! the same bytes with repeats counted (one thread, and two from the first line) and
//! with every line on the full path (`Engine::with_repeats(false)`), and compares the
//! JSON diagnoses byte for byte, on
//! - every corpus log (`corpus/*/log.txt`), all of them;
//! - the generated failure-heavy profile (`crashdoc bench gen-log --profile failures`)
//!   at 10 MB, and the warning-heavy one at 4 MB;
//! - CONSTRUCTED logs from a property test: blocks of several kinds (tracebacks with
//!   chained exceptions and multi-line messages, C++ aborts, NCCL blocks, Python
//!   warnings, one-line errors) on several streams, repeated and interleaved, with small
//!   variations (a number changed, a line dropped or added, a blank line, a block cut
//!   off, a service restart between them).

use std::path::Path;

use crashdoc::engine::diagnosis::BuildOptions;
use crashdoc::engine::ingest::LineReader;
use crashdoc::engine::matcher::EngineKind;
use crashdoc::engine::pipeline::Engine;
use crashdoc::tools::bench::{write_profile_log, LogProfile};
use proptest::prelude::*;

fn diagnose(engine: &mut Engine<'_>, name: &str, bytes: &[u8]) -> String {
    let mut r = LineReader::from_reader(
        Box::new(std::io::Cursor::new(bytes.to_vec())),
        name.to_string(),
    )
    .expect("open");
    let d = engine
        .diagnose(&mut r, BuildOptions::default())
        .expect("diagnose");
    crashdoc::report::json(&d).expect("json")
}

/// Diagnoses `bytes` three ways and says where they differ (`None`: they agree).
fn differs(name: &str, bytes: &[u8]) -> Option<String> {
    let compiled = crate::util::compiled();
    let mut full = Engine::new(compiled, EngineKind::Prefilter).with_repeats(false);
    let mut fast = Engine::new(compiled, EngineKind::Prefilter);
    let mut two = Engine::new(compiled, EngineKind::Prefilter).with_parallel_after(0);
    let reference = diagnose(&mut full, name, bytes);
    for (how, engine) in [("one thread", &mut fast), ("two threads", &mut two)] {
        let got = diagnose(engine, name, bytes);
        if got != reference {
            let at = got
                .bytes()
                .zip(reference.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(reference.len()));
            let from = at.saturating_sub(200);
            return Some(format!(
                "{name} ({how}) differs at byte {at}:\n counted: {}\n full:    {}",
                &got[from..(at + 200).min(got.len())],
                &reference[from..(at + 200).min(reference.len())]
            ));
        }
    }
    None
}

#[test]
fn counting_repeats_changes_no_diagnosis_of_any_corpus_log() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut logs: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .expect("corpus")
        .flatten()
        .map(|e| e.path().join("log.txt"))
        .filter(|p| p.exists())
        .collect();
    logs.sort();
    assert!(logs.len() > 200, "{} logs", logs.len());
    let bad: Vec<String> = logs
        .iter()
        .filter_map(|p| differs(&p.display().to_string(), &std::fs::read(p).expect("read")))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

#[test]
fn counting_repeats_changes_no_diagnosis_of_the_generated_profiles() {
    for (profile, size) in [
        (LogProfile::Failures, 10 << 20),
        (LogProfile::Warnings, 4 << 20),
    ] {
        let mut log = Vec::new();
        write_profile_log(&mut log, size, 1, profile).expect("generate");
        if let Some(d) = differs(&format!("{profile:?}"), &log) {
            panic!("{d}");
        }
    }
}

/// CONSTRUCTED blocks, one line per entry, `{n}` a number the variations change.
const BLOCKS: &[&[&str]] = &[
    &[
        "Traceback (most recent call last):",
        "  File \"/app/train.py\", line {n}, in <module>",
        "    main()",
        "  File \"/app/train.py\", line 33, in main",
        "    fit(model)",
        "RuntimeError: CUDA error: out of memory on device {n}",
    ],
    &[
        "Traceback (most recent call last):",
        "  File \"/usr/lib/python3/site-packages/torch/serialization.py\", line 1{n}, in load",
        "    return _load(f)",
        "KeyError: 'model.layers.{n}.weight'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        "  File \"/app/load.py\", line 9, in <module>",
        "RuntimeError: Error(s) in loading state_dict for Net:",
        "\tMissing key(s) in state_dict: \"fc.weight\".",
    ],
    &[
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  CUDA error: an illegal memory access was encountered ({n})",
        "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):",
        "frame #0: c10::Error::Error() + 0x{n}",
    ],
    &[
        "NCCL WARN Cuda failure 'out of memory' at {n}",
        "NCCL INFO transport/net.cc:{n} -> 1",
        "NCCL INFO init.cc:1 -> 1",
    ],
    &[
        "/app/model.py:{n}: UserWarning: TypedStorage is deprecated.",
        "  return self.fget.__get__(instance, owner)()",
    ],
    &["ValueError: the batch size {n} is not divisible by the world size"],
    &["ERROR: worker {n} exited with code 1"],
];

/// Stream prefixes: a torchrun rank, a vLLM worker in a journal, a process in a
/// journal, a bare line; the journal's second is `second` (copies differ by it, so
/// that their lines differ in text but not in what extraction reads).
fn prefix(stream: u8, second: u8) -> String {
    let s = second % 60;
    match stream % 4 {
        0 => format!("[rank{}]: ", stream / 4),
        1 => format!(
            "Feb 20 23:22:{s:02} llm-two vllm[2160{0}]: (Worker_TP{0} pid=2160{0}) ",
            stream / 4
        ),
        2 => format!("Feb 20 23:22:{s:02} llm-two python[7{}]: ", stream / 4),
        _ => String::new(),
    }
}

/// One block of one stream, with a variation: 0 none (the most likely), 1 a number
/// changed, 2 a line dropped, 3 a line doubled, 4 a blank line added, 5 cut off after
/// its first lines, 6 a message line added.
#[derive(Debug, Clone)]
struct Copy {
    block: usize,
    stream: u8,
    variation: u8,
    at: usize,
    n: u8,
}

fn lines_of(c: &Copy, round: usize) -> Vec<String> {
    let b = BLOCKS[c.block % BLOCKS.len()];
    let n = if c.variation == 1 { c.n % 7 + 1 } else { 1 };
    let mut lines: Vec<String> = b.iter().map(|l| l.replace("{n}", &n.to_string())).collect();
    let at = c.at % lines.len();
    match c.variation {
        2 if lines.len() > 1 => {
            lines.remove(at);
        }
        3 => lines.insert(at, lines[at].clone()),
        4 => lines.insert(at, String::new()),
        5 => lines.truncate(at + 1),
        6 => lines.push("  (continued)".to_string()),
        _ => {}
    }
    // copies in groups of three share a second
    let p = prefix(c.stream, (round / 3 % 60) as u8);
    lines.into_iter().map(|l| format!("{p}{l}")).collect()
}

/// The copies' lines, interleaved: each step takes the next line of one of the (at most
/// four) copies in flight, as `picks` says; a `restarts` entry puts a service restart
/// after that step.
fn interleave(copies: &[Copy], picks: &[u8], restarts: &[usize]) -> String {
    let mut pending: Vec<std::collections::VecDeque<String>> = Vec::new();
    let mut queue = copies.iter().enumerate();
    let mut out = String::new();
    let mut step = 0usize;
    loop {
        while pending.len() < 4 {
            match queue.next() {
                Some((round, c)) => pending.push(lines_of(c, round).into()),
                None => break,
            }
        }
        pending.retain(|p| !p.is_empty());
        if pending.is_empty() {
            break;
        }
        let i = picks.get(step % picks.len().max(1)).copied().unwrap_or(0) as usize % pending.len();
        if let Some(l) = pending[i].pop_front() {
            out.push_str(&l);
            out.push('\n');
        }
        if restarts.contains(&step) {
            out.push_str(
                "Feb 20 23:22:09 llm-two systemd[1]: Started vllm.service - vLLM server.\n",
            );
        }
        step += 1;
    }
    out
}

fn copy_strategy() -> impl Strategy<Value = Copy> {
    (
        0..BLOCKS.len(),
        0u8..8,
        prop_oneof![6 => Just(0u8), 6 => 1u8..7],
        0usize..12,
        0u8..255,
    )
        .prop_map(|(block, stream, variation, at, n)| Copy {
            block,
            stream,
            variation,
            at,
            n,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn counting_repeats_changes_no_diagnosis_of_interleaved_repeated_blocks(
        kinds in prop::collection::vec(copy_strategy(), 1..6),
        order in prop::collection::vec(0usize..6, 8..80),
        picks in prop::collection::vec(0u8..4, 1..40),
        restarts in prop::collection::vec(0usize..400, 0..3),
    ) {
        // a few kinds of copies, repeated in an order: the repeats are what is counted
        let copies: Vec<Copy> = order.iter().map(|&i| kinds[i % kinds.len()].clone()).collect();
        let log = interleave(&copies, &picks, &restarts);
        if let Some(d) = differs("interleaved", log.as_bytes()) {
            prop_assert!(false, "{}\n--- log:\n{}", d, log);
        }
    }
}
