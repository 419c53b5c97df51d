# python_pitstop.py — pitstop's line protocol from Python, no library needed (docs/api.md): print one line
# "PITSTOP {json}" per record (docs/records.md). Try: python3 python_pitstop.py | pitstop parse - | pitstop summary --events -
import json, time
t0 = time.monotonic()
def rec(**r): print("PITSTOP " + json.dumps({"run": "py-toy", "gen": 0, "t": time.monotonic() - t0, **r}), flush=True)
rec(type="init", init_s=0.0, ranks=1, nodes=1, config={"model": "toy", "batch": 8})
for epoch in range(3):
    e0 = time.monotonic()
    for i in range(20):
        s = time.monotonic(); work = sum(x * x for x in range(20000))  # stands in for one training step
        rec(type="iter", epoch=epoch, iter=i, step=epoch * 20 + i, batch=8, step_s=time.monotonic() - s, loss=1 / (1 + epoch * 20 + i))
    rec(type="epoch", epoch=epoch, epoch_s=time.monotonic() - e0)
rec(type="end", total_s=time.monotonic() - t0)
