#!/usr/bin/env bash
# ctest: slow
# run_grow.sh — the cost and time policies live above the initial node count (the per-node launcher,
# tests/control/fake/proto_scale.py: a protocol workload whose step is slept by a scaling law over the
# generation's node count, so the law holds under any load; 400 steps, 50 ms on one node).
#  1. time, local-1:1 under --nnodes 1:2, linear speed-up: it adds a node (predicted by the per-rank
#     split) and ends on local-1:2, every step once;
#  2. cost under --deadline 18 s, Amdahl's serial fraction 0.2 (two nodes 30 ms a step, 20% dearer per
#     step): one node would end at ~20 s, so it adds the second ("the deadline no longer holds"), keeps it
#     while one node could not make the deadline with a switch to spare (the reason names the nearest
#     alternative and the deadline), then goes back to one node once it can: grow, then shrink, in one
#     run. Its `simulate --replay`, given no option, weighs with the run's own settings (its decision
#     records: deadline, node bounds, types) and takes the same decisions at the same steps; before
#     2026-11-29 it weighed no deadline and took none of them.
# Nothing is left running.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash" # fail()
. "$PIT_SOURCE_DIR/tests/control/run_procs.bash"
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
cd "$T"
W=(/usr/bin/python3 "$PIT_SOURCE_DIR/tests/control/fake/proto_scale.py" 400 0.05)
steps_once() { # $1 events file: steps 0..399, each once
  /usr/bin/python3 - "$1" << 'EOF'
import json, sys
steps = [json.loads(l)["step"] for l in open(sys.argv[1]) if '"type":"iter"' in l]
assert steps == list(range(400)), f"steps not 0..399 once each ({len(steps)}, {sorted(set(range(400)) - set(steps))[:5]})"
EOF
}
decisions() { # $1 events file: "what from to step" of each resize
  /usr/bin/python3 - "$1" << 'EOF'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "decision" and r["detail"].get("action") == "resize":
        print(r["detail"]["what"], r["detail"]["from"], r["detail"]["to"], r["step"])
EOF
}

# 1. time: grows to local-1:2
"$PITSTOP" run --quiet --policy time --nodes local-1:1 --nnodes 1:2 --types local-1 --run grt$$ \
  --checkpoint-dir g1 -- "${W[@]}" 0 > g1.out 2> g1.err || fail "the time run failed: $(cat g1.err)"
d1=$(decisions g1/events.jsonl)
[ "$(echo "$d1" | cut -d' ' -f1-3)" = "add local-1:1 local-1:2" ] || fail "time: not one add to local-1:2: $d1"
grep -q "^1 *local-1:2 .* done" g1.out || fail "time: generation 1 on local-1:2 did not end the job: $(cat g1.out)"
steps_once g1/events.jsonl || fail "time: steps"
echo "time: $d1"

# 2. cost under a deadline: grows for it, shrinks back once one node can make it
"$PITSTOP" run --quiet --policy cost --deadline 18 --nodes local-1:1 --nnodes 1:2 --types local-1 --run grc$$ \
  --checkpoint-dir g2 -- "${W[@]}" 0.2 > g2.out 2> g2.err || fail "the cost run failed: $(cat g2.err)"
d2=$(decisions g2/events.jsonl)
[ "$(echo "$d2" | cut -d' ' -f1-3 | tr '\n' ';')" = "add local-1:1 local-1:2;remove local-1:2 local-1:1;" ] ||
  fail "cost: not add then remove: $d2 $(cat g2.out)"
grep -q '"what":"add".*the deadline no longer holds on local-1:1' g2/events.jsonl || fail "cost: the add's reason"
grep -q '"what":"keep".*no other membership fits with certainty (the nearest, remove → local-1:1: [0-9.]* s so far + [0-9.]* s for the rest > the deadline 18.0 s)' \
  g2/events.jsonl || fail "cost: no keep naming the nearest alternative and the deadline: $(grep -A4 '^decisions' g2.out)"
steps_once g2/events.jsonl || fail "cost: steps"
"$PITSTOP" simulate --replay g2/events.jsonl > rep.out 2> rep.err || fail "replay: $(cat rep.err)"
grep -q "^same decisions at the same steps: yes" rep.out &&
  grep -q "the run's own settings .*policy cost, nnodes 1:2, deadline 18 s, budget none, types local-1" rep.out ||
  fail "the replay did not weigh with the run's settings: $(cat rep.out)"
"$PITSTOP" simulate --replay g2/events.jsonl --deadline 1000 > rep2.out 2> rep2.err || fail "replay: $(cat rep2.err)"
grep -q "^same decisions at the same steps: NO" rep2.out || fail "--deadline given did not override the run's"
echo "cost: $(echo "$d2" | tr '\n' ';')"
[ -z "$(run_procs "gr[tc]$$")" ] || fail "processes left: $(run_procs "gr[tc]$$")"
echo "grow: time adds a node; cost grows for the deadline and shrinks back; the replay takes the run's settings"
