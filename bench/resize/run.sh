#!/usr/bin/env bash
# bench/resize/run.sh [--reps N] [--build-dir DIR] — how long `pitstop run` takes to change a
# job's membership on the local provider: from the decision to the first iteration of the next
# generation, split into checkpoint, workload exit, nodes (stop/start), launch + init; printed for
# cnn and dcgan beside the same job's median step time (so the switch reads as "iterations lost").
# Each case resizes 1 → 2 → 1 nodes by a schedule; every resize of every repeat is one row, and a
# median per case ends the table. Aim (issue 13): under 2 s for cnn.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$here/build
reps=3
while [ $# -gt 0 ]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    *) echo "usage: bench/resize/run.sh [--reps N] [--build-dir DIR]" >&2; exit 2 ;;
  esac
done
unset OPENBLAS_CORETYPE
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
declare -A args=(
  [cnn]="--model cnn --data synthetic --batch-size 32 --max-iters 1200 --no-validation --schedule 400:2,800:1"
  [dcgan]="--model dcgan --data synthetic --image-size 32 --batch-size 16 --max-iters 90 --schedule 30:2,60:1"
)
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) on $(nproc) CPUs"
for model in cnn dcgan; do
  for r in $(seq 1 "$reps"); do
    # shellcheck disable=SC2086
    "$build/pitstop" run --quiet --catalog "$here/catalogs/local.tsv" --run "b$model$r" \
      --checkpoint-dir "$T/$model$r" ${args[$model]} > /dev/null 2> "$T/$model$r.err" ||
      { echo "bench/resize: $model run $r failed: $(tail -3 "$T/$model$r.err")" >&2; exit 1; }
  done
done
/usr/bin/python3 - "$T" "$reps" << 'PYEOF'
import json, statistics, sys
T, reps = sys.argv[1], int(sys.argv[2])
print(f"{'case':<7} {'resize':<12} {'ckpt s':>8} {'exit s':>8} {'nodes s':>8} {'launch+init s':>14} {'switch s':>9} {'step ms':>8} {'steps lost':>10}")
for model in ("cnn", "dcgan"):
    switches = []
    for r in range(1, reps + 1):
        recs = [json.loads(l) for l in open(f"{T}/{model}{r}/events.jsonl")]
        its = [x for x in recs if x["type"] == "iter"]
        step_ms = statistics.median(x["step_s"] for x in its) * 1e3
        for d in (x for x in recs if x["type"] == "decision"):
            g = d["gen"]
            ck = [x for x in recs if x["type"] == "checkpoint" and x["gen"] == g and x["t"] >= d["t"]]
            end = [x for x in recs if x["type"] == "end" and x["gen"] == g]
            first = [x for x in its if x["gen"] == g + 1]
            nodes = [x for x in recs if x["type"] == "node" and x["action"] in ("start", "stop")
                     and first and d["t"] <= x["t"] <= first[0]["t"]]
            init = [x for x in recs if x["type"] == "init" and x["gen"] == g + 1]
            if not (ck and end and first):
                continue
            t_end = end[0]["t"]
            t_nodes = max([x["t"] for x in nodes], default=t_end)
            sw = first[0]["t"] - d["t"]
            switches.append(sw)
            print(f"{model:<7} {'gen %d→%d' % (g, g + 1):<12} {ck[0]['ckpt_s']:>8.3f} {t_end - d['t']:>8.3f} "
                  f"{t_nodes - t_end:>8.3f} {first[0]['t'] - t_nodes:>14.3f} {sw:>9.3f} {step_ms:>8.2f} "
                  f"{sw / (step_ms / 1e3):>10.0f}")
    if switches:
        print(f"{model:<7} {'median':<12} {'':>8} {'':>8} {'':>8} {'':>14} {statistics.median(switches):>9.3f}   "
              f"({len(switches)} resizes)")
PYEOF
