#!/usr/bin/python3
"""esrgan_torch.py — ESRGAN in PyTorch, the same architecture as pitstop's
`--model esrgan` (src/nn/model.c, pit_model_build_esrgan; PyTorch-GAN's esrgan
shapes), for bench/vs-pytorch and for checking parameter counts.

  --params                     print the parameter counts of G, D and VGG19[:35]
  --batch-size B --hr N ...    time training iterations on random data:
      one iteration = the original's adversarial step: G forward; D(real) detached and
      D(fake); relativistic BCE-with-logits loss both ways; VGG19 features[:35] content
      L1 on (fake, real); pixel L1; G backward, Adam step; D(real), D(fake.detach()),
      relativistic loss, D backward, Adam step. VGG weights random (--content random-vgg).
      prints: model=esrgan batch=.. hr=.. threads=.. omp=.. blas=.. sps=.. step_ms_median=..
--threads: torch.set_num_threads; --blas-threads / --blas-core: OpenBLAS's pool and
kernels (set before torch loads: the script re-executes itself with them).
"""
import argparse
import sys
import time


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--params", action="store_true")
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--hr", type=int, default=128)
    ap.add_argument("--blocks", type=int, default=23)
    ap.add_argument("--filters", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--blas-threads", type=int, default=1)
    ap.add_argument("--blas-core", default="")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args()


args = parse()
from torch_env import blas_library, isa_fields, torch_ready  # noqa: E402

torch = torch_ready(args.threads, args.blas_threads, args.blas_core, args.seed)
import torch.nn as nn  # noqa: E402


def conv3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride, 1)


class Dense(nn.Module):
    """Five 3x3 convs, each on the concatenation of the input and the earlier outputs."""

    def __init__(self, f, scale=0.2):
        super().__init__()
        self.scale = scale
        self.convs = nn.ModuleList(conv3(j * f, f) for j in range(1, 6))
        self.act = nn.LeakyReLU()  # slope 0.01, the original's default

    def forward(self, x):
        cat = x
        for j, c in enumerate(self.convs):
            o = c(cat)
            if j < 4:
                o = self.act(o)
                cat = torch.cat([cat, o], 1)
        return o * self.scale + x


class RRDB(nn.Module):
    def __init__(self, f, scale=0.2):
        super().__init__()
        self.scale = scale
        self.blocks = nn.Sequential(Dense(f), Dense(f), Dense(f))

    def forward(self, x):
        return self.blocks(x) * self.scale + x


class Generator(nn.Module):
    def __init__(self, ch=3, f=64, blocks=23):
        super().__init__()
        self.conv1 = conv3(ch, f)
        self.trunk = nn.Sequential(*[RRDB(f) for _ in range(blocks)])
        self.conv2 = conv3(f, f)
        up = []
        for _ in range(2):
            up += [conv3(f, 4 * f), nn.LeakyReLU(), nn.PixelShuffle(2)]
        self.up = nn.Sequential(*up)
        self.out = nn.Sequential(conv3(f, f), nn.LeakyReLU(), conv3(f, ch))

    def forward(self, x):
        a = self.conv1(x)
        return self.out(self.up(a + self.conv2(self.trunk(a))))


def discriminator(ch=3):
    layers, cin = [], ch
    for i, f in enumerate([64, 128, 256, 512]):
        layers.append(conv3(cin, f))
        if i:
            layers.append(nn.BatchNorm2d(f))
        layers += [nn.LeakyReLU(0.2, inplace=True), conv3(f, f, 2), nn.BatchNorm2d(f),
                   nn.LeakyReLU(0.2, inplace=True)]
        cin = f
    layers.append(conv3(cin, 1))
    return nn.Sequential(*layers)


def vgg19_54():
    """torchvision's vgg19().features[:35] (random weights: none can be downloaded here)."""
    layers, cin = [], 3
    for s, (f, n) in enumerate([(64, 2), (128, 2), (256, 4), (512, 4), (512, 4)]):
        for k in range(n):
            layers.append(conv3(cin, f))
            cin = f
            if s < 4 or k < n - 1:
                layers.append(nn.ReLU(inplace=True))
        if s < 4:
            layers.append(nn.MaxPool2d(2, 2))
    return nn.Sequential(*layers)


def count(m):
    return sum(p.numel() for p in m.parameters())


G = Generator(3, args.filters, args.blocks)
D = discriminator()
V = vgg19_54().eval()
for p in V.parameters():
    p.requires_grad_(False)
if args.params:
    print("params generator=%d discriminator=%d vgg=%d" % (count(G), count(D), count(V)))
    sys.exit(0)

B, hr = args.batch_size, args.hr
lr_img = torch.randn(B, 3, hr // 4, hr // 4)
hr_img = torch.randn(B, 3, hr, hr)
bce = nn.BCEWithLogitsLoss()
l1 = nn.L1Loss()
oG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.9, 0.999))
oD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.9, 0.999))
lam_adv, lam_pix = 5e-3, 1e-2


def step():
    oG.zero_grad()
    fake = G(lr_img)
    pix = l1(fake, hr_img)
    pr = D(hr_img).detach()
    pf = D(fake)
    ones, zeros = torch.ones_like(pf), torch.zeros_like(pf)
    adv = (bce(pf - pr.mean(0, keepdim=True), ones) + bce(pr - pf.mean(0, keepdim=True), zeros)) / 2
    content = l1(V(fake), V(hr_img).detach())
    lg = content + lam_adv * adv + lam_pix * pix
    lg.backward()
    oG.step()
    oD.zero_grad()
    pr = D(hr_img)
    pf = D(fake.detach())
    ld = (bce(pr - pf.mean(0, keepdim=True), ones) + bce(pf - pr.mean(0, keepdim=True), zeros)) / 2
    ld.backward()
    oD.step()


times = []
for i in range(args.warmup + args.iters):
    t0 = time.perf_counter()
    step()
    if i >= args.warmup:
        times.append(time.perf_counter() - t0)
times.sort()
med = times[len(times) // 2]
print("model=esrgan batch=%d hr=%d threads=%d omp=%d blas=%d sps=%.4f step_ms_median=%.1f blas_lib=%s %s" %
      (B, hr, args.threads, torch.get_num_threads(), args.blas_threads, B / med, med * 1e3, blas_library(),
       isa_fields(torch)))
