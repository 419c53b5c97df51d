#!/usr/bin/env bash
# simulate.sh — `pitstop simulate` as a user runs it: a small JSON trace in the
# Can't Be Late format and a CSV trace give a table and JSON with policy and the
# four baselines (optimum's gap 0, no result below it, pitstop meets the
# deadline); bad traces (truncated, negative count, zero gap, a type the catalog
# lacks) give one message naming the file and a non-zero exit.
set -u
. "${PIT_SOURCE_DIR:?}/tests/sim/common.bash"

# 10-minute ticks: spot 6 h, away 3 h, back 6 h, away 2 h, ... (two days)
"$PY" - "$T/us-west-2a_v100_1.json" <<'PY'
import json, sys
d = ([1]*36 + [0]*18 + [1]*36 + [0]*12) * 3
json.dump({"metadata": {"gap_seconds": 600}, "data": d}, open(sys.argv[1], "w"))
PY
out=$("$P" simulate --trace "$T/us-west-2a_v100_1.json" --job-hours 10 --deadline-hours 15 --restart-hours 0.2 \
      --catalog "$SRC/catalogs/aws.tsv" --spot-price-h 0.918 --format json) || bad "json run failed"
echo "$out" | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
b = j["baselines"]; p = j["policy"]
assert j["itype"] == "p3.2xlarge" and j["price_h"] == 3.06, j["itype"]
for k in ("on_demand", "greedy", "uniform_progress", "optimum"):
    for f in ("cost", "finish_h", "deadline_met", "decisions", "gap_to_optimum"):
        assert f in b[k], (k, f)
opt = b["optimum"]["cost"]
assert abs(b["optimum"]["gap_to_optimum"]) < 1e-12
for r in [p] + list(b.values()):
    assert r["cost"] >= opt - 1e-9, r["cost"]
assert p["deadline_met"] and p["finish_h"] <= 15
assert abs(b["on_demand"]["cost"] - 3.06 * (10 + 2 / 6)) < 1e-6, b["on_demand"]["cost"]  # restart: 2 ticks of 10 min
assert p["cost"] < b["on_demand"]["cost"]
assert len(p["decisions"]) >= 1 and p["decisions"][0]["t_h"] == 0
' && ok "json: policy and baselines, none below the optimum" || bad "json content: $out"

"$P" simulate --trace "$T/us-west-2a_v100_1.json" --job-hours 10 --deadline-hours 15 --restart-hours 0.2 \
  | grep -q "^uniform_progress" && ok "table" || bad "table"

printf 'time_s,itype,zone,available,spot_price_h\n0,x1,z,1,0.3\n3600,x1,z,1,0.3\n7200,x1,z,0,0.3\n10800,x1,z,1,0.3\n' > "$T/own.csv"
"$P" simulate --trace "$T/own.csv" --job-hours 2 --deadline-hours 4 --restart-hours 0 --price-h 1 --format json \
  | "$PY" -c 'import json,sys; j=json.load(sys.stdin); assert j["spot_price_h"]==0.3 and abs(j["baselines"]["optimum"]["cost"]-0.6)<1e-9, j' \
  && ok "csv trace with its spot prices" || bad "csv trace"

# the chart (gnuplot): a PNG and an SVG, whole; a bad path or name, or gnuplot failing: one message
# naming the file, and no picture nor temporary file left
if command -v "${PIT_GNUPLOT:-gnuplot}" >/dev/null; then
  chart() { "$P" simulate --trace "$T/us-west-2a_v100_1.json" --job-hours 10 --deadline-hours 15 --restart-hours 0.2 \
              --chart "$@" >/dev/null 2>"$T/chart.err"; }
  chart "$T/case.png" && [ -s "$T/case.png" ] && [ "$(head -c 8 "$T/case.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
    && ok "chart: a PNG" || bad "chart png: $(cat "$T/chart.err")"
  chart "$T/case.svg" && [ -s "$T/case.svg" ] && grep -q '</svg>' "$T/case.svg" && grep -q 'uniform_progress' "$T/case.svg" \
    && ok "chart: a whole SVG naming the policies" || bad "chart svg: $(cat "$T/chart.err")"
  chart_fail() { # name needle chart-path: one line naming the path, nothing written
    expect_fail "$1" "$2" "$P" simulate --trace "$T/us-west-2a_v100_1.json" --job-hours 10 --deadline-hours 15 \
      --restart-hours 0.2 --chart "$3"
  }
  chart_fail "chart: no such directory" "cannot write chart '$T/no/such/dir/c.png'" "$T/no/such/dir/c.png"
  chart_fail "chart: not .png or .svg" "'$T/case.gif'" "$T/case.gif"
  PIT_GNUPLOT=false chart_fail "chart: gnuplot fails" "chart '$T/failed.png': gnuplot failed" "$T/failed.png"
  left=$(ls "$T" | grep -E '^(failed\.png|case\.gif)|\.tmp\.' || true)
  [ -z "$left" ] && ok "chart: nothing left by the failures" || bad "chart: left $left"
else
  echo "no gnuplot: chart checks skipped"
fi

sim_fail() { # name file extra-args...: non-zero exit, one line naming the file
  local name=$1 f=$2
  shift 2
  expect_fail "$name" "$(basename "$f")" "$P" simulate --trace "$f" --job-hours 2 --deadline-hours 4 \
    --restart-hours 0.1 "$@"
}
printf '{"metadata": {"gap_seconds": 600}, "data": [1, 0, 1' > "$T/trunc.json"
sim_fail truncated "$T/trunc.json"
printf '{"metadata": {"gap_seconds": 600}, "data": [1, -3, 1]}' > "$T/neg.json"
sim_fail "negative count" "$T/neg.json"
printf '{"metadata": {"gap_seconds": 0}, "data": [1, 1]}' > "$T/zero.json"
sim_fail "zero gap" "$T/zero.json"
printf 'time_s,itype,zone,available\n0,x1,z,1\n0,x1,z,1\n' > "$T/zero.csv"
sim_fail "zero gap (csv)" "$T/zero.csv"
printf 'time_s,itype,zone,available\n0,no.such,z,1\n60,no.such,z,1\n' > "$T/type.csv"
sim_fail "type not in catalog" "$T/type.csv" --catalog "$SRC/catalogs/aws.tsv"
exit $fail
