#!/usr/bin/env bash
# ctest: slow
# command_zones_count.sh — a live `pitstop run --policy cost --deadline --nnodes 1:2` across two zones
# (issue 29 item 5, docs/run.md "Zones") against the fake AWS CLI (tests/control/fake): the zone layer
# owns the node count within MIN..MAX. The job starts on two spot nodes in us-east-1a; one of them is
# reclaimed with notice (at the first checkpoint from step 20 on). With the job's count fixed the zone
# policy refills the survivor with an on-demand node or moves both nodes to us-east-1b; within 1..2 it
# runs the spot survivor alone: half the pace for $0.035/h against $0.12/h for the pair per hour of
# the job's work, which the deadline's slack pays for. Checked: the zone decision after the notice
# chose one spot node and no on-demand one and says the count and why; no node was started after the
# notice, every step after it ran on that one spot node in us-east-1a; every start named a zone and
# every node started was terminated (the CLI's recorded calls); contiguous steps, every sample of each
# whole epoch once, the checkpoint within the grace; that decision's inputs carry the reclaim
# ("reclaimed": 1, in that decision only: the fleet rule's reclaim, as the simulator asks it at the
# reclaim's tick); and `pitstop simulate --replay` decides every zone
# decision again the same (the count included), follows the count change as one of the run's own
# restarts and bills the run within 1%, and the same without --catalog (the catalog rebuilt from the
# rows the node start records carry): the same decisions, the same live and replayed cost. `pitstop status` (table, JSON, --html) without --catalog prices
# the run from the catalog rows its node start records carry: the same spend as with the run's
# --catalog (c5.large is not in local.tsv, and its 60 s minimum makes billed and raw seconds differ);
# a copy of the events file without the rows falls back to local.tsv as before (every node unpriced,
# billed on raw seconds at its record's price).
set -euo pipefail
RUNP=tzn
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
zones_config "$T/aws.json"
before=$(leftovers)
NIT=260
ev=$T/r1/events.jsonl
"$PITSTOP" run --provider command --provider-config "$T/aws.json" --catalog "$T/cat.tsv" --quiet --policy cost \
  --deadline 1800 --nodes c5.large:2 --nnodes 1:2 --run tzn1 --checkpoint-dir "$T/r1" "${common[@]}" \
  --max-iters $NIT --checkpoint-every 10 > "$T/r1.txt" 2> "$T/r1.err" &
ctl=$!
# the reclaim, driven by the job's progress: at the first checkpoint from step 20 on (a measured pace)
$PY - "$ev" "$ctl" << 'PYEOF' || fail "no checkpoint came from step 20 on: $(cat "$T/r1.err")"
import json, os, sys, time
ev, pid = sys.argv[1], int(sys.argv[2])
while os.path.exists(f"/proc/{pid}"):
    try:
        r = [json.loads(l) for l in open(ev) if l.endswith("\n")]
    except FileNotFoundError:
        r = []
    if any(x["type"] == "checkpoint" and x["step"] >= 20 for x in r):
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PYEOF
touch "$FAKE_CLOUD/reclaim"
wait $ctl || fail "the run did not survive the reclaim: $(cat "$T/r1.err")"
check_run "$ev" $NIT tzn1 30
check_calls aws tzn1
check_zone_calls tzn1 us-east-1a us-east-1b
$PY - "$ev" "$FAKE_CLOUD" tzn1 << 'PYEOF'
import json, os, sys
ev, cloud, run = sys.argv[1], sys.argv[2], sys.argv[3]
r = [json.loads(l) for l in open(ev)]
nodes = [n for n in json.load(open(os.path.join(cloud, "nodes.json")))["nodes"] if n["tags"].get("pitstop-run") == run]
assert len(nodes) == 2 and all(n["spot"] and n["zone"] == "us-east-1a" for n in nodes), \
    f"nodes started: {[(n['zone'], n['spot']) for n in nodes]} (wanted 2 spot nodes in us-east-1a, none after the notice)"
