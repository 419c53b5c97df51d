#!/usr/bin/python3
"""ckpt.py — reads pitstop checkpoints (format in src/train/checkpoint.c) independently
of pitstop's C code, for the train tests.

  ckpt.py info CKPT             prints the header JSON
  ckpt.py compare A B [TOL]     per tensor-array max|a-b| / max|a| of every network's
                                parameters; prints the worst; exit 1 if above TOL
  ckpt.py compare-l2 A B L2 MAX per network ||a-b||/||a|| (2-norm) <= L2 and
                                max|a-b| / max|a| <= MAX; prints both; exit 1 if above
  ckpt.py same A B              exit 0 iff the parameter bytes are identical
"""
import json
import struct
import sys

import numpy as np


def read(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != b"PITCKPT1":
        sys.exit(f"{path}: bad magic")
    (hl,) = struct.unpack_from("<Q", b, 8)
    h = json.loads(b[16:16 + hl])
    off = 16 + hl + 8
    nets = []
    for n in h["nets"]:
        np_, ns = int(n["nparams"]), int(n["nstate"])
        p = np.frombuffer(b, dtype="<f4", count=np_, offset=off)
        off += 4 * np_
        s = np.frombuffer(b, dtype="<f4", count=ns, offset=off)
        off += 4 * ns
        off += 4 * np_ * (2 if n["optimizer"] == "adam" else 1)
        nets.append((p, s))
    if off != len(b) - 8:
        sys.exit(f"{path}: payload size does not match the header")
    return h, nets


def main():
    cmd = sys.argv[1]
    if cmd == "info":
        h, _ = read(sys.argv[2])
        print(json.dumps(h))
        return 0
    ha, a = read(sys.argv[2])
    hb, b = read(sys.argv[3])
    if cmd == "same":
        return 0 if all(x[0].tobytes() == y[0].tobytes() for x, y in zip(a, b)) else 1
    if cmd == "compare-l2":
        l2tol, maxtol = float(sys.argv[4]), float(sys.argv[5])
        l2 = mx = 0.0
        for (pa, _), (pb, _) in zip(a, b):
            d = pa.astype(np.float64) - pb
            l2 = max(l2, float(np.linalg.norm(d)) / (float(np.linalg.norm(pa.astype(np.float64))) or 1.0))
            mx = max(mx, float(np.max(np.abs(d))) / (float(np.max(np.abs(pa))) or 1.0))
        print(f"l2_rel_diff={l2:.3e} (tol {l2tol:g}) max_rel_diff={mx:.3e} (tol {maxtol:g}) steps={ha['step']},{hb['step']}")
        return 0 if l2 <= l2tol and mx <= maxtol else 1
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    worst = 0.0
    for (pa, _), (pb, _) in zip(a, b):
        scale = float(np.max(np.abs(pa))) or 1.0
        worst = max(worst, float(np.max(np.abs(pa.astype(np.float64) - pb))) / scale)
    print(f"max_rel_diff={worst:.3e} tol={tol:g} steps={ha['step']},{hb['step']}")
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
