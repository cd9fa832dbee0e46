#!/usr/bin/env bash
# allot sim against AccaSim (PyPI's `accasim`) on one SWF trace with EASY
# backfill, in alternated rounds on this machine; prints each round's
# wall times and the ratio, then the median ratio.
#
#   bench/sim-vs-accasim.sh ALLOT_BINARY [ROUNDS]
#
# Each side is timed as a user runs it: process start, the trace's
# reading (allot reads the .gz, AccaSim its own reader over the plain
# file it needs), the simulation, and the outputs each writes by default
# (allot: jobs.csv, summary.json, two plots; AccaSim: its schedule and
# statistics files). Both run EASY backfill: allot FCFS with slot
# reservation held until its job starts, and backfill (`--policy fcfs
# --backfill --max-reserve-time never`: one reservation, for the first
# job that cannot start, never given up, and backfill around it); AccaSim
# EASYBackfilling with FirstFit. (Plain `--backfill` keeps LSF's
# MAX_RESERVE_TIME[5]: the reservation is given up and made again every
# 5 minutes, which EASY never does, and costs a pass each time.) Both machines are the header's: MaxNodes
# nodes sharing MaxProcs cores.
#
# AccaSim 1.1.3 imports `collections.Mapping`, gone since Python 3.10:
# the runner puts the `collections.abc` names back before importing it.
# TRACE (default KTH-SP2) and ACCASIM_VENV (default under ~/.cache) may
# be set.
set -euo pipefail

allot=${1:?usage: $0 ALLOT_BINARY [ROUNDS]}
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
trace=${TRACE:-$here/../../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz}
venv=${ACCASIM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/allot-bench/accasim}

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import accasim' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q accasim
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
zcat -f "$trace" > "$work/trace.swf"
header() { grep -m1 "^; *$1:" "$work/trace.swf" | awk '{print $3}'; }
procs=$(header MaxProcs)
nodes=$(header MaxNodes)
nodes=${nodes:-$procs}
cores=$((procs / nodes))
printf '{"groups": {"g0": {"core": %d}}, "resources": {"g0": %d}}\n' "$cores" "$nodes" > "$work/system.json"

cat > "$work/accasim_run.py" <<'EOF'
import collections, collections.abc, sys
for name in ("Mapping", "MutableMapping", "Sequence", "Iterable", "Callable"):
    setattr(collections, name, getattr(collections.abc, name))
from accasim.base.simulator_class import Simulator
from accasim.base.scheduler_class import EASYBackfilling
from accasim.base.allocator_class import FirstFit
sim = Simulator(sys.argv[1], sys.argv[2], EASYBackfilling(FirstFit()), results_folder=sys.argv[3])
sim.start_simulation()
EOF

now() { date +%s.%N; }
ratios=()
for i in $(seq 1 "$rounds"); do
    t0=$(now)
    "$allot" sim "$trace" --policy fcfs --backfill --max-reserve-time never --out "$work/allot-$i" > /dev/null 2>&1
    t1=$(now)
    "$venv/bin/python" "$work/accasim_run.py" "$work/trace.swf" "$work/system.json" "$work/accasim-$i" > /dev/null 2>&1
    t2=$(now)
    ratio=$(echo "($t2 - $t1) / ($t1 - $t0)" | bc -l)
    ratios+=("$ratio")
    printf 'round %d: allot %.3f s, AccaSim %.3f s, ratio %.1fx\n' "$i" "$(echo "$t1 - $t0" | bc -l)" \
        "$(echo "$t2 - $t1" | bc -l)" "$ratio"
done
printf '%s\n' "${ratios[@]}" | sort -g | awk '{ r[NR] = $1 } END { printf "median ratio %.1fx over %d rounds\n", (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2, NR }'
