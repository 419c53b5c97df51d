#!/usr/bin/env bash
# ctest: slow
# bill_aws.sh — one accounting (issue 27): a `pitstop run` on two AWS types emulated by the
# local provider, with catalogs/aws.tsv's prices and billing (per second, 60 s minimum; the
# catalog the run uses is aws.tsv's two rows with the local provider's cpus and cpu_quota
# columns added), resized by a schedule from 1 node to 2 at step 40 of 100, so the nodes live
# under a minute (the second one at least) and are billed 60 s. The same total must appear in
# every line that prices the run: the report's generations (their sum), its nodes (their sum) and its total; and,
# priced with catalogs/aws.tsv itself, `pitstop simulate --replay`'s live cost and its "this
# run (node records)" line, and `pitstop status`'s spend. The total is checked against the
# bill computed here from the node records (Σ price × max(60, ceil(seconds)) / 3600), which
# is more than the raw seconds' cost (the old generation and replay lines; 15x on a quiet
# host, 2x under ASan), and each node's billed seconds in the report against it.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
AWS="$PIT_SOURCE_DIR/catalogs/aws.tsv"
# aws.tsv's rows for c5.large and m5.large, with the columns the local provider emulates them by
$PY - "$AWS" "$T/cat.tsv" << 'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
head = rows[0]
col = {k: head.index(k) for k in ("itype", "vcpus", "price_h", "billing_s", "min_s")}
emul = {"c5.large": ("1", "-"), "m5.large": ("1", "40%")}
with open(sys.argv[2], "w") as f:
    f.write("itype\tvcpus\tcpus\tcpu_quota\tprice_h\tbilling_s\tmin_s\n")
    for r in rows[1:]:
        if r[col["itype"]] in emul:
            assert float(r[col["min_s"]]) == 60, r
            cpus, quota = emul[r[col["itype"]]]
            f.write("\t".join([r[col["itype"]], r[col["vcpus"]], cpus, quota, r[col["price_h"]],
                               r[col["billing_s"]], r[col["min_s"]]]) + "\n")
PY
cd "$T"
"$PITSTOP" run --catalog cat.tsv --run aws1 --quiet --schedule 40:c5.large:1+m5.large:1 --nodes c5.large:1 \
  --model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --lr-schedule constant \
  --no-validation --limit 400 --epochs 0 --backend ref --max-iters 100 > run.txt 2> run.err || { cat run.err; exit 1; }
EV=runs/aws1/events.jsonl
"$PITSTOP" simulate --replay "$EV" --catalog "$AWS" --types c5.large,m5.large --nnodes 1:2 > replay.txt 2> replay.err \
  || { cat replay.err; exit 1; }
"$PITSTOP" status aws1 --catalog "$AWS" --format json > status.json
$PY - "$EV" "$AWS" << 'PY'
import json, math, re, sys
price, minimum = {}, {}
for l in open(sys.argv[2]):
    f = l.rstrip("\n").split("\t")
    if l.startswith("#") or not l.strip():
        continue
    if f[0] == "itype":
        head = f
        continue
    price[f[0]] = float(f[head.index("price_h")])
    minimum[f[0]] = float(f[head.index("min_s")])
start, bill, raw, want_billed = {}, 0.0, 0.0, {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] != "node":
        continue
    if r["action"] == "start":
        start[r["node"]] = (r["t"], r["itype"])
    elif r["action"] in ("stop", "lost"):
        t0, it = start.pop(r["node"])
        secs = r["t"] - t0
        want_billed[r["node"]] = max(minimum[it], math.ceil(secs))
        bill += price[it] * want_billed[r["node"]] / 3600
        raw += price[it] * secs / 3600
assert not start, start
run = open("run.txt").read()
total = float(re.search(r"cost \$([0-9.]+)\n", run).group(1))
gens = [float(m.group(1)) for m in re.finditer(r"^\d+\s+\S+\s+\d+-\d+\s+[0-9.]+s\s+([0-9.]+)", run, re.M)]
nodes = [float(m.group(1)) for m in re.finditer(r"^  aws1\.\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\d+s\s+([0-9.]+)", run, re.M)]
billed = {m.group(1): int(m.group(2)) for m in re.finditer(r"^  (aws1\.\d+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\d+)s", run, re.M)}
rep = open("replay.txt").read()
live = float(re.search(r"cost: live \$([0-9.]+) \(node records\)", rep).group(1))
this = float(re.search(r"this run \(node records\)\s+([0-9.]+)", rep).group(1))
spend = json.load(open("status.json"))["spend"]
assert len(gens) == 2 and len(nodes) == 2 and billed == want_billed, (gens, nodes, billed, want_billed, run)
assert min(want_billed.values()) == 60, want_billed  # a node under a minute: the minimum shows
figures = {"report total": total, "report generations": sum(gens), "report nodes": sum(nodes),
           "replay live": live, "replay this run": this, "status spend": spend}
for k, v in figures.items():
    assert abs(v - bill) < 0.00015, (k, v, bill, figures)   # the report prints 4 decimals
for k in ("replay live", "replay this run", "status spend"):
    assert abs(figures[k] - bill) < 1e-6, (k, figures[k], bill)
assert bill > 1.05 * raw, (bill, raw)
print("bill $%.6f (raw seconds $%.6f): %s" % (bill, raw, ", ".join("%s %.6f" % kv for kv in figures.items())))
PY
