"""A real LSF client against allot: dask-jobqueue's LSFCluster writes a job
script with #BSUB lines (-J -e -o -q -n -M -W), submits it with `bsub <`,
and ends it with `bkill`. Two workers start through allot, compute, and go.

usage: two_workers.py LOG_DIR   (bsub and bkill on PATH, as allot's links)
Prints one line per worker job id: `job N`.
"""

import sys

from dask.distributed import Client
from dask_jobqueue import LSFCluster

log_dir = sys.argv[1]
cluster = LSFCluster(
    queue="normal",
    cores=1,
    memory="1GB",
    walltime="00:30",
    log_directory=log_dir,
    use_stdin=True,
    lsf_units="mb",
    # Loopback only: the scheduler, its dashboard and the workers.
    scheduler_options={"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"},
    worker_extra_args=["--host", "127.0.0.1", "--no-dashboard"],
)
# Its job script: -J dask-worker, -e and -o in LOG_DIR, -q normal, -n 1,
# -M 1000 (MB), -W 00:30; the test checks each was applied.
cluster.scale(2)
client = Client(cluster)
client.wait_for_workers(2, timeout=120)
squares = client.gather(client.map(lambda x: x * x, range(10)))
assert sum(squares) == 285, squares
# Ids only: a job object kept alive past close() fails dask's own check.
for job_id in sorted(str(j.job_id) for j in cluster.workers.values()):
    print(f"job {job_id}", flush=True)
client.close()
cluster.close()
