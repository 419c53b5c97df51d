"""wait_log.py GO — a foreign workload for the command provider's tests: it prints an iteration in
the course DCGAN format every 50 ms, at least 5, until the file GO exists."""
import os
import sys
import time

i = 0
while i < 5 or not os.path.exists(sys.argv[1]):
    print(f"Rank: 0, Epoch: 0, iteration: {i}/100000, It. time: 0.0500s, Elapsed time: {i * 0.05:.4f} s", flush=True)
    time.sleep(0.05)
    i += 1
