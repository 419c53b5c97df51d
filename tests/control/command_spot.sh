#!/usr/bin/env bash
# ctest: slow
# command_spot.sh — spot capacity in a live `pitstop run` (issue 16 deliver 1, docs/run.md "Spot"),
# against the fake AWS CLI (tests/control/fake): with --policy cost --deadline and a catalog of spot
# prices, pit_spot_decide (the code `pitstop simulate` judges) chooses each generation's market from
# the run's own measurements:
#  (a) plenty of slack, spot capacity: the whole job runs on spot nodes (every start asks the spot
#      market), cheaper than the same billed seconds on-demand by the report; every decision point has
#      a spot record weighing both markets, with its reason;
#  (b) the spot node reclaimed with notice, and no spot capacity from then on: checkpoint within the
#      grace period, the policy waits or tries spot while the slack allows, then moves to on-demand
#      and the job ends before the deadline; contiguous steps, every sample once, every node stopped;
#  (c) TYPE@spot on the local provider, or an unknown market: one clear message, non-zero exit,
#      nothing created (no run directory, node or process).
# After (a) and (b): every node record names its market (the one the fake cloud started it on: its
# price) and no zone (the config names none); `pitstop simulate --replay` of the events decides as the
# run did, follows its own restarts (the reclaim, the move to on-demand) and bills each node at its
# market's price: its cost is the run's own (the report's) within 1%, and the same without --catalog
# (from the catalog rows the node start records carry; a copy without them still asks for the
# catalog, as a run written before them); it decides every spot decision
# of the spot policy's again from the inputs the record carries, each the same (a copy with one
# recorded choice changed is found out, at its step; one with a key of its inputs removed is refused
# with one message naming the file, the step and the key).
set -euo pipefail
RUNP=tcs
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
aws_config "$T/aws.json" 0.5
run=(run --provider command --provider-config "$T/aws.json" --catalog "$T/cat.tsv" --quiet --policy cost)
before=$(leftovers)

# spot_check EVENTS REPORT DEADLINE FINAL_MARKET: the spot records and the report's markets
spot_check() {
  $PY - "$@" "$FAKE_CLOUD/calls" << 'PYEOF'
import json, os, re, sys
ev, report, deadline, final, calls = sys.argv[1], open(sys.argv[2]).read(), float(sys.argv[3]), sys.argv[4], sys.argv[5]
r = [json.loads(l) for l in open(ev)]
dec = [x["detail"] for x in r if x["type"] == "decision" and x["detail"].get("policy") == "spot"]
assert dec, "no spot decision"
assert dec[0]["to"] == "c5.large@spot:1", dec[0]  # nothing measured yet: spot first
points = [d for d in dec[1:] if len(d["alternatives"]) >= 2 and "slack" in d["why"]]
assert points, "no spot decision weighed the slack"
for d in points:  # both markets weighed, each with the rest of the job's time and cost
    kinds = {a.get("what") for a in d["alternatives"]}
    assert {"spot", "on-demand"} <= kinds, d
    assert re.search(r"work left [0-9.]+ s, time to the deadline -?[0-9.]+ s, slack -?[0-9.]+ s; restart [0-9.]+ s", d["why"]), d["why"]
ends = [x["t"] for x in r if x["type"] == "end"]
assert ends and ends[-1] <= deadline, f"the job ended at {ends[-1] if ends else None} s, deadline {deadline} s"
m = re.search(r"markets: \$([0-9.]+) on (\d+) spot nodes?, \$([0-9.]+) on-demand; the same billed seconds all on-demand: \$([0-9.]+)", report)
assert m, "no markets line in the report"
spot, od, all_od = float(m.group(1)), float(m.group(3)), float(m.group(4))
assert spot + od < all_od, m.group(0)
gens = [l.split() for l in report.splitlines() if re.match(r"^\d+ +c5\.large", l)]
assert gens and gens[-1][1] == f"c5.large@{final}:1", gens
starts = [json.load(open(os.path.join(calls, f)))["argv"] for f in sorted(os.listdir(calls))]
starts = [a for a in starts if "run-instances" in a]
nspot = sum("MarketType=spot" in a for a in starts)
print(f"{len(dec)} spot decisions, {len(points)} weighing both markets (e.g. '{points[-1]['why'][:150]}...'); "
      f"job ended at {ends[-1]:.1f} s (deadline {deadline:.0f} s); {len(starts)} starts, {nspot} on the spot market; "
      f"last generation on {final}; {m.group(0)}")
PYEOF
}

