#!/usr/bin/env bash
# ctest: slow
# command_zones.sh — a live `pitstop run --policy cost --deadline` across two zones (issue 29 deliver 7,
# docs/run.md "Zones") against the fake AWS CLI (tests/control/fake): the provider config names the zones
# us-east-1a and us-east-1b; zone a gives one spot node, b as many as asked. The zone policy
# (pit_zone_decide, src/policy: the fleet policy `pitstop simulate` judges) starts both nodes on spot in
# zone a, gets one, and runs the job on one spot and one on-demand node; the spot node is reclaimed with
# notice and zone a runs dry (the fake's reclaim_dry); the job checkpoints within the grace and moves to
# zone b. Checked from the CLI's recorded calls and the fake's nodes: every start named a zone, both zones
# and both markets ran the job (one generation on spot and on-demand at once), every node started was
# terminated; from the events: contiguous steps, every sample of each whole epoch once, one reclaim with
# its checkpoint in the grace, a zone decision moving the job with its reason; every node record names
# the zone and market the fake cloud started that node in; and `pitstop simulate --replay` of the events
# decides every zone decision again the same (and finds a tampered one), follows the run's own restarts
# (the reclaim and the move) and bills each node at its market's price: the replay's cost is the run's
# own (its report's) within 1%.
set -euo pipefail
RUNP=tcz
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
zones_config "$T/aws.json"
echo 1 > "$FAKE_CLOUD/spot_cap_us-east-1a"
touch "$FAKE_CLOUD/reclaim_dry"
before=$(leftovers)
NIT=650
ev=$T/r1/events.jsonl
"$PITSTOP" run --provider command --provider-config "$T/aws.json" --catalog "$T/cat.tsv" --quiet --policy cost \
  --deadline 1800 --nodes c5.large:2 --nnodes 2:2 --run tcz1 --checkpoint-dir "$T/r1" "${common[@]}" --max-iters $NIT \
  --checkpoint-every 10 > "$T/r1.txt" 2> "$T/r1.err" &
ctl=$!
# The reclaim, driven by the job's progress, never by wall time alone: at the first checkpoint from
# step 20 on (the policy has a measured pace, and most of the job is left) once the run time is past
# 1.5 x the first iteration's (the restart the policy weighs before any resize is the first start
# plus a checkpoint; a zone never tried counts as available for the run so far, and spot there must
# be expected to last a restart). The move then weighs the work left (about NIT - 20 steps) against
# one restart of both nodes: it is worth it from 1.7 restarts at these prices. The old trigger, a
# checkpoint past 3 x the first iteration's time, left about NIT x tp - 2 x the first iteration against
# a restart of about the first iteration, so a start slowed by load beside fast steps put the move
# under that threshold (the job stayed on-demand in zone a), and near 3.4 restarts into the run, where
# the policy moves the whole job to zone b before any reclaim.
$PY - "$ev" "$ctl" "$T/trigger.txt" << 'PYEOF' || fail "no checkpoint came from step 20 on: $(cat "$T/r1.err")"
import json, os, sys, time
ev, pid, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
while os.path.exists(f"/proc/{pid}"):
    try:
        r = [json.loads(l) for l in open(ev) if l.endswith("\n")]
    except FileNotFoundError:
        r = []
    it = [x for x in r if x["type"] == "iter"]
    if it and any(x["type"] == "checkpoint" and x["step"] >= 20 for x in r) and it[-1]["t"] >= 1.5 * it[0]["t"]:
        open(out, "w").write(f"reclaim asked at step {it[-1]['step']}, {it[-1]['t']:.1f} s (first iteration at "
                             f"{it[0]['t']:.1f} s)")
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PYEOF
touch "$FAKE_CLOUD/reclaim"
echo "$(cat "$T/trigger.txt")"
wait $ctl || fail "the run did not survive the reclaim: $(cat "$T/r1.err")"
grep -q "will be reclaimed" "$T/r1.err" || fail "no notice said: $(cat "$T/r1.err")"
check_run "$ev" $NIT tcz1 30
check_calls aws tcz1
$PY - "$ev" "$FAKE_CLOUD" tcz1 << 'PYEOF'
import json, os, sys, time
ev, cloud, run = sys.argv[1], sys.argv[2], sys.argv[3]
r = [json.loads(l) for l in open(ev)]
calls = [json.load(open(os.path.join(cloud, "calls", f)))["argv"][1:] for f in sorted(os.listdir(os.path.join(cloud, "calls")))]
starts = [a for a in calls if a[1] == "run-instances"]
for a in starts:  # every start names its zone, as one argv entry
    assert a[a.index("--placement") + 1] in ("AvailabilityZone=us-east-1a", "AvailabilityZone=us-east-1b"), a
