#!/usr/bin/env bash
# ctest: slow
# run_restart.sh — a torchrun DDP job in the DDP tutorial's snapshot pattern (examples/pytorch/ddp_snapshot.py:
# CPU, gloo; a snapshot every 2 epochs, resumed from when started again), unchanged under `pitstop run
# --resume-by-restart` (issue 26 item 5):
#  1. resized 1 → 2 → 1 nodes by --schedule: each resize right after a snapshot (the generation ends
#     at the step of the snapshot it restarts from), the steps redone reported and at most one snapshot
#     interval, every step of the job recorded once, each node started and stopped;
#  2. a resize the policy judges too costly (the next snapshot not due before the job's end: one every
#     4 epochs) is refused, with the numbers, and the job finishes on its membership.
# Skips (77) without Debian's python3-torch.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
EX=$PIT_SOURCE_DIR/examples/pytorch/ddp_snapshot.py
torchrun=("$PY" -m torch.distributed.run --redirects 2 --tee 2 '--nnodes=$PITSTOP_NUM_NODES'
          '--node_rank=$PITSTOP_NODE_RANK' --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR'
          '--master_port=$PITSTOP_MASTER_PORT')
cd "$T"
# 1. 8 epochs of 32 steps (1024 samples, batch 32 on one node), a snapshot every 2: resizes at steps 64 and 160
"$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/r" --run trr --resume-by-restart \
  --epochs 8 --schedule 64:2,160:1 -- "${torchrun[@]}" "$EX" --epochs 8 --save-every 2 --snapshot "$T/snap.pt" \
  --step-sleep 0.02 > "$T/r.out" 2> "$T/r.err" || fail "the run failed: $(tail "$T/r.err")"
grep -q "Resized by restart" "$T/r.out" || fail "no word of the resizes by restart: $(cat "$T/r.out")"
redone=$(grep -o "([0-9]* steps redone)" "$T/r.out" | grep -o "[0-9]*")
"$PY" - "$T/r/events.jsonl" "$redone" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
redone = int(sys.argv[2])
its = [x for x in r if x["type"] == "iter"]
steps = [x["step"] for x in its]
assert steps == list(range(256)), f"steps not each once: {len(steps)}"
gens = {}
for x in its:
    gens.setdefault(x["gen"], []).append(x["step"])
assert sorted(gens) == [0, 1, 2], sorted(gens)
ck = {x["step"] for x in r if x["type"] == "checkpoint"}
nodes = {x["gen"]: x["config"]["nodes"] for x in r if x["type"] == "init"}
assert nodes == {0: 1, 1: 2, 2: 1}, nodes
every = 64  # a snapshot every 2 epochs of 32 steps
for g in (0, 1):
    end = max(gens[g]) + 1
    assert end in ck, f"generation {g} ended at step {end}, not at a snapshot ({sorted(ck)})"
    assert min(gens[g + 1]) == end, f"generation {g + 1} starts at {min(gens[g + 1])}, not at the snapshot {end}"
assert 0 <= redone <= every, f"{redone} steps redone: more than one snapshot interval ({every})"
starts = [x["node"] for x in r if x["type"] == "node" and x["action"] == "start"]
stops = [x["node"] for x in r if x["type"] == "node" and x["action"] == "stop"]
assert sorted(starts) == sorted(stops), (starts, stops)
print(f"resized 1 -> 2 -> 1 by restart: generations end at snapshots {[max(gens[g]) + 1 for g in (0, 1)]}, "
      f"{redone} steps redone (at most {every}), 256 steps each once, {len(starts)} nodes started and stopped")
PYEOF
grep "by restart" "$T/r.err" | sed 's/^/  /'

# 2. a snapshot every 4 epochs of a 7-epoch job: at step 160 (epoch 5) the next is due at epoch 8, after the end
rm -f "$T/snap.pt"
"$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/q" --run tqq --resume-by-restart \
  --snapshot "$T/snap.pt" --epochs 7 --schedule 160:2 -- "${torchrun[@]}" "$EX" --epochs 7 --save-every 4 \
  --snapshot "$T/snap.pt" --step-sleep 0.02 > "$T/q.out" 2> "$T/q.err" || fail "the run failed: $(tail "$T/q.err")"
grep -q "refused: a restart now redoes the [0-9]* steps (.* s) since the last snapshot, and the next is due in [0-9]* steps" "$T/q.err" ||
  fail "no refusal with its numbers: $(cat "$T/q.err")"
grep -q "1 resize refused" "$T/q.out" || fail "the report does not count the refusal: $(cat "$T/q.out")"
"$PY" - "$T/q/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
its = [x for x in r if x["type"] == "iter"]
assert [x["step"] for x in its] == list(range(224)) and {x["gen"] for x in its} == {0}, "not one generation to the end"
dec = [x for x in r if x["type"] == "decision"]
assert len(dec) == 1 and "refused" in dec[0]["detail"]["why"] and dec[0]["detail"]["action"] == "keep", dec
PYEOF
echo "$(grep -o "refused: .*" "$T/q.err" | head -1)"

# 3. the DDP tutorial's own way of saving (multigpu_torchrun.py: after epoch e when e % 2 == 0, recorded as
# "e epochs run", so a restart runs epoch e again; no save after the last epoch), as seen on an H200: the
# first restart shows the script resumes one epoch (32 steps) before its snapshot's step, the next
# decision prices that lag, and the last epoch (no line marks its end: the time to the exit holds the
# teardown) is recorded untimed
rm -f "$T/snap.pt"
"$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/u" --run tuu --resume-by-restart \
  --epochs 8 --schedule 64:2,160:1 -- "${torchrun[@]}" "$EX" --epochs 8 --save-every 2 --tutorial-saves \
  --snapshot "$T/snap.pt" --step-sleep 0.02 > "$T/u.out" 2> "$T/u.err" || fail "the run failed: $(tail "$T/u.err")"
grep -q "resumed at step [0-9]*: the [0-9]* steps since its snapshot are redone" "$T/u.err" ||
  fail "no measured redo: $(cat "$T/u.err")"
grep -Eq "the script resumed 32 steps before its snapshot last time|the script's lag before its snapshot included" \
  "$T/u.err" || fail "the second resize does not price the measured lag: $(grep schedule "$T/u.err")"
"$PY" - "$T/u/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
its = [x for x in r if x["type"] == "iter"]
assert [x["step"] for x in its] == list(range(256)), "steps not each once"
nodes = {x["gen"]: x["config"]["nodes"] for x in r if x["type"] == "init"}
assert nodes == {0: 1, 1: 2, 2: 1}, nodes
last = [x for x in its if x["step"] >= 224]
assert all("step_s" not in x for x in last), "the last epoch (ended by the exit) has step times"
assert all(x.get("step_s", 0) > 0 for x in its if x["gen"] == 2 and x["step"] < 224), "the other epochs untimed"
print(f"tutorial saves: resized 1 -> 2 -> 1, 256 steps each once, the last epoch untimed")
PYEOF
grep -E "resumed at|schedule:" "$T/u.err" | sed 's/^/  /'
