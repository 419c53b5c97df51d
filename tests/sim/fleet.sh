#!/usr/bin/env bash
# fleet.sh — `pitstop simulate` over several zones and nodes as a user runs it:
# two Can't Be Late traces of two zones, --nodes/--nnodes: JSON with policy,
# the six baselines and limit {cost, kind}, nothing below an exact limit;
# one trace and one node: limit = the optimum (exact), the optimum's row has
# its hours (not nan), prices from the installed catalog's row by default;
# --nnodes: the counts pitstop held (hours per count, its changes, the chart); --count-scale (a note
# without it when the traces give fewer spot nodes than the job holds); spot assumed at 0.3x on-demand
# without --catalog;
# a study file; bad input (a study naming a missing trace, two traces of one
# zone with different ticks, a zone with no price): one message naming the
# file, non-zero exit.
set -u
. "${PIT_SOURCE_DIR:?}/tests/sim/common.bash"

"$PY" - "$T" <<'PY'
import json, sys
t = sys.argv[1]
# zone a: 4 spot for 4 h, then 1; zone b: none for 4 h, then 4 (10-minute ticks, 2 days)
a = [4] * 24 + [1] * 264
b = [0] * 24 + [4] * 264
json.dump({"metadata": {"gap_seconds": 600}, "data": a}, open(t + "/us-east-1a_v100_1.json", "w"))
json.dump({"metadata": {"gap_seconds": 600}, "data": b}, open(t + "/us-east-1b_v100_1.json", "w"))
json.dump({"metadata": {"gap_seconds": 1200}, "data": b[:144]}, open(t + "/other_v100_1.json", "w"))
with open(t + "/region.csv", "w") as f:  # both zones in one CSV (a region), interleaved
    f.write("time_s,itype,zone,available,spot_price_h\n")
    for i in range(len(a)):
        f.write("%d,p3.2xlarge,us-east-1a,%d,0.918\n%d,p3.2xlarge,us-east-1b,%d,0.918\n" % (600 * i, a[i], 600 * i, b[i]))
with open(t + "/a.csv", "w") as f:  # zone a as a CSV with its own spot prices
    f.write("time_s,itype,zone,available,spot_price_h\n")
    for i, c in enumerate(a):
        f.write("%d,p3.2xlarge,us-east-1a,%d,0.9\n" % (600 * i, c))
PY
A="$T/us-east-1a_v100_1.json" B="$T/us-east-1b_v100_1.json"
out=$("$P" simulate --trace "$A" --trace "$B" --nodes 4 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 \
      --catalog "$SRC/catalogs/aws.tsv" --spot-price-h 0.918 --format json) || bad "fleet json run failed"
echo "$out" | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
lim = j["limit"]
assert lim["kind"] in ("exact", "bound") and lim["cost"] > 0, lim
assert [t["zone"] for t in j["traces"]] == ["us-east-1a", "us-east-1b"], j["traces"]
assert all(t["itype"] == "p3.2xlarge" and t["price_h"] == 3.06 for t in j["traces"])
b = j["baselines"]
assert set(b) == {"on_demand", "greedy", "uniform_progress", "skynomad", "ross", "best_fixed"}, set(b)
for r in [j["policy"]] + list(b.values()):
    assert r["cost"] >= lim["cost"] - 1e-6, (r, lim)
    assert "gap_to_limit" in r
p = j["policy"]
assert p["deadline_met"] and p["moves"] == 1, p
assert p["cost"] < b["greedy"]["cost"] and p["cost"] < b["on_demand"]["cost"], (p, b)
assert abs(b["on_demand"]["cost"] - 4 * 3.06 * (6 + 2 / 6)) < 1e-6, b["on_demand"]["cost"]  # restart: 2 ticks
' && ok "two zones, 4 nodes: policy, six baselines, limit; pitstop moves once and beats greedy" || bad "fleet json: $out"

# the same two zones from one CSV holding the region: the same results
out2=$("$P" simulate --trace "$T/region.csv" --nodes 4 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 \
      --catalog "$SRC/catalogs/aws.tsv" --format json) || bad "region csv run failed"
