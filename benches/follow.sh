#!/bin/sh
# `crashdoc --follow` on an endless healthy stream (issue 18 item 9): the warning-heavy
# serving journal of `bench gen-log --profile warnings` (CONSTRUCTED) repeated, piped in
# until TOTAL bytes have gone through; prints the throughput and the peak RSS (target:
# under 64 MB, whatever TOTAL is: the window of the attempt under way is capped).
# Usage: benches/follow.sh [path/to/crashdoc] [TOTAL, e.g. 2G] (release, 1G by default).
set -eu
bin=${1:-target/release/crashdoc}
total=${2:-1G}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" bench gen-log --profile warnings --size 64M > "$dir/warnings.log"
bytes=$(numfmt --from=iec "$total")
start=$(date +%s.%N)
# `yes` repeats the file's name forever; cat reads it each time: an endless stream, cut
# at TOTAL bytes by head
yes "$dir/warnings.log" | xargs -n 1 cat 2>/dev/null | head -c "$bytes" |
    /usr/bin/time -f "%M" -o "$dir/rss" "$bin" --follow --format jsonl > "$dir/out" || true
end=$(date +%s.%N)
rss=$(cat "$dir/rss")
python3 - "$bytes" "$start" "$end" "$rss" "$dir/out" <<'PY'
import sys
n, t0, t1, rss, out = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
s = t1 - t0
printed = sum(1 for _ in open(out))
print(f"follow: {n / 2**20:.0f} MiB healthy stream in {s:.1f} s ({n / 2**20 / s:.0f} MiB/s), "
      f"peak RSS {rss / 1024:.1f} MiB (target < 64), {printed} diagnosis line(s) printed")
PY
