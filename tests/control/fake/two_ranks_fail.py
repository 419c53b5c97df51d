#!/usr/bin/python3
"""two_ranks_fail.py N FAIL_AT — a program that speaks no protocol, for tests/control/run_output.sh:
N iterations printed by two ranks on one stdout in the course DCGAN runs' shape (each step twice,
rank 0 and rank 1), a line on stderr; in generation 0 it exits 1 after FAIL_AT steps."""
import os, sys, time

n, fail_at = int(sys.argv[1]), int(sys.argv[2])
gen = int(os.environ.get("PITSTOP_GEN", "0"))
print("a warning on stderr", file=sys.stderr, flush=True)
for i in range(n):
    time.sleep(0.01)
    for r in (0, 1):
        print(f"Rank: {r}, Epoch: 0, iteration: {i}/{n}, It. time: 0.0101s, Elapsed time: {0.0101 * (i + 1):.4f} s",
              flush=True)
    if gen == 0 and i + 1 == fail_at:
        print("out of memory (on purpose)", file=sys.stderr, flush=True)
        sys.exit(1)
