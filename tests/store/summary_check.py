#!/usr/bin/python3
"""summary_check.py RECORDS.jsonl SUMMARY.json [--group-by F,F...] [--rel TOL]

The independent side of the round trip of issue 4: recomputes from the JSON
Lines records, with the Python standard library only and following the
definitions in docs/analysis.md (not pitstop's code), every figure that
`pitstop summary --format json` printed, and compares them (relative 1e-9).
Exits 0 if all agree, 1 with the differences otherwise. --rel: the relative
tolerance (default 1e-9; a store written from full-precision doubles while the
JSON Lines file holds 9 significant digits needs ~1e-6)."""
import json
import math
import statistics
import sys

DEFAULT_GROUP = "model,batch,ranks,nodes,itype,threads"
REL = 1e-9
ABS = 1e-12  # seconds: a standard deviation of equal values may come out as 1e-20 in C, 0 here
# The drift against values the file rounds to 9 significant digits (--rel): each batch median is off
# by at most 5e-9 of the largest, so the slope over the mean is off by at most
# 5e-9 · max(z) / mean · Σ|x − x̄| / Σ(x − x̄)² — an absolute bound, since a drift near 0 is the
# difference of nearly equal numbers and no relative tolerance holds for it (a run drifting
# 4.32e-7 per iteration was 6e-6 apart in relative terms). The largest bound of the series seen.
DRIFT_ABS = 0.0


