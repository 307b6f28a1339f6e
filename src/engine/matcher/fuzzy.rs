//! Fuzzy similarity: a failure no rule explains is compared with the real example
//! messages of every signature, volatile tokens masked (numbers, paths, hex, versions,
//! hosts, ranks, pids) and protected tokens kept (the number after `error`, `errno`,
//! `Xid`, `signal`, `code`, `status`; exception types and words). Messages become sets of
//! token shingles (words and pairs of words); an inverted index from pairs to examples
//! gives the candidates, and the Jaccard similarity of the sets ranks them. The index is
//! built on first use (once per matcher) and only failures without any match reach it:
//! lines that match cost nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use super::{FailureHit, Matches, Place};
use super::{Via, ViaNote};
use crate::engine::extract::{Extraction, Failure, FailureId, FailureKind};
use crate::knowledge::signature::table::Layer;
use crate::knowledge::signature::{Library, Severity, SigIndex, Signature};

/// The similarity from which the closest example is reported. Chosen on the corpus
/// (`crashdoc corpus run corpus`, 181 incidents): at 0.5 the 3 fuzzy top causes are all
/// right (2 of them at 0.6); at 0.4 there are 8, of which 4 name the wrong failure class.
pub const THRESHOLD: f64 = 0.5;
/// Messages with fewer masked words than this are too short to resemble anything.
const MIN_WORDS: usize = 4;
/// Words after which a number is a code and is kept.
const PROTECTED: &[&str] = &[
    "error", "errno", "xid", "signal", "code", "status", "exitcode", "failure", "sig", "err",
];

/// The masked shingles of every signature's example messages.
#[derive(Debug, Clone, Default)]
pub struct FuzzyIndex {
    /// (signature index, near-miss?, shingles) per example message: a failure closest to
    /// a near-miss of a signature resembles nothing.
    examples: Vec<(SigIndex, bool, HashSet<u64>)>,
    /// What each example message names ([`named`]), by the index of `examples`.
    names: Vec<HashSet<String>>,
    /// The codes each example message states ([`codes`]), by the index of `examples`.
    codes: Vec<HashSet<String>>,
    /// Word pair → examples that have it.
    postings: HashMap<u64, Vec<u32>>,
}

/// The closest signature of a message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resemblance {
    pub signature: SigIndex,
    pub similarity: f64,
}

fn is_version(w: &str) -> bool {
    let w = w.strip_prefix('v').unwrap_or(w);
    w.split('.').count() >= 2
        && w.split('.')
            .next()
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()) && !p.is_empty())
}

fn is_hexish(w: &str) -> bool {
    let w = w.strip_prefix("0x").unwrap_or(w);
    w.len() >= 8
        && w.bytes().all(|b| b.is_ascii_hexdigit())
        && w.bytes().any(|b| b.is_ascii_digit())
}

/// One word, masked: `None` drops it.
fn mask(word: &str, prev: Option<&str>) -> Option<String> {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
    if w.is_empty() {
        return None;
    }
    let lower = w.to_lowercase();
    if w.contains('/') || w.contains('\\') {
        return Some("<path>".into());
    }
    if lower.starts_with("0x") || is_hexish(&lower) {
        return Some("<hex>".into());
    }
    if w.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        let code = prev.is_some_and(|p| PROTECTED.contains(&p));
        return Some(if code { lower } else { "<n>".into() });
    }
    if is_version(&lower) {
        return Some("<ver>".into());
    }
    if lower.contains(':') && lower.bytes().any(|b| b.is_ascii_digit()) {
        return Some("<host>".into());
    }
    // rank3, tp0, pid=123, cuda:1: the word without its digits
    Some(lower.replace(|c: char| c.is_ascii_digit(), "#"))
}

/// The masked words of a message.
pub fn masked_words(msg: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in msg.split(|c: char| c.is_whitespace() || "=,;()[]{}'\"`<>|".contains(c)) {
        let prev = out.last().map(String::as_str);
        if let Some(w) = mask(raw, prev) {
            out.push(w);
        }
    }
    out
}

