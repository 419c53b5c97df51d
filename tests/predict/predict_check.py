#!/usr/bin/env python3
"""predict_check.py — an independent recomputation of pit_predict
(docs/predict.md) with the Python standard library only: reads the JSON
Lines written by test_predict.c (each line: the inputs and what pitstop
computed) and compares every output (relative tolerance 1e-9).
Usage: predict_check.py JOBS.jsonl"""
import json
import math
import sys

REL = 1e-9


def predict(i):
    ipe = i["ipe"]
    tp, tph = i["tp"], i["tp_half"] or 0.0
    unit, size, batch = i["unit"], i["size"], i["batch"]
    if unit == 0:  # epochs
        n_iter = math.ceil(size * ipe - 1e-9)
        n_epoch = math.ceil(size - 1e-9)
    else:
        n_iter = math.ceil((size if unit == 1 else size / batch) - 1e-9)
        n_epoch = math.ceil(n_iter / ipe - 1e-9) if ipe else 0
    n_ckpt = n_iter // i["ckpt_every"] if i["ckpt_every"] > 0 else 0
    # term i: (mean or 0, half or 0 — a half counts only when the mean exists)
    terms = [(m if m is not None else 0.0, (h or 0.0) if m is not None else 0.0) for m, h in i["terms"]]
    start, init, val, edge, ckpt = terms
    allow = i["drift_allow"] if i["drift_allow"] is not None else 0.05
    d = max(abs(i["drift"]) - 2 * (i["drift_se"] or 0.0), 0.0) if i["drift"] is not None else 0.0
    m = max(i["measured"], 0)
    out = {"n_iter": n_iter, "n_epoch": n_epoch, "n_ckpt": n_ckpt}
    # a partial last batch may take no time, unless the epoch edge has an interval
    short = 0.0 if i["terms"][3][0] is not None and (i["terms"][3][1] or 0) > 0 else tp
    if ipe:
        r = allow + d * (m + ipe) / 2
        e = ipe * tp + edge[0]
        h = ipe * (tph + r * tp) + edge[1]
        out.update(epoch=e, epoch_lo=max(e - h - short, 0.0), epoch_hi=e + h)
    else:
        out.update(epoch=None, epoch_lo=None, epoch_hi=None)
    done, el = i["done"], i["elapsed"]
    nrem = n_iter - done
    ep_rem = max(n_epoch - (math.floor(done / ipe + 1e-9) if ipe else 0), 0)
    ck_rem = n_ckpt - (done // i["ckpt_every"] if i["ckpt_every"] > 0 else 0)
    nval = ep_rem if i["val_every_epoch"] else 0
    r = allow + d * (m + nrem) / 2 if nrem > 0 else 0.0
    rem = nrem * tp + nval * val[0] + ep_rem * edge[0] + ck_rem * ckpt[0]
    half = nrem * (tph + r * tp) + nval * val[1] + ep_rem * edge[1] + ck_rem * ckpt[1]
    if not (done > 0 or el > 0):
        rem += start[0] + init[0]
        half += start[1] + init[1]
    lo_more = ep_rem * short if ipe else 0.0
    out.update(remaining=rem, remaining_lo=max(rem - half - lo_more, 0.0), remaining_hi=rem + half)
    out.update(total=el + rem, lo=el + max(rem - half - lo_more, 0.0), hi=el + rem + half + max(i["untimed"], 0.0))
    return out


def main():
    errs, n = [], 0
    with open(sys.argv[1]) as f:
        for ln, line in enumerate(f, 1):
            case = json.loads(line)
            want, got = predict(case["in"]), case["out"]
            for k, v in want.items():
                g = got[k]
                if v is None or g is None:
                    ok = v is None and g is None
                else:
                    ok = abs(v - g) <= REL * max(abs(v), abs(g)) + 1e-12
                if not ok:
                    errs.append(f"line {ln}: {k}: want {v!r}, got {g!r}")
            n += 1
    for e in errs[:20]:
        print(e, file=sys.stderr)
    print(f"predict_check: {n} jobs, {len(errs)} mismatches")
    return 1 if errs or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
