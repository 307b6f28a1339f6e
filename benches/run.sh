#!/usr/bin/env bash
# The side-by-side benchmark of issues 7 and 20: crashdoc (prefilter and brute force)
# against ripgrep and grep on the same generated logs (two profiles) and the same
# literals, in one run, then start-up, scaling with the library and corpus mode. Every
# figure of issue 20's targets is printed.
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
need hyperfine hyperfine || true
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --profile profiling --quiet   # release + line tables (Cargo.toml)
cargo build --release --quiet             # what ships: stripped, measured for size
BIN=$PWD/target/profiling/crashdoc
REL=$PWD/target/release/crashdoc
W=$PWD/target/bench
mkdir -p "$W"
# compiled folder libraries are cached here (not in ~/.cache); emptied for each run
export CRASHDOC_CACHE_DIR="$W/cache"
rm -rf "$CRASHDOC_CACHE_DIR"

# libraries: the embedded default, +1,000 and +10,000 synthetic signatures (their words
# drawn from the embedded library's real messages: one distinct atom each); made anew
# when the generator or the library it draws from changed
stamp=$(find src/tools/bench.rs signatures -name "*.rs" -o -name "*.yaml" | sort | xargs cat | md5sum | cut -c1-12)
for n in 1000 10000; do
  if [ "$(cat "$W/lib$n.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$W/lib$n"
    "$BIN" bench gen-lib --count "$n" --out "$W/lib$n"
    echo "$stamp" > "$W/lib$n.stamp"
  fi
done
"$BIN" sig atoms > "$W/atoms-default.txt"
"$BIN" sig atoms --signatures "$W/lib1000" > "$W/atoms-1000.txt"
"$BIN" sig atoms --signatures "$W/lib10000" > "$W/atoms-10000.txt"

# three profiles: `serving` (log-*.txt, ~3 % warnings), `warnings` (warn-*.txt, a
# healthy server whose journal is a quarter WARNING lines from a handful of templates)
# and `failures` (fail-*.txt, a crash loop: eight ranks' six-line tracebacks interleaved,
# repeated, the service restarted every ~500 rounds; issue 32's target is 0.5x ripgrep on it)
for s in "${SIZES[@]}"; do
  [ -f "$W/log-$s.txt" ] || "$BIN" bench gen-log --size "$s" --seed 1 -o "$W/log-$s.txt"
  [ -f "$W/warn-$s.txt" ] || "$BIN" bench gen-log --profile warnings --size "$s" --seed 1 -o "$W/warn-$s.txt"
  [ -f "$W/fail-$s.txt" ] || "$BIN" bench gen-log --profile failures --size "$s" --seed 1 -o "$W/fail-$s.txt"
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
 for profile in serving warnings failures; do
  log="$W/log-$s.txt"; [ "$profile" = warnings ] && log="$W/warn-$s.txt"
  [ "$profile" = failures ] && log="$W/fail-$s.txt"
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
    # the 10,000 signatures compiled once before (the cache), as a user's folder is
    "$BIN" sig list --signatures "$W/lib10000" > /dev/null
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
  if [ "$profile" = failures ]; then
    # issue 32: repeated multi-line blocks counted once their shape is known
    printf 'failure-heavy profile, %s: crashdoc %s ripgrep (target: 0.5x)\n' "$s" \
      "$(awk -v a="${T[rg]}" -v b="${T[crashdoc]}" 'BEGIN{ if (b>0) printf "%.2fx", a/b; else print "-" }')"
  fi
  unset T M
 done
done

# prefilter vs brute force, end to end, default library + 1,000 signatures, on 50 MB
[ -f "$W/log-50M.txt" ] || "$BIN" bench gen-log --size 50M --seed 1 -o "$W/log-50M.txt"
log="$W/log-50M.txt"
"$BIN" sig list --signatures "$W/lib1000" > /dev/null
read -r _ bf _ < <(measure bf "$log" "$BIN" diagnose --engine brute --signatures "$W/lib1000" "$log")
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
pf=$(best "$BIN" diagnose --signatures "$W/lib1000" "$log")
printf '\nprefilter vs brute force, default library + 1,000 signatures, 50 MB, end to end: %ss vs %ss = %s faster (target: 100x)\n' \
  "$pf" "$bf" "$(awk -v a="$bf" -v b="$pf" 'BEGIN{ if (b>0) printf "%.0fx", a/b; else print "-" }')"

# library size scaling on the largest log: default (~670) vs +10,000, both profiles
s=${SIZES[${#SIZES[@]}-1]}
for profile in serving warnings; do
  log="$W/log-$s.txt"; [ "$profile" = warnings ] && log="$W/warn-$s.txt"
  a=$(best "$BIN" diagnose "$log"); b=$(best "$BIN" diagnose --signatures "$W/lib10000" "$log")
  printf 'scaling, %s profile, %s: default library %ss, +10,000 signatures %ss = %sx (target: at most 1.5x)\n' \
    "$profile" "$s" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{ if (a>0) printf "%.2f", b/a; else print "-" }')"
done

# start-up: the scenario journal and `sig list`, embedded library included; a folder
# library of 10,000 signatures compiled (no cache) and read from the cache
startup() { # label, command...: mean wall time in ms
  local label=$1; shift
  if command -v hyperfine >/dev/null 2>&1; then
    local tf; tf=$(mktemp)
    hyperfine -N --warmup 3 --runs 30 --export-json "$tf" "$*" > /dev/null 2>&1 || true
    printf '%-46s %s\n' "$label" "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f ms (min %.1f, sd %.1f)" % (r["mean"]*1e3, r["min"]*1e3, r["stddev"]*1e3))' "$tf")"
    rm -f "$tf"
  else
    # no hyperfine: 3 warm-up runs, then the mean wall time of 50 (µs precision)
    for _ in 1 2 3; do "$@" > /dev/null; done
    local start; start=$(date +%s%N)
    for _ in $(seq 50); do "$@" > /dev/null; done
    printf '%-46s %s ms per run (50 runs, no hyperfine)\n' "$label" \
      "$(awk -v ns="$(( $(date +%s%N) - start ))" 'BEGIN{ printf "%.1f", ns / 50 / 1e6 }')"
  fi
}
printf '\n'
printf '%-46s %s\n' "release binary size (target 8 MB)" \
  "$(awk -v b="$(stat -c %s "$REL")" 'BEGIN{ printf "%.1f MB, %.1f MiB (%d bytes)", b/1e6, b/1048576, b }')"
# start-up is measured on the release binary (stripped: what a user runs)
startup "start-up: scenario journal (target 10 ms)" "$REL" tests/data/scenario/journal.txt
startup "start-up: sig list (target 4 ms)" "$REL" sig list
startup "sig list, +10,000 signatures, cached" "$BIN" sig list --signatures "$W/lib10000"
startup "sig list, +10,000 signatures, no cache" env CRASHDOC_CACHE_DIR= "$BIN" sig list --signatures "$W/lib10000"

# corpus mode on both cores: CPU time / wall time
tf=$(mktemp)
/usr/bin/time -o "$tf" -f "%e %U %S" "$BIN" corpus run corpus > "$tf.out" 2>/dev/null || true
rm -f "$tf.out"
read -r wall user sys < <(tail -1 "$tf"); rm -f "$tf"
printf 'corpus run: %ss wall, %ss CPU (%s cores busy)\n' "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" \
  "$(awk -v u="$user" -v s="$sys" -v w="$wall" 'BEGIN{ if (w>0) printf "%.1f", (u+s)/w; else print "-" }')"
