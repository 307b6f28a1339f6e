#!/usr/bin/env bash
# The side-by-side benchmark of issue 7: crashdoc (prefilter and brute force) against
# ripgrep and grep on the same generated log and the same literals, in one run.
#
#   benches/run.sh            # sizes 10M 100M 1G (needs ~1.2 GB of disk under target/bench)
#   benches/run.sh 10M 100M   # smaller run
#
# Prints seconds, MB/s, peak RSS and ratios. Inputs are generated deterministically by
# `crashdoc bench gen-log` / `gen-lib` (constructed data, see src/bench.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10M 100M 1G)

need() { command -v "$1" >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 || true; apt-get install -y -qq "$2" >/dev/null; }; }
need rg ripgrep
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --profile profiling --quiet   # release + line tables (Cargo.toml)
BIN=$PWD/target/profiling/crashdoc
W=$PWD/target/bench
mkdir -p "$W"

# libraries: the embedded default, +1,000 and +10,000 synthetic signatures
for n in 1000 10000; do
  [ -d "$W/lib$n" ] || "$BIN" bench gen-lib --count "$n" --out "$W/lib$n"
done
"$BIN" sig atoms > "$W/atoms-default.txt"
"$BIN" sig atoms --signatures "$W/lib1000" > "$W/atoms-1000.txt"
"$BIN" sig atoms --signatures "$W/lib10000" > "$W/atoms-10000.txt"

# two profiles: `serving` (log-*.txt, ~3 % warnings) and `warnings` (warn-*.txt, a
# healthy server whose journal is a quarter WARNING lines from a handful of templates)
for s in "${SIZES[@]}"; do
  [ -f "$W/log-$s.txt" ] || "$BIN" bench gen-log --size "$s" --seed 1 -o "$W/log-$s.txt"
  [ -f "$W/warn-$s.txt" ] || "$BIN" bench gen-log --profile warnings --size "$s" --seed 1 -o "$W/warn-$s.txt"
done

# run LABEL LOG CMD... → "LABEL seconds peakKB"
measure() {
  local label=$1 log=$2; shift 2
  # warm the page cache once, then measure
  cat "$log" > /dev/null
  local tf
  tf=$(mktemp)
  # output to a file, not /dev/null: GNU grep stops at the first match when it sees /dev/null
  /usr/bin/time -o "$tf" -f "%e %M" "$@" > "$tf.out" 2>/dev/null || true
  rm -f "$tf.out"
  echo "$label $(tail -1 "$tf")"
  rm -f "$tf"
}

printf '\nMachine: %s, %s cores, %s\n' "$(uname -m)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
printf '%-34s %8s %9s %9s %10s %8s\n' "run" "size" "seconds" "MB/s" "peak RSS" "vs rg"
for s in "${SIZES[@]}"; do
 for profile in serving warnings; do
  log="$W/log-$s.txt"; [ "$profile" = warnings ] && log="$W/warn-$s.txt"
  printf '%s profile\n' "$profile"
  mb=$(( $(stat -c %s "$log") / 1048576 ))
  declare -A T=() M=()
  while read -r label secs kb; do T[$label]=$secs; M[$label]=$kb; done < <(
    measure rg            "$log" rg -c -F -f "$W/atoms-default.txt" "$log"
    measure rg-i          "$log" rg -c -i -F -f "$W/atoms-default.txt" "$log"
    measure grep          "$log" grep -c -F -f "$W/atoms-default.txt" "$log"
    measure crashdoc      "$log" "$BIN" diagnose "$log"
    measure extract       "$log" "$BIN" extract "$log"
    measure rg-10k        "$log" rg -c -F -f "$W/atoms-10000.txt" "$log"
    measure crashdoc-10k  "$log" "$BIN" diagnose --signatures "$W/lib10000" "$log"
  )
  for label in rg rg-i grep crashdoc extract rg-10k crashdoc-10k; do
    secs=${T[$label]}
    base=${T[rg]}; [ "${label%-10k}" != "$label" ] && base=${T[rg-10k]}
    printf '%-34s %8s %9s %9s %8s MB %8s\n' "$label" "$s" "$secs" \
      "$(awk -v m="$mb" -v t="$secs" 'BEGIN{ if (t>0) printf "%.0f", m/t; else print "-" }')" \
      "$(( ${M[$label]} / 1024 ))" \
      "$(awk -v a="$base" -v b="$secs" 'BEGIN{ if (b>0) printf "%.2fx", a/b; else print "-" }')"
  done
  unset T M
 done
