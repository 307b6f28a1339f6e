//! Line classifiers: which failure shape, if any, one record starts.
//!
//! Each classifier looks at a record's message (prefixes peeled) and, for a few shapes,
//! at its stream. The cheap ones run first; [`classify`] returns the first that fits.
//! These are *structural* shapes common to every program (a Python exception line, a
//! signal, a kernel OOM-kill, a systemd exit), not knowledge of particular failures:
//! that lives in the signatures.

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::FailureKind;
use crate::engine::normalize::{Level, Prebuilt, Record};

macro_rules! re {
    ($name:ident, $pat:expr) => {
        static $name: Prebuilt<Regex> = Prebuilt::new(|| {
            #[allow(clippy::expect_used)]
            Regex::new($pat).expect("built-in shape regex")
        });
    };
}

/// Builds every regex and automaton of this module now, rather than at the first record
/// that needs it ([`crate::engine::warm_up_in_background`]).
pub fn warm_up() {
    Prebuilt::force(&FRAME);
    Prebuilt::force(&EXC_LINE);
    Prebuilt::force(&LONE_EXC);
    Prebuilt::force(&PY_WARNING);
    Prebuilt::force(&SYSTEMD_FAIL);
    Prebuilt::force(&OOM_KILL);
    Prebuilt::force(&SIGNAL);
    Prebuilt::force(&SHELL_SIGNAL);
    Prebuilt::force(&ABORT);
    Prebuilt::force(&KERNEL_REPORT);
    Prebuilt::force(&NCCL_START);
    Prebuilt::force(&CUDA_ERR);
    Prebuilt::force(&SYSTEMD_START);
    Prebuilt::force(&RESTART_COUNTER);
    Prebuilt::force(&WHAT);
    Prebuilt::force(&NCCL_ANY);
    Prebuilt::force(&COLLAPSED_FRAME);
    Prebuilt::force(&COLLAPSED_EXC);
    Prebuilt::force(&ERROR_AC);
    Prebuilt::force(&MARKER_AC);
}

