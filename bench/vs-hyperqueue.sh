#!/usr/bin/env bash
# allot against HyperQueue end to end, in alternated rounds in one run:
#   - allot: ../shared/bench/daemon-throughput.sh, 4 shell loops of
#     `bsub -o /dev/null /bin/true` to an allotd on its embedded defaults,
#     state on disk (every submission, start and end durable);
#   - HyperQueue: the `hyperqueue` package from PyPI (its wheel has no `hq`
#     binary: `hyperqueue.cluster.LocalCluster` starts its server and one
#     worker of 2 cores), 4 client processes each submitting JOBS/4 one-task
#     jobs of /bin/true with no output files, then waiting for them.
# Each prints jobs per second from the first submission to the last end.
#   usage: bench/vs-hyperqueue.sh [ALLOT_BIN_DIR] [JOBS] [ROUNDS]
# ALLOT_BIN_DIR holds allot, allotd and allot-supervise (default: the
# `cargo dist` build). The venv is kept in ~/.cache/allot-bench/hq.
set -euo pipefail
BIN=${1:-target/x86_64-unknown-linux-gnu/release}; JOBS=${2:-1000}; ROUNDS=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
throughput=$here/../../shared/bench/daemon-throughput.sh
venv=${XDG_CACHE_HOME:-$HOME/.cache}/allot-bench/hq
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import hyperqueue' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'hyperqueue==0.27.0'
fi
runner=$(mktemp --suffix=.py)
trap 'rm -f "$runner"' EXIT
cat > "$runner" <<'PY'
import multiprocessing, sys, tempfile, time
from hyperqueue import Client, Job
from hyperqueue.cluster import LocalCluster, WorkerConfig

def loop(server_dir, n, go, done):
    client = Client(server_dir)
    go.wait()
    submitted = []
    for _ in range(n):
        job = Job()
        job.program(["/bin/true"], stdout=None, stderr=None)
        submitted.append(client.submit(job))
    client.wait_for_jobs(submitted)
    done.put(time.time())

def main():
    jobs = int(sys.argv[1])
    with tempfile.TemporaryDirectory() as d, LocalCluster(d, WorkerConfig(cores=2)) as cluster:
        server_dir = cluster.cluster.server_dir
        Client(server_dir)  # the server answers
        # Fresh processes: the cluster's threads do not survive a fork.
        mp = multiprocessing.get_context("spawn")
        go, done = mp.Event(), mp.Queue()
        procs = [mp.Process(target=loop, args=(server_dir, jobs // 4, go, done)) for _ in range(4)]
        for p in procs:
            p.start()
        time.sleep(3)
        t0 = time.time()
        go.set()
        ends = [done.get() for _ in procs]
        for p in procs:
            p.join()
        took = max(ends) - t0
        print(f"HyperQueue: end to end: {jobs / took:.0f} jobs/s   ({jobs} jobs, {took:.2f} s)")

if __name__ == "__main__":
    main()
PY
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    echo "  allot: $(bash "$throughput" "$BIN" $((JOBS / 4)) | tail -1)"
    echo "  $("$venv/bin/python" "$runner" "$JOBS" 2>/dev/null | tail -1)"
done
