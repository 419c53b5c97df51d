#!/usr/bin/env python3
"""fixture.py — writes deterministic iteration records (JSON Lines, docs/records.md) for the
report tests: runs over ranks x batch x repeats x instance types, each with warm-up, epochs,
validations and an end record. Standard library only.

usage: fixture.py OUT.jsonl [--ranks 1,2,4] [--batch 16,64] [--repeat 3] [--itype c5.xlarge,m5.large]
                  [--epochs 3] [--iters 40] [--prefix r]
"""
import argparse, json, random

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--ranks", default="1,2,4")
ap.add_argument("--batch", default="16,64")
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--itype", default="c5.xlarge,m5.large")
ap.add_argument("--epochs", type=int, default=3)
ap.add_argument("--iters", type=int, default=40)
ap.add_argument("--prefix", default="r")
a = ap.parse_args()
rng = random.Random(42)
speed = {"c5.xlarge": 1.0, "m5.large": 1.6, "-": 1.0}
with open(a.out, "w") as f:
    def w(o):
        f.write(json.dumps(o, separators=(",", ":")) + "\n")
    for itype in a.itype.split(","):
        for ranks in map(int, a.ranks.split(",")):
            for batch in map(int, a.batch.split(",")):
                for rep in range(a.repeat):
                    run = "%s-%s-r%d-b%d-%d" % (a.prefix, itype, ranks, batch, rep)
                    cfg = {"model": "cnn", "data": "synthetic", "batch": batch, "threads": 1, "ranks": ranks,
                           "nodes": 1}
                    if itype != "-":
                        cfg["itype"] = itype
                    t = 0.0
                    w({"type": "init", "run": run, "gen": 0, "t": 0.5, "init_s": 0.5, "rdzv_s": 0.01,
                       "ranks": ranks, "nodes": 1, "config": cfg})
                    t = 0.5
                    step = 0
                    # time per iteration: compute shared by ranks + communication
                    tp = speed[itype] * (0.002 + 0.0004 * batch / ranks + 0.0015 * (ranks - 1))
                    for ep in range(a.epochs):
                        ep_start = t
                        for it in range(a.iters):
                            s = tp * (1 + 0.05 * rng.gauss(0, 1))
                            if step < 8:
                                s *= 3 - step * 0.25      # warm-up
                            if it == 0:
                                s *= 1.5                  # epoch edge
                            t += s
                            comp = [s * 0.8 * (1 + 0.02 * r) for r in range(ranks)]
                            wait = [s - c for c in comp]
                            w({"type": "iter", "run": run, "gen": 0, "t": round(t, 9), "epoch": ep, "iter": it,
                               "step": step, "batch": batch, "step_s": round(s, 9), "data_s": round(s * 0.05, 9),
                               "compute_s": [round(c, 9) for c in comp], "wait_s": [round(x, 9) for x in wait],
                               "loss": round(2.3 / (1 + 0.01 * step), 6)})
                            step += 1
                        v = 0.05 * speed[itype]
                        t += v
                        w({"type": "validation", "run": run, "gen": 0, "t": round(t, 9), "epoch": ep,
                           "val_s": v, "accuracy": 0.5 + 0.1 * ep})
                        w({"type": "epoch", "run": run, "gen": 0, "t": round(t, 9), "epoch": ep,
                           "epoch_s": round(t - ep_start, 9)})
                    w({"type": "end", "run": run, "gen": 0, "t": round(t, 9), "total_s": round(t, 9)})