re!(FRAME, r#"^\s*File "([^"]*)", line ([0-9]+)(?:, in (.*))?$"#);
re!(
    EXC_LINE,
    r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:(:) ?(.*))?$"
);
re!(
    LONE_EXC,
    r"^((?:[a-z_][a-z0-9_]*\.)*(?:[A-Z][A-Za-z0-9_]*)?(?:Error|Exception|Exit|Interrupt|Failure|Timeout|Refused|Denied))(?:(:) ?(.*))?$"
);
re!(
    PY_WARNING,
    r"^(\S+\.py):([0-9]+): ([A-Z][A-Za-z]*Warning): (.*)$"
);
re!(
    SYSTEMD_FAIL,
    r"^(?:(\S+\.(?:service|scope|socket|mount|timer)): )?(Main process exited, code=|Failed with result '|Scheduled restart job, restart counter is at|Start request repeated too quickly|A process of this unit has been killed by the OOM killer|Control process exited, code=|Failed to start |Unit process [0-9]+ .*killed)"
);
re!(SYSTEMD_START, r"^(?:Started|Starting) ");
re!(RESTART_COUNTER, r"restart counter is at ([0-9]+)");
re!(
    OOM_KILL,
    r"(Out of memory: Killed process|Memory cgroup out of memory|invoked oom-killer|oom-kill:|oom_reaper: reaped process|OOMKilled)"
);
re!(
    SIGNAL,
    r"(Segmentation fault|Bus error|Aborted|Illegal instruction|Floating point exception)(?: \(core dumped\))?\s*$|^Fatal Python error: |(?:^|[\]\s:])Killed(?:\s.*)?$|exited with signal|received signal SIG[A-Z]+|Signal [0-9]+ \(SIG[A-Z]+\) received"
);
// A process ended by a signal as the shell or the batch system reports it: zsh's job
// status (`zsh: killed  cmd`, `[1]  16261 killed  cmd`: its `sig_msg` table, lower case,
// the fatal signals only — not `interrupt`, `hangup`, `done`), and LSF's job report
// (`TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.`, `TERM_RUNLIMIT: …`).
re!(
    SHELL_SIGNAL,
    r"^(?:zsh: |\[[0-9]+\]\s+[+-]?\s*[0-9]+\s+)(?:killed|segmentation fault|abort|bus error|illegal hardware instruction|floating point exception|cpu limit exceeded|file size limit exceeded)(?:\s|$)|^TERM_[A-Z_]+: job killed"
);
re!(
    ABORT,
    r"terminate called after throwing an instance of '([^']+)'"
);
re!(WHAT, r"^\s*what\(\):\s*(.*)$");
// The Linux kernel's reports of a stuck or crashed kernel, as it raises them: the hung
// task detector (`INFO: task python:123 blocked for more than 120 seconds.`,
// kernel/hung_task.c; `INFO:` is part of the message, though a syslog reader may peel it
// as a level), the soft-lockup watchdog (`watchdog: BUG: soft lockup - CPU#3 stuck for
// 22s!`, kernel/watchdog.c), RCU stall warnings (`rcu: INFO: rcu_sched self-detected stall
// on CPU`), oopses and panics.
re!(
    KERNEL_REPORT,
    r"\btask \S.* blocked for more than [0-9]+ seconds|\bBUG: (?:soft lockup|unable to handle|kernel NULL pointer|scheduling while atomic)|\brcu_\w+ (?:self-)?detected stalls?\b|\bKernel panic - not syncing|\bgeneral protection fault\b|\bOops: [0-9]"
);
re!(
    NCCL_START,
    r"NCCL WARN|\bncclSystemError\b|\bncclInternalError\b|\bncclUnhandledCudaError\b|\bncclRemoteError\b|\bncclInvalidUsage\b|NCCL error"
);
re!(NCCL_ANY, r"\bNCCL (?:INFO|WARN)\b");
re!(
    CUDA_ERR,
    r"CUDA error|CUDA_ERROR_[A-Z_]+|cudaError[A-Z][A-Za-z]+|CUBLAS_STATUS_[A-Z_]+|CUDNN_STATUS_[A-Z_]+|CUDA driver|CUDA kernel errors"
);

/// Case-insensitive words that make an otherwise unknown line an error line.
const ERROR_WORDS: &[&str] = &[
    "error",
    "fatal",
    "failed",
    "failure",
    "exception",
    "cannot ",
    "can't ",
    "could not",
    "couldn't",
    "unable to",
    "not found",
    "no such file",
    "denied",
    "refused",
    "timed out",
    "timeout",
    "abort",
    "panic",
    "not supported",
    "unsupported",
    "insufficient",
    "out of memory",
    "no space",
    "core dumped",
    "undefined symbol",
    "not compatible",
    "incompatible",
];

static ERROR_AC: Prebuilt<AhoCorasick> = Prebuilt::new(|| {
    #[allow(clippy::expect_used)]
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(ERROR_WORDS)
        .expect("built-in error words")
});

/// Literals at least one of which every shape below needs (a superset of the shape
/// regexes' necessary literals and of [`ERROR_WORDS`]): a line with none of them and no
/// error or warning level is no failure, decided with one automaton pass.
const MARKERS: &[&str] = &[
    "exit",
    "interrupt",
    "killed",
    "oom",
    "out of memory",
    "nccl",
    "cuda",
    "cublas",
    "cudnn",
    "warning: ",
    "main process",
    "failed with result",
    "restart counter",
    "start request repeated",
    "control process",
    "unit process",
    "terminate called",
    "segmentation",
    "bus error",
    "aborted",
    "abort ",
    "illegal hardware",
    "limit exceeded",
    "illegal instruction",
    "floating point",
    "signal",
    "refused",
    "denied",
    "timeout",
    "fatal",
    // the kernel's reports ([`KERNEL_REPORT`])
    "blocked for more than",
    "soft lockup",
    "detected stall",
    "general protection fault",
    "oops: ",
    "scheduling while atomic",
];

