"""check.py — assertions of tests/protocol/*.sh over the records and stderr of the DCGAN example.

  check.py stopped OUT SIGNAL ERR...   one agreed stop: every rank's stderr names the same step S,
                                       one checkpoint record (step S, file valid, LATEST names it),
                                       end record with stop=SIGNAL, iter steps contiguous up to S-1
  check.py resize SAMPLES TOL REF OUT...  generations OUT... (in order) against the uninterrupted
                                       REF: steps contiguous and each once, one checkpoint per
                                       generation, per-epoch digest sums = epoch_digest(SAMPLES),
                                       per-step digests equal REF's, losses within TOL (relative),
                                       record times non-decreasing; last checkpoints' parameters
                                       within TOL (BatchNorm running statistics excluded)
Exit 1 with the first failed assertion; prints one summary line on success.
"""
import json
import os
import re
import sys

import pitstop


def records(path):
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("PITSTOP "):
                out.append(json.loads(line[len("PITSTOP "):]))
    return out


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def stopped(out, sig, errs):
    recs = records(out)
    said = []
    for e in errs:
        said += re.findall(r"rank (\d+) stopped with (\d+) steps done \((\w+)(.*)\)", open(e).read())
    if len(said) != len(errs):
        fail(f"expected one stop line per rank in {errs}, got {said}")
    steps = {int(s[1]) for s in said}
    if len(steps) != 1:
        fail(f"ranks stopped after different steps: {said}")
    S = steps.pop()
    if any(s[2] != sig for s in said) or any("past the grace period" in s[3] for s in said):
        fail(f"stop lines {said}: expected {sig} within the grace period")
    cks = [r for r in recs if r["type"] == "checkpoint"]
    if len(cks) != 1 or cks[0]["step"] != S:
        fail(f"expected one checkpoint record at step {S}, got {cks}")
    its = [r["step"] for r in recs if r["type"] == "iter"]
    if not its or its != list(range(its[0], S)):
        fail(f"iter steps are not contiguous up to {S - 1}: {its}")
    end = [r for r in recs if r["type"] == "end"]
    if len(end) != 1 or end[0].get("stop") != sig:
        fail(f"expected one end record with stop={sig}: {end}")
    path = cks[0]["path"]
    meta = pitstop.Checkpoints.read(path)["pitstop"]
    if meta["step"] != S:
        fail(f"{path} holds step {meta['step']}, not {S}")
    latest = open(os.path.join(os.path.dirname(path), "LATEST")).read().strip()
    if latest != os.path.basename(path):
        fail(f"LATEST names {latest}, not {os.path.basename(path)}")
    print(f"stopped: {len(errs)} ranks after step {S - 1} on {sig}; one checkpoint ({cks[0]['bytes']} bytes), valid")


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-12)


def resize(samples, tol, ref_out, outs):
    ref = records(ref_out)
    ref_it = {r["step"]: r for r in ref if r["type"] == "iter"}
    its, ts = [], []
    for g, out in enumerate(outs):
        recs = records(out)
        if {r["gen"] for r in recs} != {g}:
            fail(f"{out}: records of generations {sorted({r['gen'] for r in recs})}, expected only {g}")
        gi = [r for r in recs if r["type"] == "iter"]
        if not gi:
            fail(f"{out}: generation {g} ran no step")
        cks = [r for r in recs if r["type"] == "checkpoint"]
        if len(cks) != 1 or cks[0]["step"] != gi[-1]["step"] + 1:
            fail(f"{out}: expected one checkpoint after its last step, got {cks}")
        its += gi
        ts += [r["t"] for r in recs]
    steps = [r["step"] for r in its]
    if steps != sorted(ref_it):
        fail(f"steps over the generations {steps} differ from the uninterrupted run's {sorted(ref_it)}")
    if ts != sorted(ts):
        fail("record times go backwards across generations")
    per_epoch = {}
    worst = 0.0
    for r in its:
        u = ref_it[r["step"]]
        if (r["epoch"], r["iter"], r["batch"], r["samples_digest"]) != (u["epoch"], u["iter"], u["batch"], u["samples_digest"]):
            fail(f"step {r['step']}: batch differs from the uninterrupted run's: {r} vs {u}")
        per_epoch.setdefault(r["epoch"], []).append(r["samples_digest"])
        for k in ("d", "g"):
            worst = max(worst, rel(r["loss"][k], u["loss"][k]))
    if worst > tol:
        fail(f"loss differs from the uninterrupted run's by {worst:.3g} (relative) > {tol}")
    want = pitstop.epoch_digest(samples)
    for e, ds in per_epoch.items():
        if pitstop.add_digests(ds) != want:
            fail(f"epoch {e}: sample digests sum to {pitstop.add_digests(ds)}, not {want}: a sample missed or repeated")
    ranks = sorted({len(r["compute_s"]) for r in its})
    a = pitstop.Checkpoints.read([r for r in records(outs[-1]) if r["type"] == "checkpoint"][-1]["path"])["state"]
    b = pitstop.Checkpoints.read([r for r in ref if r["type"] == "checkpoint"][-1]["path"])["state"]
    pworst = 0.0
    for net in ("G", "D"):
        for k, v in b[net].items():
            # BatchNorm running statistics are rank 0's own groups' (training never reads them)
            if v.is_floating_point() and "running_" not in k:
                d = (a[net][k] - v).abs().max().item() / max(v.abs().max().item(), 1e-12)
                pworst = max(pworst, d)
    if pworst > tol:
        fail(f"final parameters differ from the uninterrupted run's by {pworst:.3g} (relative max) > {tol}")
    print(f"resize: {len(steps)} steps over {len(outs)} generations (ranks per step {ranks}), "
          f"{len(per_epoch)} epochs each used every sample once, max relative loss difference {worst:.3g}, "
          f"final parameters {pworst:.3g}")


def main(argv):
    if argv[:1] == ["stopped"] and len(argv) >= 4:
        stopped(argv[1], argv[2], argv[3:])
    elif argv[:1] == ["resize"] and len(argv) >= 5:
        resize(int(argv[1]), float(argv[2]), argv[3], argv[4:])
    else:
        fail(f"usage: {__doc__}")


if __name__ == "__main__":
    main(sys.argv[1:])
