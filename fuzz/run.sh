#!/usr/bin/env bash
# Runs one fuzz target for a given time: fuzz/run.sh TARGET SECONDS [extra libFuzzer args]
# Targets: ingest_extract signature_compile template_render remediation diagnose.
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly toolchain; without
# nightly, RUSTC_BOOTSTRAP=1 lets stable accept cargo-fuzz's -Z flags.
# Crashes land in fuzz/artifacts/TARGET/; the log in fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: fuzz/run.sh TARGET SECONDS}"
secs="${2:?usage: fuzz/run.sh TARGET SECONDS}"
shift 2
toolchain=()
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  toolchain=(+nightly)
else
  export RUSTC_BOOTSTRAP=1
fi
bash fuzz/seed.sh "$target" >/dev/null
mkdir -p fuzz/logs
# -max_len 256 KiB lets the whole scenario journal through; -rss_limit_mb bounds memory
# (a failure there is a finding); -timeout flags any single input slower than 10 s.
cargo "${toolchain[@]}" fuzz run "$target" "fuzz/corpus/$target" -- \
  -max_total_time="$secs" -max_len=262144 -rss_limit_mb=2048 -timeout=10 \
  -print_final_stats=1 "$@" 2>&1 | tee "fuzz/logs/$target.log" | grep -E 'DONE|stat::|ERROR|panicked|SUMMARY|Test unit written' || true
grep -q 'stat::number_of_executed_units' "fuzz/logs/$target.log"
! grep -qE '^==[0-9]+== ERROR|panicked at|Test unit written' "fuzz/logs/$target.log"
