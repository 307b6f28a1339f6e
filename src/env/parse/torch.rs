//! PyTorch-side reports: `python -m torch.utils.collect_env` (old `Key: value` and new
//! padded `Key    : value` layouts), `vllm collect-env` (the same keys plus `vLLM
//! Version`), `python -m flashinfer.collect_env` (`flashinfer-cubin : 0.6.16`, `GPU 0
//! (CUDA order) : NAME | SM100 | …`), SGLang's environment block (`GPU 0,1 Compute
//! Capability: 8.0`), and torch's own lines: `torch.cuda.get_arch_list()` output and the
//! "with CUDA capability sm_120 is not compatible" warning.

use std::sync::LazyLock;

use regex::Regex;

use super::{key_value, unknown_value, Mode, Scanner};
use crate::env::facts::{Fact, Gpu};
use crate::knowledge::version::parse_version;

#[allow(clippy::expect_used)]
static GPU_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^GPU (\d+): (.+?)\s*$").expect("gpu regex"));
#[allow(clippy::expect_used)]
static INCOMPATIBLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)(\S.*?) with CUDA capability sm_([0-9]{2,3})[a-z]? is not compatible with the current PyTorch installation")
        .expect("incompatible regex")
});
#[allow(clippy::expect_used)]
static SUPPORTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"The current PyTorch install supports CUDA capabilities ((?:(?:sm|compute)_[0-9]+[a-z]?\s*)+)")
        .expect("supports regex")
});
#[allow(clippy::expect_used)]
static ARCH_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\[\s*'(?:sm|compute)_[0-9]+[a-z]?'(?:\s*,\s*'(?:sm|compute)_[0-9]+[a-z]?')*\s*\]$",
    )
    .expect("arch list regex")
});
#[allow(clippy::expect_used)]
static SM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bSM\s?([0-9]{2,3})[a-z]?\b").expect("sm regex"));

/// `120` → `12.0`, `90` → `9.0`.
pub fn sm_to_capability(sm: &str) -> Option<String> {
    if sm.len() < 2 || !sm.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = sm.split_at(sm.len() - 1);
    Some(format!("{}.{minor}", major.trim_start_matches('0')))
}

fn version_fact(s: &mut Scanner, line: usize, v: &str) -> Option<Fact> {
    if unknown_value(v) {
        return None;
    }
    parse_version(v)?;
    Some(Fact {
        value: v.split_whitespace().next().unwrap_or(v).to_string(),
        origin: s.origin(line),
    })
}

fn gpu(s: &mut Scanner, line: usize, index: Option<usize>, name: &str, cap: Option<String>) {
    let origin = s.origin(line);
    s.facts_mut().add_gpu(Gpu {
        index,
        name: name.trim().to_string(),
        capability: cap,
        origin,
    });
}

/// A `GPU n: NAME` line below `GPU models and configuration:`.
pub fn gpu_list_row(s: &mut Scanner, line: usize, t: &str) -> bool {
    let Some(c) = GPU_LINE.captures(t) else {
        return false;
    };
    let index = c[1].parse().ok();
    gpu(s, line, index, &c[2], None);
    s.set_mode(Mode::GpuList);
    true
}

fn package_value(s: &mut Scanner, line: usize, name: &str, v: &str) {
    if unknown_value(v) {
        return;
    }
    let first = v.split_whitespace().next().unwrap_or("");
    if parse_version(first).is_some() {
        let o = s.origin(line);
        s.facts_mut().add_package(name, first, o);
    }
}

/// The keys of `collect_env`-style `Key: value` lines that [`line`] reads (its `match`).
pub fn is_key(k: &str) -> bool {
    matches!(
        k,
        "PyTorch version"
            | "PyTorch"
            | "CUDA used to build PyTorch"
            | "CUDA runtime version"
            | "Nvidia driver version"
            | "Driver version"
            | "CUDA Driver Version"
            | "vLLM Version"
            | "GPU models and configuration"
    ) || k.starts_with("flashinfer")
        || k.starts_with("GPU ")
}

