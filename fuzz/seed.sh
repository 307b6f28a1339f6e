#!/usr/bin/env bash
# Copies the seed corpora for the fuzz targets into fuzz/corpus/<target>/ (not committed).
# Seeds: the incident logs (corpus/*/log.txt), the scenario journal, a gzip of it, the
# signature files, the remediation commands of the signatures (for the templates), and
# hostile values (for the remediation target).
# SEED_MAX_BYTES=N leaves out log seeds larger than N bytes (CI's short smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-all}"
max_bytes="${SEED_MAX_BYTES:-0}"
seed() { mkdir -p "fuzz/corpus/$1"; }
if [[ $target == all || $target == ingest_extract || $target == diagnose ]]; then
  for t in ingest_extract diagnose; do
    [[ $target == all || $target == "$t" ]] || continue
    seed "$t"
    for d in corpus/*/; do
      n=$(basename "$d")
      if (( max_bytes > 0 )) && (( $(wc -c < "$d/log.txt") > max_bytes )); then
        continue
      fi
      # libFuzzer's default -max_len is derived from the seeds; keep big logs whole
      cp "$d/log.txt" "fuzz/corpus/$t/incident-$n"
    done
    cp tests/data/scenario/journal.txt "fuzz/corpus/$t/scenario"
    gzip -c tests/data/scenario/journal.txt > "fuzz/corpus/$t/scenario.gz"
  done
fi
if [[ $target == all || $target == signature_compile ]]; then
  seed signature_compile
  find signatures -name '*.yaml' | while read -r f; do
    cp "$f" "fuzz/corpus/signature_compile/$(echo "$f" | tr / _)"
  done
fi
if [[ $target == all || $target == template_render ]]; then
  seed template_render
  # each `command:` of the library as a raw template seed (arbitrary's String reads
  # bytes as-is, so a plain command is a valid start)
  grep -rhoE '^\s*command: .*' signatures | sed -E 's/^\s*command: //; s/^"(.*)"$/\1/; s/^'"'"'(.*)'"'"'$/\1/' \
    | sort -u | nl -ba -w1 -s' ' | while read -r i cmd; do
      printf '%s' "$cmd" > "fuzz/corpus/template_render/cmd-$i"
    done
fi
if [[ $target == all || $target == remediation ]]; then
  seed remediation
  # CONSTRUCTED hostile values (the execution harness's, tests/integration/shell_exec.rs)
  # and the library's capture-like values; the target fills every library command with
  # the values it decodes from these bytes (a form byte, then NUL-separated values)
  n=0
  for v in '$(touch PWNED)' '`touch PWNED`' '; touch PWNED' "' ; touch PWNED ; '" \
    '"$HOME"' '*' '{a,b}' '[ab]' '^x' 'x#' 'a~b' '!!' '-rf' '--output=/etc/x' \
    $'a\ntouch PWNED' '~root' '=ls' '%1' 'a b' 'x|y' 'x&&y' 'x>y' "a'b" 'a"b' 'a\b' \
    '/data/x y' '1.0;id' 'vllm.service' 'https://x.example/a?b' 'meta-llama/Llama-3-8B'; do
    n=$((n + 1))
    # the first byte picks the prefix the value is tried behind (7 forms)
    for f in 0 1 2 3 4 5 6; do
      { printf "\\$(printf '%03o' "$f")"; printf '%s' "$v"; } > "fuzz/corpus/remediation/value-$n-$f"
    done
  done
fi
echo "seeds in fuzz/corpus/: $(find fuzz/corpus -type f | wc -l) files"
