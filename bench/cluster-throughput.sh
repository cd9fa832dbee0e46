#!/usr/bin/env bash
# End-to-end throughput of allotd with agents, measured as
# ../shared/bench/daemon-throughput.sh measures one host: 4 concurrent shell
# loops submit one-slot /bin/true jobs through the real `allot bsub`, here to
# an allotd on a test cluster of N hosts on this machine (`allot start
# --test-hosts N`: allotd and N agents, every job started, measured and
# ended through its host's agent over TLS), in a fresh state directory.
#   usage: bench/cluster-throughput.sh [ALLOT_BIN_DIR] [JOBS_PER_LOOP] [HOSTS]
# ALLOT_BIN_DIR holds allot, allotd, allot-agent and allot-supervise
# (default: the `cargo dist` build).
set -euo pipefail
BIN=${1:-target/x86_64-unknown-linux-gnu/release}; N=${2:-500}; HOSTS=${3:-16}
export ALLOT_STATE_DIR=$(mktemp -d)
trap '"$BIN/allot" stop >/dev/null 2>&1 || true; rm -rf "$ALLOT_STATE_DIR"' EXIT
"$BIN/allot" start --test-hosts "$HOSTS" >/dev/null
t0=$(date +%s.%N)
loops=()
for c in 1 2 3 4; do ( for i in $(seq "$N"); do "$BIN/allot" bsub -o /dev/null /bin/true >/dev/null; done ) & loops+=($!); done
wait "${loops[@]}"
t1=$(date +%s.%N)
until "$BIN/allot" bjobs -u all 2>&1 | grep -q "No unfinished job found"; do sleep 0.05; done
t2=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" "$N" "$HOSTS" <<'PY'
import sys
t0, t1, t2, n, hosts = map(float, sys.argv[1:]); n = 4 * n
print(f"{int(hosts)} test hosts: submission {n/(t1-t0):.0f} jobs/s   end to end {n/(t2-t0):.0f} jobs/s   ({int(n)} jobs, {t2-t0:.2f} s)")
PY
