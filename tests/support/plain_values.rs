// Plain values for the variables of a remediation template that do not get the hostile
// or fuzzed value. Shared by the execution harness (tests/integration/shell_exec.rs) and
// the `remediation` fuzz target (fuzz/fuzz_targets/remediation.rs), both through
// `include!`: one list, one choice.

/// Plain values for the other variables of a template (the first its pattern accepts).
const BENIGN: &[&str] = &[
    "zqxother",
    "7",
    "1.2.3",
    "/data/zqxother",
    "zqxother.example",
    "https://zqxother.example/",
    "zqxother:7",
    "sm_90",
    "zqxother.so",
    "Zqxother",
    "/data/zqxother/.cache/huggingface/zqx",
    "libzqxother.so",
    "torch.float16",
    "/data/zqxother/libstdc++.so.6",
    // a pinned requirement (`pip install "{{requirement}}"`)
    "zqxother==1.2.3",
    // a systemd unit named as its log line names it (`journalctl -u {{unit}}`)
    "zqxother.service",
];

/// A plain value the pattern of `var` accepts: one of [`BENIGN`], else a plain word of
/// the pattern itself (an alternative of `(?P<library>cudart|cuda|…)`).
fn benign_for(
    sig: &crashdoc::knowledge::signature::compile::Signature,
    var: &str,
) -> Option<String> {
    let Some(re) = sig.capture_patterns.get(var) else {
        // the unit (checked against the unit pattern when rendered)
        return Some(BENIGN[0].to_string());
    };
    let plain = |w: &&str| {
        !w.is_empty()
            && !w.starts_with(['-', '.', '='])
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._+:/@%,=-".contains(c))
    };
    let pattern = re.as_str().to_string();
    BENIGN
        .iter()
        .copied()
        .chain(pattern.split(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c))))
        .filter(plain)
        .find(|b| re.is_match(b))
        .map(str::to_string)
}
