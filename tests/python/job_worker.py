"""job_worker.py — one rank of a tiny job written with pitstop.Job, for tests/python/job_test.py.

A float64 linear model under SGD with momentum on N synthetic samples (sample i is a function of i alone), the
loss a mean over this rank's slice; --ddp wraps the model in DistributedDataParallel. Each step this rank appends {"step","rank","idx","world"} to
OUT.rank<R>.jsonl; with --stop-at S it sends itself --signal at step S (only on --stop-rank), as a
controller would signal one node; at the end rank 0 writes the parameters to OUT.params.json.
The launcher sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (as torchrun does) and PITSTOP_*."""
import argparse
import json
import math
import os
import signal
import sys

import torch
import pitstop

p = argparse.ArgumentParser()
p.add_argument("--n", type=int, default=52)
p.add_argument("--batch", type=int, default=7)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--out", required=True)
p.add_argument("--stop-at", type=int, default=-1)
p.add_argument("--stop-rank", type=int, default=0)
p.add_argument("--signal", default="USR1")
p.add_argument("--checkpoint-dir", default=None)
p.add_argument("--checkpoint-every", type=int, default=None)
p.add_argument("--track", default="model,opt")
p.add_argument("--ddp", action="store_true", help="wrap the model in DistributedDataParallel")
a = p.parse_args()


class Samples(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.tensor([math.sin(i), math.cos(3 * i), i / self.n], dtype=torch.float64)
        return x, torch.tensor([0.5 * x[0] - 2 * x[1] + x[2] + 0.1], dtype=torch.float64), i


torch.manual_seed(1234 + int(os.environ.get("RANK", "0")))  # ranks differ until track() equalises them
job = pitstop.Job(Samples(a.n), a.batch, seed=11, checkpoint_dir=a.checkpoint_dir,
                  checkpoint_every=a.checkpoint_every)
model = torch.nn.Linear(3, 1).double()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)  # scale-sensitive, with state
if a.ddp:
    model = torch.nn.parallel.DistributedDataParallel(model)
objs = {"model": model, "opt": opt}
job.track(**{k: objs[k] for k in a.track.split(",")})
log = open(f"{a.out}.rank{job.rank}.jsonl", "a")
for epoch in job.epochs(a.epochs):
    for i, (x, y, idx) in enumerate(job.loader, job.iter):
        assert (epoch, i) == (job.epoch, job.iter), ((epoch, i), (job.epoch, job.iter))
        log.write(json.dumps({"step": job.step, "rank": job.rank, "world": job.world, "idx": idx.tolist()}) + "\n")
        log.flush()
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        job.log(loss=loss)
        if job.step == a.stop_at and job.rank == a.stop_rank:
            os.kill(os.getpid(), getattr(signal, "SIG" + a.signal))
if job.rank == 0:
    with open(f"{a.out}.params.json", "w") as f:
        json.dump([v.tolist() for v in pitstop._inner(model).state_dict().values()], f)
sys.exit(0)
