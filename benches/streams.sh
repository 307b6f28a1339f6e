#!/bin/sh
# The stream attacks of issue 19 (CONSTRUCTED logs), with the peak RSS of each:
# 500,000 `[rankN]:` streams with a half-open traceback each, 300,000 streams with the
# same error line, and an endless generator piped to standard input (new `[rankN]:`
# streams, each opening a traceback it never ends, forever), stopped after
# STREAM_SECONDS seconds (default 30) or STREAM_BYTES bytes (default 2 GiB), whichever
# comes first. Usage: benches/streams.sh [path/to/crashdoc] (release by default).
set -eu
bin=${1:-target/release/crashdoc}
secs=${STREAM_SECONDS:-30}
bytes=${STREAM_BYTES:-2147483648}
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
# The endless generator: it never stops by itself; `timeout` ends it after $secs, `head`
# after $bytes, and crashdoc then sees the end of its input and reports. Each batch writes
# 1,000 new streams (rank numbers keep growing, so no stream is ever seen twice), each
# with a half-open traceback, and every 50th batch an error line in an old stream.
cat > "$dir/gen.py" <<'PY'
import signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
out = sys.stdout.buffer
n = 0
while True:
    lines = []
    for i in range(n, n + 1000):
        lines.append(b'[rank%d]: Traceback (most recent call last):\n[rank%d]:   File "/app/train.py", line %d, in <module>\n' % (i, i, i % 997))
    if (n // 1000) % 50 == 0:
        lines.append(b"[rank%d]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n" % (n // 2))
    out.write(b"".join(lines))
    n += 1000
PY
timeout "$secs" python3 "$dir/gen.py" | head -c "$bytes" | dd bs=65536 2>"$dir/dd.err" \
    | /usr/bin/time -f "endless generator (${secs} s or ${bytes} bytes): %M KiB peak RSS, %e s" \
        "$bin" --format json - > "$dir/endless.json" || true
python3 - "$dir" <<'PY'
import json, re, sys
d = sys.argv[1]
fed = re.findall(r"^(\d+) bytes", open(f"{d}/dd.err").read(), re.M)
try:
    evicted = json.load(open(f"{d}/endless.json")).get("evicted_streams")
except ValueError:
    evicted = "no report"
print(f"endless generator: {int(fed[-1]) if fed else 0:,} bytes fed, evicted_streams {evicted}")
PY
