#!/usr/bin/env bash
# ctest: slow
# status_run.sh — `pitstop status` from another process, on a live `pitstop run` and after it
# ends (docs/run.md "pitstop status"): a 120-step cnn job on synthetic data, local provider,
# resized by a schedule from 1 node to 2 at step 50 (two generations), started in the
# background under runs/ID (pitstop run's default directory); status is polled (JSON) until the
# run ends. While it runs, status must show it running with its controller's pid, a generation,
# a membership and steps; once t_p is known, a predicted finish and cost inside their
# intervals. After it ends: finished, both generations with their memberships, every step,
# both nodes billed (1 s granularity, so billed seconds are whole), spend = Σ node costs =
# the cost, and the resize decision with its reason. RUN, DIR, events FILE and no argument
# find the same run; --format table prints it; a missing run is one clear message; --watch
# reprints while the run runs and exits by itself once it does not.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
  rm -rf "$T"
}
trap cleanup EXIT
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
local-0.4  1      1     40%        0.20     1          0
CAT
cd "$T"
"$PITSTOP" run --catalog cat.tsv --run ts1 --quiet --schedule 50:local-1:1+local-0.4:1 \
  --model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --lr-schedule constant \
  --no-validation --limit 400 --epochs 0 --backend ref --max-iters 120 > run.txt 2> run.err &
pid=$!
n=0
wpid=
while kill -0 "$pid" 2> /dev/null; do
  if [ -f runs/ts1/events.jsonl ]; then
    if [ -z "$wpid" ]; then # --watch: reprints until the run is no longer running, then exits by itself
      "$PITSTOP" status ts1 --catalog cat.tsv --format json --watch=0.5 > watch.json 2> watch.err &
      wpid=$!
    fi
    "$PITSTOP" status ts1 --catalog cat.tsv --format json > "live.$n.json" 2> "live.$n.err" || true
    n=$((n + 1))
  fi
  sleep 0.5
done
wait "$pid" || { cat run.err; exit 1; }
pid=
for i in $(seq 1 40); do kill -0 "$wpid" 2> /dev/null || break; sleep 0.5; done
if kill -0 "$wpid" 2> /dev/null; then kill "$wpid"; echo "FAIL: --watch went on after the run ended"; exit 1; fi
wait "$wpid" || { cat watch.err; exit 1; }
"$PITSTOP" status ts1 --catalog cat.tsv --format json --decisions -1 > end.json
"$PITSTOP" status --catalog cat.tsv --format json > newest.json
(cd / && "$PITSTOP" status "$T/runs/ts1" --catalog "$T/cat.tsv" --format json > "$T/dir.json")
(cd / && "$PITSTOP" status "$T/runs/ts1/events.jsonl" --catalog "$T/cat.tsv" --format json > "$T/file.json")
"$PITSTOP" status ts1 --catalog cat.tsv > end.txt
if "$PITSTOP" status nosuch > bad.txt 2> bad.err; then
  echo "status of a missing run succeeded"; exit 1
fi
grep -q "no run 'nosuch'" bad.err || { cat bad.err; exit 1; }
grep -q "finished" end.txt && grep -q "local-0.4:1+local-1:1" end.txt && grep -q "schedule:" end.txt || {
  cat end.txt; exit 1; }
$PY - "$n" << 'PYEOF'
import glob, json, sys
live = []
for p in sorted(glob.glob("live.*.json")):
    txt = open(p).read()
    if txt.strip():
        live.append(json.loads(txt))
assert live, f"no status read while the run ran ({sys.argv[1]} tries)"
running = [s for s in live if s["state"] == "running"]
assert running, f"never seen running: {[s['state'] for s in live]}"
for s in running:
    assert s["controller_pid"] and s["controller_pid"] > 0, s
    assert s["generation"] >= 0 and s["run"] == "ts1", s
    assert s["steps_total"] in (None, 120), s  # known from the generation's init record on
    assert s["membership"] in ("local-1:1", "local-0.4:1+local-1:1"), s["membership"]
busy = [s for s in running if s["steps_done"] > 0]
assert busy, "never seen running with steps done"
for s in busy:
    assert s["membership"] in ("local-1:1", "local-0.4:1+local-1:1"), s["membership"]
    assert 0 < s["steps_done"] <= 120 and s["spend"] > 0 and s["steps_total"] == 120
pred = [s for s in busy if s["finish_s"] is not None and s["steps_done"] < 120]
assert pred, f"no prediction while running: {[s['note'] for s in busy]}"
for s in pred:
    assert s["tp"] > 0 and s["tp_half"] >= 0
    assert s["finish_lo"] <= s["finish_s"] <= s["finish_hi"] and s["finish_s"] >= s["t"], s
    assert s["cost_lo"] <= s["cost"] <= s["cost_hi"] and s["cost"] >= s["spend"], s
gens = sorted({s["generation"] for s in running})
print(f"{len(live)} live reads, {len(running)} running, generations seen {gens}, "
      f"{len(pred)} with a prediction (e.g. step {pred[0]['steps_done']}: finish {pred[0]['finish_s']:.1f} s "
      f"[{pred[0]['finish_lo']:.1f}, {pred[0]['finish_hi']:.1f}], cost {pred[0]['cost']:.6f})")

watch = [json.loads(l) for l in open("watch.json") if l.strip()]
assert len(watch) >= 2 and watch[0]["state"] == "running" and watch[-1]["state"] != "running", \
    [w["state"] for w in watch]
assert all(w["state"] == "running" for w in watch[:-1])
print(f"--watch: {len(watch)} prints, the last {watch[-1]['state']}")

end = json.load(open("end.json"))
assert end["state"] == "finished" and end["controller_pid"] is None, end["state"]
assert end["steps_done"] == 120 and end["generation"] == 1
g = end["generations"]
assert [x["membership"] for x in g] == ["local-1:1", "local-0.4:1+local-1:1"], g
assert g[0]["status"] == "stopped" and g[1]["status"] == "done" and g[1]["step_last"] == 119, g
nodes = end["nodes"]
assert len(nodes) == 2 and all(x["t_stop"] is not None for x in nodes), nodes
for x in nodes:
    price = 0.10 if x["itype"] == "local-1" else 0.20
    assert x["billed_s"] == int(x["billed_s"]) and x["billed_s"] >= x["t_stop"] - x["t_start"], x
    assert abs(x["cost"] - price / 3600 * x["billed_s"]) < 1e-12, x
assert abs(end["spend"] - sum(x["cost"] for x in nodes)) < 1e-12
assert end["cost"] == end["spend"] == end["cost_lo"] == end["cost_hi"]
d = [x for x in end["decisions"] if x["action"] == "resize"]
assert len(d) == 1 and d[0]["to"] == "local-0.4:1+local-1:1" and d[0]["from"] == "local-1:1", d
assert d[0]["why"].startswith("schedule:") and d[0]["step"] == 50, d
for other in ("newest.json", "dir.json", "file.json"):
    o = json.load(open(other))
    assert o["run"] == "ts1" and o["steps_done"] == 120 and o["spend"] == end["spend"], other
print(f"finished: {end['steps_done']} steps, 2 generations, spend ${end['spend']:.6f} "
      f"({', '.join(x['node'] + ' ' + str(int(x['billed_s'])) + ' s' for x in nodes)})")
PYEOF
