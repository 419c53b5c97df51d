#!/usr/bin/python3
"""torch_train.py — the PyTorch side of pitstop's comparisons: the same models as
src/nn/model.c (cnn, cnn-wide, dcgan 64/32), the same training step, on the CPU.

  --data synthetic     : fixed random tensors; times --iters iterations after
                         --warmup ones; prints one line
                         model=.. batch=.. threads=.. omp=.. blas=.. sps=.. step_ms_median=..
  --data fashion-mnist : reads /usr/share/datasets/fashion-mnist/*.gz (gzip + numpy),
                         scales to [0,1], normalises with mean 0.5 / std 0.5, pads
                         28x28 to --image-size if larger (cnn needs 32 for pitstop's
                         3x32 layout when --channels 3 replicates the grey channel),
                         trains --epochs epochs and prints per epoch
                         epoch=E train_loss=.. test_acc=.. epoch_s=..
One iteration = forward, loss, backward, optimizer step:
  cnn/cnn-wide: cross-entropy, SGD lr 0.001 momentum 0.9 (--lr to change);
  dcgan: D on real (target 1) and on G(z).detach() (target 0), Adam step of D,
         then D(G(z)) with target 1, Adam step of G (lr 2e-4, betas 0.5/0.999).
--threads sets torch.set_num_threads (OpenMP); --blas-threads sets OpenBLAS's pool
and --blas-core its kernels (OPENBLAS_NUM_THREADS / OPENBLAS_CORETYPE must be set
before torch loads: this script re-executes itself with them when needed).
"""
import argparse
import gzip
import math
import os
import sys
import time


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="cnn", choices=["cnn", "cnn-wide", "dcgan"])
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--blas-threads", type=int, default=1)
    ap.add_argument("--blas-core", default="",
                    help="OPENBLAS_CORETYPE for torch's OpenBLAS (empty: autodetect; on this "
                         "KVM CPU autodetection falls back to Prescott/SSE3 kernels, so "
                         "SkylakeX is PyTorch's best setting)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--data", default="synthetic", choices=["synthetic", "fashion-mnist"])
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--image-size", type=int, default=0, help="0: 32 for cnn, 64 for dcgan")
    ap.add_argument("--channels", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--lr-schedule", default="constant", choices=["constant", "cosine"],
                    help="cosine: lr*(1+cos(pi*step/total))/2 per iteration, as pitstop")
    ap.add_argument("--norm", default="half", choices=["half", "dataset"],
                    help="half: (x-0.5)/0.5; dataset: Fashion-MNIST mean 0.2860 / std 0.3530 (pitstop's)")
    return ap.parse_args()


args = parse()
# OpenBLAS reads its thread count and kernel choice when the library loads: torch_ready
# sets them before importing torch (and flushes denormals, as pitstop does)
from torch_env import blas_library, isa_fields, torch_ready  # noqa: E402

torch = torch_ready(args.threads, args.blas_threads, args.blas_core, args.seed)
import numpy as np  # noqa: E402
import torch.nn as nn  # noqa: E402


