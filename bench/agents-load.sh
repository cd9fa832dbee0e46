#!/usr/bin/env bash
# allotd with many agents: a load generator (`allot-agent --simulate N`)
# speaks the agents' protocol for N simulated hosts, each over its own TLS
# connection with its own certificate, heartbeating every 10 s; jobs
# "run" 1 s on them. Prints allotd's CPU at rest (30 s, every host
# connected and heartbeating), its resident memory, and, after JOBS
# one-slot jobs through the real `allot bsub`, how long each start took
# from allotd's decision to its agent (median, p95).
#   usage: bench/agents-load.sh [ALLOT_BIN_DIR] [HOSTS] [JOBS]
set -euo pipefail
BIN=${1:-target/x86_64-unknown-linux-gnu/release}; HOSTS=${2:-5000}; JOBS=${3:-2000}
dir=$(mktemp -d)
export ALLOT_STATE_DIR=$dir/state
cleanup() { kill "${sim:-}" "${allotd:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
"$BIN/allot" keygen --dir "$dir/tls" $(seq -f "host%g" 1 "$HOSTS") >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$dir/config"
{
    printf '[cluster]\nlisten = "127.0.0.1:%s"\ntls = "%s"\nheartbeat = 10\n' "$port" "$dir/tls"
    for k in $(seq "$HOSTS"); do printf '[[hosts]]\nname = "host%s"\nncpus = 2\n' "$k"; done
} > "$dir/config/allot.toml"
printf 'Begin Queue\nQUEUE_NAME = normal\nPRIORITY = 30\nFAIRSHARE = USER_SHARES[[default, 1]]\nEnd Queue\n' > "$dir/config/lsb.queues"
"$BIN/allotd" --config "$dir/config" 2>"$dir/allotd.log" & allotd=$!
for _ in $(seq 100); do [ -S "$ALLOT_STATE_DIR/allotd.sock" ] && break; sleep 0.1; done
"$BIN/allot-agent" --simulate "$HOSTS" --server "127.0.0.1:$port" --tls "$dir/tls" --run-ms 1000 >"$dir/sim.out" 2>"$dir/sim.err" & sim=$!
t0=$(date +%s)
until [ "$("$BIN/allot" bhosts | grep -c ' ok ')" -ge "$HOSTS" ]; do
    [ $(( $(date +%s) - t0 )) -lt 120 ] || { echo "not every host connected in 120 s" >&2; tail "$dir/allotd.log" >&2; exit 1; }
    sleep 0.5
done
echo "$HOSTS simulated hosts connected in $(( $(date +%s) - t0 )) s"
sleep 12
ticks() { awk '{print $14 + $15}' "/proc/$allotd/stat"; }
hz=$(getconf CLK_TCK); c0=$(ticks); sleep 30; c1=$(ticks)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$allotd/status")
python3 - "$c0" "$c1" "$hz" "$rss" <<'PY'
import sys
c0, c1, hz, rss = map(float, sys.argv[1:])
print(f"allotd at rest: {100 * (c1 - c0) / hz / 30:.2f}% of one core, {rss / 1024:.0f} MiB resident")
PY
n=$(( JOBS / 4 ))
for c in 1 2 3 4; do ( for i in $(seq "$n"); do "$BIN/allot" bsub -o /dev/null /bin/true >/dev/null; done ) & done
wait $(jobs -p | grep -v -e "^$sim\$" -e "^$allotd\$") 2>/dev/null || true
until "$BIN/allot" bjobs -u all 2>&1 | grep -q "No unfinished job found"; do sleep 0.2; done
rss=$(awk '/VmRSS/ {print $2}' "/proc/$allotd/status")
echo "after $JOBS jobs: allotd $(( rss / 1024 )) MiB resident"
kill -TERM "$sim"; wait "$sim" || true
cat "$dir/sim.out"
