#!/usr/bin/env bash
# profile_db.sh — `pitstop profile --from-db` on a store of three synthetic runs whose t_p is
# known (local-1:1 at 40 ms, local-0.4:1 at 100 ms, local-1:2 at 24 ms, and an elastic run
# local-0.4:1+local-1:1 at 80 ms then local-1:1 at 40 ms: one row per membership; prices of
# catalogs/local.tsv, $0.05/h a node): cost picks local-1:1 (the most samples per dollar), time
# picks local-1:2, a deadline only local-1:2 meets makes cost pick it; a deadline nothing
# meets and a budget below the cheapest fail with what was asked and the best possible; no
# store, an empty catalog: one clear message.
set -euo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
P=$PITSTOP
CAT=$PIT_SOURCE_DIR/catalogs/local.tsv
python3 - "$T" <<'PYEOF'
import json, random, sys
random.seed(1)
t = sys.argv[1]
for run, mem, tp in [("a", "local-1:1", 0.040), ("b", "local-0.4:1", 0.100), ("c", "local-1:2", 0.024)]:
    with open("%s/%s.jsonl" % (t, run), "w") as f:
        cfg = {"model": "cnn-wide", "batch": 64, "membership": mem, "iters_per_epoch": 1000}
        f.write(json.dumps({"type": "init", "run": run, "gen": 0, "t": 0.5, "init_s": 0.5, "config": cfg}) + "\n")
        now = 0.5
        for i in range(400):
            s = tp * (1 + 0.02 * random.gauss(0, 1))
            now += s
            f.write(json.dumps({"type": "iter", "run": run, "gen": 0, "t": now, "epoch": 0, "iter": i, "step": i,
                                "batch": 64, "step_s": s}) + "\n")
# d: an elastic run, 200 steps on local-0.4:1+local-1:1 at 80 ms, then 200 on local-1:1 at 40 ms
with open("%s/d.jsonl" % t, "w") as f:
    now, step = 0.5, 0
    for gen, mem, tp in [(0, "local-0.4:1+local-1:1", 0.080), (1, "local-1:1", 0.040)]:
        cfg = {"model": "cnn-wide", "batch": 64, "membership": mem, "iters_per_epoch": 1000}
        f.write(json.dumps({"type": "init", "run": "d", "gen": gen, "t": now, "init_s": 0.5, "config": cfg}) + "\n")
        for i in range(200):
            s = tp * (1 + 0.02 * random.gauss(0, 1))
            now += s
            f.write(json.dumps({"type": "iter", "run": "d", "gen": gen, "t": now, "epoch": 0, "iter": step,
                                "step": step, "batch": 64, "step_s": s}) + "\n")
            step += 1
PYEOF
$P parse --quiet --format jsonl --db "$T/p.db" "$T/a.jsonl" "$T/b.jsonl" "$T/c.jsonl" "$T/d.jsonl"
chosen() { grep '^\*' | awk '{print $2}'; }
out=$($P profile --from-db "$T/p.db" --catalog "$CAT" --iters 10000)
echo "$out"
[ "$(echo "$out" | chosen)" = local-1:1 ] || fail "cost should pick local-1:1"
[ "$(echo "$out" | grep -c '^[* ] local')" = 4 ] || fail "four rows expected"
# the elastic run measures its first membership at its own pace, not the whole run's (~60 ms)
tp=$(echo "$out" | awk '{ k = $1 == "*" } $(1 + k) == "local-0.4:1+local-1:1" { print $(2 + k) }')
awk -v t="$tp" 'BEGIN { exit !(t > 0.075 && t < 0.085) }' || fail "the elastic run's first part measured at $tp s, not ~0.080"
out=$($P profile --from-db "$T/p.db" --catalog "$CAT" --iters 10000 --objective time)
[ "$(echo "$out" | chosen)" = local-1:2 ] || fail "time should pick local-1:2: $out"
out=$($P profile --from-db "$T/p.db" --catalog "$CAT" --iters 10000 --deadline 300)
[ "$(echo "$out" | chosen)" = local-1:2 ] || fail "a 300 s deadline leaves local-1:2: $out"
if $P profile --from-db "$T/p.db" --catalog "$CAT" --iters 10000 --deadline 100 > "$T/o" 2> "$T/e"; then
  fail "an impossible deadline succeeded"
fi
grep -q "nothing fits a deadline of 100 s: the fastest measured takes 2[0-9][0-9] s" "$T/e" || fail "$(cat "$T/e")"
if $P profile --from-db "$T/p.db" --catalog "$CAT" --iters 10000 --budget 0.0001 > "$T/o" 2> "$T/e"; then
  fail "a budget below the cheapest succeeded"
fi
grep -q 'nothing fits a budget of \$0.0001: .* the cheapest costs \$0.005' "$T/e" || fail "$(cat "$T/e")"
if $P profile --from-db "$T/none.db" --catalog "$CAT" 2> "$T/e"; then fail "a missing store succeeded"; fi
grep -q "cannot open" "$T/e" || fail "$(cat "$T/e")"
printf 'itype\tvcpus\tprice_h\tbilling_s\tmin_s\n' > "$T/empty.tsv"
if $P profile --from-db "$T/p.db" --catalog "$T/empty.tsv" 2> "$T/e"; then fail "an empty catalog succeeded"; fi
[ "$(wc -l < "$T/e")" -le 2 ] && grep -q "pitstop: " "$T/e" || fail "$(cat "$T/e")"
echo "profile --from-db: cost, time, deadline, impossible deadline, low budget, bad input: ok"