# replay_check EVENTS REPORT DEADLINE: node records with their market; the replay's decisions and cost
replay_check() {
  "$PITSTOP" simulate --replay "$1" --catalog "$T/cat.tsv" --deadline "$3" --format json > "$T/replay.json" \
    || fail "the replay of $1 failed"
  "$PITSTOP" simulate --replay "$1" --catalog "$T/cat.tsv" --deadline "$3" > "$T/replay.txt" || fail "the replay failed"
  $PY - "$1" "$FAKE_CLOUD/nodes.json" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
cloud = {n["id"]: n for n in json.load(open(sys.argv[2]))["nodes"]}
nodes = [x for x in r if x["type"] == "node"]
for x in nodes:  # the market the cloud started it on, no zone (none configured)
    assert x.get("market") == ("spot" if cloud[x["node"]]["spot"] else "on-demand"), x
    assert "zone" not in x and "@" not in x["itype"], x
assert all((x["market"] == "spot") == (x["price_h"] == 0.035) for x in nodes), "a market against its price"
print(f"{len(nodes)} node records, each with the market the cloud started it on: {sorted({x['market'] for x in nodes})}")
PYEOF
  replay_cost "$1" "$2" "$T/replay.json"
  # without the run's catalog: its node start records carry their type's catalog row, and the replay
  # built from them gives the same live and replayed cost and decisions as with --catalog
  "$PITSTOP" simulate --replay "$1" --deadline "$3" --format json > "$T/nocat.json" 2> "$T/nocat.err" \
    || fail "the replay without --catalog failed: $(cat "$T/nocat.err")"
  $PY - "$1" "$T/cat.tsv" "$T/replay.json" "$T/nocat.json" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
head, row = [l.split() for l in open(sys.argv[2]) if l.split() and l.split()[0] in ("itype", "c5.large")]
want = dict(zip(head, row))
starts = [x for x in r if x["type"] == "node" and x["action"] == "start"]
assert starts and all(x["catalog"] == {"vcpus": int(want["vcpus"]), "price_h": float(want["price_h"]),
                                       "spot_price_h": float(want["spot_price_h"]), "billing_s": float(want["billing_s"]),
                                       "min_s": float(want["min_s"])} for x in starts), starts
withc, without = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
for k in ("live", "replay"):
    assert withc[k]["cost"] == without[k]["cost"], (k, withc[k], without[k])
assert without["same_decisions"] and without.get("spot") == withc.get("spot"), without
print(f"{len(starts)} start records carry the catalog row; without --catalog: replay ${without['replay']['cost']:.6f} "
      f"(with: ${withc['replay']['cost']:.6f}), live ${without['live']['cost']:.6f} (with: ${withc['live']['cost']:.6f})")
PYEOF
  # a run written before the rows (the rows removed): without the run's catalog (the default, local.tsv,
  # lacks c5.large), one message naming both files
  $PY -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
[x.pop("catalog", None) for x in rows]
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in rows))' "$1" "$T/old.jsonl"
  if "$PITSTOP" simulate --replay "$T/old.jsonl" --deadline "$3" > "$T/nocat.out" 2> "$T/nocat.err"; then
    fail "a replay of an old run without the run's catalog was accepted"
  fi
  grep -q "^pitstop: $T/old.jsonl: the run ran 'c5.large', which the catalog '.*local.tsv' (the default) lacks: give the run's --catalog" \
    "$T/nocat.err" && [ "$(wc -l < "$T/nocat.err")" = 1 ] && [ ! -s "$T/nocat.out" ] \
    || fail "without --catalog: $(cat "$T/nocat.err")"
  spot_again "$1" "$T/replay.json" "$T/replay.txt"
  # a copy of the run whose last spot decision says another market than its inputs give is found out
  $PY - "$1" "$T/tampered.jsonl" > "$T/tampered.step" << 'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
