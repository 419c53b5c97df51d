#!/usr/bin/python3
"""bench/data-load/ref.py — the reference for bench-data-load: the same IDX load
(gzip + numpy) and preprocessing in PyTorch (x/255, torchvision-style Resize +
CenterCrop via F.interpolate(bilinear, antialias when shrinking), grey -> 3 channels,
normalisation), timed the same way (wall, monotonic). IDX kinds only.
usage: ref.py [--data fashion-mnist|mnist] [--dir DIR] [--train 0|1] [--image-size N]
              [--channels C] [--gan] [--limit N]"""
import argparse, gzip, os, time
import numpy as np
import torch
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--data", default="fashion-mnist")
ap.add_argument("--dir")
ap.add_argument("--train", type=int, default=1)
ap.add_argument("--image-size", type=int, default=0)
ap.add_argument("--channels", type=int, default=0)
ap.add_argument("--gan", action="store_true")
ap.add_argument("--limit", type=int, default=0)
a = ap.parse_args()
torch.set_num_threads(1)
d = a.dir or "/usr/share/datasets/" + a.data
split = "train" if a.train else "t10k"
mean, std = {"fashion-mnist": (0.2860, 0.3530), "mnist": (0.1307, 0.3081)}[a.data]
if a.gan:
    mean, std = 0.5, 0.5

t0 = time.monotonic()
with gzip.open(os.path.join(d, f"{split}-images-idx3-ubyte.gz"), "rb") as f:
    raw = f.read()
with gzip.open(os.path.join(d, f"{split}-labels-idx1-ubyte.gz"), "rb") as f:
    lab = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
n, h, w = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
x = torch.from_numpy(np.frombuffer(bytearray(raw), dtype=np.uint8, offset=16).reshape(n, 1, h, w))
if a.limit:
    x, lab = x[:a.limit], lab[:a.limit]
x = x.float().div_(255)
s = a.image_size
if s:
    rh, rw = (s, int(s * w / h)) if h <= w else (int(s * h / w), s)
    out = []
    for i in range(0, x.shape[0], 4096):  # chunks: bounded temporaries
        # antialias only changes shrinking; torch's antialiased kernel is slower, so growing
        # uses the plain one (identical values): the reference at its best
        r = F.interpolate(x[i:i + 4096], size=(rh, rw), mode="bilinear", align_corners=False,
                          antialias=rh < h or rw < w)
        top, left = int(round((rh - s) / 2.0)), int(round((rw - s) / 2.0))
        out.append(r[:, :, top:top + s, left:left + s])
    x = torch.cat(out)
x = (x - mean) / std
if a.channels == 3:
    x = x.expand(-1, 3, -1, -1).contiguous()
y = torch.from_numpy(lab.astype(np.int32))
load_s = time.monotonic() - t0
xd = x.double()
print(f"torch {a.data} n={x.shape[0]} shape={x.shape[1]}x{x.shape[2]}x{x.shape[3]} "
      f"load_s={load_s:.4f} mean={xd.mean().item():.5f} sd={xd.std(unbiased=False).item():.5f}")
