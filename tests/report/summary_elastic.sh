#!/usr/bin/env bash
# summary_elastic.sh — `pitstop summary` of an elastic run (pitstop run's
# resizes: generation 0 on 1 rank, 1 on 2 ranks, 2 on 1 rank again, each with
# its own init record's config) puts each generation's iterations, init,
# epoch and end times in the group of the configuration it ran on — two groups,
# 1 rank with generations 0 and 2, 2 ranks with generation 1, with the t_p of
# each — instead of all of them under the run's first configuration; the run
# itself stays one row with every iteration; `pitstop plot --kind cost` prices
# each membership's generations as that membership (two bars).
set -u
source "$(dirname "$0")/common.bash"
"$PY" - "$T/el.jsonl" <<'PY'
import json, sys
out = open(sys.argv[1], "w")
def w(r):
    out.write(json.dumps(r) + "\n")
t, step = 0.0, 0
for g, ranks, dt, n in ((0, 1, 0.020, 200), (1, 2, 0.012, 300), (2, 1, 0.020, 100)):
    t += 0.5
    w({"type": "init", "run": "el", "gen": g, "t": t, "init_s": 0.4 + 0.1 * g, "ranks": ranks, "nodes": ranks,
       "config": {"model": "cnn", "batch": 8, "ranks": ranks, "nodes": ranks, "iters_per_epoch": 1000,
                  "membership": [{"itype": "c5.xlarge", "nodes": ranks}]}})
    t0 = t
    for i in range(n):
        t += dt * (1 + 0.01 * ((i * 7) % 5 - 2))
        w({"type": "iter", "run": "el", "gen": g, "t": t, "epoch": 0, "iter": step, "step": step, "batch": 8,
           "step_s": dt * (1 + 0.01 * ((i * 7) % 5 - 2))})
        step += 1
    w({"type": "end", "run": "el", "gen": g, "t": t, "total_s": t - t0 + 0.5, "step": step,
       "status": "done" if g == 2 else "stopped"})
PY
"$P" summary --events "$T/el.jsonl" --format json > "$T/s.json" || bad "summary failed"
"$PY" - "$T/s.json" <<'PY' || bad "groups of the elastic run"
import json, sys
rows = json.load(open(sys.argv[1]))
runs = [r for r in rows if r["kind"] == "run"]
groups = {r["group"]["ranks"]: r for r in rows if r["kind"] == "group"}
assert len(runs) == 1 and runs[0]["iters"] == 600, runs
assert sorted(groups) == ["1", "2"] or sorted(groups) == [1, 2], list(groups)
one, two = groups.get("1", groups.get(1)), groups.get("2", groups.get(2))
assert one["iters"] == 300 and two["iters"] == 300, (one["iters"], two["iters"])
assert abs(one["tp"]["mean"] - 0.020) < 0.0004 and abs(two["tp"]["mean"] - 0.012) < 0.0003, (one["tp"], two["tp"])
assert one["init"]["n"] == 2 and two["init"]["n"] == 1, (one["init"], two["init"])
print("ok: 1 rank", one["iters"], one["tp"]["mean"], "; 2 ranks", two["iters"], two["tp"]["mean"])
PY
if command -v gnuplot >/dev/null 2>&1; then
  printf 'itype\tvcpus\tprice_h\tbilling_s\tmin_s\nc5.xlarge\t4\t0.17\t1\t0\n' > "$T/cat.tsv"
  "$P" plot --events "$T/el.jsonl" --kind cost --catalog "$T/cat.tsv" --out "$T/cost.svg" > "$T/plot.out" 2>&1 ||
    bad "cost chart failed: $(cat "$T/plot.out")"
  grep -q "c5.xlarge x2: cnn, batch 8, 2 ranks" "$T/cost.svg" && grep -q "c5.xlarge x1: cnn, batch 8, 1 rank" "$T/cost.svg" ||
    bad "cost chart: not one bar per membership"
fi
[ $fail = 0 ] && echo "summary_elastic: ok"
exit $fail
