#!/usr/bin/env bash
# run_stop_fixed.sh — a cost run stopped by Ctrl-C is compared with fixed memberships over the steps it
# made, not over the whole job: the report's "run / best fixed" line, report.html and `simulate --replay`
# (its JSON "steps_run") all say so. A workload that states its length (tests/control/fake/proto_slow.py:
# 200 steps of 50 ms), one membership, stopped after step 30: the fixed replay of that same membership over
# the same steps costs what the run cost (ratio within [0.8, 1.25]); over the whole job it would be about
# twice the run's (the bug this guards against printed 0.54). Then the same command continues it to the
# end, and the comparison is of the whole job again; and a generation of node records only (a controller
# killed before its first record) is skipped by the replay.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
. "$PIT_SOURCE_DIR/tests/control/run_procs.bash"
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
FAKE=$PIT_SOURCE_DIR/tests/control/fake/proto_slow.py
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
args=(run --catalog "$T/cat.tsv" --checkpoint-dir "$T/d" --run tsf$$ --quiet --policy cost --nodes local-1:1
      --types local-1 -- /usr/bin/python3 "$FAKE" 200 40 0.2)
"$PITSTOP" "${args[@]}" > "$T/out" 2> "$T/err" &
ctl=$!
wait_for "$T/d/gen-0.log" "step 30$" 300
kill -INT $ctl
rc=0
wait $ctl || rc=$?
[ $rc = 130 ] || fail "exit $rc after SIGINT, not 130: $(cat "$T/err")"
[ -z "$(run_procs tsf$$)" ] || fail "processes left: $(run_procs tsf$$)"
made=$(grep -o "stopped by SIGINT (Ctrl-C) after [0-9]* steps" "$T/out" | grep -o "[0-9]* steps" | grep -o "[0-9]*")
[ -n "$made" ] && [ "$made" -lt 200 ] || fail "no stop report: $(cat "$T/out")"
grep -q "each replayed over the $made of 200 steps this run made" "$T/out" ||
  fail "the comparison does not say it is over the run's $made steps: $(sed -n '/^the run against/,$p' "$T/out")"
ratio() { sed -n 's/^run \/ best fixed: cost \([0-9.]*\),.*/\1/p' "$1"; }
r=$(ratio "$T/out")
$PY -c "import sys; r = float(sys.argv[1]); assert 0.8 <= r <= 1.25, r" "$r" ||
  fail "run / best fixed $r after a stop at step $made: not the same steps compared ($(sed -n '/^the run against/,$p' "$T/out"))"
grep -q "The run was stopped after $made of the job's 200 steps" "$T/d/report.html" || fail "report.html does not say it"
"$PITSTOP" simulate --replay "$T/d/events.jsonl" --catalog "$T/cat.tsv" --policy cost --types local-1 --format json \
  > "$T/replay.json"
$PY - "$T/replay.json" "$made" << 'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["steps"] == 200 and j["steps_run"] == int(sys.argv[2]), (j["steps"], j["steps_run"])
f = j["fixed"][0]
assert f["complete"] and 0.8 <= j["live"]["cost"] / f["cost"] <= 1.25, (j["live"], f)
PY
echo "stopped at step $made of 200: run / best fixed $r over the same steps"
# the same command continues it to the end: the whole job compared again
"$PITSTOP" "${args[@]}" > "$T/out2" 2> "$T/err2" || fail "the continued run failed: $(cat "$T/err2")"
grep -q "each replayed for the whole job" "$T/out2" || fail "continued: $(sed -n '/^the run against/,$p' "$T/out2")"
r2=$(ratio "$T/out2")
$PY -c "import sys; r = float(sys.argv[1]); assert 0.8 <= r <= 1.25, r" "$r2" || fail "continued: run / best fixed $r2"
echo "continued to step 200: run / best fixed $r2 over the whole job"
# a controller killed (kill -9) before its generation's first record leaves that generation as node
# records only (no init, no iteration: the held ones died with it); the next controller's generation
# follows. The replay skips it (its node billed through its records) instead of refusing the whole file
# ("generation 1 has no nodes": seen on PyTorch's DCGAN example, Ctrl-C, then kill -9, then the same
# command). Made here from this run's records: such a generation put between its two.
$PY - "$T/d/events.jsonl" "$T/killed.jsonl" << 'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
at = next(i for i, x in enumerate(r) if x.get("gen", 0) >= 1)
t = r[at]["t"]
node = {"type": "node", "run": r[0]["run"], "gen": 1, "itype": "local-1", "price_h": 0.1, "node": "killed.0"}
for x in r[at:]:
    x["gen"] = x.get("gen", 0) + 1 if "gen" in x and x["gen"] >= 1 else x.get("gen")
ins = [dict(node, t=t - 0.3, action="start"), dict(node, t=t - 0.29, action="ready"), dict(node, t=t - 0.2, action="stop")]
with open(sys.argv[2], "w") as f:
    for x in r[:at] + ins + r[at:]:
        f.write(json.dumps({k: v for k, v in x.items() if v is not None}) + "\n")
PY
"$PITSTOP" simulate --replay "$T/killed.jsonl" --catalog "$T/cat.tsv" --policy cost --types local-1 --format json \
  > "$T/killed.json" 2> "$T/killed.err" || fail "a generation of node records only: $(cat "$T/killed.err")"
$PY -c "import json,sys; j = json.load(open(sys.argv[1])); assert j['steps_run'] == 200 and j['fixed'][0]['complete'], j" \
  "$T/killed.json" || fail "the replay with a generation of node records only: $(cat "$T/killed.json")"
echo "a generation of node records only (a controller killed before its first record): skipped by the replay"
