#!/usr/bin/python3
"""bench/scaling — data-parallel scaling on this machine: 2 ranks x 1 thread
against 1 rank x 1 thread at the same per-rank batch (dcgan --image-size 32 b32
per rank, cnn-wide b64 per rank), runs interleaved (1 2 1 2 ...) because the
machine drifts. One line per case: median throughput of each, the ratio, and
the shares of rank 0's step time each rank spent computing and waiting (from the
iter records; see docs/mpi.md for what wait means).

usage: bench/scaling/scaling.py [--pitstop PATH] [--reps N] [--nice N] [--iters N]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dist_bench as db  # noqa: E402

CASES = [  # name, train args without batch, per-rank batch, iterations
    ("dcgan-32", ["--model", "dcgan", "--image-size", "32"], 32, 40),
    ("cnn-wide", ["--model", "cnn-wide"], 64, 80),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pitstop")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--iters", type=int, default=0, help="iterations per run (0: per case)")
    ap.add_argument("--nice", type=int, default=0,
                    help="niceness for every run (negative: ahead of other work on a busy machine)")
    a = ap.parse_args()
    db.NICE = a.nice
    pit = db.find_pitstop(a.pitstop)
    for name, args, b, iters in CASES:
        iters = a.iters or iters
        skip = max(3, iters // 10)
        res = {1: [], 2: []}
        for _ in range(a.reps):
            for ranks in (1, 2):
                common = args + ["--data", "synthetic", "--threads", "1", "--no-validation",
                                 "--max-iters", str(iters), "--batch-size", str(b * ranks)]
                res[ranks].append(db.summarise(db.train(pit, common, ranks), skip))
        one = db.median([r["ips"] for r in res[1]])
        two = db.median([r["ips"] for r in res[2]])
        last = res[2][-1]
        print("%-9s b%d/rank: 1 rank %.1f samples/s, 2 ranks %.1f samples/s, ratio %.2f "
              "(ideal 2); 2-rank compute %s wait %s of step (ranks 0/1; %d iters after %d "
              "warm-up, median of %d)" % (name, b, one, two, two / one, db.pct(last["compute"]),
                                          db.pct(last["wait"]), last["iters"], skip, a.reps),
              flush=True)


if __name__ == "__main__":
    main()