static MARKER_AC: Prebuilt<AhoCorasick> = Prebuilt::new(|| {
    #[allow(clippy::expect_used)]
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(MARKERS.iter().chain(ERROR_WORDS.iter()))
        .expect("built-in markers")
});

/// Every literal extraction needs to see in a line's *message* to act on it when no
/// block is open and the line has no error or warning level: the shape markers, the
/// error words and the structural markers (traceback headers, frames, chain markers,
/// the restart counter). The pipeline's fast path reads the level, the stream and the
/// message with [`crate::engine::normalize::view`], which never accepts a line from systemd (the
/// only identifier whose lines act on extraction through their stream), so a message
/// with none of these literals is loose for extraction.
pub fn message_literals() -> impl Iterator<Item = &'static str> {
    const STRUCTURAL: &[&str] = &[
        "traceback",
        "file \"",
        "above exception",
        "during handling",
        "what():",
        "terminate called",
        "restart counter",
    ];
    MARKERS
        .iter()
        .chain(ERROR_WORDS.iter())
        .chain(STRUCTURAL.iter())
        .copied()
}

/// A parsed `File "...", line N, in f` frame line.
pub struct FrameLine {
    pub file: String,
    pub line: u32,
    pub function: String,
}

pub fn frame(msg: &str) -> Option<FrameLine> {
    if !msg.trim_start().starts_with("File \"") {
        return None;
    }
    let c = FRAME.captures(msg)?;
    Some(FrameLine {
        file: c[1].to_string(),
        line: c[2].parse().unwrap_or(0),
        function: c.get(3).map_or(String::new(), |m| m.as_str().to_string()),
    })
}

re!(
    COLLAPSED_FRAME,
    r#"File "([^"]*)", line ([0-9]+), in (\S+)"#
);
re!(
    COLLAPSED_EXC,
    r"(?:^|\s)((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt|Failure|Timeout|Refused|Denied))(?::\s+(.*)|\s*$)"
);

/// The frames and the final exception (type, message) of a collapsed traceback.
pub type Collapsed = (Vec<FrameLine>, Option<(String, String)>);

/// A traceback collapsed onto one line (a paste that lost its newlines):
/// `Traceback (most recent call last): File "x.py", line 3, in <module> f() RuntimeError:
/// boom`. Its frames, and its final exception (type, message): the first exception-type
/// word followed by `:` (or ending the line) after the last frame.
pub fn collapsed_traceback(msg: &str) -> Option<Collapsed> {
    const HEADER: &str = "Traceback (most recent call last):";
    // an exception group's bars, or a Markdown fence or inline-code mark left on the line
    // when the paste lost its newlines (```` ```Traceback … ````)
    let t = msg.trim_start_matches([' ', '|', '+', '-', '`']);
    let tail = t.strip_prefix(HEADER)?;
    if tail.trim().is_empty() {
        return None;
    }
    let mut frames = Vec::new();
    let mut after = 0;
    for c in COLLAPSED_FRAME.captures_iter(tail) {
        frames.push(FrameLine {
            file: c[1].to_string(),
            line: c[2].parse().unwrap_or(0),
            function: c[3].to_string(),
        });
        after = c.get(0).map_or(after, |m| m.end());
    }
    let exc = COLLAPSED_EXC.captures(&tail[after..]).map(|c| {
        (
            c[1].to_string(),
            c.get(2).map_or(String::new(), |m| {
                m.as_str().trim_end().trim_end_matches('`').to_string()
            }),
        )
    });
    Some((frames, exc))
}

/// A line another writer printed: a progress bar (tqdm's `42%|███▌ |` or ` | 3/16 [00:04<00:29,
/// 2.09s/it]`) or a shell's status ([`crate::engine::rejoin::SHELL_STATUS`]). It never
/// continues an exception's message: in a log that appends runs (`nohup.out`, a
/// journal), the next run's output follows the last exception line directly.
pub fn foreign_output(msg: &str) -> bool {
    let t = msg.trim_start();
    t.contains("%|")
        || t.contains("it/s]")
        || t.contains("s/it]")
        || crate::engine::rejoin::SHELL_STATUS
            .iter()
            .any(|s| t.starts_with(s))
}

