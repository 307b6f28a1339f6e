//! Deterministic generators for benchmarks: large realistic logs and synthetic
//! signature libraries.
//!
//! The log generator writes journald-prefixed, multi-process vLLM-style output: an API
//! server, an engine core and N tensor-parallel workers interleaving INFO lines, the
//! usual benign warnings (SymmMem, custom all-reduce, …) and, rarely, a real failure
//! (a worker traceback ending in a CUDA OOM, an NCCL warning block, a systemd restart).
//! The line templates are taken from real logs (the scenario journal and the corpus);
//! the mix, pids and timestamps come from a seeded PRNG, so the same seed and size give
//! the same bytes. It is constructed data for measuring speed, not a real incident.
//!
//! The library generator writes N signatures built like real ones (an exception type, a
//! message regex with a literal phrase and named captures, remediation with templates,
//! examples) whose words and exception types are drawn from the embedded library's real
//! example messages: N signatures, N distinct atoms, a prefilter as big as a real
//! library of that size would make. A phrase of three real words rarely occurs in the
//! generated log, and a match needs the exception type too.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

const INFO: &[&str] = &[
    "INFO {ts} [gpu_model_runner.py:3340] Starting to load model /models/Kimi-K2.5-NVFP4...",
    "INFO {ts} [parallel_state.py:1208] rank {r} in world size 8 is assigned as DP rank 0, PP rank 0, TP rank {r}, EP rank {r}",
    "INFO {ts} [cuda.py:362] Using FlashInfer MLA backend on V1 engine.",
    "INFO {ts} [default_loader.py:267] Loading weights took 41.73 seconds",
    "INFO {ts} [gpu_model_runner.py:2653] Model loading took 67.1290 GiB and 43.071380 seconds",
    "INFO {ts} [backends.py:559] Dynamo bytecode transform time: 9.84 s",
    "INFO {ts} [monitor.py:34] torch.compile takes 14.35 s in total",
    "INFO {ts} [gpu_worker.py:298] Available KV cache memory: 12.37 GiB",
    "INFO {ts} [kv_cache_utils.py:1087] GPU KV cache size: 405,344 tokens",
    "INFO {ts} [loggers.py:123] Engine 000: Avg prompt throughput: 1532.4 tokens/s, Avg generation throughput: 87.2 tokens/s, Running: 12 reqs, Waiting: 0 reqs, GPU KV cache usage: 31.4%, Prefix cache hit rate: 62.0%",
    "INFO {ts} [logger.py:43] Received request chatcmpl-{hex}: prompt: '<|im_start|>user', params: SamplingParams(n=1, temperature=0.7, top_p=0.8, max_tokens=512)",
    "INFO:     10.0.0.{r}:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
];

const WARN: &[&str] = &[
    "WARNING {ts} [symm_mem.py:67] SymmMemCommunicator: Device capability 12.0 not supported, communicator is not available.",
    "WARNING {ts} [custom_all_reduce.py:154] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
    "WARNING {ts} [arg_utils.py:1217] The global random seed is set to 0. Since VLLM_ENABLE_V1_MULTIPROCESSING is set to False, this may affect the random state of the Python process that launched vLLM.",
];

const OOM: &[&str] = &[
    "ERROR {ts} [multiproc_executor.py:783] Traceback (most recent call last):",
    "ERROR {ts} [multiproc_executor.py:783]   File \"/opt/vllm/.venv/lib/python3.12/site-packages/vllm/v1/executor/multiproc_executor.py\", line 754, in worker_main",
    "ERROR {ts} [multiproc_executor.py:783]     worker = WorkerProc(*args, **kwargs)",
    "ERROR {ts} [multiproc_executor.py:783]   File \"/opt/vllm/.venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py\", line 3356, in execute_model",
    "ERROR {ts} [multiproc_executor.py:783]     logits = self.model.compute_logits(sample_hidden_states)",
    "ERROR {ts} [multiproc_executor.py:783] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 380.00 MiB. GPU {r} has a total capacity of 23.64 GiB of which 14.81 MiB is free. Including non-PyTorch memory, this process has 23.62 GiB memory in use.",
];

const NCCL: &[&str] = &[
    "llm-two:{pid}:{pid} [{r}] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
    "llm-two:{pid}:{pid} [{r}] NCCL INFO include/shm.h:41 -> 2",
];

