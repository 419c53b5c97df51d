#!/usr/bin/env python3
"""survivor.py GO — a workload that outlives its controller (tests/control/run_ssh.sh part 4,
run_slurm.sh part 3): it ignores SIGPIPE and SIGHUP and write errors, so its ssh session or
srun ending does not end it; node 0 (PITSTOP_NODE_RANK) logs an iteration every 50 ms in the
course DCGAN format (as tests/control/run_foreign.sh); it exits 0 once the file GO exists."""
import os
import signal
import sys
import time

signal.signal(signal.SIGPIPE, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
i, log = 0, os.environ["PITSTOP_NODE_RANK"] == "0"
while not os.path.exists(sys.argv[1]):
    try:
        if log:
            print(f"Rank: 0, Epoch: 0, iteration: {i}/100000, It. time: 0.0500s, Elapsed time: {i * 0.05:.4f} s",
                  flush=True)
    except OSError:
        pass
    time.sleep(0.05)
    i += 1
