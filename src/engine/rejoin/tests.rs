//! Every input here is CONSTRUCTED: a line (or a log of a few lines) cut the way a
//! terminal (`fold -w`), `fold -s` or an editor's hanging indent cuts it, and logs whose
//! ordinary lines must not be merged.

use super::*;

/// The logical lines of `text`: (number, text).
fn logical(text: &str) -> Vec<(usize, String)> {
    let mut r = LineReader::from_reader(
        Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        "t".into(),
    )
    .expect("open");
    let mut j = Rejoiner::new(&mut r);
    let mut out = Vec::new();
    while let Some(l) = j.next_raw().expect("read") {
        out.push((l.number, String::from_utf8_lossy(l.bytes).into_owned()));
    }
    out
}

/// Cuts `line` every `w` characters (`fold -w`).
fn hard(line: &str, w: usize) -> String {
    let c: Vec<char> = line.chars().collect();
    c.chunks(w)
        .map(|p| p.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cuts `line` at the last space that keeps a piece within `w` (`fold -s`: the space
/// stays at the end of the piece); `pad` starts every continuation.
fn soft(line: &str, w: usize, pad: &str) -> String {
    let mut out = Vec::new();
    let mut rest = line.to_string();
    let mut first = true;
    loop {
        let room = if first { w } else { w - pad.len() };
        let lead = if first { "" } else { pad };
        if rest.len() <= room {
            out.push(format!("{lead}{rest}"));
            break;
        }
        let at = rest[..=room].rfind(' ').map_or(room, |i| i + 1);
        out.push(format!("{lead}{}", &rest[..at]));
        rest = rest[at..].to_string();
        first = false;
    }
    out.join("\n")
}

const LONG: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use.";

fn texts(v: &[(usize, String)]) -> Vec<&str> {
    v.iter().map(|(_, t)| t.as_str()).collect()
}

#[test]
fn a_hard_wrap_at_a_common_width_is_rejoined_and_keeps_its_first_line_number() {
    for w in [80, 100, 120, 160] {
        let text = format!("start\n{}\nnext line\n", hard(LONG, w));
        let v = logical(&text);
        assert_eq!(texts(&v), ["start", LONG, "next line"], "width {w}");
        let pieces = LONG.len().div_ceil(w);
        assert_eq!(v[1].0, 2, "the first physical line's number");
        assert_eq!(
            v[2].0,
            2 + pieces,
            "the next line keeps its physical number"
        );
    }
}

#[test]
fn a_soft_wrap_at_spaces_is_rejoined_with_and_without_hanging_indent() {
    for (w, pad) in [(80, ""), (120, "  "), (160, "")] {
        let text = format!("{}\n", soft(LONG, w, pad));
        assert!(text.lines().count() > 1 || w == 160 && LONG.len() <= 160);
        assert_eq!(texts(&logical(&text)), [LONG], "width {w} pad {pad:?}");
    }
}

#[test]
fn an_indented_frame_cut_with_a_hanging_indent_rejoins_without_the_indent() {
    let frame = "  File \"/usr/local/lib/python3.12/site-packages/vllm/v1/engine/core.py\", line 498, in run_engine_core";
    let text = format!("{}\n", soft(frame, 80, "    "));
    assert_eq!(texts(&logical(&text)), [frame]);
}

#[test]
fn a_repeated_uncommon_width_is_learned() {
    // two lines cut at 94 columns: the first cut shows the width, the second is joined
    let a = format!("{}\n", hard(LONG, 94));
    let text = format!("{}{a}", "x".repeat(94) + "\n");
    let v = logical(&text);
    assert_eq!(v.last().map(|(_, t)| t.as_str()), Some(LONG));
}

#[test]
fn records_of_one_length_are_not_merged() {
    // every line is 80 characters and starts with a timestamp and a level
    let line = |i: usize| {
        let l = format!(
            "2025-01-02 03:04:{i:02} INFO worker step {i} finished, tokens processed: 1024"
        );
        format!("{l:<80}")
    };
    let text: String = (0..5).map(|i| line(i) + "\n").collect();
    let v = logical(&text);
    assert_eq!(v.len(), 5);
    for (n, (number, t)) in v.iter().enumerate() {
        assert_eq!(*number, n + 1);
        assert_eq!(t.chars().count(), 80);
    }
}

#[test]
fn traceback_lines_and_exception_lines_start_their_own_record() {
    let head = format!(
        "{:<80}",
        "ERROR 01-02 03:04:05 [core.py:512] EngineCore failed to start, see the trace"
    );
    for next in [
        "Traceback (most recent call last):",
        "  File \"/app/main.py\", line 3, in <module>",
        "RuntimeError: CUDA error: out of memory",
        "During handling of the above exception, another exception occurred:",
        "[rank0]: RuntimeError: boom",
        "(EngineCore_DP0 pid=12) ERROR 01-02 03:04:05 [core.py:1] x",
    ] {
        let v = logical(&format!("{head}\n{next}\n"));
        assert_eq!(v.len(), 2, "{next:?} was joined");
    }
}

#[test]
fn tables_and_rules_are_never_joined() {
    // nvidia-smi's rows are all one width
    let rule = format!("+{}+", "-".repeat(78));
    let row = format!(
        "|{:<78}|",
        " NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4"
    );
    let banner = "=".repeat(80);
    let text = format!("{rule}\n{row}\n{rule}\n{banner}\nCollecting environment information\n");
    assert_eq!(logical(&text).len(), 5);
}

#[test]
fn a_width_ruled_out_by_a_longer_line_is_not_a_wrap() {
    let long = "y".repeat(250);
    let eighty = "z".repeat(80);
    let text = format!("{long}\n{eighty}\ncontinuation?\n");
    assert_eq!(logical(&text).len(), 3);
}

#[test]
fn blank_lines_short_lines_and_the_end_of_input_stop_a_join() {
    let eighty = "w".repeat(80);
    assert_eq!(logical(&format!("{eighty}\n\nafter\n")).len(), 3);
    assert_eq!(logical(&format!("{eighty}\n")).len(), 1);
    assert_eq!(logical(&eighty.to_string()).len(), 1);
    assert_eq!(logical("short\nlines\n").len(), 2);
    assert!(logical("").is_empty());
}

#[test]
fn a_soft_head_needs_the_next_word_not_to_fit() {
    // 60 columns with a trailing space, then a 5-letter word: it would have fit at 80
    let head = format!("{} ", "a".repeat(59));
    let text = format!("{head}\nshort words follow\n");
    assert_eq!(logical(&text).len(), 2);
    // a 30-letter word would not have fit
    let text = format!("{head}\n{} tail\n", "b".repeat(30));
    assert_eq!(logical(&text).len(), 1);
}

#[test]
fn a_short_soft_head_joins_only_a_word_that_fills_the_next_line() {
    // the wrapper moved a path longer than the width whole, then cut it at 80
    let path = format!("'/cache/huggingface/hub/{}/config.json'", "a1b2".repeat(30));
    let line = format!("[Errno 13] Permission denied: {path}");
    let text = format!("{}\n", soft(&line, 80, ""));
    assert_eq!(texts(&logical(&text)), vec![line.as_str()]);
    // a short head before an ordinary line stays a line of its own
    let text = "[Errno 13] Permission denied: \nshort words follow here\n";
    assert_eq!(logical(text).len(), 2);
    // and before one word that would have fit after it
    let text = format!("[Errno 13] Permission denied: \n{}\n", "b".repeat(40));
    assert_eq!(logical(&text).len(), 2);
}

#[test]
fn a_soft_head_may_end_with_a_sentence_double_space() {
    // CONSTRUCTED from PyTorch's OOM message, which has double spaces between sentences
    let line = "torch.OutOfMemoryError: CUDA out of memory. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";
    let text = format!("{}\n", soft(line, 160, ""));
    assert!(text.lines().count() > 1);
    assert_eq!(texts(&logical(&text)), vec![line]);
    // three trailing spaces are padding, not a cut
    let text = format!("{}   \n{}\n", "a".repeat(70), "b".repeat(40));
    assert_eq!(logical(&text).len(), 2);
}

#[test]
fn a_prefix_cut_before_its_exception_takes_it_as_its_message() {
    // CONSTRUCTED after a vLLM worker's error line cut at 80 after its prefix
    let prefix = "(Worker_TP2_EP2 pid=211810) ERROR 07-17 15:09:17 [multiproc_executor.py:1007] ";
    let message = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB.";
    let text = format!("{prefix}\n{message}\n");
    assert_eq!(
        texts(&logical(&text)),
        vec![format!("{prefix}{message}").as_str()]
    );
    // a prefixed line with no message before the next prefixed record stays apart
    let next = "(Worker_TP3_EP3 pid=211812) ERROR 07-17 15:09:17 [multiproc_executor.py:1007] x";
    let text = format!("{prefix}\n{next}\n");
    assert_eq!(logical(&text).len(), 2);
}

#[test]
fn a_wrapped_command_whose_pieces_start_with_other_paths_is_one_line() {
    // CONSTRUCTED after a FlashInfer JIT nvcc command line cut at 160 columns
    let head = format!("/usr/local/cuda/bin/nvcc -I{} -isystem ", "d".repeat(118));
    assert_eq!(head.len(), 155);
    for next in [
        "/usr/include/python3.12 -isystem /usr/local/cuda/include -o /tmp/out.o",
        "/usr/local/lib/python3.12/dist-packages/tvm_ffi/include -o /tmp/out.o",
    ] {
        let v = logical(&format!("{head}\n{next}\n"));
        assert_eq!(texts(&v), vec![format!("{head}{next}").as_str()]);
    }
    // two lines that start with the same three directories are two records
    let a = format!(
        "/usr/local/lib/x/a.cuh(117): error: {} ",
        "x ".repeat(60).trim_end()
    );
    let text =
        format!("{a}\n/usr/local/lib/x/b.cuh(9): error: no suitable conversion function exists\n");
    assert_eq!(logical(&text).len(), 2);
}

#[test]
fn a_bracketed_id_that_starts_with_a_digit_continues_a_cut_line() {
    // CONSTRUCTED after a Metaflow step's line (timestamp, step tag), cut at 80 before
    // a bracketed task id that starts with a digit
    let prefix = "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] ";
    let message =
        "[09c561ee-a44c-4795-967c-7183a83b3160] OSError: [Errno 28] No space left on device";
    let line = format!("{prefix}{message}");
    let text = format!("{}\n", soft(&line, 80, ""));
    assert_eq!(texts(&logical(&text)), vec![line.as_str()]);
    // bracketed stamps still start records of their own; a bracketed id does not
    assert!(stamp(b"[2025-02-01 07:03:54 TP5] Decode batch"));
    assert!(stamp(b"[  +0.000006] usb 1-1"));
    assert!(stamp(b"[177/train/578 (pid 28936)] x"));
    assert!(!stamp(b"[09c561ee-a44c-4795-967c-7183a83b3160] OSError: x"));
}

#[test]
fn columns_skip_escapes_and_count_characters() {
    assert_eq!(columns(b"\x1b[31mERROR\x1b[0m x"), 7);
    assert_eq!(columns("héllo".as_bytes()), 5);
    // past one block of 255 bytes: the byte-wide sums are added up
    let long = "é".repeat(300) + &"a".repeat(200);
    assert_eq!(columns(long.as_bytes()), 500);
}

#[test]
fn a_continuation_longer_than_the_width_is_not_one() {
    let eighty = "v".repeat(80);
    let longer = "u".repeat(90);
    assert_eq!(logical(&format!("{eighty}\n{longer}\n")).len(), 2);
}

#[test]
fn records_of_one_format_and_foreign_stamps_start_their_own_line() {
    // progress records of one width; records whose stamp normalize does not peel
    let step = |i: usize| {
        format!("step {i:05}/00100 ({i}.00%) | loss: 10.396878 | lrm: 0.00 | dt: 1921.46ms")
    };
    let text: String = (1..4).map(|i| format!("{:<80}\n", step(i))).collect();
    assert_eq!(logical(&text).len(), 3);
    let head = "x".repeat(80);
    for next in [
        "2023-02-02 07:33:14.789112: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1637] Created",
        "[  +0.000003] pcieport 0000:00:03.0:   device [8086:6f08]",
        "[2025-02-01 07:03:54 TP0] Load weight end.",
        "/app/x.py:12: UserWarning: this is deprecated",
        "\x1b[2m2025-04-14T15:51:47.056968Z\x1b[0m \x1b[32m INFO\x1b[0m shard",
    ] {
        assert_eq!(logical(&format!("{head}\n{next}\n")).len(), 2, "{next:?} was joined");
    }
}

#[test]
fn a_repeated_identical_line_does_not_teach_a_width() {
    // the same 133-column frame twice, then its source line: a traceback, not a wrap
    let frame = format!(
        "  File \"/{}/module.py\", line 1779, in _wrapped_call_impl",
        "p".repeat(74)
    );
    let text = format!("{frame}\n    return x\n{frame}\nreturn self._call_impl(*args, **kwargs)\n");
    assert_eq!(logical(&text).len(), 4);
    let warn = format!("W: {}", "w".repeat(130));
    let text = format!("{warn}\n{warn}\ncontinued?\n");
    assert_eq!(logical(&text).len(), 3);
}

#[test]
fn a_complete_frame_and_its_indented_source_line_are_not_joined() {
    let frame = format!(
        "  File \"/{}/core.py\", line 31, in <module>",
        "q".repeat(92)
    );
    assert_eq!(frame.len(), 132);
    let text = format!("{frame}\n    backend = backend(__name__)\n");
    assert_eq!(logical(&text).len(), 2);
    // the same frame cut inside the function's name by a 120-column terminal is joined
    let cut = "(EngineCore pid=3160)   File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py\", line 2193, in get_";
    assert_eq!(cut.len(), 120);
    let v = logical(&format!("{cut}\nkv_cache_configs\n"));
    assert_eq!(v.len(), 1);
    assert!(v[0].1.ends_with("in get_kv_cache_configs"));
}

#[test]
fn a_quoted_paste_is_rejoined_inside_its_quote() {
    let quoted: String = hard(LONG, 80).lines().map(|l| format!("> {l}\n")).collect();
    assert_eq!(texts(&logical(&quoted)), [format!("> {LONG}").as_str()]);
    // a quoted line and an unquoted one are not one line
    let text = format!("> {}\nnot quoted\n", "x".repeat(80));
    assert_eq!(logical(&text).len(), 2);
}

#[test]
fn a_shell_status_after_a_line_of_a_common_width_is_its_own_line() {
    // an 80-column log line, then the shell's "Killed" (the shape of MU-GOT#17)
    let head = format!(
        "INFO 11-20 10:45:57 gpu_executor.py:102] {}",
        "x".repeat(39)
    );
    assert_eq!(head.len(), 80);
    let v = logical(&format!("{head}\nKilled\n"));
    assert_eq!(texts(&v), vec![head.as_str(), "Killed"]);
}

#[test]
fn a_line_cut_before_a_collector_prefixed_it_is_rejoined_behind_the_prefix() {
    // two messages cut every 70 characters by the program (or a paste), then each piece
    // prefixed by journald, a container runtime, `kubectl logs --prefix`, torchrun, Ray
    // or a CI runner. The whole lines' width (prefix and piece) is learned from the
    // input: the first piece, its width not seen yet, stays a line of its own.
    let other = "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3";
    for prefix in [
        "Jun 03 10:00:05 gpu-node-3 vllm[216054]: ",
        "2025-06-03T10:00:05.123456789Z ",
        "[pod/vllm-7d9f8b6c4-x2x9q/vllm] ",
        "[rank0]: ",
        "(Worker_TP0 pid=4242) ",
        "Jun 03 10:00:05 ",
    ] {
        let text: String = format!("{}\n{}", hard(LONG, 70), hard(other, 70))
            .lines()
            .map(|l| format!("{prefix}{l}\n"))
            .collect();
        let v = logical(&text);
        let first: Vec<char> = LONG.chars().collect();
        let head: String = first[..70].iter().collect();
        let rest: String = first[70..].iter().collect();
        assert_eq!(
            texts(&v),
            vec![
                format!("{prefix}{head}"),
                format!("{prefix}{rest}"),
                format!("{prefix}{other}")
            ],
            "{prefix:?}"
        );
        assert_eq!((v[1].0, v[2].0), (2, 4), "{prefix:?}");
    }
}

#[test]
fn pieces_of_two_streams_behind_their_prefixes_are_not_joined() {
    // the same cut, but every other piece from another rank: never one line
    let text: String = hard(LONG, 70)
        .lines()
        .chain(hard(LONG, 70).lines())
        .enumerate()
        .map(|(i, l)| format!("[rank{}]: {l}\n", i % 2))
        .collect();
    assert_eq!(logical(&text).len(), 6);
}

#[test]
fn a_frame_and_its_source_line_behind_a_prefix_stay_two_lines() {
    // two frames of one width behind torchrun's prefix, then the second's source line
    let text = "[rank0]:   File \"/app/train/run_model.py\", line 500, in <module>\n[rank0]:   File \"/app/train/run_model.py\", line 123, in <mainxy>\n[rank0]:     main_entry_point_function(arguments)\n";
    assert_eq!(logical(text).len(), 3);
}

/// `line` soft-wrapped at `w` columns (`fold -s`): asserts it rejoins whole, returns the
/// wrapped text.
fn soft_rejoins(line: &str, w: usize) -> String {
    let text = format!("{}\n", soft(line, w, ""));
    assert_eq!(texts(&logical(&text)), [line], "width {w}");
    text
}

#[test]
fn a_soft_wrap_inside_a_logger_prefix_is_rejoined() {
    // TensorFlow's C++ logger line (format of tensorflow/core/platform/default/logging.cc)
    // cut at a space before its origin: the short head is a stamp and a level only
    let line = "2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected";
    let text = soft_rejoins(line, 80);
    assert!(text.lines().next().is_some_and(|h| h.len() < MIN_SOFT));
    // a short line ending with a space before an ordinary sentence stays apart
    let text = "2020-11-11 10:46:37.467224: E \nthe next line is a sentence of its own\n";
    assert_eq!(logical(text).len(), 2);
}

#[test]
fn a_parenthesised_word_before_punctuation_continues_a_wrap() {
    // Ray's raylet summary cut at 80 columns before `(OOM),`: no process tag is
    // followed by a comma
    let line = "node_manager.cc:3064: 12 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node";
    let text = soft_rejoins(line, 80);
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("(OOM),")));
}

/// pip's disk-full line (Source: corpus/ultralytics-ros-github-actions-disk-full-pip-libtorch-python).
const PIP_NO_SPACE: &str = "ERROR: Could not install packages due to an EnvironmentError: [Errno 28] No space left on device: '/tmp/pip-unpacked-wheel-38i3wtow/torch/lib/libtorch_python.so' -> '/usr/local/lib/python3.8/dist-packages/torch/lib/libtorch_python.so'";

#[test]
fn a_soft_wrap_is_read_at_the_narrowest_width_that_holds_both_pieces() {
    // cut at 160 columns before a 63-column path: 100 columns would fit the head and
    // not the word, but not the continuation either
    assert_eq!(soft_rejoins(PIP_NO_SPACE, 160).lines().count(), 2);
}

#[test]
fn a_short_head_before_a_long_word_and_more_is_rejoined() {
    // at 80 columns `space left on device: ` (22 columns) is left behind by the
    // 63-column path that `fold -s` moved whole, with ` -> ` after it
    let text = soft_rejoins(PIP_NO_SPACE, 80);
    assert!(
        text.lines().any(|l| l == "space left on device: "),
        "{text}"
    );
    // a short line ending with a space before a sentence of short words stays apart
    let text = "the download finished: \nthe next step starts now and prints its own progress\n";
    assert_eq!(logical(text).len(), 2);
}
