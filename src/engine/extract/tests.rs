use super::*;
use crate::engine::ingest::{LineReader, Source};
use crate::engine::normalize::normalize;

pub(crate) fn extract_file(path: &str) -> Extraction {
    let mut r = LineReader::open(&Source::Path(path.into())).expect("open");
    let mut x = Extractor::new(ExtractOptions {
        plumbing: vec![
            "vllm/model_executor/layers/".into(),
            "vllm/attention/".into(),
            "vllm/utils/".into(),
        ],
    });
    while let Some(l) = r.next_line().expect("read") {
        let _ = x.push(normalize(l));
    }
    x.finish()
}

fn scenario() -> Extraction {
    extract_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/scenario/journal.txt"
    ))
}

#[test]
fn scenario_has_two_attempts_with_one_worker_failure_each() {
    let x = scenario();
    assert_eq!(x.attempts.len(), 2, "{:#?}", x.attempts);
    assert_eq!(x.attempts[0].restart_counter, Some(1));
    assert_eq!(x.attempts[1].restart_counter, Some(2));
    assert_eq!(x.unit.as_deref(), Some("vllm-kimi-k25.service"));
    for (a, first_worker) in [(1, "Worker_TP4"), (2, "Worker_TP2")] {
        let firsts: Vec<_> = x
            .failures
            .iter()
            .filter(|f| f.attempt == a && f.first_in_attempt)
            .collect();
        assert_eq!(firsts.len(), 1);
        let f = firsts[0];
        assert_eq!(f.kind, FailureKind::Traceback);
        assert!(f.headline.starts_with("RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer version (0.6.4)."), "{}", f.headline);
        assert!(
            f.first.stream.starts_with(first_worker),
            "{}",
            f.first.stream
        );
        assert_eq!(f.importing.as_deref(), Some("flashinfer"));
        assert_eq!(
            f.crash_site.as_ref().map(|s| s.short()).as_deref(),
            Some("deepseek_v2.py:932")
        );
        assert_eq!(
            f.raise_site.as_ref().map(|s| s.short()).as_deref(),
            Some("env.py:58")
        );
        assert_eq!(f.preamble.as_deref(), Some("WorkerProc failed to start."));
        if a == 1 {
            assert_eq!(f.streams.len(), 8, "{:?}", f.streams);
            assert_eq!(f.count, 8);
        }
        let consequences: Vec<_> = x
            .failures
            .iter()
            .filter(|c| c.consequence_of == Some(f.id))
            .map(|c| c.headline.as_str())
            .collect();
        assert!(
            consequences
                .iter()
                .any(|h| h.starts_with("Exception: WorkerProc initialization failed")),
            "{consequences:?}"
        );
        assert!(
            consequences
                .iter()
                .any(|h| h.starts_with("RuntimeError: Engine core initialization failed")),
            "{consequences:?}"
        );
        assert!(
            consequences
                .iter()
                .any(|h| h.contains("WorkerProc was terminated")),
            "{consequences:?}"
        );
        assert!(
            consequences
                .iter()
                .any(|h| h.contains("Main process exited, code=exited, status=1/FAILURE")),
            "{consequences:?}"
        );
    }
}

fn extract_text(text: &str) -> Extraction {
    let records = text.lines().enumerate().map(|(i, l)| {
        normalize(crate::engine::ingest::Line {
            number: i + 1,
            text: l.to_string(),
            truncated: 0,
        })
    });
    extract_records(records, ExtractOptions::default())
}

