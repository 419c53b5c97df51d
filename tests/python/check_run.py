"""check_run.py EVENTS RANKS... — a `pitstop run` of a client patched with pitstop.Job, from the
controller's events file: generation g ran on RANKS[g] ranks; steps 0..planned-1 each recorded once
and contiguous; each step's samples_digest is the global sampler's for (samples, batch, seed) of
the init records (the same batches as an uninterrupted run, at any number of ranks); every
sample used once per epoch (the digests of each epoch add up to the epoch's); each generation but
the last ended "stopped" with its checkpoint at the step the next one started from; the last
ended "done" with a checkpoint at the end. Prints one line of figures."""
import json
import sys

import pitstop

events, ranks = sys.argv[1], [int(x) for x in sys.argv[2:]]
recs = [json.loads(l) for l in open(events)]
inits = [r for r in recs if r["type"] == "init"]
assert [r["gen"] for r in inits] == list(range(len(ranks))), [r["gen"] for r in inits]
assert [r["ranks"] for r in inits] == ranks, [r["ranks"] for r in inits]
cfg = inits[0]["config"]
n, batch, seed, planned = cfg["samples"], cfg["batch"], cfg["seed"], cfg["planned_iters"]
for r in inits:
    c = r["config"]
    assert (c["samples"], c["batch"], c["seed"], c["planned_iters"]) == (n, batch, seed, planned), c
its = [r for r in recs if r["type"] == "iter"]
steps = [r["step"] for r in its]
assert steps == list(range(planned)), f"steps {steps}"
smp = pitstop.GlobalSampler(n, batch, seed)
for r in its:
    e, i, idx = smp.batch_at(r["step"])
    assert (r["epoch"], r["iter"], r["batch"]) == (e, i, len(idx)), r
    assert r["samples_digest"] == pitstop.samples_digest(idx), f"step {r['step']}: other samples"
    assert len(r["compute_s"]) == ranks[r["gen"]], r
epochs = sorted({r["epoch"] for r in its})
for e in epochs:
    got = pitstop.add_digests(r["samples_digest"] for r in its if r["epoch"] == e)
    assert got == pitstop.epoch_digest(n), f"epoch {e}: a sample missed or used twice"
ends = [r for r in recs if r["type"] == "end"]
assert [r["status"] for r in ends] == ["stopped"] * (len(ranks) - 1) + ["done"], ends
starts = [r["config"]["start_step"] for r in inits] + [planned]
for g in range(len(ranks)):
    cks = [r["step"] for r in recs if r["type"] == "checkpoint" and r["gen"] == g]
    assert cks and cks[-1] == starts[g + 1], f"gen {g}: checkpoints {cks}, next start {starts[g + 1]}"
    mine = [r["step"] for r in its if r["gen"] == g]
    assert mine == list(range(starts[g], starts[g + 1])), f"gen {g}: steps {mine[:3]}..{mine[-3:]}"
print(f"{planned} steps once over generations on {ranks} ranks (starts {starts[:-1]}), each step's samples "
      f"the global sampler's (n {n}, batch {batch}, seed {seed}), every sample once in each of {len(epochs)} epochs")
