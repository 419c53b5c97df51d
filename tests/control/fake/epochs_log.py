#!/usr/bin/python3
"""epochs_log.py E L — a foreign workload for tests/control/run_output.sh: E epochs of L
iterations, 10 ms apart, printed in the course DCGAN's shape ("[epoch: e/E][iteration: i/L]
[rank: 0] ... iteration time: Xs", which pitstop reads, the job's length with it)."""
import sys, time

epochs, iters = int(sys.argv[1]), int(sys.argv[2])
for e in range(epochs):
    for i in range(iters):
        t = time.monotonic()
        time.sleep(0.01)
        print(f"[epoch: {e}/{epochs}][iteration: {i}/{iters}][rank: 0] Loss_D: 1.0000, Loss_G: 1.0000, "
              f"iteration time: {time.monotonic() - t:.4f}s", flush=True)