pub fn is_traceback_header(msg: &str) -> bool {
    let t = msg.trim_start_matches([' ', '|', '+', '-']);
    t.starts_with("Traceback (most recent call last):")
}

/// The two chain markers Python prints between the tracebacks of one chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainMarker {
    /// "The above exception was the direct cause of the following exception:"
    Cause,
    /// "During handling of the above exception, another exception occurred:"
    Context,
}

pub fn chain_marker(msg: &str) -> Option<ChainMarker> {
    let t = msg.trim();
    if t.starts_with("The above exception was the direct cause of the following exception") {
        Some(ChainMarker::Cause)
    } else if t.starts_with("During handling of the above exception, another exception occurred") {
        Some(ChainMarker::Context)
    } else {
        None
    }
}

/// Whether the last component of a dotted name is capitalised (`Error`, `torch.OutOfMemoryError`).
fn capitalised_class(ty: &str) -> bool {
    let last = ty.rsplit('.').next().unwrap_or(ty);
    last.starts_with(|ch: char| ch.is_ascii_uppercase())
}

/// Whether a traceback's exception line can name `ty`: Python prints a builtin's name
/// (all capitalised) or a class's module-qualified name (`torch.OutOfMemoryError`, a
/// lowercase class in a lowercase module: `socket.timeout`). A bare lowercase word
/// before a colon (`llama_perf_context_print: eval time = …`) or a class's method
/// (`Llama.generate: 458 prefix-match found …`) is another stream's line.
pub fn python_type(ty: &str) -> bool {
    let module = ty.split('.').next().unwrap_or(ty);
    let lowercase_module = !module.starts_with(|c: char| c.is_ascii_uppercase());
    capitalised_class(ty) || (ty.contains('.') && lowercase_module)
}

/// An exception line inside a traceback: `Type: message` or a bare `Type`.
pub fn exception_line(msg: &str) -> Option<(String, String)> {
    if msg.starts_with([' ', '\t']) || msg.is_empty() {
        return None;
    }
    let c = EXC_LINE.captures(msg)?;
    let ty = c[1].to_string();
    let has_colon = c.get(2).is_some();
    let typeish = capitalised_class(&ty);
    if !typeish && !has_colon {
        return None;
    }
    Some((
        ty,
        c.get(3).map_or(String::new(), |m| m.as_str().to_string()),
    ))
}

/// A lone exception line outside any traceback (stricter: the type must look like one).
pub fn lone_exception(msg: &str) -> Option<(String, String)> {
    let c = LONE_EXC.captures(msg)?;
    if c.get(2).is_none() && msg.len() != c[1].len() {
        return None;
    }
    Some((
        c[1].to_string(),
        c.get(3).map_or(String::new(), |m| m.as_str().to_string()),
    ))
}

pub fn abort_type(msg: &str) -> Option<String> {
    ABORT.captures(msg).map(|c| c[1].to_string())
}

pub fn what_line(msg: &str) -> Option<String> {
    WHAT.captures(msg).map(|c| c[1].to_string())
}

/// The Linux kernel's report of a stuck or crashed kernel ([`KERNEL_REPORT`]): its
/// `INFO:` (`INFO: task … blocked for more than N seconds.`, which hung_task.c prints with
/// `pr_err`) is a word of the message, not the line's level.
pub fn kernel_report(msg: &str) -> bool {
    KERNEL_REPORT.is_match(msg)
}

pub fn is_nccl_any(msg: &str) -> bool {
    msg.contains("NCCL") && NCCL_ANY.is_match(msg)
}

