#!/usr/bin/env bash
# edge_clock.sh — `pitstop predict` on a run with a clock (records' t: a log's elapsed time, or a
# script's progress lines timed by their arrival) whose epochs have work outside their steps, as the
# PyTorch examples under `pitstop run` have (issue 26): 6 timed epochs of 20 steps of 0.1 s (±2%), each
# epoch's first step 0.2 s longer (the loader's start, the end of the epoch before), 0.5 s of work
# right after each epoch's first line (the DCGAN example saves its images after printing i = 0), and
# a first epoch whose steps after the second run 3x slower (a warm-up, or a loaded host, as the MNIST
# example's first epoch once did). An epoch takes 20 × 0.1 + 0.2 + 0.5 = 2.7 s: predicted within 2%
# (before the interval after the first line was counted: 2.21 s), the untimed 7th epoch (the one a
# program exited in, recorded at its exit with no step times) counting for nothing.
set -euo pipefail
: "${PITSTOP:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 - "$T/events.jsonl" << 'PY'
import json, random, sys
random.seed(5)
out = open(sys.argv[1], "w")
w = lambda r: out.write(json.dumps(r) + "\n")
w({"type": "init", "run": "edge", "gen": 0, "t": 1.0, "init_s": 1.0, "ranks": 1, "nodes": 1,
   "config": {"timed_by": "arrival", "iters_per_epoch": 20, "planned_iters": 140, "model": "m", "batch": 8}})
t, step = 1.0, 0
for e in range(6):
    for i in range(20):
        d = 0.1 * (1 + 0.02 * (2 * random.random() - 1)) * (3 if e == 0 and i >= 2 else 1)
        if i == 0 and e > 0:
            d += 0.2
        if i == 1:
            d += 0.5
        t += d
        w({"type": "iter", "run": "edge", "gen": 0, "t": t, "epoch": e, "iter": i, "step": step, "batch": 8,
           "step_s": d})
        step += 1
# a 7th epoch the program exited in (no line marked its end): recorded at the exit, untimed
for i in range(20):
    w({"type": "iter", "run": "edge", "gen": 0, "t": t + 4.0, "epoch": 6, "iter": i, "step": step, "batch": 8})
    step += 1
w({"type": "end", "run": "edge", "gen": 0, "t": t + 4.0, "status": "done"})
PY
"$PITSTOP" predict "$T/events.jsonl" --format json > "$T/p.json"
/usr/bin/python3 - "$T/p.json" << 'PY'
import json, sys
p = json.load(open(sys.argv[1]))
e = p["predicted_epoch_s"]
print(f"one epoch predicted {e:.3f} s [{p['predicted_epoch_interval_s'][0]:.3f}, "
      f"{p['predicted_epoch_interval_s'][1]:.3f}] (warm-up {p['warmup']}), true 2.7 s")
assert abs(e - 2.7) / 2.7 <= 0.02, f"one epoch {e:.3f} s, not 2.7 s within 2%"
PY
