#!/usr/bin/python3
"""bench/hetero — one slow rank: rank 1 runs in a cgroup held to half a core
(cgroup v1 cpu.cfs_quota_us = 50% of a 2 ms period; this machine has no
cgroup v2 cpu.max; a 10 ms period made the slow rank's 30 ms steps take either
~21 or ~30 ms by where they fell in the period, a jitter a really slower machine
does not have), rank 0 has a full core. Caveat of the emulation: Open MPI
polls while it waits, so time the slow rank spends waiting in a reduction eats
its quota (a really slower machine would lose nothing by waiting). Prints, one line each:
  - the standalone throughputs of a full-core and a half-core process at the
    equal per-rank batch, and their sum (the ideal for the pair);
  - `--batch-shares equal` and `--batch-shares auto` on 2 ranks: throughput,
    share of the ideal, and which rank the iter records name slow (highest
    compute share, with the ranks' compute and wait shares of the step).
Target: auto >= 90% of the sum. Throughput is measured over the second half
of each run (auto starts equal and rebalances every K iterations), and also
printed for the whole run after 5 warm-up iterations. Runs are interleaved (equal, auto, ...) and
medians reported. Needs root (cgroups).

usage: bench/hetero/hetero.py [--pitstop PATH] [--model M] [--batch B] [--iters N]
       [--reps N] [--nice N] [--quota 0.5] [--period-us 2000] [--rebalance-every K]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dist_bench as db  # noqa: E402


class Cgroup:
    """A cgroup v1 cpu group limited to `quota` cores; removed on exit."""

    def __init__(self, quota, period_us):
        self.path = "/sys/fs/cgroup/cpu/pit-hetero-%d" % os.getpid()
        os.mkdir(self.path)
        with open(os.path.join(self.path, "cpu.cfs_period_us"), "w") as f:
            f.write(str(period_us))
        with open(os.path.join(self.path, "cpu.cfs_quota_us"), "w") as f:
            f.write(str(int(quota * period_us)))

    def wrap(self, rank=None):
        """Command prefix moving the process (only world rank `rank` if given) into the group."""
        cond = 'true' if rank is None else '[ "$OMPI_COMM_WORLD_RANK" = %d ]' % rank
        return ["/bin/sh", "-c", 'if %s; then echo $$ > %s/cgroup.procs; fi; exec "$@"'
                % (cond, self.path), "sh"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            os.rmdir(self.path)
        except OSError as e:
            print("warning: cannot remove %s: %s" % (self.path, e), file=sys.stderr)


def slow_rank(s):
    r = max(range(len(s["compute"])), key=lambda k: s["compute"][k])
    return "rank %d (compute %s, wait %s of step, ranks 0/1)" % (r, db.pct(s["compute"]),
                                                                 db.pct(s["wait"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pitstop")
    ap.add_argument("--model", default="cnn-wide")
    ap.add_argument("--batch", type=int, default=128, help="global batch of the 2-rank runs")
    ap.add_argument("--iters", type=int, default=160)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--quota", type=float, default=0.5, help="cores for the slow rank")
    ap.add_argument("--period-us", type=int, default=2000,
                    help="CFS period: short, so the slow rank is slow rather than paused for "
                    "long stretches (a 100 ms period stops it for 50 ms at a time, often "
                    "inside a reduction)")
    ap.add_argument("--rebalance-every", type=int, default=10)
    ap.add_argument("--nice", type=int, default=0,
                    help="niceness for every run (negative: ahead of other work on a busy machine)")
    a = ap.parse_args()
    db.NICE = a.nice
    if os.geteuid() != 0:
        sys.exit("bench/hetero needs root (cgroups)")
    pit = db.find_pitstop(a.pitstop)
    skip = a.iters // 2   # auto starts equal: measure once the shares have settled
    early = 5             # ... and also the whole run after a short warm-up
    base = ["--model", a.model, "--data", "synthetic", "--threads", "1", "--no-validation",
            "--max-iters", str(a.iters)]
    half = a.batch // 2
    with Cgroup(a.quota, a.period_us) as cg:
        alone = {"full": [], "slow": []}
        two = {"equal": [], "auto": []}
        dec = {"equal": [], "auto": []}  # batch_shares decisions of the last repetition
        for _ in range(a.reps):
            alone["full"].append(db.summarise(db.train(pit, base + ["--batch-size", str(half)]), skip))
            alone["slow"].append(db.summarise(
                db.train(pit, base + ["--batch-size", str(half)], wrap=cg.wrap()), skip))
            for shares in ("equal", "auto"):
                extra = ["--batch-size", str(a.batch), "--batch-shares", shares]
                if shares == "auto":
                    extra += ["--rebalance-every", str(a.rebalance_every)]
                recs = db.train(pit, base + extra, 2, wrap=cg.wrap(1))
                two[shares].append((db.summarise(recs, skip), db.summarise(recs, early)))
                dec[shares] = [r["detail"] for r in recs if r.get("type") == "decision"]
    full = db.median([s["ips"] for s in alone["full"]])
    slow = db.median([s["ips"] for s in alone["slow"]])
    ideal = full + slow
    print("%s standalone b%d: full core %.1f samples/s, %.2f core %.1f samples/s (ratio %.2f, "
          "expected %.2f; more means the full-core run did not get a full core), sum %.1f "
          "(%d iters after %d, median of %d)" % (a.model, half, full, a.quota, slow, slow / full,
                                                  a.quota, ideal, a.iters - skip, skip, a.reps),
          flush=True)
    for shares in ("equal", "auto"):
        ips = db.median([s["ips"] for s, _ in two[shares]])
        ips_all = db.median([w["ips"] for _, w in two[shares]])
        print("%s 2 ranks b%d --batch-shares %-5s: %.1f samples/s = %.0f%% of the sum (last %d "
              "iters; whole run after %d: %.0f%%); slow by records: %s"
              % (a.model, a.batch, shares, ips, 100 * ips / ideal, a.iters - skip - 1, early,
                 100 * ips_all / ideal, slow_rank(two[shares][-1][0])) +
              ("; last run: %d rebalance(s), shares %s" % (len(dec[shares]),
               "/".join(str(x) for x in dec[shares][-1]["shares"])) if dec[shares] else ""), flush=True)


if __name__ == "__main__":
    main()