/// One line outside any mode.
pub fn line(s: &mut Scanner, line: usize, t: &str) -> bool {
    if let Some(c) = INCOMPATIBLE.captures(t) {
        let cap = sm_to_capability(&c[2]);
        let name = c[1].trim().trim_start_matches("UserWarning:").trim();
        gpu(s, line, None, name, cap);
        s.report("torch capability warning", line);
        // the same line (or the next) tells the arch list
    }
    if let Some(c) = SUPPORTS.captures(t) {
        let list: Vec<String> = c[1].split_whitespace().map(String::from).collect();
        let o = s.origin(line);
        s.facts_mut().arch_list = Some((list, o));
        s.report("torch capability warning", line);
        return true;
    }
    if ARCH_LIST.is_match(t) {
        let list: Vec<String> = t
            .trim_matches(['[', ']'])
            .split(',')
            .map(|x| x.trim().trim_matches('\'').to_string())
            .collect();
        let o = s.origin(line);
        s.facts_mut().arch_list = Some((list, o));
        s.report("torch.cuda.get_arch_list()", line);
        return true;
    }
    match key_value(t) {
        Some((k, v)) => key(s, line, k, v),
        None => false,
    }
}

/// One `key: value` line of an environment report (collect_env, vLLM's, flashinfer's,
/// SGLang's); whether it was one this reader knows.
fn key(s: &mut Scanner, line: usize, k: &str, v: &str) -> bool {
    match k {
        "PyTorch version" | "PyTorch" => {
            package_value(s, line, "torch", v);
            s.report("collect_env", line);
        }
        "CUDA used to build PyTorch" => {
            let f = version_fact(s, line, v);
            if f.is_some() {
                s.facts_mut().torch_cuda = f;
            }
        }
        "CUDA runtime version" => {
            let f = version_fact(s, line, v);
            if f.is_some() {
                s.facts_mut().cuda_runtime = f;
            }
        }
        "Nvidia driver version" | "Driver version" | "CUDA Driver Version" => {
            let f = version_fact(s, line, v);
            if f.is_some() {
                s.facts_mut().driver = f;
            }
        }
        "vLLM Version" => {
            package_value(s, line, "vllm", v);
            s.report("vllm collect-env", line);
        }
        "GPU models and configuration" => {
            if let Some(c) = GPU_LINE.captures(v) {
                let index = c[1].parse().ok();
                gpu(s, line, index, &c[2], None);
            } else if !unknown_value(v) && !v.starts_with("GPU") {
                gpu(s, line, None, v, None);
            }
            s.set_mode(Mode::GpuList);
        }
        // python -m flashinfer.collect_env
        "flashinfer" => {
            package_value(s, line, "flashinfer-python", v);
            s.report("flashinfer collect_env", line);
        }
        k if k.starts_with("flashinfer-")
            && k[11..].bytes().all(|b| b.is_ascii_lowercase() || b == b'-') =>
        {
            package_value(s, line, k, v);
        }
        k if k.starts_with("GPU ") => return gpu_key(s, line, k, v),
        _ => return false,
    }
    true
}

/// A `GPU …` key: `GPU 0 (CUDA order)`, SGLang's `GPU 0,1 Compute Capability` and
/// `GPU 0,1`.
fn gpu_key(s: &mut Scanner, line: usize, k: &str, v: &str) -> bool {
    match k {
        k if k.starts_with("GPU ") && k.ends_with("(CUDA order)") => {
            let index = k[4..]
                .split_whitespace()
                .next()
                .and_then(|i| i.parse().ok());
            let name = v.split('|').next().unwrap_or(v);
            let cap = SM.captures(v).and_then(|c| sm_to_capability(&c[1]));
            gpu(s, line, index, name, cap);
        }
        // SGLang: `GPU 0,1,2,3 Compute Capability: 8.0`
        k if k.starts_with("GPU ") && k.ends_with("Compute Capability") => {
            let ids = k[4..k.len() - "Compute Capability".len()].trim();
            if parse_version(v).is_some() {
                for id in ids.split(',') {
                    if let Ok(i) = id.trim().parse::<usize>() {
                        let name = s
                            .facts()
                            .gpus
                            .iter()
                            .find(|g| g.index == Some(i))
                            .map_or_else(|| format!("GPU {i}"), |g| g.name.clone());
                        gpu(s, line, Some(i), &name, Some(v.to_string()));
                    }
                }
            }
        }
        // SGLang: `GPU 0,1,2,3: NVIDIA A800 80GB PCIe`
        k if k.starts_with("GPU ")
            && k[4..].split(',').all(|i| i.trim().parse::<usize>().is_ok()) =>
        {
            for id in k[4..].split(',') {
                if let Ok(i) = id.trim().parse::<usize>() {
                    gpu(s, line, Some(i), v, None);
                }
            }
        }
        _ => return false,
    }
    true
}