done

# prefilter vs brute force with 1,000 signatures (on the smallest size: brute force is slow)
s=${SIZES[0]}; log="$W/log-$s.txt"
read -r _ pf _ < <(measure pf "$log" "$BIN" diagnose --signatures "$W/lib1000" "$log")
read -r _ bf _ < <(measure bf "$log" "$BIN" diagnose --engine brute --signatures "$W/lib1000" "$log")
printf '\nprefilter vs brute force, default library + 1,000 signatures, %s: %ss vs %ss = %s faster\n' \
  "$s" "$pf" "$bf" "$(awk -v a="$bf" -v b="$pf" 'BEGIN{ if (b>0) printf "%.0fx", a/b; else print "-" }')"
# the same net of start-up (loading and compiling the 1,000 signatures, timed on an empty log):
# the cost of matching itself
printf '\n' > "$W/empty.txt"
best() { # best of 5 wall times of a command
  local b=999 t tf
  tf=$(mktemp)
  for _ in 1 2 3 4 5; do
    /usr/bin/time -o "$tf" -f "%e" "$@" > "$tf.out" 2>/dev/null || true
    t=$(tail -1 "$tf")
    b=$(awk -v a="$b" -v c="$t" 'BEGIN{ print (c<a)?c:a }')
  done
  rm -f "$tf" "$tf.out"
  echo "$b"
}
p0=$(best "$BIN" diagnose --signatures "$W/lib1000" "$W/empty.txt")
b0=$(best "$BIN" diagnose --engine brute --signatures "$W/lib1000" "$W/empty.txt")
pfb=$(best "$BIN" diagnose --signatures "$W/lib1000" "$log")
printf 'net of start-up (%ss prefilter, %ss brute, best of 5): %ss vs %ss = %s faster\n' "$p0" "$b0" \
  "$(awk -v a="$pfb" -v b="$p0" 'BEGIN{ printf "%.2f", a-b }')" "$(awk -v a="$bf" -v b="$b0" 'BEGIN{ printf "%.2f", a-b }')" \
  "$(awk -v p="$pfb" -v p0="$p0" -v b="$bf" -v b0="$b0" 'BEGIN{ if (p-p0>0) printf "%.0fx", (b-b0)/(p-p0); else print "-" }')"

# library size scaling on the same log: default (~120) vs +10,000
printf 'scaling with the library: see crashdoc vs crashdoc-10k above (target: at most 1.5x)\n'

# the scenario journal, start-up and embedded library included
if command -v hyperfine >/dev/null 2>&1; then
  hyperfine -N --warmup 3 --runs 30 "$BIN tests/data/scenario/journal.txt" 2>/dev/null | grep -E "Time|Range"
else
  start=$(date +%s%N); for _ in $(seq 20); do "$BIN" tests/data/scenario/journal.txt > /dev/null; done
  echo "scenario journal: $(( ($(date +%s%N) - start) / 20000000 )) ms per run (20 runs)"
fi

# corpus mode on both cores: CPU time / wall time
tf=$(mktemp)
/usr/bin/time -o "$tf" -f "%e %U %S" "$BIN" corpus run corpus > "$tf.out" 2>/dev/null || true
rm -f "$tf.out"
read -r wall user sys < <(tail -1 "$tf"); rm -f "$tf"
printf 'corpus run: %ss wall, %ss CPU (%s cores busy)\n' "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" \
  "$(awk -v u="$user" -v s="$sys" -v w="$wall" 'BEGIN{ if (w>0) printf "%.1f", (u+s)/w; else print "-" }')"
