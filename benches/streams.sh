#!/bin/sh
# The stream attacks of issue 19 (CONSTRUCTED logs), with the peak RSS of each:
# 500,000 `[rankN]:` streams with a half-open traceback each, 300,000 streams with the
# same error line, and an endless generator piped to standard input (new `[rankN]:`
# streams, each opening a traceback it never ends, forever), stopped after
# STREAM_SECONDS seconds (default 20) or STREAM_BYTES bytes (default 2 GiB), whichever
# comes first. Usage: benches/streams.sh [path/to/crashdoc] (release by default).
set -eu
bin=${1:-target/release/crashdoc}
secs=${STREAM_SECONDS:-20}
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
# Its argument is how many distinct tracebacks it cycles through: 1 (the same frame in
# every stream: the endless form of the first attack), or 997 (997 distinct failures,
# each of which keeps up to 1,024 listed occurrences: bounded by the limits on failures
# and occurrences, but far above the streams' own cost).
cat > "$dir/gen.py" <<'PY'
import signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
distinct = int(sys.argv[1])
out = sys.stdout.buffer
n = 0
while True:
    lines = []
    for i in range(n, n + 1000):
        lines.append(b'[rank%d]: Traceback (most recent call last):\n[rank%d]:   File "/app/train.py", line %d, in <module>\n' % (i, i, 12 + i % distinct))
    if (n // 1000) % 50 == 0:
        lines.append(b"[rank%d]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n" % (n // 2))
    out.write(b"".join(lines))
    n += 1000
PY
for distinct in 1 ${STREAM_DISTINCT:-997}; do
    timeout "$secs" python3 "$dir/gen.py" "$distinct" | head -c "$bytes" | dd bs=65536 2>"$dir/dd.err" \
        | /usr/bin/time -f "endless generator, $distinct distinct traceback(s) (${secs} s or ${bytes} bytes): %M KiB peak RSS, %e s" \
            "$bin" --format json - > "$dir/endless.json" || true
    python3 - "$dir" <<'PY'
import json, re, sys
d = sys.argv[1]
fed = re.findall(r"^(\d+) bytes", open(f"{d}/dd.err").read(), re.M)
try:
    v = json.load(open(f"{d}/endless.json"))
    seen = f"evicted_streams {v.get('evicted_streams')}, {len(v.get('failures', []))} failures"
except ValueError:
    seen = "no report"
print(f"  {int(fed[-1]) if fed else 0:,} bytes fed, {seen}")
PY
done