k = max(i for i, x in enumerate(rows) if x["type"] == "decision" and "inputs" in x["detail"] and "spot_mode" in x["detail"])
d = rows[k]["detail"]
d["spot_mode"] = "on_demand" if d["spot_mode"] != "on_demand" else "spot"
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in rows))
print(d["step"])
PYEOF
  "$PITSTOP" simulate --replay "$T/tampered.jsonl" --catalog "$T/cat.tsv" --deadline "$3" > "$T/tampered.txt" \
    || fail "the replay of the tampered run failed"
  grep -q "differs at [0-9.]* s (step $(cat "$T/tampered.step")): the run chose" "$T/tampered.txt" \
    || fail "a tampered spot decision was not found: $(cat "$T/tampered.txt")"
  echo "tampered: $(grep -o "differs at.*" "$T/tampered.txt")"
  # a spot decision's inputs without one key: one message naming the file, the step and the key
  $PY - "$1" "$T/malformed.jsonl" > "$T/malformed.step" << 'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
d = next(x["detail"] for x in rows if x["type"] == "decision" and "inputs" in x["detail"])
del d["inputs"]["restart_h"]
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in rows))
print(d["step"])
PYEOF
  if "$PITSTOP" simulate --replay "$T/malformed.jsonl" --catalog "$T/cat.tsv" --deadline "$3" > "$T/malformed.out" \
    2> "$T/malformed.err"; then fail "a spot decision without its restart_h was accepted"; fi
  grep -qx "pitstop: $T/malformed.jsonl: the spot decision at step $(cat "$T/malformed.step"): spot decision inputs: \"restart_h\" is missing" \
    "$T/malformed.err" && [ "$(wc -l < "$T/malformed.err")" = 1 ] && [ ! -s "$T/malformed.out" ] \
    || fail "malformed spot inputs: $(cat "$T/malformed.err")"
  echo "malformed: $(cat "$T/malformed.err")"
}

# spot_again EVENTS REPLAY_JSON REPLAY_TXT: every spot decision the spot policy made is decided again by
# the replay from the inputs it carries, with the same choice; only the layer's own choices (nothing
# measured yet, on-demand after 16 failed spot starts) are followed
spot_again() {
  $PY - "$@" << 'PYEOF'
import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1])]
rp, txt = json.load(open(sys.argv[2])), open(sys.argv[3]).read()
dec = [x["detail"] for x in r if x["type"] == "decision" and
       (x["detail"].get("policy") == "spot" or "spot_mode" in x["detail"])]
again = [d for d in dec if "inputs" in d and "spot_mode" in d]
followed = [d for d in dec if d not in again]
for d in followed:
    assert "nothing measured" in d["why"] or "16 times" in d["why"], f"a policy's spot decision without inputs: {d}"
for d in dec:  # every decision weighing the slack (the policy's) carries its inputs
    assert not re.search(r"slack -?[0-9.]+ s", d["why"]) or d in again, d
assert len(again) >= 1, dec
sp = rp["spot"]
assert sp == {"decisions": len(dec), "decided_again": len(again), "same": len(again), "followed": len(followed),
              "differ": []}, (sp, len(dec), len(again))