/// A rank-prefixed traceback as torchrun's workers print it, six lines of a real one (the
/// corpus's `miles-credit-other-diffusion-loss-device-mismatch-8-ranks`, rank and device
/// made a template): what a crash loop or a thousand ranks repeat ([`LogProfile::Failures`]).
const RANK_TRACEBACK: &[&str] = &[
    "[rank{r}]: Traceback (most recent call last):",
    "[rank{r}]:   File \"/GPU/nwpr/ait/com181/work/miles-credit/applications/train.py\", line 500, in <module>",
    "[rank{r}]:     main_cli()",
    "[rank{r}]:   File \"/GPU/nwpr/ait/com181/work/miles-credit/applications/train.py\", line 337, in main",
    "[rank{r}]:     result = trainer.fit(",
    "[rank{r}]: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:{r}! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
];

/// Ranks of one crash round of [`LogProfile::Failures`].
const RANKS: u32 = 8;

/// Warnings a healthy vLLM server repeats while it serves: the bodies of real lines from
/// the corpus's logs (`jethac-vllm-gpu-oom-prompt-logprobs-util-090`,
/// `dgx-spark-bench-vllm-unsupported-compute-capability-scaledmm-force-fp8-marlin`,
/// `club-3090-none-2`, `autoscientists-vllm-none-qwen3-coder-moe`,
/// `discoverphysics-vllm-none-tp2-a100-symm-mem`), with the timestamp made a template.
const SERVING_WARN: &[&str] = &[
    "WARNING {ts} [jit_monitor.py:103] Triton kernel JIT compilation during inference: _compute_slot_mapping_kernel. This causes a latency spike; consider extending warmup to cover this shape/config.",
    "WARNING {ts} [__init__.py:204] min_p and logit_bias parameters won't work with speculative decoding.",
    "WARNING {ts} [kv_cache_utils.py:1152] Add 2 padding layers, may waste at most 4.17% KV cache memory",
    "WARNING {ts} [fused_moe.py:1161] Using default MoE config. Performance might be sub-optimal! Config file not found at /projects/jiangyank/vllm/vllm/model_executor/layers/fused_moe/configs/E=128,N=768,device_name=NVIDIA_A100-SXM4-80GB.json",
    "WARNING {ts} [envs.py:2128] Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND",
];

/// The kind of log [`write_profile_log`] writes. Both are constructed data from real
/// line templates; they differ in the mix of lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogProfile {
    /// A multi-process vLLM journal: mostly INFO and access lines, ~3 % warnings, rare
    /// failures (a worker OOM traceback, an NCCL warning block, a service restart).
    #[default]
    Serving,
    /// A warning-heavy healthy serving journal: a quarter of the lines are WARNING lines
    /// from a handful of templates, the rest INFO and access lines, failures as rare.
    Warnings,
    /// A failure-heavy log, what a crash loop or a thousand ranks produce: half the
    /// draws are a crash round (one six-line `[rankN]:` traceback per rank, the ranks'
    /// lines interleaved as their writes race: the workers restarted by their launcher
    /// and failing again), the rest INFO lines, and the service restarted by systemd
    /// every thousand draws (about 500 rounds: a new crash attempt, whose rounds repeat
    /// the same tracebacks); almost every byte is a traceback line.
    Failures,
}

/// What a profile's lines are made of, out of 10,000 draws: draw 0 is a failure
/// traceback, draws `1..=NCCL_DRAWS` an NCCL warning line, the next `crash_draws` a
/// crash round of rank tracebacks, the next `warn_draws` a warning, the rest INFO/access
/// lines.
struct Mix {
    warn_draws: u32,
    /// Draws (after the failure and NCCL ones) that are a crash round of
    /// [`RANK_TRACEBACK`]s.
    crash_draws: u32,
    warnings: &'static [&'static [&'static str]],
    /// Draws between two restarts of the service (systemd's exit, restart and start
    /// lines): a new crash attempt.
    restart_draws: u64,
}

const NCCL_DRAWS: u32 = 2;

impl Mix {
    fn warning_count(&self) -> usize {
        self.warnings.iter().map(|s| s.len()).sum()
    }

    /// The `i`-th warning template across the sets (`i < warning_count()`).
    fn warning(&self, mut i: usize) -> &'static str {
        for set in self.warnings {
            match set.get(i) {
                Some(t) => return t,
                None => i -= set.len(),
            }
        }
        WARN[0]
    }
}

