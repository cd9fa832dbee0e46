#!/usr/bin/env bash
# System calls per job over a drain of N /bin/true jobs, state on disk: allotd on
# its embedded defaults with its host closed takes N jobs, then `strace -f -c`
# follows allotd and everything it starts from `badmin hopen` to the last end.
#   usage: syscalls-per-job.sh [ALLOT_BIN_DIR] [N] [STRACE_OUT]   (needs strace and root's ptrace)
set -euo pipefail
BIN=${1:-target/release}; N=${2:-300}; OUT=${3:-$(mktemp)}
export ALLOT_STATE_DIR=$(mktemp -d)
"$BIN/allotd" >"$ALLOT_STATE_DIR/allotd.log" 2>&1 & pid=$!
for i in $(seq 100); do [ -S "$ALLOT_STATE_DIR/allotd.sock" ] && break; sleep 0.1; done
host=$("$BIN/allot" bhosts | awk 'NR==2{print $1}')
"$BIN/allot" badmin hclose "$host" >/dev/null
for i in $(seq "$N"); do "$BIN/allot" bsub -o /dev/null /bin/true >/dev/null; done
strace -f -c -o "$OUT" -p "$pid" & spid=$!
sleep 1
"$BIN/allot" badmin hopen "$host" >/dev/null
until "$BIN/allot" bjobs -u all 2>&1 | grep -q "No unfinished job found"; do sleep 0.2; done
kill -INT $spid; wait $spid 2>/dev/null || true
kill $pid; wait $pid 2>/dev/null || true
rm -rf "$ALLOT_STATE_DIR"
python3 - "$OUT" "$N" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines(); n = int(sys.argv[2])
rows = []
for l in lines:
    p = l.split()
    if len(p) >= 5 and p[0][0].isdigit() and p[-1] != 'total':
        calls = int(p[3]); rows.append((calls, p[-1]))
rows.sort(reverse=True)
total = sum(c for c, _ in rows)
print(f"{total/n:.1f} system calls per job")
print("  " + ", ".join(f"{name} {c/n:.1f}" for c, name in rows[:16]))
PY