m = re.search(r"spot market decisions: (\d+); decided again by the spot policy from their inputs: (\d+), (\d+) the same", txt)
assert m and m.groups() == (str(len(dec)), str(len(again)), str(len(again))), m and m.group(0)
assert "differs at" not in txt, txt
print(f"replay: {len(dec)} spot decisions, {len(again)} decided again from their inputs, all {sp['same']} the same; "
      f"{len(followed)} followed (the layer's own: nothing measured yet / 16 failed starts)")
PYEOF
}

# ---- (a) plenty of slack, spot capacity: spot from start to end
"$PITSTOP" "${run[@]}" --deadline 600 --nodes c5.large:1 --run tcs1 --checkpoint-dir "$T/r1" "${common[@]}" \
  --max-iters 300 --checkpoint-every 50 > "$T/r1.txt" 2> "$T/r1.err" || fail "the spot run failed: $(cat "$T/r1.err")"
spot_check "$T/r1/events.jsonl" "$T/r1.txt" 600 spot
grep -q "^  i-[0-9a-f]* *c5.large *on-demand" "$T/r1.txt" && fail "an on-demand node with spot available: $(cat "$T/r1.txt")"
! grep -q '"on_demand"' "$T/r1/events.jsonl" || fail "a move to on-demand with plenty of slack"
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"
echo "(a) plenty of slack: the whole job on spot"
replay_check "$T/r1/events.jsonl" "$T/r1.txt" 600

# ---- (b) reclaimed with notice, then no spot capacity: on-demand, before the deadline
# (the deadline: 3 × (a)'s whole run, so the slack scales with this machine's speed and load)
dl=$($PY -c 'import json, sys, math; print(math.ceil(3 * max(json.loads(l)["t"] for l in open(sys.argv[1]))))' "$T/r1/events.jsonl")
rm -rf "$FAKE_CLOUD/calls" "$FAKE_CLOUD/nodes.json"
"$PITSTOP" "${run[@]}" --deadline "$dl" --nodes c5.large:1 --run tcs2 --checkpoint-dir "$T/r2" "${common[@]}" \
  --max-iters 300 --checkpoint-every 10 > "$T/r2.txt" 2> "$T/r2.err" &
ctl=$!
wait_for "$T/r2/events.jsonl" '"checkpoint"' 1200
touch "$FAKE_CLOUD/no_spot" "$FAKE_CLOUD/reclaim"
wait $ctl || fail "the run did not survive the reclaim: $(cat "$T/r2.err")"
grep -q "will be reclaimed" "$T/r2.err" || fail "no notice said: $(cat "$T/r2.err")"
check_run "$T/r2/events.jsonl" 300 tcs2 30
spot_check "$T/r2/events.jsonl" "$T/r2.txt" "$dl" on-demand
$PY - "$T/r2/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
dec = [x["detail"] for x in r if x["type"] == "decision" and x["detail"].get("policy") == "spot"]
after = [d["what"] for d in dec[1:]]
assert "on_demand" in after, after
od = after.index("on_demand")
assert all(w in ("idle", "spot", "keep", "market") for w in after[:od]), after  # waited or tried spot first
print("(b) after the reclaim: " + " → ".join(after[:od + 1]))
PYEOF
replay_check "$T/r2/events.jsonl" "$T/r2.txt" "$dl"
rm "$FAKE_CLOUD/no_spot"
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"

# ---- (c) bad input: nothing created
bad "provider 'local' has no spot market" run --nodes local-1@spot:1 --run tcs3 --checkpoint-dir "$T/r3" \
  "${common[@]}" --max-iters 10
[ ! -e "$T/r3" ] || fail "a refused run left its directory"
bad "a market is TYPE@spot or TYPE@on-demand" "${run[@]}" --deadline 60 --nodes c5.large@cheap:1 --run tcs4 \
  --checkpoint-dir "$T/r4" "${common[@]}" --max-iters 10
[ ! -e "$T/r4" ] || fail "a refused run left its directory"
after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind (processes, nodes, directories)"