impl LogProfile {
    fn mix(self) -> Mix {
        match self {
            LogProfile::Serving => Mix {
                warn_draws: 298,
                crash_draws: 0,
                warnings: &[WARN],
                restart_draws: 500_000,
            },
            LogProfile::Warnings => Mix {
                warn_draws: 2_500,
                crash_draws: 0,
                warnings: &[WARN, SERVING_WARN],
                restart_draws: 500_000,
            },
            LogProfile::Failures => Mix {
                warn_draws: 0,
                crash_draws: 5_000,
                warnings: &[WARN],
                restart_draws: 1_000,
            },
        }
    }
}

/// Writes a generated serving log ([`LogProfile::Serving`]) of about `bytes` bytes.
pub fn write_log(out: &mut dyn Write, bytes: u64, seed: u64) -> io::Result<u64> {
    write_profile_log(out, bytes, seed, LogProfile::Serving)
}

/// One generated log in the making: the clock, the random source, the output.
struct LogGen<'a> {
    rng: fastrand::Rng,
    w: io::BufWriter<&'a mut dyn Write>,
    line: String,
    secs: u64,
    written: u64,
}

impl LogGen<'_> {
    fn clock(&self) -> (u64, u64, u64) {
        (self.secs / 3600 % 24, self.secs / 60 % 60, self.secs % 60)
    }

    fn emit(&mut self) -> io::Result<()> {
        self.w.write_all(self.line.as_bytes())?;
        self.written += self.line.len() as u64;
        Ok(())
    }

    /// A journald line of process `pid`: `tag` (the vLLM process prefix) then `tmpl`
    /// filled (`hex` is a request id).
    fn vllm_line(&mut self, pid: u32, r: u32, tag: &str, tmpl: &str, hex: u64) -> io::Result<()> {
        let (h, m, s) = self.clock();
        let body = tmpl
            .replace("{ts}", &format!("02-20 {h:02}:{m:02}:{s:02}"))
            .replace("{r}", &r.to_string())
            .replace("{pid}", &pid.to_string())
            .replace("{hex}", &format!("{hex:016x}"));
        self.line.clear();
        let _ = writeln!(
            self.line,
            "Feb 20 {h:02}:{m:02}:{s:02} llm-two vllm[{pid}]: {tag}{body}"
        );
        self.emit()
    }

    fn systemd_line(&mut self, event: &str) -> io::Result<()> {
        let (h, m, s) = self.clock();
        self.line.clear();
        let _ = writeln!(
            self.line,
            "Feb 20 {h:02}:{m:02}:{s:02} llm-two systemd[1]: {event}"
        );
        self.emit()
    }

    /// Every rank's [`RANK_TRACEBACK`], line `k` of each rank (in a random order of
    /// the ranks) before line `k + 1` of any: bare lines, as torchrun's ranks write them.
    fn crash_round(&mut self) -> io::Result<()> {
        let mut ranks: Vec<u32> = (0..RANKS).collect();
        for t in RANK_TRACEBACK {
            self.rng.shuffle(&mut ranks);
            for &r in &ranks {
                self.line.clear();
                self.line.push_str(&t.replace("{r}", &r.to_string()));
                self.line.push('\n');
                self.emit()?;
            }
        }
        Ok(())
    }

    /// One draw of the mix: a failure traceback, an NCCL line, a warning or an INFO line.
    fn draw(&mut self, mix: &Mix) -> io::Result<()> {
        let r = self.rng.u32(0..8);
        let pid = 216050 + r;
        let worker = format!("(Worker_TP{r} pid={pid}) ");
        match self.rng.u32(0..10_000) {
            0 => {
                for t in OOM {
                    self.vllm_line(pid, r, &worker, t, 0)?;
                }
                Ok(())
            }
            d if d <= NCCL_DRAWS => {
                let t = NCCL[self.rng.usize(0..NCCL.len())];
                let hex = self.rng.u64(..);
                self.vllm_line(pid, r, "", t, hex)
            }
            d if d <= NCCL_DRAWS + mix.crash_draws => self.crash_round(),
            d if d <= NCCL_DRAWS + mix.crash_draws + mix.warn_draws => {
                let t = mix.warning(self.rng.usize(0..mix.warning_count()));
                let hex = self.rng.u64(..);
                self.vllm_line(pid, r, &worker, t, hex)
            }
            _ => {
                let t = INFO[self.rng.usize(0..INFO.len())];
                let api = ["Received request", "POST", "Engine 000"]
                    .iter()
                    .any(|k| t.contains(k));
                let tag = if api {
                    "(APIServer pid=215890) "
                } else {
                    &worker
                };
                let hex = self.rng.u64(..);
                self.vllm_line(pid, r, tag, t, hex)
            }
        }
    }
}