"$PY" - "$out" "$out2" <<'PY' && ok "a CSV of two zones: the same study as two files" || bad "region csv: $out2"
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert [t["zone"] for t in b["traces"]] == ["us-east-1a", "us-east-1b"], b["traces"]
assert abs(a["limit"]["cost"] - b["limit"]["cost"]) < 1e-6 and abs(a["policy"]["cost"] - b["policy"]["cost"]) < 1e-6
PY
printf 'time_s,itype,zone,available\n0,x,za,1\n0,x,zb,1\n600,x,za,1\n600,x,zb,1\n1000,x,za,1\n' > "$T/offgap.csv"
expect_fail "a region CSV with a zone off its gap" "$T/offgap.csv:6: time_s 1000 is off zone 'za'" \
  "$P" simulate --trace "$T/offgap.csv" --job-hours 1 --deadline-hours 2 --restart-hours 0 --price-h 1

# one trace, one node: as before, plus limit = the optimum (exact)
out=$("$P" simulate --trace "$A" --job-hours 6 --deadline-hours 10 --restart-hours 0.2 --format json) || bad "single run"
echo "$out" | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
assert j["limit"]["kind"] == "exact" and abs(j["limit"]["cost"] - j["baselines"]["optimum"]["cost"]) < 1e-9, j["limit"]
assert j["price_h"] == 3.06 and "installed catalog" in j["prices_from"], j["prices_from"]
o = j["baselines"]["optimum"]
assert o["spot_h"] is not None and o["on_demand_h"] is not None, o
' && ok "one trace one node: limit is the exact optimum; prices from the installed catalog's p3.2xlarge row" \
  || bad "single: $out"
"$P" simulate --trace "$A" --job-hours 6 --deadline-hours 10 --restart-hours 0.2 | grep '^optimum' | grep -qv nan \
  && ok "table: the optimum's hours are numbers" || bad "table: the optimum's row has nan"

# a study file (paths relative to it), zones named in it
printf '# two zones\nus-east-1a_v100_1.json za\nus-east-1b_v100_1.json zb p3.2xlarge\n' > "$T/study.txt"
"$P" simulate --study "$T/study.txt" --nodes 2 --nnodes 1:3 --usl 0.05,0.001 --job-hours 6 --deadline-hours 10 \
  --restart-hours 0.2 --spot-price-h 0.9 --format json \
  | "$PY" -c 'import json,sys; j=json.load(sys.stdin); assert [t["zone"] for t in j["traces"]]==["za","zb"] and j["limit"]["cost"]>0 and j["usl_sigma"]==0.05, j' \
  && ok "study file with zones, --nnodes and --usl" || bad "study file"

# --nnodes: spot for 8 nodes for 5 h, for 4 for 40 h, then 8 again; a loose deadline. pitstop runs on
# the 4 spot nodes alone (4:8) and says so: hours per node count (JSON and table), its memberships,
# and the chart (nodes by market over time) drawn for the fleet
"$PY" - "$T" <<'PY'
import json, sys
c = [8] * 30 + [4] * 240 + [8] * 200
json.dump({"metadata": {"gap_seconds": 600}, "data": c}, open(sys.argv[1] + "/us-east-1c_v100_1.json", "w"))
PY
C="$T/us-east-1c_v100_1.json"
out=$("$P" simulate --trace "$C" --nodes 8 --nnodes 4:8 --job-hours 30 --deadline-hours 70 --restart-hours 0.2 \
      --spot-price-h 0.918 --format json) || bad "nnodes json run failed"
echo "$out" | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
p, b = j["policy"], j["baselines"]
counts = {c["nodes"]: c["hours"] for c in p["node_counts"]}
assert set(counts) == {4, 8} and counts[4] >= 35, counts
assert abs(sum(counts.values()) - p["finish_h"]) < 1e-6 and p["deadline_met"] and p["on_demand_node_h"] == 0, p
assert all([c["nodes"] for c in r["node_counts"]] == [8] for r in b.values()), "baselines hold 8"
assert p["cost"] < 0.6 * b["greedy"]["cost"], (p["cost"], b["greedy"]["cost"])
' && ok "--nnodes 4:8: pitstop runs on the 4 spot nodes for 40 h (hours per count in the JSON), baselines hold 8" \
  || bad "nnodes json: $out"
out=$("$P" simulate --trace "$C" --nodes 8 --nnodes 4:8 --job-hours 30 --deadline-hours 70 --restart-hours 0.2 \
      --spot-price-h 0.918 --chart "$T/range.svg") || bad "nnodes table run failed"