/// A `nohup.out` that appends runs (CONSTRUCTED from lines of corpus/llamafactory-disk-full
/// and of a healthy vLLM run in the corpus): the next run's output follows the exception
/// line directly, and is not the exception's message.
#[test]
fn the_next_runs_output_does_not_continue_an_exception_message() {
    let x = extract_text(
        "Traceback (most recent call last):\n  File \"pyarrow/ipc.pxi\", line 525, in pyarrow.lib._CRecordBatchWriter.write_table\nOSError: [Errno 28] No space left on device\nnohup: ignoring input\nLoading safetensors checkpoint shards:   0% Completed | 0/16 [00:00<?, ?it/s]\nLoading safetensors checkpoint shards:   6% Completed | 1/16 [00:03<00:53,  3.59s/it]\n",
    );
    let f = &x.failures[0];
    assert_eq!(
        f.chain.last().map(|e| e.message.as_str()),
        Some("[Errno 28] No space left on device")
    );
    for bar in [
        "Map:  19%|██▍  | 345877/1791700 [00:46<03:03, 7857.80 examples/s]",
        "  6%|▋  | 1/16 [00:03<00:53,  3.59s/it]",
    ] {
        assert!(shapes::foreign_output(bar), "{bar}");
    }
    // a message's own second line is kept
    let x = extract_text("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nRuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"fc.weight\".\n");
    assert!(
        x.failures[0].chain[0].message.contains("Missing key(s)"),
        "{:#?}",
        x.failures
    );
}

/// Another process's lines interleaved among a traceback's frames (CONSTRUCTED from
/// lines of corpus/trl-none-grpo-vlm-ctrl-c-during-generation and of the llama.cpp
/// server's healthy log in the corpus, as `corpus run --metamorphic`'s
/// interleave-healthy does): a bare lowercase word or a class's method before a colon is
/// no exception type, and a frame after what was read as a message means it was none.
#[test]
fn lines_interleaved_among_frames_are_not_the_exception() {
    let x = extract_text(concat!(
        "Traceback (most recent call last):\n",
        "  File \"grpo_vlm.py\", line 660, in <module>\n",
        "llama_perf_context_print:        eval time =  150190.99 ms /   531 runs\n",
        "    trainer.train()\n",
        "Llama.generate: 458 prefix-match found but partial kv removal not supported\n",
        "  File \"trainer.py\", line 2325, in train\n",
        "INFO:     127.0.0.1:58674 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
        "    return inner_training_loop(\n",
        "  File \"trainer.py\", line 2674, in _inner_training_loop\n",
        "llama_perf_context_print:       total time =  167071.61 ms /  1374 tokens\n",
        "    raise ValueError(\"boom\")\n",
        "ValueError: boom\n",
    ));
    let tb: Vec<_> = x.failures.iter().filter(|f| !f.chain.is_empty()).collect();
    assert_eq!(tb.len(), 1, "{:#?}", x.failures);
    let e = tb[0].chain.last().expect("exception");
    assert_eq!(
        (e.exception_type.as_str(), e.message.as_str()),
        ("ValueError", "boom")
    );
    assert_eq!(e.frames.len(), 3, "{e:#?}");
    // module-qualified lowercase classes are exceptions still
    for (ty, yes) in [
        ("socket.timeout", true),
        ("torch.OutOfMemoryError", true),
        ("ValueError", true),
        ("llama_perf_context_print", false),
        ("Llama.generate", false),
    ] {
        assert_eq!(super::shapes::python_type(ty), yes, "{ty}");
    }
}
#[test]
fn occurrences_listed_over_all_failures_are_bounded_and_counted() {
    // CONSTRUCTED: 100 distinct errors (named by letters: digits are blanked when
    // failures are compared), each repeated 1,000 times
    let name = |k: u8| format!("{}{}", (b'a' + k / 10) as char, (b'a' + k % 10) as char);
    let mut text = String::new();
    for rep in 0..1000 {
        for k in 0..100u8 {
            let w = name(k);
            text.push_str(&format!(
                "RuntimeError: worker {w} lost its peer (round {rep})\n"
            ));
        }
    }
    let x = extract_text(&text);
    let listed: usize = x.failures.iter().map(|f| f.occurrences.len()).sum();
    let counted: usize = x.failures.iter().map(|f| f.count).sum();
    assert_eq!(x.failures.len(), 100);
    assert!(listed <= MAX_TOTAL_OCCURRENCES, "{listed} listed");
    assert!(listed >= MAX_TOTAL_OCCURRENCES / 2, "{listed} listed");
    assert_eq!(counted, 100_000, "every repeat is counted");
}