notice = next(x["t"] for x in r if x["type"] == "decision" and "(policy reclaim)" in json.dumps(x["detail"]))
dec = [x for x in r if x["type"] == "decision" and x["detail"].get("policy") == "zones"]
assert all(d["detail"].get("inputs") for d in dec), "a zone decision without its inputs"
# the first zone decision after the notice: the survivor alone (kept: no node started)
after = [d["detail"] for d in dec if d["t"] >= notice]
assert after and after[0]["to"] == "c5.large@spot:1" and after[0]["zone"] == "us-east-1a", \
    [(d.get("to"), d["why"][:160]) for d in after]
why = after[0]["why"]
assert "count 1 of 1..2 (the job's 2, linear scaling): $0.0700/h per hour of the job's work" in why, why
# the reclaim is an input of that decision, once (the simulator's fleet rule at the tick of a reclaim)
rec = [d["detail"]["inputs"].get("reclaimed") for d in dec]
assert after[0]["inputs"]["reclaimed"] == 1 and "after 1 spot node reclaimed (the survivors held)" in why, why
assert sum(rec) == 1, f"the reclaim weighed {sum(rec)} times: {rec}"
# the last generation (every step after the notice's) ran on one node: its init records and ranks
last = max(x["gen"] for x in r if x["type"] == "iter")
one = [x for x in r if x["type"] == "iter" and x["gen"] == last]
counts = {x["nodes"] for x in r if x["type"] == "init" and x["gen"] == last}
assert last >= 1 and counts == {1} and all(len(x["compute_s"]) == 1 for x in one), (last, counts)
print(f"{len(nodes)} nodes, both spot in us-east-1a; after the notice: {why[:60]}... {why[why.index('count 1'):why.index('count 1') + 170]}; "
      f"the last {len(one)} steps on one spot node")
PYEOF
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"

# ---- the replay: every zone decision decided again from its inputs (the count included)
"$PITSTOP" simulate --replay "$ev" --catalog "$T/cat.tsv" --deadline 1800 --nnodes 1:2 --format json \
  > "$T/replay.json" || fail "the replay failed"
$PY - "$ev" "$T/replay.json" << 'PYEOF'
import json, sys
n = sum(1 for l in open(sys.argv[1]) for x in [json.loads(l)]
        if x["type"] == "decision" and x["detail"].get("policy") == "zones" and x["detail"].get("inputs"))
rp = json.load(open(sys.argv[2]))
assert n >= 2 and rp["zones"] == {"decisions": n, "same": n}, (n, rp.get("zones"))
print(f"replay: {n} zone decisions decided again, all the same")
PYEOF
replay_cost "$ev" "$T/r1.txt" "$T/replay.json"
# without the run's catalog: the replay builds it from the node start records' catalog rows
"$PITSTOP" simulate --replay "$ev" --deadline 1800 --nnodes 1:2 --format json > "$T/nocat.json" 2> "$T/nocat.err" \
  || fail "the replay without --catalog failed: $(cat "$T/nocat.err")"
$PY - "$T/replay.json" "$T/nocat.json" << 'PYEOF'
import json, sys
withc, without = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in ("live", "replay"):  # each side's decisions (step, from, to), cost and time
    assert withc[k] == without[k], (k, withc[k], without[k])
assert without["same_decisions"] and without["zones"] == withc["zones"], (without, withc)
assert without == withc, [k for k in withc if withc[k] != without.get(k)]  # the fixed memberships too
print(f"replay without --catalog: {without['zones']['same']} zone decisions the same, replay ${without['replay']['cost']:.6f} "
      f"(with: ${withc['replay']['cost']:.6f}), live ${without['live']['cost']:.6f} (with: ${withc['live']['cost']:.6f})")
PYEOF