/// Writes a generated log of `profile` of about `bytes` bytes; the same seed, size and
/// profile give the same bytes.
pub fn write_profile_log(
    out: &mut dyn Write,
    bytes: u64,
    seed: u64,
    profile: LogProfile,
) -> io::Result<u64> {
    let mix = profile.mix();
    let mut g = LogGen {
        rng: fastrand::Rng::with_seed(seed),
        w: io::BufWriter::with_capacity(1 << 20, out),
        line: String::with_capacity(512),
        secs: 23 * 3600 + 22 * 60,
        written: 0,
    };
    let mut n: u64 = 0;
    while g.written < bytes {
        n += 1;
        if n.is_multiple_of(97) {
            g.secs += 1;
        }
        g.draw(&mix)?;
        if n.is_multiple_of(mix.restart_draws) {
            // a service restart now and then
            for ev in [
                "vllm.service: Main process exited, code=exited, status=1/FAILURE",
                "vllm.service: Failed with result 'exit-code'.",
                "vllm.service: Scheduled restart job, restart counter is at 1.",
                "Started vllm.service - vLLM.",
            ] {
                g.systemd_line(ev)?;
            }
        }
    }
    g.w.flush()?;
    Ok(g.written)
}

const SYNTHETIC_TEMPLATE: &str = r#"# yaml-language-server: $schema=../schema.json
id: {id}
title: Synthetic failure {i} ({phrase})
category: other
severity: fatal
projects: [synthetic]
match:
  all:
    - exception: {ty}
    - message: '{phrase} (?P<detail>[a-z]+) (?:failed|error) (?:code )?(?P<code>[0-9]+)'
explain: >
  A generated signature for benchmarks (constructed, not a real failure).
remediation:
  - description: Retry the {w0} step
    command: 'synthetic-retry --detail {{detail}} --code {{code}}'
references:
  - https://example.invalid/synthetic
examples:
  match:
    - source: constructed
      log: |
        {ty}: {phrase} warmup failed code 7
    - source: constructed
      log: |
        {ty}: {phrase} load error 12
  no_match:
    - source: constructed
      log: |
        {ty}: {phrase} load succeeded
"#;

/// The vocabulary of the synthetic library: the words of the embedded library's real
/// example messages (lower-case, 4 to 14 letters; a few thousand), and the exception
/// type names they raise, both sorted, so that the synthetic signatures' atoms are
/// drawn from what real logs say (and share prefixes the way real atoms do).
fn vocabulary() -> (Vec<String>, Vec<String>) {
    use std::collections::BTreeSet;
    let mut words = BTreeSet::new();
    let mut types = BTreeSet::new();
    let lib =
        crate::knowledge::signature::load(&[crate::knowledge::signature::LibrarySource::Builtin]);
    for sig in lib.iter().flat_map(|l| l.signatures.iter()) {
        for ex in sig.examples.matches.iter().chain(&sig.examples.no_match) {
            for tok in ex
                .log
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            {
                let is_type = tok.ends_with("Error") || tok.ends_with("Exception");
                if is_type && tok.len() > 6 && tok.starts_with(|c: char| c.is_ascii_uppercase()) {
                    types.insert(tok.to_string());
                } else if (4..=14).contains(&tok.len())
                    && tok.bytes().all(|b| b.is_ascii_lowercase())
                {
                    words.insert(tok.to_string());
                }
            }
        }
    }
    (words.into_iter().collect(), types.into_iter().collect())
}

