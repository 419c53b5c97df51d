#!/usr/bin/env bash
# ctest: slow
# command_usl.sh — the time policy live over up to 8 nodes (the command provider's aws preset against the
# fake AWS CLI: nodes are records, their commands run here, so 8 fit on 2 CPUs), on a protocol workload
# whose step is slept by the universal scalability law over its node count (tests/control/fake/
# proto_scale.py: 1000 steps, 100 ms on one node, σ 0.05, κ 0.08: fastest on 3 and 4 nodes, 0.527 of one
# node's step, 8 nodes 38% slower). Started on one node under --nnodes 1:8:
#  - it adds nodes first (the per-rank split, which sees no crosstalk yet, predicts the most);
#  - on the larger membership the ranks wait (the crosstalk), and it moves to fewer, never measured,
#    predicted by the split (by the cautious rule; where its margin is thinner, by the trial rule,
#    docs/decide.md rule 6: seen by hand with κ 0.05);
#  - with three node counts measured the USL fit predicts the others (a reason says "USL fit of measured
#    counts"), and the job ends on 3 or 4 nodes, the law's fastest;
#  - every step once, every node terminated, and `simulate --replay` with no option takes the same
#    decisions at the same steps (the run's settings from its records).
set -euo pipefail
RUNP=tcu
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
echo 0.2 > "$FAKE_CLOUD/boot_s"
aws_config "$T/aws.json" 0.2
"$PITSTOP" run --provider command --provider-config "$T/aws.json" --catalog "$T/cat.tsv" --quiet --policy time \
  --nodes c5.large:1 --nnodes 1:8 --types c5.large --run tcu1 --checkpoint-dir "$T/u" -- \
  /usr/bin/python3 "$PIT_SOURCE_DIR/tests/control/fake/proto_scale.py" 1000 0.1 0.05 0.08 > "$T/u.out" 2> "$T/u.err" ||
  fail "the time run failed: $(cat "$T/u.err")"
$PY - "$T/u/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(1000)), f"steps not 0..999 once each ({len(steps)})"
dec = [x for x in r if x["type"] == "decision"]
res = [x["detail"] for x in dec if x["detail"].get("action") == "resize"]
n = lambda m: int(m.split(":")[1])
assert res and res[0]["what"] == "add" and n(res[0]["to"]) > 1, f"the first resize is not an add: {res[:1]}"
# then fewer, never measured, predicted from the crosstalk the larger one measured (by the cautious rule, or
# when its margin is thinner by the trial rule: "a trial, from ...")
assert len(res) >= 2 and n(res[1]["to"]) < n(res[1]["from"]) and "per-rank split" in res[1]["why"], \
    f"no move to fewer nodes by the split: {[d['why'][:160] for d in res]}"
usl = [x for x in dec if "USL fit of measured counts" in json.dumps(x["detail"])]
assert usl, "no decision weighed the USL fit"
last = res[-1]["to"]
assert n(last) in (3, 4), f"ended on {last}, not the law's fastest (3 and 4 within 0.1%)"
gens = sorted({x["gen"] for x in r if x["type"] == "init"})
print(f"resizes: {[(d['what'], d['from'], d['to']) for d in res]}; the USL fit weighed at {len(usl)} decision points; "
      f"{len(gens)} generations; ended on {last}")
PYEOF
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"
"$PITSTOP" simulate --replay "$T/u/events.jsonl" > "$T/rep.out" 2> "$T/rep.err" || fail "replay: $(cat "$T/rep.err")"
grep -q "^same decisions at the same steps: yes" "$T/rep.out" || fail "the replay took other decisions: $(cat "$T/rep.out")"
[ -z "$(leftovers)" ] || fail "processes left: $(leftovers)"
echo "usl: added, moved to fewer by the crosstalk measured, weighed the USL fit, ended on the law's fastest; replayed alike"