# ---- pitstop status without --catalog: the run's own catalog rows, else local.tsv
"$PITSTOP" status "$T/r1" --catalog "$T/cat.tsv" --format json > "$T/st_cat.json" || fail "status --catalog failed"
"$PITSTOP" status "$T/r1" --format json > "$T/st_own.json" || fail "status without --catalog failed"
"$PITSTOP" status "$T/r1" > "$T/st_own.txt" || fail "status (table) without --catalog failed"
"$PITSTOP" status "$T/r1" --catalog "$T/cat.tsv" --html "$T/cat.html" 2> /dev/null || fail "status --html --catalog failed"
"$PITSTOP" status "$T/r1" --html "$T/own.html" 2> /dev/null || fail "status --html without --catalog failed"
$PY -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
[x.pop("catalog", None) for x in rows]
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in rows))' "$ev" "$T/old.jsonl"
"$PITSTOP" status "$T/old.jsonl" --format json > "$T/st_old.json" || fail "status of the copy without rows failed"
$PY - "$ev" "$T" << 'PYEOF'
import json, re, sys
ev, t = sys.argv[1], sys.argv[2]
withc, own, old = (json.load(open(f"{t}/st_{k}.json")) for k in ("cat", "own", "old"))
n = len(own["nodes"])
assert own["spend"] == withc["spend"] and own["cost"] == withc["cost"], (own["spend"], withc["spend"])
assert withc["priced_from"] == "catalog" and own["priced_from"] == "records" and old["priced_from"] == "catalog", \
    (withc["priced_from"], own["priced_from"], old["priced_from"])
assert withc["unpriced_nodes"] == own["unpriced_nodes"] == 0 and old["unpriced_nodes"] == n, \
    (withc["unpriced_nodes"], own["unpriced_nodes"], old["unpriced_nodes"])
assert [x["cost"] for x in own["nodes"]] == [x["cost"] for x in withc["nodes"]], (own["nodes"], withc["nodes"])
# the copy without rows: raw seconds at each node record's price (local.tsv lacks c5.large)
start, raw = {}, 0.0
for x in map(json.loads, open(ev)):
    if x["type"] == "node" and x["action"] == "start":
        start[x["node"]] = (x["t"], x["price_h"])
    elif x["type"] == "node" and x["action"] in ("stop", "lost"):
        t0, p = start.pop(x["node"])
        raw += p * (x["t"] - t0) / 3600
assert abs(old["spend"] - raw) < 1e-9 and old["spend"] < own["spend"], (old["spend"], raw, own["spend"])
txt = open(f"{t}/st_own.txt").read()
m = re.search(r"spend +\$([0-9.]+) \(billed as the run's node records' catalog rows bill\)", txt)
assert m and abs(float(m.group(1)) - withc["spend"]) < 1e-6, txt
html = {k: float(re.search(r"spend \(billed\)</th><td class=\"n\">([0-9.]+)<", open(f"{t}/{k}.html").read()).group(1))
        for k in ("cat", "own")}
assert html["own"] == html["cat"] and abs(html["own"] - withc["spend"]) < 1e-6, (html, withc["spend"])
print(f"status: spend ${own['spend']:.6f} from the node records' rows (--catalog: ${withc['spend']:.6f}; "
      f"table {m.group(1)}, html {html['own']:.6f}); {n} nodes; without the rows: ${old['spend']:.6f} "
      f"({old['unpriced_nodes']} nodes unpriced: raw seconds, as before)")
PYEOF
# the count read back as fixed (the inputs' nmin = nmax) takes another decision: found out
$PY - "$ev" "$T/fixed.jsonl" << 'PYEOF'
import json, sys
out = []
for l in open(sys.argv[1]):
    x = json.loads(l)
    d = x.get("detail") or {}
    if x["type"] == "decision" and d.get("policy") == "zones" and d.get("inputs"):
        i = d["inputs"] if isinstance(d["inputs"], dict) else json.loads(d["inputs"])
        i["nmin"] = i["nmax"] = i["nodes"]
        d["inputs"] = i if isinstance(d["inputs"], dict) else json.dumps(i)
    out.append(json.dumps(x))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PYEOF
"$PITSTOP" simulate --replay "$T/fixed.jsonl" --catalog "$T/cat.tsv" --deadline 1800 --nnodes 1:2 > "$T/fixed.txt" ||
  fail "the replay of the fixed-count copy failed"
grep -q "the first that differs: at" "$T/fixed.txt" || fail "the job's count fixed took the same decisions: $(cat "$T/fixed.txt")"
echo "the job's count fixed instead: $(grep -o "the first that differs.*" "$T/fixed.txt" | head -1)"
after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind (processes, nodes, directories)"