/// What a message names: the file of each path to a file with an extension (its stem and
/// its folder: `lmcache` and `c_ops` of `…/lmcache/c_ops.cpython-312-x86_64-linux-gnu.so`),
/// each callable (`loraconfig` of `LoraConfig.__init__()`), each C++ type
/// (`bad_alloc` of `'std::bad_alloc'`) and each quoted identifier (`vllm_ops` of
/// `name 'vllm_ops' is not defined`; a dotted one by its package: `deepspeed` of
/// `'deepspeed.ops.adam.cpu_adam_op'`), lower-cased. Masking keeps them out of the
/// shingles, so two messages of one shape about different libraries look alike; a fuzzy
/// match must not lend one library's advice to another's failure: when both messages name
/// something, they must share a name.
pub fn named(msg: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut keep = |name: &str| {
        let name = name.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        if name.len() >= 2 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            out.insert(name.to_ascii_lowercase());
        }
    };
    // a dotted name by its first part: the package (`deepspeed` of
    // `deepspeed.ops.adam.cpu_adam_op`), not a part every package has (`ops`)
    for quoted in quoted_identifiers(msg) {
        keep(quoted.split('.').next().unwrap_or(quoted));
    }
    for raw in msg.split(|c: char| c.is_whitespace() || "'\"`,;".contains(c)) {
        if raw.contains('/') || raw.contains('\\') {
            let parts: Vec<&str> = raw
                .split(['/', '\\'])
                .filter(|p| !p.trim_end_matches(':').is_empty())
                .collect();
            // a file with an extension (`c_ops.cpython-312-x86_64-linux-gnu.so`, `other.py`),
            // not a pod or URL segment
            if let [.., folder, file] = parts[..] {
                if let Some((stem, _)) = file.split_once('.') {
                    keep(folder);
                    keep(stem);
                }
            }
        } else if let Some((callee, _)) = raw.split_once('(') {
            for part in callee.split('.').filter(|p| !p.starts_with("__")) {
                keep(part);
            }
        } else if let Some(last) = raw.rsplit_once("::").map(|(_, l)| l) {
            // a C++ type (`std::bad_alloc`, `c10::Error`): what an abort threw
            if last.starts_with(|c: char| c.is_ascii_alphabetic()) {
                keep(last);
            }
        }
    }
    out
}

/// The codes a message states, from its masked words ([`masked_words`]): each number
/// that masking kept because a word before it makes it a code ([`PROTECTED`]: `error 222`,
/// `errno 28`, `exit code 137`, `signal 9`, `Xid 79`), with that word. Such a number stays
/// in the shingles, but one differing word of ten still leaves two messages alike; the
/// code is the message's meaning, so two messages that state codes must share one.
fn codes(words: &[String]) -> HashSet<String> {
    words
        .windows(2)
        .filter(|w| {
            PROTECTED.contains(&w[0].as_str())
                && !w[1].is_empty()
                && w[1].bytes().all(|b| b.is_ascii_digit() || b == b'-')
        })
        .map(|w| format!("{} {}", w[0], w[1]))
        .collect()
}

/// The identifiers a message quotes (`'vllm_ops'`, `` `torch.cuda` ``, `"flash_attn"`):
/// what `name '…' is not defined`, `No module named '…'` or `KeyError: '…'` is about. A
/// quoted text with a space, a path or no letter is not one.
fn quoted_identifiers(msg: &str) -> impl Iterator<Item = &str> {
    let bytes = msg.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let q = bytes[i];
            i += 1;
            if !matches!(q, b'\'' | b'"' | b'`') {
                continue;
            }
            let start = i;
            let len = bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
                .count();
            let end = start + len;
            if bytes.get(end) == Some(&q)
                && len >= 2
                && bytes[start..end].iter().any(u8::is_ascii_alphabetic)
            {
                i = end + 1;
                return msg.get(start..end);
            }
        }
        None
    })
}

fn hash_of(parts: &[&str]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// Word and word-pair shingles of a masked message; the pairs are returned apart.
fn shingles(words: &[String]) -> (HashSet<u64>, Vec<u64>) {
    let mut set = HashSet::new();
    let mut pairs = Vec::new();
    for w in words {
        set.insert(hash_of(&[w]));
    }
    for p in words.windows(2) {
        let h = hash_of(&[&p[0], &p[1]]);
        set.insert(h);
        pairs.push(h);
    }
    (set, pairs)
}

/// The example messages of a signature: each positive example's first line with one of
/// its atoms, and every line of its near-misses (which hold no atom, by design).
fn example_messages(sig: &Signature) -> Vec<(bool, String)> {
    let message =
        |i: usize, text: &str| crate::engine::normalize::normalize_text(i + 1, text).message;
    let mut out = Vec::new();
    for ex in &sig.examples.matches {
        let hit = ex.log.lines().enumerate().find(|(_, l)| {
            let l = l.to_ascii_lowercase();
            sig.atoms.iter().any(|a| l.contains(a.as_str()))
        });
        if let Some((i, text)) = hit {
            out.push((false, message(i, text)));
        }
    }
    for ex in &sig.examples.no_match {
        for (i, text) in ex
            .log
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            out.push((true, message(i, text)));
        }
    }
    out
}

