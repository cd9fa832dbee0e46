#!/usr/bin/env bash
# One job array of a million elements on the embedded defaults (with
# MAX_JOB_ARRAY_SIZE raised), state on disk, through the real commands:
#   - how long `bsub -J "a[1-SIZE]"` takes to be answered, and allotd's
#     resident memory before and after;
#   - how long `bjobs -A` takes;
#   - after `hopen`, the rate at which the first RUN elements run
#     (/bin/true), against RUN separate /bin/true jobs submitted while the
#     host was closed, drained in a fresh allotd before;
#   - how long `bkill` of the array takes (the rest of its elements).
#   usage: bench/big-array.sh [ALLOT_BIN_DIR] [SIZE] [RUN]
# ALLOT_BIN_DIR holds allot, allotd and allot-supervise (default: the
# `cargo dist` build).
set -euo pipefail
BIN=${1:-target/x86_64-unknown-linux-gnu/release}; SIZE=${2:-1000000}; RUN=${3:-3000}
dir=$(mktemp -d)
cleanup() { kill "${allotd:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
mkdir -p "$dir/config"
printf 'Begin Parameters\nMAX_JOB_ARRAY_SIZE = %s\nEnd Parameters\n' "$SIZE" > "$dir/config/lsb.params"
printf 'Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n' \
    > "$dir/config/lsb.queues"
# A fresh allotd on the host closed, in state directory $1.
start() {
    export ALLOT_STATE_DIR=$dir/$1
    "$BIN/allotd" --config "$dir/config" 2>"$dir/$1.log" & allotd=$!
    for _ in $(seq 100); do [ -S "$ALLOT_STATE_DIR/allotd.sock" ] && break; sleep 0.1; done
    host=$("$BIN/allot" bhosts | awk 'NR == 2 {print $1}')
    "$BIN/allot" badmin hclose "$host" >/dev/null
}
stop() { kill "$allotd"; wait "$allotd" 2>/dev/null || true; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
rss() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$allotd/status"; }
drained() { "$BIN/allot" bjobs -u all 2>&1 | grep -q "No unfinished job found"; }

# RUN separate jobs, submitted while the host is closed, then drained.
start separate
for c in 1 2 3 4; do
    ( for _ in $(seq $(( RUN / 4 ))); do "$BIN/allot" bsub -o /dev/null /bin/true >/dev/null; done ) &
done
wait $(jobs -p | grep -v "^$allotd\$") 2>/dev/null || true
t0=$(date +%s%N)
"$BIN/allot" badmin hopen "$host" >/dev/null
until drained; do sleep 0.05; done
jobs_ms=$(ms "$t0")
stop

start array
echo "allotd before: $(rss) MiB resident"
t0=$(date +%s%N)
"$BIN/allot" bsub -J "a[1-$SIZE]" -o /dev/null /bin/true >/dev/null
echo "bsub -J \"a[1-$SIZE]\": answered in $(ms "$t0") ms; allotd $(rss) MiB resident"
best=999999
for _ in 1 2 3 4 5; do
    t0=$(date +%s%N); "$BIN/allot" bjobs -A >/dev/null; took=$(ms "$t0")
    [ "$took" -lt "$best" ] && best=$took
done
echo "bjobs -A: $best ms (best of 5, the command's whole run)"
"$BIN/allot" bjobs -A
# Its first RUN elements: hopen, and time until they are done.
done_elements() { "$BIN/allot" bjobs -A | awk 'NR == 2 {print $6}'; }
t0=$(date +%s%N)
"$BIN/allot" badmin hopen "$host" >/dev/null
until [ "$(done_elements)" -ge "$RUN" ]; do sleep 0.05; done
array_ms=$(ms "$t0")
"$BIN/allot" badmin hclose "$host" >/dev/null
echo "allotd after $(done_elements) elements ran: $(rss) MiB resident"
"$BIN/allot" bjobs -A
t0=$(date +%s%N)
"$BIN/allot" bkill 1 >/dev/null 2>&1 || true
echo "bkill of the array: $(ms "$t0") ms; allotd $(rss) MiB resident"
"$BIN/allot" bjobs -A -a
python3 - "$RUN" "$array_ms" "$jobs_ms" <<'PY'
import sys
n, a, j = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
print(f"{n} elements of the array ran at {n / a * 1000:.0f} jobs/s; {n} separate jobs at {n / j * 1000:.0f} jobs/s")
PY