def t_cdf(t, df):
    """P(T <= t), t >= 0, by Simpson integration of the t density on [0, t]."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    f = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)
    n = 4000
    h = t / n
    s = f(0) + f(t) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
    return 0.5 + s * h / 3


def t_quantile(p, df):
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(80):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def stats(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    out = {"n": len(xs)}
    if not xs:
        return dict(out, sum=None, mean=None, median=None, sd=None, min=None, max=None, p5=None, p95=None)
    s = sorted(xs)

    def q(p):  # Hyndman & Fan type 7
        h = (len(s) - 1) * p
        lo = math.floor(h)
        return s[lo] if lo + 1 >= len(s) else s[lo] + (h - lo) * (s[lo + 1] - s[lo])

    return dict(out, sum=math.fsum(s), mean=statistics.fmean(s), median=statistics.median(s),
                sd=statistics.stdev(s) if len(s) > 1 else None, min=s[0], max=s[-1], p5=q(0.05), p95=q(0.95))


def warmup(x, m=5):
    """pit_warmup: first batch j <= k/2 whose median is <= M + 3s and whose
    next 4 batch medians have a median <= M + 1.5s, M and s = 1.4826 MAD
    from the second half's batch medians."""
    k = len(x) // m
    if k < 4:
        return 0
    z = [statistics.median(x[j * m:(j + 1) * m]) for j in range(k)]
    tail = z[k // 2:]
    mid = statistics.median(tail)
    s = 1.4826 * statistics.median([abs(v - mid) for v in tail])
    for j in range(k // 2):
        if z[j] <= mid + 3 * s and statistics.median(z[j:j + 4]) <= mid + 1.5 * s:
            return j * m
    return (k // 2) * m


def drift(x, m=5):
    """pit_drift: OLS slope of the batch medians on 5j+2, over the mean."""
    k = len(x) // m
    if k < 4:
        return None
    z = [statistics.median(x[j * m:(j + 1) * m]) for j in range(k)]
    xs = [m * j + 2 for j in range(k)]
    xb, yb = statistics.fmean(xs), statistics.fmean(z)
    sxy = sum((a - xb) * (b - yb) for a, b in zip(xs, z))
    sxx = sum((a - xb) ** 2 for a in xs)
    global DRIFT_ABS
    mean = statistics.fmean(x)
    DRIFT_ABS = max(DRIFT_ABS, 5e-9 * max(abs(v) for v in z) / abs(mean) * sum(abs(a - xb) for a in xs) / sxx)
    return sxy / sxx / mean


def batch_means(x):
    n = len(x)
    out = {"n": n, "mean": statistics.fmean(x) if n else None, "lo": None, "hi": None, "half": None,
           "batches": 0, "batch_size": 0}
    if n < 4:
        return out
    k, b = (20, n // 20) if n >= 40 else (n // 2, 2)
    skip = n - k * b
    z = [statistics.fmean(x[skip + j * b: skip + (j + 1) * b]) for j in range(k)]
    half = t_quantile(0.975, k - 1) * statistics.stdev(z) / math.sqrt(k)
    out.update(lo=out["mean"] - half, hi=out["mean"] + half, half=half, batches=k, batch_size=b)
    return out


def config_of(rec):
    c = rec.get("config") or {}
    g = lambda *ks: next((c[k] for k in ks if k in c), None)
    cfg = {"model": g("model") or None, "itype": g("itype", "instance_type") or None, "batch": g("batch", "batch_size"),
           "threads": g("threads"), "ranks": g("ranks"), "nodes": g("nodes")}
    if rec.get("ranks") is not None:
        cfg["ranks"] = rec["ranks"]
    if rec.get("nodes") is not None:
        cfg["nodes"] = rec["nodes"]
    return cfg, c


def summarize(runs):
    """runs: list of (name, [records in order])."""
    its, events, totals = [], [], []
    declared = None
    for ri, (name, recs) in enumerate(runs):
        pending = False
        last_t, end_total = None, None
        for r in recs:
            if r.get("t") is not None:
                last_t = r["t"] if last_t is None else max(last_t, r["t"])
            ty = r["type"]
            if ty == "iter":
                its.append(dict(r, _run=ri, _near=pending, _rank=r.get("rank", -1)))
                pending = False
            elif ty in ("validation", "checkpoint"):
                if its and its[-1]["_run"] == ri:
                    its[-1]["_near"] = True
                pending = True
                events.append((ty, r.get("rank", -1), r.get("val_s" if ty == "validation" else "ckpt_s"), None))
            elif ty == "init":
                events.append((ty, r.get("rank", -1), r.get("init_s"), r.get("rdzv_s")))
                L = (r.get("config") or {}).get("iters_per_epoch")
                if isinstance(L, (int, float)) and L >= 1 and (declared is None or L > declared):
                    declared = L  # the epoch's length the run declares (a partial log, --max-iters)
            elif ty == "epoch":
                events.append((ty, r.get("rank", -1), r.get("epoch_s"), None))
            elif ty == "end" and r.get("total_s") is not None:
                end_total = (end_total or 0) + r["total_s"]
        totals.append(end_total if end_total is not None else last_t)
    ranks = [i["_rank"] for i in its]
    srank = -1 if (not ranks or -1 in ranks) else min(ranks)
    main = [i for i in its if i["_rank"] == srank]
    for k, it in enumerate(main):
        it["_flags"] = set(["near"]) if it["_near"] else set()
        prev = main[k - 1] if k else None
        new_gen = prev is None or prev["_run"] != it["_run"] or prev.get("gen", 0) != it.get("gen", 0)
        if new_gen or prev.get("epoch", -1) != it.get("epoch", -1):
            it["_flags"].add("edge")
            if prev is not None:
                prev["_flags"].add("edge")
        if new_gen and it.get("gen", 0) > 0:
            it["_flags"].add("resume")
    if main:
        main[-1]["_flags"].add("edge")
    out = {"runs": len(runs), "iters": len(main)}
    out["step"] = stats([i.get("step_s") for i in main])
    out["data"] = stats([i.get("data_s") for i in main])
    out["non_paramount"] = sum(1 for i in main if i["_flags"])
    keep, warm, dsum, dw = [], 0, 0.0, 0
    segs = {}
    order = []
    for i in main:
        key = (i["_run"], i.get("gen", 0))
        if key not in segs:
            segs[key] = []
            order.append(key)
        if not i["_flags"] and i.get("step_s") is not None:
            segs[key].append(i)
    for key in order:
        xs = [i["step_s"] for i in segs[key]]
        d = warmup(xs)
        for i in segs[key][:d]:
            i["_flags"].add("warmup")
        warm += d
        keep += xs[d:]
        dr = drift(xs[d:])
        if dr is not None:
            dsum += dr * len(xs[d:])
            dw += len(xs[d:])
    out["warmup"] = warm
    out["drift"] = dsum / dw if dw else None
    out["tp"] = batch_means(keep)
    edges = [i["step_s"] for i in main if "edge" in i["_flags"]]
    out["epoch_edge_extra_s"] = (statistics.fmean(edges) - out["tp"]["mean"]) if edges else None
    ipe = [i["iter"] + 1 for i in main if i.get("epoch", -1) >= 0 and i.get("iter", -1) >= 0]
    seen = max(ipe) if ipe else None
    out["iters_per_epoch"] = max(seen, declared) if seen is not None and declared is not None else (
        seen if seen is not None else declared)
    for kind, key in (("epoch", "epoch"), ("validation", "validation"), ("init", "init"), ("checkpoint", "checkpoint")):
        vals = [v for (ty, rk, v, _) in events if ty == kind]
        out[key] = stats(vals)
        out[key + "_total_s"] = math.fsum(v for (ty, rk, v, _) in events if ty == kind and rk <= 0 and v is not None)
    out["rdzv"] = stats([rz for (ty, rk, v, rz) in events if ty == "init"])
    total = None if any(t is None for t in totals) else math.fsum(totals)
    out["total_s"] = total
    for k in ("init", "epoch", "validation", "checkpoint"):
        out[k + "_share"] = out[k + "_total_s"] / total if total else None
    # imbalance over steady-state paramount iterations
    steady = [i for i in main if not i["_flags"] and i.get("compute_s")]
    nr = max((len(i["compute_s"]) for i in main if i.get("compute_s")), default=0)
    out["nranks"] = nr
    comp = [[i["compute_s"][k] for i in steady if k < len(i["compute_s"]) and i["compute_s"][k] is not None]
            for k in range(nr)]
    wait = [[i["wait_s"][k] for i in steady if k < len(i["wait_s"]) and i["wait_s"][k] is not None]
            for k in range(nr)]
    means = [statistics.fmean(c) if c else None for c in comp]
    out["rank_compute_s"] = means
    out["rank_wait_s"] = [statistics.fmean(w) if w else None for w in wait]
    valid = [(m, k) for k, m in enumerate(means) if m is not None]
    if valid:
        slow = max(valid, key=lambda mk: (mk[0], -mk[1]))
        fast = min(valid, key=lambda mk: (mk[0], mk[1]))
        out["slow_rank"] = slow[1]
        out["slow_compute_s"] = slow[0]
        out["slow_excess"] = slow[0] / fast[0] - 1
        out["median_rank_compute_s"] = statistics.median(m for m, _ in valid)
        tc = math.fsum(i["compute_s"][k] for i in steady for k in range(len(i["compute_s"]))
                       if i["compute_s"][k] is not None and i["wait_s"][k] is not None)
        tw = math.fsum(i["wait_s"][k] for i in steady for k in range(len(i["wait_s"]))
                       if i["compute_s"][k] is not None and i["wait_s"][k] is not None)
        out["wait_share"] = tw / (tc + tw) if tc + tw > 0 else None
    return out


def compare(path, want, got, errs):
    if isinstance(want, dict):
        for k, v in want.items():
            if k not in got:
                errs.append(f"{path}.{k}: missing in pitstop's output")
            else:
                compare(f"{path}.{k}", v, got[k], errs)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            errs.append(f"{path}: want {want}, got {got}")
        else:
            for i, (a, b) in enumerate(zip(want, got)):
                compare(f"{path}[{i}]", a, b, errs)
    elif want is None or got is None:
        if not (want is None and got is None):
            errs.append(f"{path}: want {want}, got {got}")
    elif isinstance(want, (int, float)):
        tol = REL * max(abs(want), abs(got)) + ABS
        if path.endswith(".drift") and REL > 1e-9:  # rounded inputs: the drift's own bound
            tol += DRIFT_ABS
        if not isinstance(got, (int, float)) or abs(want - got) > tol:
            errs.append(f"{path}: want {want!r}, got {got!r}")
    elif want != got:
        errs.append(f"{path}: want {want!r}, got {got!r}")


def main():
    args = sys.argv[1:]
    fields = DEFAULT_GROUP.split(",")
    global REL
    if "--rel" in args:
        i = args.index("--rel")
        REL = float(args[i + 1])
        del args[i:i + 2]
    if "--group-by" in args:
        i = args.index("--group-by")
        fields = args[i + 1].split(",")
        del args[i:i + 2]
    recs_path, summary_path = args
    runs, order = {}, []
    for line in open(recs_path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r["run"] not in runs:
            runs[r["run"]] = []
            order.append(r["run"])
        runs[r["run"]].append(r)
    got = json.load(open(summary_path))
    got_runs = {o["name"]: o for o in got if o["kind"] == "run"}
    got_groups = {o["name"]: o for o in got if o["kind"] == "group"}
    errs = []
    groups, gorder, gcfg = {}, [], {}
    for name in order:
        if name not in got_runs:
            errs.append(f"run {name}: missing")
            continue
        init = next((r for r in runs[name] if r["type"] == "init"), {})
        cfg, raw = config_of(init)
        want = summarize([(name, runs[name])])
        want["config"] = cfg
        compare(f"run {name}", want, got_runs[name], errs)
        vals = []
        for f in fields:
            v = cfg.get(f) if f in cfg else raw.get(f)
            vals.append("-" if v in (None, "") else (f"{v:g}" if isinstance(v, float) else str(v)))
        gname = " ".join(f"{f}={v}" for f, v in zip(fields, vals))
        if gname not in groups:
            groups[gname] = []
            gorder.append(gname)
            gcfg[gname] = cfg
        groups[gname].append((name, runs[name]))
    for g in gorder:
        if g not in got_groups:
            errs.append(f"group '{g}': missing (have {list(got_groups)})")
            continue
        want = summarize(groups[g])
        want["config"] = gcfg[g]  # the group's first run's
        compare(f"group '{g}'", want, got_groups[g], errs)
    if len(got_runs) != len(order) or len(got_groups) != len(groups):
        errs.append(f"pitstop printed {len(got_runs)} runs and {len(got_groups)} groups, "
                    f"want {len(order)} and {len(groups)}")
    for e in errs[:40]:
        print("MISMATCH", e)
    checked = len(order) + len(groups)
    print(f"summary_check: {checked} objects compared, {len(errs)} mismatches")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