pub fn python_warning(msg: &str) -> Option<(String, String)> {
    if !msg.contains("Warning: ") {
        return None;
    }
    PY_WARNING
        .captures(msg)
        .map(|c| (c[3].to_string(), c[4].to_string()))
}

pub fn is_systemd_start(rec: &Record) -> bool {
    rec.stream.ident.as_deref() == Some("systemd") && SYSTEMD_START.is_match(&rec.message)
}

pub fn restart_counter(msg: &str) -> Option<u32> {
    if !msg.contains("restart counter is at") {
        return None;
    }
    RESTART_COUNTER
        .captures(msg)
        .and_then(|c| c[1].parse().ok())
}

/// A native backtrace's frame line, which names a function, not a failure — even when
/// the function is `c10::Error::Error` or `__assert_fail`: PyTorch's C++ backtrace
/// (`c10::get_backtrace`, c10/util/Backtrace.cpp: `frame #3: c10d::ProcessGroupNCCL::
/// watchdogHandler() + 0x222 (0x7fe7… in …/libtorch_cuda.so)`) and gdb's (`#4  0x00007f…
/// in raise () from …/libc.so.6`). Under an abort, the abort's block absorbs them; printed
/// before it (two streams interleaved, a paste in another order) they were error lines,
/// and the inferred cause read a frame's C++ type names as the failure's words.
pub fn native_frame(msg: &str) -> bool {
    let t = msg.trim_start();
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    if let Some(rest) = t.strip_prefix("frame #") {
        let n = digits(rest);
        return n > 0 && rest[n..].starts_with(": ");
    }
    if let Some(rest) = t.strip_prefix('#') {
        let n = digits(rest);
        let after = rest[n..].trim_start();
        // gdb puts spaces between the frame number and the address
        if n == 0 || after.len() == rest.len() - n {
            return false;
        }
        let Some(hex) = after.strip_prefix("0x") else {
            return false;
        };
        let h = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
        return h > 0 && hex[h..].starts_with(" in ");
    }
    false
}

/// One of [`ERROR_WORDS`] begins a word of `m`, not the inside of another word where a
/// lower-case letter runs on into it (`terror`, `nonfatal`: a model's generated text in
/// a training log is full of them); a camel-case name that ends in one (`ValueError`,
/// `connectionRefused`) still counts.
fn error_word(m: &str) -> bool {
    let bytes = m.as_bytes();
    ERROR_AC.find_iter(m).any(|hit| {
        let start = hit.start();
        let inside =
            start > 0 && bytes[start - 1].is_ascii_lowercase() && bytes[start].is_ascii_lowercase();
        !inside
    })
}