asked = [a for a in starts if "MarketType=spot" in a and "AvailabilityZone=us-east-1a" in a]
nodes = {n["id"]: n for n in json.load(open(os.path.join(cloud, "nodes.json")))["nodes"] if n["tags"].get("pitstop-run") == run}
terms = {a[a.index("--instance-ids") + 1] for a in calls if a[1] == "terminate-instances"}
now = time.time()
assert all(n.get("gone_at") and n["gone_at"] <= now for n in nodes.values()), nodes
assert set(nodes) <= terms, (set(nodes) - terms, "started and never terminated")
# what ran the job: the nodes live at each iteration (node records), by zone and market (the fake's nodes)
live, at = set(), []
for x in r:
    if x["type"] == "node" and x["action"] == "ready":
        live.add(x["node"])
    elif x["type"] == "node" and x["action"] in ("stop", "lost"):
        live.discard(x["node"])
    elif x["type"] == "iter":
        at.append(frozenset((nodes[i]["zone"], nodes[i]["spot"]) for i in live))
zones = {z for s in at for z, _ in s}
assert zones == {"us-east-1a", "us-east-1b"}, f"the job ran in {zones}"
assert all(len({z for z, _ in s}) == 1 for s in at), "a generation across two zones"
mixed = sum(1 for s in at if {m for _, m in s} == {True, False})
for x in r:  # every node record names the zone and market the cloud started the node in
    if x["type"] == "node":
        n = nodes[x["node"]]
        assert x.get("zone") == n["zone"] and x.get("market") == ("spot" if n["spot"] else "on-demand"), (x, n)
assert mixed > 0, "no step ran on spot and on-demand nodes at once"
dec = [x["detail"] for x in r if x["type"] == "decision" and x["detail"].get("policy") == "zones"]
assert all(d.get("inputs") for d in dec), "a zone decision without its inputs"
assert dec[0]["to"] == "c5.large@spot:2" and dec[0]["zone"] == "us-east-1a", dec[0]
moves = [d for d in dec if d["what"] == "zone"]
assert moves, [d["why"] for d in dec]
mi = moves[0]["inputs"] if isinstance(moves[0]["inputs"], dict) else json.loads(moves[0]["inputs"])
print(f"the move decided on work left {(mi['total_steps'] - mi['step']) * mi['tp_s'] / mi['restart_s']:.1f} restarts "
      f"(moves from 1.7), {mi['t_s'] / mi['restart_s']:.1f} restarts into the run")
print(f"{len(starts)} run-instances, each with its zone ({len(asked)} spot starts asked in us-east-1a, one node given); "
      f"{len(nodes)} nodes started, all terminated; the job ran in {sorted(zones)}, {mixed} of {len(at)} steps on "
      f"spot and on-demand at once; {len(dec)} zone decisions, e.g.: {moves[0]['why'][:220]}...")
PYEOF
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"

# ---- the replay: every zone decision decided again from its inputs; the run's restarts followed, its cost
replay=(simulate --replay "$ev" --catalog "$T/cat.tsv" --deadline 1800 --nnodes 2:2)
"$PITSTOP" "${replay[@]}" > "$T/replay.txt" || fail "the replay failed"
cat "$T/replay.txt"
$PY - "$T/replay.txt" "$ev" << 'PYEOF'
import json, re, sys
m = re.search(r"(\d+) zone decisions decided again by the zone policy from their inputs: (\d+) the same", open(sys.argv[1]).read())
n = sum(1 for l in open(sys.argv[2]) if '"policy":"zones"' in l.replace(" ", "") and '"inputs"' in l)
assert m and int(m.group(1)) == n >= 3 and m.group(2) == m.group(1), (m and m.group(0), n)
PYEOF
"$PITSTOP" "${replay[@]}" --format json > "$T/replay.json" || fail "the replay (json) failed"
$PY - "$ev" "$T/replay.json" << 'PYEOF'
import json, sys
n = sum(1 for l in open(sys.argv[1]) for x in [json.loads(l)]
        if x["type"] == "decision" and x["detail"].get("policy") == "zones" and x["detail"].get("inputs"))
rp = json.load(open(sys.argv[2]))
assert rp["zones"] == {"decisions": n, "same": n}, rp.get("zones")
print(f"replay (json): {n} zone decisions, all the same")
PYEOF
replay_cost "$ev" "$T/r1.txt" "$T/replay.json"
# a run whose zone decision says another zone than its inputs give is found out
$PY - "$ev" "$T/tampered.jsonl" << 'PYEOF'
import json, sys
out, done = [], False
for l in open(sys.argv[1]):
    x = json.loads(l)
    if not done and x["type"] == "decision" and x["detail"].get("what") == "zone":
        x["detail"]["zone"] = "us-east-1a" if x["detail"]["zone"] == "us-east-1b" else "us-east-1b"
        done = True
    out.append(json.dumps(x))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PYEOF
"$PITSTOP" simulate --replay "$T/tampered.jsonl" --catalog "$T/cat.tsv" --deadline 1800 --nnodes 2:2 > "$T/tampered.txt" || fail "the replay of the tampered run failed"
grep -q "the first that differs: at" "$T/tampered.txt" || fail "a tampered decision was not found: $(cat "$T/tampered.txt")"
echo "tampered: $(grep -o "[0-9]* the same; the first that differs.*" "$T/tampered.txt")"
after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind (processes, nodes, directories)"