impl FuzzyIndex {
    /// Indexes the examples of every signature that can be a cause (not benign, not a
    /// fallback).
    pub fn build(lib: &Library) -> FuzzyIndex {
        let mut ix = FuzzyIndex::default();
        for (s, sig) in lib.signatures.indexed() {
            if sig.severity == Severity::Benign || sig.layer == Layer::Fallback {
                continue;
            }
            for (near_miss, msg) in example_messages(sig) {
                let words = masked_words(&msg);
                if words.len() < MIN_WORDS {
                    continue;
                }
                let (set, pairs) = shingles(&words);
                let e = ix.examples.len() as u32;
                for p in pairs {
                    let v = ix.postings.entry(p).or_default();
                    if v.last() != Some(&e) {
                        v.push(e);
                    }
                }
                ix.examples.push((s, near_miss, set));
                ix.names.push(named(&msg));
                ix.codes.push(codes(&words));
            }
        }
        ix
    }

    /// The signature whose example is the closest to `msg` (ties: the lower index).
    pub fn closest(&self, msg: &str) -> Option<Resemblance> {
        let words = masked_words(msg);
        if words.len() < MIN_WORDS {
            return None;
        }
        let (set, pairs) = shingles(&words);
        let names = named(msg);
        let codes = codes(&words);
        let mut cands: Vec<u32> = pairs
            .iter()
            .filter_map(|p| self.postings.get(p))
            .flatten()
            .copied()
            .collect();
        cands.sort_unstable();
        cands.dedup();
        let mut best: Option<(bool, Resemblance)> = None;
        for e in cands {
            let Some((s, near_miss, ex)) = self.examples.get(e as usize) else {
                continue;
            };
            if !self
                .names
                .get(e as usize)
                .is_none_or(|n| n.is_empty() || names.is_empty() || !n.is_disjoint(&names))
            {
                continue;
            }
            // a code is what the message says: `exit code 1` is not `exit code 137`
            if self
                .codes
                .get(e as usize)
                .is_some_and(|c| !c.is_empty() && !codes.is_empty() && c.is_disjoint(&codes))
            {
                continue;
            }
            let sim = jaccard(&set, ex);
            if best.is_none_or(|b| sim > b.1.similarity) {
                let r = Resemblance {
                    signature: *s,
                    similarity: sim,
                };
                best = Some((*near_miss, r));
            }
        }
        best.filter(|(near_miss, _)| !near_miss).map(|(_, r)| r)
    }
}

impl FuzzyIndex {
    /// The similarity of `msg` to the closest example of one signature.
    pub fn similarity_to(&self, signature: SigIndex, msg: &str) -> Option<f64> {
        let words = masked_words(msg);
        if words.len() < MIN_WORDS {
            return None;
        }
        let (set, _) = shingles(&words);
        self.examples
            .iter()
            .filter(|(s, near_miss, _)| *s == signature && !near_miss)
            .map(|(_, _, ex)| jaccard(&set, ex))
            .fold(None, |acc: Option<f64>, v| {
                Some(acc.map_or(v, |a| a.max(v)))
            })
    }
}

fn jaccard(a: &HashSet<u64>, b: &HashSet<u64>) -> f64 {
    let inter = a.intersection(b).count() as f64;
    let union = (a.len() + b.len()) as f64 - inter;
    if union > 0.0 {
        inter / union
    } else {
        0.0
    }
}

/// Whether a failure can be a fuzzy match's subject: not a warning or a service event.
fn eligible(f: &Failure) -> bool {
    !matches!(
        f.kind,
        FailureKind::Warning | FailureKind::Systemd | FailureKind::Line
    )
}

