#!/bin/sh
# The stream attacks of issue 19 (CONSTRUCTED logs), with the peak RSS of each:
# 500,000 `[rankN]:` streams with a half-open traceback each, and 300,000 streams with
# the same error line. Usage: benches/streams.sh [path/to/crashdoc] (release by default).
set -eu
bin=${1:-target/release/crashdoc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
with open(f"{d}/tracebacks.log", "w") as f:
    for i in range(500000):
        f.write(f'[rank{i}]: Traceback (most recent call last):\n[rank{i}]:   File "/app/train.py", line 12, in <module>\n')
with open(f"{d}/errors.log", "w") as f:
    for i in range(300000):
        f.write(f"[rank{i}]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n")
PY
for log in tracebacks errors; do
    /usr/bin/time -f "$log: %M KiB peak RSS, %e s" "$bin" --format json "$dir/$log.log" >/dev/null || true
done