def cnn(channels, size, classes, wide):
    c1 = 64 if wide else 6
    s = ((size - 4) // 2 - 4) // 2
    return nn.Sequential(
        nn.Conv2d(channels, c1, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(c1, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(16 * s * s, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, classes))


def dcgan(channels, size, nz=100, ngf=64, ndf=64):
    mult = 8 if size == 64 else 4
    g = [nn.ConvTranspose2d(nz, ngf * mult, 4, 1, 0, bias=False),
         nn.BatchNorm2d(ngf * mult), nn.ReLU(True)]
    m = mult
    while m > 1:
        g += [nn.ConvTranspose2d(ngf * m, ngf * m // 2, 4, 2, 1, bias=False),
              nn.BatchNorm2d(ngf * m // 2), nn.ReLU(True)]
        m //= 2
    g += [nn.ConvTranspose2d(ngf, channels, 4, 2, 1, bias=False), nn.Tanh()]
    d = [nn.Conv2d(channels, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
    m = 1
    while m < mult:
        d += [nn.Conv2d(ndf * m, ndf * m * 2, 4, 2, 1, bias=False),
              nn.BatchNorm2d(ndf * m * 2), nn.LeakyReLU(0.2, inplace=True)]
        m *= 2
    d += [nn.Conv2d(ndf * mult, 1, 4, 1, 0, bias=False), nn.Sigmoid()]

    def weights_init(mod):
        name = mod.__class__.__name__
        if name.find("Conv") != -1:
            nn.init.normal_(mod.weight.data, 0.0, 0.02)
        elif name.find("BatchNorm") != -1:
            nn.init.normal_(mod.weight.data, 1.0, 0.02)
            nn.init.constant_(mod.bias.data, 0)

    G, D = nn.Sequential(*g), nn.Sequential(*d)
    G.apply(weights_init)
    D.apply(weights_init)
    return G, D


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fmnist(kind, size, channels):
    prefix = "train" if kind == "train" else "t10k"
    x = read_idx(os.path.join(args.data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(args.data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if args.norm == "dataset":
        x = (x.astype(np.float32) / 255.0 - 0.2860) / 0.3530
    else:
        x = (x.astype(np.float32) / 255.0 - 0.5) / 0.5
    if size > 28:
        p0 = (size - 28) // 2
        x = np.pad(x, ((0, 0), (p0, size - 28 - p0), (p0, size - 28 - p0)), constant_values=-1.0)
    x = np.repeat(x[:, None, :, :], channels, axis=1)
    return torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y.astype(np.int64))


def main():
    gan = args.model == "dcgan"
    size = args.image_size or (64 if gan else 32)
    B = args.batch_size
    if args.data == "fashion-mnist" and not gan:
        size = args.image_size or 28
    step_times = []
    if gan:
        G, D = dcgan(args.channels, size)
        G.train()
        D.train()
        crit = nn.BCELoss()
        oD = torch.optim.Adam(D.parameters(), lr=args.lr or 2e-4, betas=(0.5, 0.999))
        oG = torch.optim.Adam(G.parameters(), lr=args.lr or 2e-4, betas=(0.5, 0.999))
        real = torch.rand(B, args.channels, size, size) * 2 - 1
        noise = torch.randn(B, 100, 1, 1)
        ones = torch.full((B,), 1.0)
        zeros = torch.full((B,), 0.0)

        def step():
            D.zero_grad()
            errD = crit(D(real).view(-1), ones)
            errD.backward()
            fake = G(noise)
            errF = crit(D(fake.detach()).view(-1), zeros)
            errF.backward()
            oD.step()
            G.zero_grad()
            errG = crit(D(fake).view(-1), ones)
            errG.backward()
            oG.step()
            return errD.item() + errF.item() + errG.item()

        if args.data != "synthetic":
            sys.exit("torch_train.py: dcgan runs on synthetic data only")
    else:
        net = cnn(args.channels, size, 10, args.model == "cnn-wide")
        net.train()
        crit = nn.CrossEntropyLoss()
        if args.optimizer == "adam":
            opt = torch.optim.Adam(net.parameters(), lr=args.lr or 0.001)
        else:
            opt = torch.optim.SGD(net.parameters(), lr=args.lr or 0.001, momentum=args.momentum)
        lr0 = opt.param_groups[0]["lr"]
        sched = {"step": 0, "total": 0}

        def train_batch(x, y):
            if args.lr_schedule == "cosine" and sched["total"] > 0:
                for g_ in opt.param_groups:
                    g_["lr"] = lr0 * 0.5 * (1 + math.cos(math.pi * sched["step"] / sched["total"]))
            sched["step"] += 1
            opt.zero_grad()
            loss = crit(net(x), y)
            loss.backward()
            opt.step()
            return loss

        if args.data == "fashion-mnist":
            xtr, ytr = load_fmnist("train", size, args.channels)
            xte, yte = load_fmnist("test", size, args.channels)
            g = torch.Generator().manual_seed(args.seed)
            torch.manual_seed(args.seed)
            sched["total"] = args.epochs * ((len(xtr) + B - 1) // B)
            for ep in range(1, args.epochs + 1):
                t0 = time.monotonic()
                perm = torch.randperm(len(xtr), generator=g)
                tot, n = 0.0, 0
                for i in range(0, len(xtr), B):
                    idx = perm[i:i + B]
                    tot += train_batch(xtr[idx], ytr[idx]).item() * len(idx)
                    n += len(idx)
                dt = time.monotonic() - t0
                net.eval()
                correct = 0
                with torch.no_grad():
                    for i in range(0, len(xte), 1000):
                        correct += (net(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                net.train()
                print(f"epoch={ep} train_loss={tot / n:.4f} test_acc={correct / len(xte):.4f} "
                      f"epoch_s={dt:.2f}", flush=True)
            return
        # one image batch, 64 label sets used in turn (as bench/nn_step.c): the loss
        # stays near log(10) instead of memorising one batch into denormal gradients
        x = torch.randn(B, args.channels, size, size)
        ys = [torch.randint(0, 10, (B,)) for _ in range(64)]
        it_ = [0]

        def step():
            it_[0] += 1
            return train_batch(x, ys[it_[0] % 64]).item()

    for it in range(args.warmup + args.iters):
        t0 = time.monotonic()
        step()
        step_times.append(time.monotonic() - t0)
    meas = step_times[args.warmup:]
    med = sorted(meas)[len(meas) // 2]
    print(f"model={args.model} batch={B} threads={args.threads} omp={torch.get_num_threads()} "
          f"blas={os.environ.get('OPENBLAS_NUM_THREADS')} "
          f"blas_core={os.environ.get('OPENBLAS_CORETYPE', 'auto')} iters={args.iters} "
          f"sps={B * len(meas) / sum(meas):.2f} step_ms_median={1e3 * med:.4f} "
          f"blas_lib={blas_library()} {isa_fields(torch)}", flush=True)


main()