/// Matches each failure that no signature matched with its closest example. The index
/// is asked for (`index()`, built on first use) only when such a failure exists.
pub fn match_unexplained<'i>(
    index: impl FnOnce() -> &'i FuzzyIndex,
    x: &Extraction,
    m: &mut Matches,
) {
    let explained: HashSet<FailureId> = m.failures.iter().map(|h| h.failure).collect();
    let todo: Vec<&Failure> = x
        .failures
        .iter()
        .filter(|f| eligible(f) && !explained.contains(&f.id))
        .collect();
    if todo.is_empty() {
        return;
    }
    let ix = index();
    for f in todo {
        let Some(r) = ix.closest(&f.headline) else {
            continue;
        };
        if r.similarity < THRESHOLD {
            continue;
        }
        let (place, line) = match f.primary() {
            Some(e) => (Place::PrimaryException, e.line),
            None => (Place::FailureLine, f.first.line),
        };
        m.failures.push(FailureHit {
            signature: r.signature,
            failure: f.id,
            place,
            captures: BTreeMap::new(),
            lines: vec![line],
        });
        m.via.push(ViaNote {
            signature: r.signature,
            failure: Some(f.id),
            via: Via::Fuzzy {
                per_mille: (r.similarity * 1000.0).round() as u16,
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sources: https://github.com/LMCache/LMCache/issues/1712 (an example of
    // lmcache-c-ops-built-for-other-torch), https://github.com/oobabooga/textgen/issues/6819
    // (an example of peft-config-unexpected-keyword).
    #[test]
    fn a_message_names_its_files_and_callables() {
        let lmcache = "ImportError: /usr/local/lib/python3.12/dist-packages/lmcache/c_ops.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEa";
        let names = named(lmcache);
        assert!(
            names.contains("lmcache") && names.contains("c_ops"),
            "{names:?}"
        );
        let peft = "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'trainable_token_indices'";
        assert_eq!(
            named(peft),
            HashSet::from([
                "loraconfig".to_string(),
                "trainable_token_indices".to_string()
            ])
        );
        assert!(named("RuntimeError: CUDA error: out of memory").is_empty());
        // an abort names the C++ type it threw (Source: the std::terminate line of
        // corpus/accelerate-hang-timeout-nccl-allreduce-end-of-epoch), so it does not
        // resemble another type's abort; an IPv6 address names nothing
        let abort = "terminate called after throwing an instance of 'std::runtime_error'";
        assert_eq!(named(abort), HashSet::from(["runtime_error".to_string()]));
        assert!(named("failed to bind to [::]:29500").is_empty());
    }

    #[test]
    fn a_stated_code_is_the_messages_meaning() {
        // GitHub Actions' step status (the runner's format) and the signature
        // github-actions-step-exit-code-137's example line
        let codes_of = |m: &str| codes(&masked_words(m));
        let one = codes_of("##[error]Process completed with exit code 1.");
        let kill = codes_of("##[error]Process completed with exit code 137.");
        assert_eq!(one, HashSet::from(["code 1".to_string()]));
        assert!(one.is_disjoint(&kill));
        assert!(codes_of("CUDA error: out of memory").is_empty());
        assert_eq!(
            codes_of("CUDA error 222 at ggml-cuda.cu:5141"),
            HashSet::from(["error 222".to_string()])
        );
    }

    // Sources: corpus/deepspeed-import-error-zero-offload-cpu-adam-op-not-built's key line,
    // the examples of bitsandbytes-triton-ops-removed and vllm-custom-ops-not-loaded.
    #[test]
    fn a_quoted_identifier_is_a_name_and_a_dotted_one_is_its_package() {
        let deepspeed = "ModuleNotFoundError: No module named 'deepspeed.ops.adam.cpu_adam_op'";
        let triton = "ModuleNotFoundError: No module named 'triton.ops'";
        assert_eq!(named(deepspeed), HashSet::from(["deepspeed".to_string()]));
        // `ops` is a part of both, no name of either: the two do not resemble each other
        assert!(named(deepspeed).is_disjoint(&named(triton)));
        let vllm = "NameError: name 'vllm_ops' is not defined";
        assert_eq!(named(vllm), HashSet::from(["vllm_ops".to_string()]));
        // a quoted text with a space or without a letter names nothing
        assert!(named("KeyError: 'no such key' at 42").is_empty());
        assert!(named("exit code '137'").is_empty());
    }
}
