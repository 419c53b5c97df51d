#!/usr/bin/python3
"""foreign_slow.py N [ignore-term] — a program that speaks no protocol, for the stop tests
(tests/control/run_stop.sh): N iteration lines in the course DCGAN runs' shape, 50 ms apart,
and a marker "step K" on stderr after each; with ignore-term it ignores SIGTERM (only SIGKILL
stops it)."""
import signal, sys, time

n = int(sys.argv[1])
if len(sys.argv) > 2 and sys.argv[2] == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("starting", file=sys.stderr, flush=True)
t0 = time.monotonic()
for i in range(n):
    time.sleep(0.05)
    print(f"Rank: 0, Epoch: 0, iteration: {i}/{n}, It. time: 0.0501s, Elapsed time: {time.monotonic() - t0:.4f} s",
          flush=True)
    print(f"step {i + 1}", file=sys.stderr, flush=True)