echo "$out" | grep -Eq "^pitstop, hours held per node count: 4 nodes 40\.[0-9]+ h \(16[0-9]\.[0-9] node-h\), 8 nodes" \
  && echo "$out" | grep -Eq "^pitstop, memberships over time.* 5\.00: 4 \+ 0 us-east-1c \(after a reclaim\), 45\.[0-9]+: 8 \+ 0" \
  && grep -q "</svg>" "$T/range.svg" && ok "table: hours per node count and the changes; the fleet's chart is drawn" \
  || bad "nnodes table: $out"

# without --catalog: the installed catalog's on-demand price, spot assumed at 0.3 x it and said so
# (as the one-trace form); a catalog the user names without a spot price is refused (below)
out=$("$P" simulate --trace "$A" --trace "$B" --nodes 2 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 \
      --format json) || bad "fleet run with the installed catalog failed: $out"
echo "$out" | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
for t in j["traces"]:
    assert t["itype"] == "p3.2xlarge" and t["price_h"] == 3.06 and abs(t["spot_price_h"] - 0.918) < 1e-9, t
    assert t["spot_assumed"] is True, t
' && ok "installed catalog: on-demand 3.06 \$/h, spot assumed 0.3 x, flagged in the JSON" || bad "assumed spot: $out"
out=$("$P" simulate --trace "$A" --trace "$B" --nodes 2 --job-hours 6 --deadline-hours 10 --restart-hours 0.2) \
  && echo "$out" | grep -q "spot 0.918 \$/h (assumed 0.3 x on-demand" && ok "the table says the spot price is assumed" \
  || bad "assumed spot, table: $out"

# --count-scale: traces of at most 4 spot nodes for an 8-node job: a note says spot covers 4 at most;
# auto reads each count x 2 (said per trace), and pitstop then holds more spot node-hours
plain=$("$P" simulate --trace "$A" --trace "$B" --nodes 8 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 \
        --spot-price-h 0.918 --format json 2> "$T/note.txt") || bad "8 nodes on 4-node traces failed"
grep -q "the traces give at most 4 spot nodes at a time and the job may hold 8.*--count-scale auto" "$T/note.txt" \
  && ok "a note when the traces give fewer spot nodes than the job holds" || bad "no count note: $(cat "$T/note.txt")"
scaled=$("$P" simulate --trace "$A" --trace "$B" --nodes 8 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 \
         --spot-price-h 0.918 --count-scale auto --format json 2> "$T/note2.txt") || bad "--count-scale auto failed"
"$PY" - "$plain" "$scaled" <<'PY' && ok "--count-scale auto: counts x 2 on both traces, more spot node-hours" || bad "count scale: $scaled"
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert [t["count_scale"] for t in a["traces"]] == [1, 1], a["traces"]
assert [t["count_scale"] for t in b["traces"]] == [2, 2], b["traces"]
assert b["policy"]["spot_node_h"] > a["policy"]["spot_node_h"], (a["policy"], b["policy"])
PY
[ ! -s "$T/note2.txt" ] || bad "a note with --count-scale: $(cat "$T/note2.txt")"
out=$("$P" simulate --trace "$A" --trace "$B" --nodes 8 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 \
      --spot-price-h 0.918 --count-scale 3) && echo "$out" | grep -q "counts x 3 (assumed)" \
  && ok "--count-scale 3 said in the table" || bad "count scale table: $out"
expect_fail "--count-scale 0" "count-scale: '0' is not auto or a whole number >= 1" \
  "$P" simulate --trace "$A" --trace "$B" --nodes 8 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 --count-scale 0

printf 'us-east-1a_v100_1.json\nno-such-zone_v100_1.json\n' > "$T/missing.txt"
expect_fail "study naming a missing trace" "study '$T/missing.txt':2: trace '$T/no-such-zone_v100_1.json' is missing" \
  "$P" simulate --study "$T/missing.txt" --nodes 2 --job-hours 6 --deadline-hours 10 --restart-hours 0.2
expect_fail "two traces of one zone with different ticks" "$T/other_v100_1.json" \
  "$P" simulate --trace "$A" --trace "$T/other_v100_1.json" --zone us-east-1a --zone us-east-1a --nodes 2 \
  --job-hours 6 --deadline-hours 10 --restart-hours 0.2 --spot-price-h 0.9
expect_fail "a zone with no price" "trace '$B' (zone us-east-1b): no spot price for type 'p3.2xlarge'" \
  "$P" simulate --trace "$T/a.csv" --trace "$B" --nodes 2 --job-hours 6 --deadline-hours 10 --restart-hours 0.2 \
  --catalog "$SRC/catalogs/aws.tsv"
exit $fail
