"""mnist_log.py L — a foreign workload for the control tests: one epoch of L progress lines in the
PyTorch examples' MNIST shape ("Train Epoch: 1 [n/N (p%)]\tLoss: x", 64 samples a line, no times),
10 ms apart: its log gives the epoch's length (L lines) but not how many epochs."""
import sys
import time

n = int(sys.argv[1])
for i in range(n):
    print(f"Train Epoch: 1 [{i * 64}/{n * 64} ({100 * i // n}%)]\tLoss: 0.500000", flush=True)
    time.sleep(0.01)
