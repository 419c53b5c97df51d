#!/usr/bin/python3
"""clients_check.py EVENTS STAMPS PREDICT_JSON SHAPE — the figures of tests/control/run_clients.sh for
one run of an unchanged client script under `pitstop run` with stamp_lines.py in front of it:
  1. the controller's step times (its lines' arrival, divided over the steps between two lines)
     against the script's own time.perf_counter() at each line: mean over the run within 10%;
  2. `pitstop predict` on the stored run: one epoch against the epochs the script's clock measured
     (each epoch from the last progress line of the one before to its own last line, the first
     epoch left out: its start-up is the prediction's one-off part): within a factor 1.9 of their range
     asserted; how far from the 5% target, printed.
SHAPE: iters ("[e/N][i/L]") or samples ("Train Epoch: e [n/N (p%)]")."""
import json, re, statistics, sys

events, stamps, pred, shape = sys.argv[1:5]
its = [x for x in map(json.loads, open(events)) if x["type"] == "iter"]
pat = {"iters": r"\[(\d+)/(\d+)\]\[(\d+)/(\d+)\]", "samples": r"Train Epoch: (\d+) \[(\d+)/(\d+) \("}[shape]
lines = []  # (epoch, position, time)
for l in open(stamps):
    t, line = l.rstrip("\n").split("\t", 1)
    m = re.match(pat, line)
    if m:
        e = int(m[1]) if shape == "iters" else int(m[1]) - 1
        lines.append((e, int(m[3]) if shape == "iters" else int(m[2]), float(t)))
# the records' steps are the lines in order (one step per line here: every iteration, or every
# --log-interval batches); their times against the lines' stamps
assert len(its) == len(lines), f"{len(its)} iteration records for {len(lines)} progress lines"
assert [x["step"] for x in its] == list(range(len(its))), "steps not contiguous"
ctl = [x["step_s"] for x in its[1:]]
ref = [lines[k][2] - lines[k - 1][2] for k in range(1, len(lines))]
a, b = statistics.mean(ctl), statistics.mean(ref)
err = abs(a - b) / b
print(f"step time by arrival {a * 1e3:.2f} ms, by the script's perf_counter {b * 1e3:.2f} ms: {err:.2%} apart "
      f"({len(ctl)} steps; worst single step {max(abs(p - q) for p, q in zip(ctl, ref)) * 1e3:.1f} ms apart)")
assert err <= 0.10, "arrival times more than 10% off the script's own clock"
last = {}
for e, _, t in lines:
    last[e] = t
eps = [last[e] - last[e - 1] for e in sorted(last) if e - 1 in last and e - 1 >= 0]
eps = eps[1:] if len(eps) > 2 else eps  # the first epoch after the start-up left out when there are enough
p = json.load(open(pred))
pe = p["predicted_epoch_s"]
m = statistics.mean(eps)
spread = (max(eps) - min(eps)) / m
perr = abs(pe - m) / m
print(f"predict: one epoch {pe:.3f} s [{p['predicted_epoch_interval_s'][0]:.3f}, "
      f"{p['predicted_epoch_interval_s'][1]:.3f}]; measured by the script's clock {m:.3f} s "
      f"(epochs {', '.join(f'{x:.3f}' for x in eps)}; spread {spread:.1%}): {perr:.2%} apart")
# The 5% figure is an accuracy target on wall-clock times: printed here, held by no assertion (tests
# assert behaviour). What is asserted: the prediction is of the right epoch (a miscounted step, e.g. both
# ranks' lines, or the samples shape's spacing misread, is off by 2x or more): within a factor of 1.9
# of the measured epochs' range. On a loaded host one epoch of 8 steps ran 1.3 s a step and the next
# 0.4 s (CI, 2026-11-27), so a tighter bound would test the host.
print(f"  5% target: {'met' if perr <= 0.05 else 'NOT met'} ({perr:.2%}; the epochs spread {spread:.1%})")
assert min(eps) / 1.9 <= pe <= max(eps) * 1.9, "the predicted epoch is not of the measured epochs' length"
