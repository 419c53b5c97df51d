#!/usr/bin/env python3
"""resize_check.py — nothing lost in a resized `pitstop run` (the ssh and slurm provider tests).

usage: resize_check.py UNINTERRUPTED.jsonl RUN.jsonl NSAMPLES NITERS RUN_ID MIN_GENS WIDEST HOSTS
Checks: stored steps 0..NITERS-1 contiguous; every step's samples_digest equals the uninterrupted
run's (the same global batches); every whole epoch uses each sample once; at least MIN_GENS
generations; some generation ran WIDEST ranks on HOSTS distinct host names; every node started was
stopped (or lost) and none started twice. Prints the last checkpoint's path on its last line."""
import json
import sys

u_path, r_path, nsamples, niters, run, min_gens, widest, nhosts = sys.argv[1:9]
nsamples, niters, min_gens, widest, nhosts = int(nsamples), int(niters), int(min_gens), int(widest), int(nhosts)
u = [json.loads(l) for l in open(u_path)]
r = [json.loads(l) for l in open(r_path)]
ui = {x["step"]: x for x in u if x["type"] == "iter"}
ri = [x for x in r if x["type"] == "iter"]
steps = [x["step"] for x in ri]
assert steps == list(range(niters)), f"steps not contiguous: {steps[:5]}...{steps[-5:]} ({len(steps)})"
for x in ri:
    assert x["run"] == run, x["run"]
    assert x["samples_digest"] == ui[x["step"]]["samples_digest"], f"step {x['step']}: other samples"
M = (1 << 64) - 1


def mix(i):
    z = (i + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


whole = sum(mix(i) for i in range(nsamples)) & M
per_epoch = len([x for x in u if x["type"] == "iter" and x["epoch"] == 0])
by_epoch = {}
for x in ri:
    by_epoch.setdefault(x["epoch"], []).append(x)
full = 0
for ep, xs in by_epoch.items():
    if len(xs) == per_epoch:
        full += 1
        assert sum(int(x["samples_digest"], 16) for x in xs) & M == whole, f"epoch {ep}: samples missing or repeated"
assert full >= 1, "no whole epoch"
gens = sorted({x["gen"] for x in ri})
assert len(gens) >= min_gens, f"generations {gens}"
inits = [x for x in r if x["type"] == "init"]
wide = [i for i in inits if len(set((i.get("config") or {}).get("hosts", []))) == nhosts
        and (i.get("config") or {}).get("ranks") == widest]
assert wide, "no generation of %d ranks on %d hosts: %s" % (widest, nhosts, [(i.get("config") or {}).get("hosts") for i in inits])
live, started = set(), set()
for x in r:
    if x["type"] != "node":
        continue
    if x["action"] == "start":
        assert x["node"] not in started, f"node {x['node']} started twice"
        started.add(x["node"])
        live.add(x["node"])
    elif x["action"] in ("stop", "lost"):
        live.discard(x["node"])
assert not live, f"nodes never stopped: {live}"
hosts = sorted({h for i in inits for h in (i.get("config") or {}).get("hosts", [])})
print(f"{run}: {niters} contiguous steps over generations {gens}, the uninterrupted run's samples at every step, "
      f"{full} whole epochs each using every sample once, {len(started)} nodes started and stopped, hosts {hosts}")
ck = [x for x in r if x["type"] == "checkpoint"]
print(ck[-1]["path"])
