#!/usr/bin/env bash
# ctest: slow
# command_spot_plain.sh — a user's script that cannot resume (no snapshot, no protocol: every start
# begins at step 0) under `pitstop run --policy cost --deadline` on the fake AWS CLI's spot market
# (docs/run.md "Spot", "A job that cannot resume"). A reclaim costs such a job all its work, not one
# restart, which the spot policy's guard assumes:
#  (a) a deadline a reclaim at the last step would miss, while on-demand from step 0 still meets it
#      (the job 20 s, the deadline 34 s): the first decision point of its spot generation with its
#      PIT time measured (in its first half) moves it to on-demand now, said with its numbers; 200 steps once in the last
#      generation, the job ends before the deadline, every node stopped;
#  (b) a deadline that leaves a whole run on on-demand after a reclaim at the last step (80 s): spot
#      kept (said); reclaimed mid-run, the job starts again at step 0, and the spot policy's first
#      decision after the reclaim weighs the whole job left (before 2026-11-30: the steps the
#      reclaimed generation had done were counted as done, 2.4 s of work left where 10 s were, and it
#      waited for spot on slack that was not there); the job ends before the deadline.
set -euo pipefail
RUNP=tcp
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
aws_config "$T/aws.json" 0.5
echo 2 > "$FAKE_CLOUD/grace_s"
cat > "$T/plain.py" << 'EOF'
import time
for e in range(4):
    for i in range(50):
        time.sleep(0.1)
        print(f"[{e}/4][{i}/50] Loss_D: 1.0 Loss_G: 1.0 D(x): 0.5 D(G(z)): 0.5 / 0.5", flush=True)
EOF
run=(run --provider command --provider-config "$T/aws.json" --catalog "$T/cat.tsv" --quiet --policy cost
     --nodes c5.large:1)
before=$(leftovers)
# spot_plain EVENTS DEADLINE: 200 steps once in the last generation, the end before the deadline,
# every node stopped; prints the spot decisions after the first
spot_plain() {
  $PY - "$@" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
deadline = float(sys.argv[2])
it = [x for x in r if x["type"] == "iter"]
last = max(x["gen"] for x in it)
steps = [x["step"] for x in it if x["gen"] == last]
assert steps == list(range(200)), f"generation {last}: steps {steps[:3]}..{steps[-3:]} ({len(steps)})"
end = max(x["t"] for x in r if x["type"] == "end")
assert end <= deadline, f"the job ended at {end:.1f} s, deadline {deadline:.0f} s"
nodes = [x for x in r if x["type"] == "node"]
starts = [x["node"] for x in nodes if x["action"] == "start"]
ends = [x["node"] for x in nodes if x["action"] in ("stop", "lost")]
assert sorted(starts) == sorted(ends), (starts, ends)
print(f"200 steps once in generation {last}, ended at {end:.1f} s (deadline {deadline:.0f} s), "
      f"{len(starts)} nodes started, all stopped")
PYEOF
}

# ---- (a) a reclaim at the last step would miss the deadline: on-demand now
"$PITSTOP" "${run[@]}" --deadline 34 --run tcp1 --checkpoint-dir "$T/r1" -- "$PY" "$T/plain.py" \
  > "$T/r1.txt" 2> "$T/r1.err" || fail "the run failed: $(cat "$T/r1.err")"
grep -q "^pitstop: market spot → on_demand: the job cannot resume (no snapshot it restarts from): a reclaim restarts it at step 0, and one at its last step would miss the deadline (.* > 34 s): on-demand now, [0-9]* steps redone" \
  "$T/r1.err" || fail "no move to on-demand said: $(grep pitstop: "$T/r1.err")"
$PY - "$T/r1/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
mv = [x for x in r if x["type"] == "decision" and x["detail"].get("spot_mode") == "on_demand"]
assert len(mv) == 1 and mv[0]["step"] <= 100 and mv[0]["detail"]["to"] == "c5.large@on-demand:1", mv
assert mv[0]["detail"].get("action") == "market", mv[0]
print(f"(a) moved to on-demand at step {mv[0]['step']}: {mv[0]['detail']['why'][:150]}...")
PYEOF
spot_plain "$T/r1/events.jsonl" 34 || fail "(a)"

# ---- (b) a deadline with room for a whole run after a reclaim: spot kept; reclaimed at about step 100
rm -rf "$FAKE_CLOUD/calls" "$FAKE_CLOUD/nodes.json"
"$PITSTOP" "${run[@]}" --deadline 80 --run tcp2 --checkpoint-dir "$T/r2" -- "$PY" "$T/plain.py" \
  > "$T/r2.txt" 2> "$T/r2.err" &
ctl=$!
sleep 10 # (the events of a script that cannot resume are written at its end: the job is 20 s of sleeps)
echo 1 > "$FAKE_CLOUD/reclaim"
wait $ctl || fail "the run did not survive the reclaim: $(cat "$T/r2.err")"
grep -q "will be reclaimed" "$T/r2.err" || fail "no notice said: $(cat "$T/r2.err")"
$PY - "$T/r2/events.jsonl" << 'PYEOF'
import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1])]
rec = [x for x in r if x["type"] == "decision" and "(policy reclaim)" in x["detail"]["why"]]
assert len(rec) == 1, rec
after = [x for x in r if x["type"] == "decision" and x["t"] > rec[0]["t"] and x["detail"].get("policy") == "spot"
         and "work left" in x["detail"]["why"]]
assert after, "no spot decision after the reclaim"
left = float(re.search(r"work left ([0-9.]+) s", after[0]["detail"]["why"]).group(1))
kept = [x for x in r if x["type"] == "decision" and "still leaves the whole job on on-demand" in x["detail"]["why"]]
assert kept and kept[0]["step"] <= 100 and kept[0]["gen"] == 0, "spot not kept with its reason at the start"
assert after[0]["step"] == 0 and left >= 18, f"after the reclaim at step {rec[0]['step']}: {after[0]['detail']['why']}"
print(f"(b) spot kept at step {kept[0]['step']}; reclaimed at step {rec[0]['step']}; the spot policy then: step "
      f"{after[0]['step']}, work left {left:.1f} s (the whole job: it starts again at 0)")
PYEOF
spot_plain "$T/r2/events.jsonl" 80 || fail "(b)"
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"
[ "$before" = "$(leftovers)" ] || fail "left behind: $(leftovers)"
echo "nothing left behind"