/// Writes `count` synthetic signatures into `dir/synthetic/`: each an exception type and
/// a message regex whose literal is a phrase of three words, both drawn from real
/// messages ([`vocabulary`]); no two phrases are the same, so `count` signatures give
/// `count` distinct atoms (plus the exception types). Constructed data for benchmarks.
pub fn write_library(dir: &Path, count: usize, seed: u64) -> io::Result<()> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (words, types) = vocabulary();
    if words.len() < 3 || types.is_empty() {
        return Err(io::Error::other(
            "the embedded library has no example messages to draw words from",
        ));
    }
    let sub = dir.join("synthetic");
    std::fs::create_dir_all(&sub)?;
    let mut seen = std::collections::HashSet::new();
    let mut i = 0;
    while i < count {
        let pick: Vec<&str> = (0..3)
            .map(|_| words[rng.usize(0..words.len())].as_str())
            .collect();
        let phrase = pick.join(" ");
        if pick[0] == pick[1] || pick[1] == pick[2] || !seen.insert(phrase.clone()) {
            continue;
        }
        let id = format!("synthetic-{i:05}");
        let ty = &types[rng.usize(0..types.len())];
        let text = SYNTHETIC_TEMPLATE
            .replace("{id}", &id)
            .replace("{i}", &i.to_string())
            .replace("{phrase}", &phrase)
            .replace("{w0}", pick[0])
            .replace("{ty}", ty);
        std::fs::write(sub.join(format!("{id}.yaml")), text)?;
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        write_log(&mut a, 200_000, 7).expect("gen");
        write_log(&mut b, 200_000, 7).expect("gen");
        assert_eq!(a, b);
        assert!(a.len() >= 200_000);
        let mut c = Vec::new();
        write_log(&mut c, 200_000, 8).expect("gen");
        assert_ne!(a, c);
    }

    #[test]
    fn the_failures_profile_is_mostly_rank_tracebacks_and_repeatable() {
        let mut v = Vec::new();
        write_profile_log(&mut v, 2_000_000, 1, LogProfile::Failures).expect("gen");
        let text = String::from_utf8(v.clone()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        let ranked = lines.iter().filter(|l| l.starts_with("[rank")).count();
        assert!(ranked * 10 > lines.len() * 9, "{ranked} of {}", lines.len());
        // one round: six lines of each of the eight ranks, interleaved
        let heads = lines
            .iter()
            .filter(|l| l.ends_with("]: Traceback (most recent call last):"))
            .count();
        assert_eq!(ranked, heads * RANK_TRACEBACK.len());
        assert!(lines.windows(2).any(|w| w[0].starts_with("[rank")
            && w[1].starts_with("[rank")
            && w[0][..7] != w[1][..7]));
        let mut again = Vec::new();
        write_profile_log(&mut again, 2_000_000, 1, LogProfile::Failures).expect("gen");
        assert_eq!(v, again);
    }

    #[test]
    fn the_warnings_profile_is_a_quarter_warnings() {
        let mut v = Vec::new();
        write_profile_log(&mut v, 2_000_000, 1, LogProfile::Warnings).expect("gen");
        let text = String::from_utf8(v).expect("utf-8");
        let lines = text.lines().count();
        let warnings = text.lines().filter(|l| l.contains(" WARNING ")).count();
        let share = warnings as f64 / lines as f64;
        assert!((0.22..0.28).contains(&share), "{warnings}/{lines}");
        let mut serving = Vec::new();
        write_profile_log(&mut serving, 2_000_000, 1, LogProfile::Serving).expect("gen");
        let text = String::from_utf8(serving).expect("utf-8");
        let warnings = text.lines().filter(|l| l.contains(" WARNING ")).count();
        assert!(warnings * 20 < text.lines().count(), "{warnings}");
    }

    #[test]
    fn synthetic_library_loads() {
        let d = tempfile::tempdir().expect("tmp");
        write_library(d.path(), 50, 1).expect("gen");
        let lib =
            crate::knowledge::signature::load(&[crate::knowledge::signature::LibrarySource::Dir(
                d.path().to_path_buf(),
            )])
            .expect("loads");
        assert_eq!(lib.signatures.len(), 50);
    }

    /// `bytes` extracted by the prefilter engine (fast path) and by brute force.
    fn extract_both(
        bytes: &[u8],
    ) -> (
        crate::engine::extract::Extraction,
        crate::engine::extract::Extraction,
    ) {
        let lib = crate::knowledge::signature::load(&[
            crate::knowledge::signature::LibrarySource::Builtin,
        ])
        .expect("lib");
        let compiled = crate::engine::matcher::Compiled::new(&lib).expect("compiled");
        let run = |kind| {
            let mut e = crate::engine::pipeline::Engine::new(&compiled, kind);
            let mut r = crate::engine::ingest::LineReader::from_reader(
                Box::new(std::io::Cursor::new(bytes.to_vec())),
                "g".into(),
            )
            .expect("open");
            e.extract(&mut r).expect("extract")
        };
        (
            run(crate::engine::matcher::EngineKind::Prefilter),
            run(crate::engine::matcher::EngineKind::Brute),
        )
    }

    /// The fast path counts a repeated one-line failure into the failure its first line
    /// made (`engine::extract::Shape`); the brute-force engine extracts every line in
    /// full. Both give the same extraction: counts, occurrences, attempts, every field.
    #[test]
    fn repeated_warnings_are_counted_as_the_full_path_extracts_them() {
        let mut bytes = Vec::new();
        write_profile_log(&mut bytes, 3_000_000, 7, LogProfile::Warnings).expect("generate");
        let (fast, full) = extract_both(&bytes);
        let most = fast.failures.iter().map(|f| f.count).max().unwrap_or(0);
        assert!(most > 300, "the warnings repeat: {most}");
        assert_eq!(fast, full);
    }

    /// The fast path counts a repeated multi-line block into the failure its first
    /// occurrence made (`engine::extract`'s `replay`); the brute-force engine reassembles
    /// every block. Both give the same extraction on the failure-heavy profile (crash
    /// rounds of eight interleaved rank tracebacks, restarts between attempts).
    #[test]
    fn repeated_tracebacks_are_counted_as_the_full_path_extracts_them() {
        let mut bytes = Vec::new();
        write_profile_log(&mut bytes, 5_500_000, 3, LogProfile::Failures).expect("generate");
        let (fast, full) = extract_both(&bytes);
        assert!(fast.attempts.len() >= 3, "{}", fast.attempts.len());
        let most = fast.failures.iter().map(|f| f.count).max().unwrap_or(0);
        assert!(most > 1000, "the tracebacks repeat: {most}");
        assert_eq!(fast, full);
    }

    /// Replays that depart from the known block: a different exception line, a block cut
    /// short by another line, a frame more, a closing line not seen before, a restart
    /// and the end of the input in the middle of a block. CONSTRUCTED from
    /// [`RANK_TRACEBACK`]'s lines.
    #[test]
    fn departing_replays_extract_as_the_full_path_does() {
        let line = |t: &str, r: u32| format!("{}\n", t.replace("{r}", &r.to_string()));
        let round = |text: &mut String, variant: u32| {
            for (k, t) in RANK_TRACEBACK.iter().enumerate() {
                for r in 0..4 {
                    let last = k + 1 == RANK_TRACEBACK.len();
                    match (variant, r) {
                        (1, 1) if last => {
                            text.push_str(&line("[rank{r}]: ValueError: another failure", r))
                        }
                        (2, 2) if k == 3 => text.push_str(&line("[rank{r}]: done", r)),
                        (2, 2) if k > 3 => {}
                        (3, 3) if k == 2 => {
                            text.push_str(&line(t, r));
                            text.push_str(&line(RANK_TRACEBACK[1], r));
                        }
                        _ => text.push_str(&line(t, r)),
                    }
                }
            }
        };
        let mut text = String::new();
        for i in 0..40 {
            round(&mut text, i % 5);
            if i == 17 {
                text.push_str("[rank1]: INFO a line between two rounds\n");
            }
            if i == 23 {
                text.push_str(&line(RANK_TRACEBACK[0], 0));
                text.push_str(&line(RANK_TRACEBACK[1], 0));
                text.push_str("Feb 20 23:31:36 llm-two systemd[1]: Started vllm.service - vLLM.\n");
            }
        }
        text.push_str(&line(RANK_TRACEBACK[0], 2));
        text.push_str(&line(RANK_TRACEBACK[1], 2));
        let (fast, full) = extract_both(text.as_bytes());
        assert!(fast.attempts.len() == 2, "{:?}", fast.attempts);
        assert_eq!(fast, full);
    }

    #[test]
    fn the_generated_log_counts_eight_workers_per_attempt_on_either_path() {
        // the fast path (skip) and the full path (push) must agree on the worker count
        let mut bytes = Vec::new();
        write_log(&mut bytes, 3_000_000, 5).expect("generate");
        let (fast, full) = extract_both(&bytes);
        let (fast, full) = (fast.attempts, full.attempts);
        assert_eq!(fast, full);
        assert!(fast.iter().all(|a| a.workers == 8), "{fast:?}");
    }
}