/// Classifies a record that no open block absorbed.
pub fn classify(rec: &Record) -> Option<FailureKind> {
    let m = rec.message.as_str();
    if m.trim().is_empty() || native_frame(m) {
        return None;
    }
    let leveled = matches!(rec.level, Some(l) if l >= Level::Warning);
    if !leveled && !MARKER_AC.is_match(m) {
        return None;
    }
    let systemd = rec.stream.ident.as_deref() == Some("systemd") || rec.stream.unit.is_some();
    if (systemd || m.contains(".service: ")) && SYSTEMD_FAIL.is_match(m) {
        return Some(FailureKind::Systemd);
    }
    if OOM_KILL.is_match(m) {
        return Some(FailureKind::OomKill);
    }
    if KERNEL_REPORT.is_match(m) {
        return Some(FailureKind::ErrorLine);
    }
    if ABORT.is_match(m) {
        return Some(FailureKind::Abort);
    }
    if NCCL_START.is_match(m) {
        return Some(FailureKind::Nccl);
    }
    if lone_exception(m).is_some() {
        return Some(FailureKind::Exception);
    }
    if python_warning(m).is_some() {
        return Some(FailureKind::Warning);
    }
    if SIGNAL.is_match(m) || SHELL_SIGNAL.is_match(m) {
        return Some(FailureKind::Signal);
    }
    if CUDA_ERR.is_match(m) && !matches!(rec.level, Some(Level::Info | Level::Debug)) {
        return Some(FailureKind::CudaError);
    }
    match rec.level {
        Some(l) if l.is_error() => return Some(FailureKind::ErrorLine),
        Some(Level::Warning) => return Some(FailureKind::Warning),
        Some(Level::Info | Level::Debug) => return None,
        _ => {}
    }
    // a line with error words and no level: unless the words are no error (a zero
    // count, a passing test, an identifier, an echoed command…)
    if error_word(m) && !crate::engine::steps::benign(m) {
        return Some(FailureKind::ErrorLine);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::normalize::normalize_text;

    fn kind(s: &str) -> Option<FailureKind> {
        classify(&normalize_text(1, s))
    }

    #[test]
    fn shapes() {
        use FailureKind::*;
        // ../shared/incidents/inkypi-host-oom/log.txt
        assert_eq!(
            kind("Nov 20 15:10:43 inky kernel: Out of memory: Killed process 27241 (python) total-vm:1374456kB"),
            Some(OomKill)
        );
        assert_eq!(
            kind("Nov 20 15:10:43 inky inkypi[27237]: /usr/local/bin/inkypi: line 13: 27241 Killed                  python -u \"$(realpath $PROGRAM_PATH/src/inkypi.py)\""),
            Some(Signal)
        );
        assert_eq!(
            kind("Loading checkpoint shards:  40%|####      | 2/5 [01:11<01:47, 35.73s/it]Killed"),
            Some(Signal)
        );
        assert_eq!(kind("Segmentation fault (core dumped)"), Some(Signal));
        // corpus/pyllama-host-oom-convert-65b-zsh-killed (zsh's job table)
        assert_eq!(
            kind("[1]    16261 killed     python3 -m llama.convert_llama --ckpt_dir $CKPT_DIR --tokenizer_path   65B"),
            Some(Signal)
        );
        // a session transcript quoting zsh (found with find_string "zsh: killed")
        assert_eq!(kind("zsh: killed     nebula upgrade"), Some(Signal));
        // corpus/dlproject-hang-timeout-lsf-runlimit (LSF's job report)
        assert_eq!(
            kind("TERM_RUNLIMIT: job killed after reaching LSF run time limit."),
            Some(Signal)
        );
        // zsh's non-fatal statuses and prose are not a process killed
        assert_eq!(kind("[2]  + 4242 done       make"), None);
        assert_eq!(kind("zsh: interrupt  python train.py"), None);
        assert_eq!(kind("the job was killed by the scheduler yesterday"), None);
        assert_eq!(
            kind("Feb 20 23:31:36 llm-two systemd[1]: vllm-kimi-k25.service: Main process exited, code=exited, status=1/FAILURE"),
            Some(Systemd)
        );
        assert_eq!(kind("Feb 20 23:31:36 llm-two systemd[1]: vllm-kimi-k25.service: Consumed 9min 4.117s CPU time, 31.2G memory peak."), None);
        assert_eq!(
            kind("terminate called after throwing an instance of 'c10::Error'"),
            Some(Abort)
        );
        // ../shared/incidents/pytorch-permission-denied/log.txt
        assert_eq!(kind("node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied"), Some(Nccl));
        assert_eq!(
            kind("OSError: [Errno 28] No space left on device"),
            Some(Exception)
        );
        assert_eq!(kind("ImportError:"), Some(Exception));
        assert_eq!(kind("/x/file_download.py:798: UserWarning: Not enough free disk space to download the file."), Some(Warning));
        // ../shared/incidents/pointnet2-pytorch-unsupported-compute-capability/log.txt
        assert_eq!(
            kind("nvcc fatal   : Unsupported gpu architecture 'compute_75'"),
            Some(ErrorLine)
        );
        assert_eq!(kind("(EngineCore_DP0 pid=344) INFO 01-07 02:47:28 [tpu_platform.py:60] Cannot use None backend on TPU."), None);
        assert_eq!(kind("all good here"), None);
        // a native backtrace's frames name functions: corpus/megatron-hang-timeout-reduce-
        // scatter-watchdog (PyTorch's, printed before its abort); gdb's, constructed in its
        // format; a line that only starts with `#` and a number is not one
        assert_eq!(kind("frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) + 0x99 (0x7fe76ab98969 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)"), None);
        assert_eq!(
            kind("#3  0x00007ffff7a2a7fc in __assert_fail () from /lib/x86_64-linux-gnu/libc.so.6"),
            None
        );
        assert_eq!(kind("#3 error: build failed"), Some(ErrorLine));
        // an error word inside another word is none (a generated sample printed by a
        // training run: corpus/walar-verl-none-grpo-rollout-steps, line 157)
        assert_eq!(
            kind("Now that \"Grieve\" is free to stream, fans of slow-burn terror would be wise"),
            None
        );
        assert_eq!(kind("a nonfatal warning was printed"), None);
        assert_eq!(kind("got ValueError while reading"), Some(ErrorLine));
        assert_eq!(kind("terror, then an error"), Some(ErrorLine));
        // the kernel's reports: corpus/llamafactory-host-oom-kernel-soft-lockup-zero3-save,
        // corpus/k8s-device-plugin-hang-timeout-nvc-driver-hung-task (also as a syslog line
        // whose `INFO:` a reader peels as a level: constructed from the same report)
        assert_eq!(
            kind("watchdog: BUG: soft lockup - CPU#98 stuck for 22s!"),
            Some(ErrorLine)
        );
        assert_eq!(
            kind("[  721.031434] INFO: task nvc:[driver]:6067 blocked for more than 120 seconds."),
            Some(ErrorLine)
        );
        assert_eq!(
            kind("Nov 20 15:10:43 host kernel: INFO: task nvc:[driver]:6067 blocked for more than 120 seconds."),
            Some(ErrorLine)
        );
        assert_eq!(kind("a task was blocked for more than we hoped"), None);
        // an oops behind the kernel's timestamp (constructed, in the kernel's format)
        assert_eq!(
            kind("[ 5120.228316] Oops: 0000 [#1] SMP PTI"),
            Some(ErrorLine)
        );
    }

    #[test]
    fn collapsed_tracebacks() {
        // CONSTRUCTED from CPython's traceback format, joined onto one line
        let (frames, exc) = collapsed_traceback(
            "Traceback (most recent call last): File \"a.py\", line 3, in <module> f() File \"b.py\", line 9, in f raise ValueError(\"x\") ValueError: x is bad",
        )
        .expect("collapsed");
        assert_eq!(frames.len(), 2);
        assert_eq!(exc, Some(("ValueError".into(), "x is bad".into())));
        // the same inside a Markdown fence that lost its newlines (CONSTRUCTED)
        let (frames, exc) = collapsed_traceback(
            "```Traceback (most recent call last):   File \"a.py\", line 3, in <module>     import x ModuleNotFoundError: No module named 'x'```",
        )
        .expect("collapsed in a fence");
        assert_eq!(frames.len(), 1);
        assert_eq!(
            exc,
            Some(("ModuleNotFoundError".into(), "No module named 'x'".into()))
        );
        assert!(collapsed_traceback("Traceback (most recent call last):").is_none());
        assert!(collapsed_traceback("RuntimeError: boom").is_none());
    }

    #[test]
    fn exception_lines() {
        assert_eq!(
            exception_line("torch.distributed.DistBackendError: NCCL error in: x"),
            Some((
                "torch.distributed.DistBackendError".into(),
                "NCCL error in: x".into()
            ))
        );
        assert_eq!(
            exception_line("KeyboardInterrupt"),
            Some(("KeyboardInterrupt".into(), String::new()))
        );
        assert_eq!(exception_line("v_caches"), None);
        assert_eq!(exception_line("    raise ValueError("), None);
        assert!(frame(
            "  File \"<frozen importlib._bootstrap>\", line 1331, in _find_and_load_unlocked"
        )
        .is_some());
    }
}
