"""dist_dcgan.py — the seeds' distributed DCGAN (seed 001: PyTorch, gloo, torchrun over nodes)
following pitstop's workload protocol (docs/protocol.md), so `pitstop run` can resize it.

    PYTHONPATH=python torchrun --nnodes=$PITSTOP_NUM_NODES --node_rank=$PITSTOP_NODE_RANK \
        --nproc_per_node=1 --master_addr=$PITSTOP_MASTER_ADDR --master_port=$PITSTOP_MASTER_PORT \
        examples/pytorch/dist_dcgan.py --data fashion-mnist --image-size 32 --epochs 1

Models: the PyTorch DCGAN example's G and D shapes (nz, ngf, ndf; BatchNorm, ReLU/LeakyReLU 0.2,
Tanh/Sigmoid, BCE, Adam 2e-4 β 0.5), at 32×32 or 64×64. One iteration = a D step on a real and a
generated batch, then a G step on D(G(z)) with target 1.

Invariants that make a resized run follow the uninterrupted one:
- --batch-size is the GLOBAL batch; pitstop.GlobalSampler picks its samples from (seed, epoch,
  position) and the noise z of step s comes from (seed, s), both for the whole global batch.
- BatchNorm statistics are taken over fixed groups of the global batch (--bn-groups; every rank
  runs whole groups, so the world size must divide it). Losses are sums over samples divided by the
  global batch and gradients are SUM-allreduced: the same gradients at any world size, up to
  floating-point summation order; with 1 or 2 ranks and 4 groups bit-identical (tree_sum).
- Rank 0 checkpoints G, D, both Adam states and the next step; every rank restarts from it.
"""
import argparse
import gzip
import os
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import pitstop


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--data", choices=["fashion-mnist", "synthetic"], default="fashion-mnist")
    p.add_argument("--dataroot", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--limit", type=int, default=0, help="use the first N training images (0: all)")
    p.add_argument("--image-size", type=int, choices=[32, 64], default=32)
    p.add_argument("--batch-size", type=int, default=64, help="global batch")
    p.add_argument("--bn-groups", type=int, default=4, help="BatchNorm groups of the global batch")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=0, help="stop the job after this many steps (0: epochs decide)")
    p.add_argument("--nz", type=int, default=100)
    p.add_argument("--ngf", type=int, default=64)
    p.add_argument("--ndf", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--beta1", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    p.add_argument("--checkpoint-every", type=int, default=0, help="also checkpoint every N steps")
    a = p.parse_args(argv)
    for name in ("limit", "checkpoint_every", "max_steps"):
        if getattr(a, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be >= 0")
    for name in ("batch_size", "bn_groups", "epochs", "nz", "ngf", "ndf", "threads"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if a.bn_groups > a.batch_size:
        p.error("--bn-groups must not exceed --batch-size")
    return a


# ---------------------------------------------------------------- data
def read_idx_images(path, limit):
    """Fashion-MNIST IDX images (gzip) → uint8 tensor (N, 28, 28). Raises ValueError naming the file."""
    with gzip.open(path, "rb") as f:
        head = f.read(16)
        if len(head) != 16:
            raise ValueError(f"{path}: shorter than an IDX header")
        magic, n, rows, cols = struct.unpack(">IIII", head)
        if magic != 0x803:
            raise ValueError(f"{path}: not an IDX image file (magic {magic:#x})")
        if limit:
            n = min(n, limit)
        data = f.read(n * rows * cols)
    if len(data) != n * rows * cols:
        raise ValueError(f"{path}: truncated ({len(data)} of {n * rows * cols} pixel bytes)")
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).view(n, rows, cols)


def load_data(a):
    """All training images as float (N, 1, S, S) in [-1, 1] (every rank holds them; the
    sampler picks by index)."""
    if a.data == "synthetic":
        g = torch.Generator().manual_seed(12345)
        n = a.limit or 1024
        return torch.rand(n, 1, a.image_size, a.image_size, generator=g) * 2 - 1
    x = read_idx_images(os.path.join(a.dataroot, "train-images-idx3-ubyte.gz"), a.limit)
    x = x.to(torch.float32).div_(127.5).sub_(1.0).unsqueeze(1)   # (N, 1, 28, 28)
    if a.image_size == 32:
        return F.pad(x, (2, 2, 2, 2), value=-1.0)                 # background stays black
    return F.interpolate(x, size=(64, 64), mode="bilinear", align_corners=False)


# ---------------------------------------------------------------- models
def generator(nz, ngf, nc, size):
    # (B, nz, 1, 1) → (B, nc, size, size); one more up-sampling stage for 64
    mult = 8 if size == 64 else 4
    layers = [nn.ConvTranspose2d(nz, ngf * mult, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * mult), nn.ReLU(True)]
    while mult > 1:
        layers += [nn.ConvTranspose2d(ngf * mult, ngf * mult // 2, 4, 2, 1, bias=False),
                   nn.BatchNorm2d(ngf * mult // 2), nn.ReLU(True)]
        mult //= 2
    layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
    return nn.Sequential(*layers)


def discriminator(ndf, nc, size):
    # (B, nc, size, size) → (B,) probabilities
    layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
    mult, last = 1, 8 if size == 64 else 4
    while mult < last:
        layers += [nn.Conv2d(ndf * mult, ndf * mult * 2, 4, 2, 1, bias=False),
                   nn.BatchNorm2d(ndf * mult * 2), nn.LeakyReLU(0.2, inplace=True)]
        mult *= 2
    layers += [nn.Conv2d(ndf * mult, 1, 4, 1, 0, bias=False), nn.Sigmoid(), nn.Flatten(0)]
    return nn.Sequential(*layers)


def init_weights(m):
    # the DCGAN paper's initialisation, as the PyTorch example does it
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


# ---------------------------------------------------------------- one step
def take_grads(model):
    """This group's gradients as one flat buffer; the model's gradients are zeroed."""
    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    for p in model.parameters():
        p.grad.zero_()
    return flat


def tree_sum(bufs):
    # pairwise: 4 groups sum as (g0+g1)+(g2+g3), exactly what two ranks holding g0+g1 and g2+g3
    # get from a two-rank all_reduce, so 1 and 2 ranks give bit-identical gradients
    while len(bufs) > 1:
        bufs = [bufs[i] + bufs[i + 1] if i + 1 < len(bufs) else bufs[i] for i in range(0, len(bufs), 2)]
    return bufs[0]


def reduce_into(model, bufs, world):
    """Sum this rank's group gradients, SUM-allreduce them over the ranks and set them as the
    model's gradients. Returns the seconds spent blocked in the all_reduce."""
    params = list(model.parameters())
    flat = tree_sum(bufs) if bufs else torch.zeros(sum(p.numel() for p in params))
    w = 0.0
    if world > 1:
        t = time.perf_counter()
        torch.distributed.all_reduce(flat)
        w = time.perf_counter() - t
    off = 0
    for p in params:
        p.grad.copy_(flat[off:off + p.numel()].view_as(p))
        off += p.numel()
    return w


def train_step(netG, netD, optG, optD, groups, B, world):
    """One DCGAN iteration on this rank's BatchNorm groups [(x, z), ...] of a global batch of B.
    Returns (errD, errG, compute_s, wait_s) with the losses summed over this rank's samples / B."""
    bce = nn.BCELoss(reduction="sum")
    compute = wait = 0.0
    errD, errG = [], []
    t = time.perf_counter()
    for p in netD.parameters():
        p.grad = torch.zeros_like(p)
    fakes, bufs = [], []
    for x, z in groups:
        out = netD(x)
        e_real = bce(out, torch.ones_like(out)) / B
        e_real.backward()
        fake = netG(z)
        out = netD(fake.detach())
        e_fake = bce(out, torch.zeros_like(out)) / B
        e_fake.backward()
        bufs.append(take_grads(netD))
        fakes.append(fake)
        errD.append(e_real.item() + e_fake.item())
    compute += time.perf_counter() - t
    wait += reduce_into(netD, bufs, world)
    optD.step()
    t = time.perf_counter()
    for p in netG.parameters():
        p.grad = torch.zeros_like(p)
    bufs = []
    for fake in fakes:
        out = netD(fake)
        e = bce(out, torch.ones_like(out)) / B
        e.backward()
        bufs.append(take_grads(netG))
        errG.append(e.item())
    compute += time.perf_counter() - t
    wait += reduce_into(netG, bufs, world)
    optG.step()
    return float(tree_sum(errD)) if errD else 0.0, float(tree_sum(errG)) if errG else 0.0, compute, wait


# ---------------------------------------------------------------- main
def main(argv):
    try:
        env = pitstop.Env()
    except pitstop.ProtocolError as e:
        print(f"pitstop: {e}", file=sys.stderr)
        return pitstop.EXIT_USAGE
    a = parse_args(argv)
    torch.set_num_threads(a.threads)
    s = pitstop.Session(env)
    rank, world = s.init_process_group("gloo")
    if a.bn_groups % world:
        s.warn(f"--bn-groups {a.bn_groups} is not a multiple of the world size {world}")
        return pitstop.EXIT_USAGE
    try:
        data = load_data(a)
    except (OSError, ValueError) as e:
        print(f"pitstop: cannot read the data: {e}", file=sys.stderr)
        return pitstop.EXIT_USAGE
    sampler = pitstop.GlobalSampler(len(data), a.batch_size, a.seed)
    total = a.epochs * sampler.iters_per_epoch
    if a.max_steps:
        total = min(total, a.max_steps)

    torch.manual_seed(a.seed)
    netG = generator(a.nz, a.ngf, 1, a.image_size)
    netD = discriminator(a.ndf, 1, a.image_size)
    netG.apply(init_weights)
    netD.apply(init_weights)
    optG = torch.optim.Adam(netG.parameters(), lr=a.lr, betas=(a.beta1, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=a.lr, betas=(a.beta1, 0.999))

    try:
        state, meta = s.resume()
        if state is not None:
            sampler.check_state(meta["sampler"])
    except pitstop.ProtocolError as e:
        s.warn(str(e))
        return pitstop.EXIT_USAGE
    if state is not None:
        netG.load_state_dict(state["G"])
        netD.load_state_dict(state["D"])
        optG.load_state_dict(state["optG"])
        optD.load_state_dict(state["optD"])
        start = meta["step"]
    else:
        # same seed on every rank gives the same parameters; make it certain
        state = s.broadcast_object({"G": netG.state_dict(), "D": netD.state_dict()})
        netG.load_state_dict(state["G"])
        netD.load_state_dict(state["D"])
        start = 0

    def snapshot():
        return {"G": netG.state_dict(), "D": netD.state_dict(),
                "optG": optG.state_dict(), "optD": optD.state_dict()}

    config = {"model": "dcgan", "framework": "pytorch " + torch.__version__, "data": a.data,
              "samples": sampler.n, "batch": a.batch_size, "image_size": a.image_size,
              "nz": a.nz, "ngf": a.ngf, "ndf": a.ndf, "bn_groups": a.bn_groups,
              "threads": a.threads, "seed": a.seed, "start_step": start, "steps": total}
    step = start
    epoch_t0 = time.monotonic()
    while step < total:
        t0 = time.perf_counter()
        epoch, it, idx = sampler.batch_at(step)
        B = len(idx)
        z_all = torch.randn(B, a.nz, 1, 1, generator=torch.Generator().manual_seed(a.seed * 1000003 + step))
        groups = []
        for g in range(a.bn_groups * rank // world, a.bn_groups * (rank + 1) // world):
            lo, hi = pitstop.split_bounds(B, a.bn_groups, g)
            if hi > lo:
                groups.append((data[idx[lo:hi]], z_all[lo:hi]))
        data_s = time.perf_counter() - t0
        errD, errG, compute, wait = train_step(netG, netD, optG, optD, groups, B, world)
        (lossD, lossG), (comp_all, wait_all), stop = s.agree([errD, errG], [compute, wait])
        step_s = time.perf_counter() - t0
        if step == start:
            s.record_init(config)
        s.record_iter(step, epoch, it, B, step_s, data_s, comp_all, wait_all, {"d": lossD, "g": lossG}, idx)
        step += 1
        if step % sampler.iters_per_epoch == 0:
            s.emit("epoch", epoch=epoch, epoch_s=time.monotonic() - epoch_t0)
            epoch_t0 = time.monotonic()
        if stop or step == total or (a.checkpoint_every and step % a.checkpoint_every == 0):
            if env.checkpoint_dir:
                s.checkpoint(snapshot(), step, sampler.state(step))
        if stop:
            break
    return s.finish(step)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
