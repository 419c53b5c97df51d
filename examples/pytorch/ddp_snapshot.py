#!/usr/bin/python3
"""ddp_snapshot.py — a small data-parallel PyTorch job in the snapshot pattern of PyTorch's DDP
tutorial (the way torchrun's documentation teaches a job to survive a change of nodes), on CPU
with gloo, knowing nothing of pitstop:

  - it saves a snapshot (model, optimizer, the epochs done) every --save-every epochs, atomically
    (a temporary file renamed over the old one);
  - when started again it resumes from that snapshot, at the first epoch not done;
  - it prints "[CPUr] Epoch e | Batchsize: b | Steps: L" as each epoch begins, and
    "Epoch e | Training snapshot saved at PATH" after each save (the tutorial's lines).

Under torchrun (docs/own-script.md):
  pitstop run --launcher per-node --resume-by-restart --snapshot snap.pt --epochs 12 --schedule 24:2,72:1 \\
    -- torchrun '--nnodes=$PITSTOP_NUM_NODES' '--node_rank=$PITSTOP_NODE_RANK' --nproc_per_node=1 \\
       '--master_addr=$PITSTOP_MASTER_ADDR' '--master_port=$PITSTOP_MASTER_PORT' --redirects 2 --tee 2 \\
       examples/pytorch/ddp_snapshot.py --epochs 12 --save-every 2 --snapshot snap.pt
Alone: python3 ddp_snapshot.py --epochs 3 (one process, no torchrun)."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=10, help="epochs of the whole job")
    ap.add_argument("--save-every", type=int, default=2, help="a snapshot every this many epochs")
    ap.add_argument("--snapshot", default="snapshot.pt", help="the snapshot file")
    ap.add_argument("--samples", type=int, default=1024, help="samples in the (synthetic) dataset")
    ap.add_argument("--batch-size", type=int, default=32, help="per process")
    ap.add_argument("--width", type=int, default=256, help="hidden units")
    ap.add_argument("--step-sleep", type=float, default=0.0, help="seconds added to each step (tests: a slower job)")
    ap.add_argument("--tutorial-saves", action="store_true",
                    help="save as the DDP tutorial's multigpu_torchrun.py does: after epoch e when e %% save-every"
                         " == 0, recorded as e epochs run (so a restart runs epoch e again), and not after the last")
    a = ap.parse_args()

    for k, v in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29531"), ("RANK", "0"), ("WORLD_SIZE", "1")):
        os.environ.setdefault(k, v)  # alone, without torchrun: a world of one
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(a.samples, 20, generator=g)
    y = (x.sum(1, keepdim=True) > 0).float()
    data = TensorDataset(x, y)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=a.batch_size, sampler=sampler)
    model = torch.nn.Sequential(torch.nn.Linear(20, a.width), torch.nn.ReLU(), torch.nn.Linear(a.width, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    start = 0
    if os.path.exists(a.snapshot):
        snap = torch.load(a.snapshot)
        model.load_state_dict(snap["model"])
        opt.load_state_dict(snap["optimizer"])
        start = snap["epochs_done"]
        print(f"Resuming training from snapshot at Epoch {start}", flush=True)
    ddp = DDP(model)
    for epoch in range(start, a.epochs):
        print(f"[CPU{rank}] Epoch {epoch} | Batchsize: {a.batch_size} | Steps: {len(loader)}", flush=True)
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            opt.zero_grad()
            F.binary_cross_entropy_with_logits(ddp(xb), yb).backward()
            opt.step()
            if a.step_sleep > 0:
                time.sleep(a.step_sleep)
        done = epoch + 1
        if a.tutorial_saves:
            save, done = epoch % a.save_every == 0, epoch
        else:
            save = done % a.save_every == 0 or done == a.epochs
        if rank == 0 and save:
            tmp = a.snapshot + ".tmp"
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epochs_done": done}, tmp)
            os.replace(tmp, a.snapshot)
            print(f"Epoch {epoch} | Training snapshot saved at {a.snapshot}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
