#!/usr/bin/env bash
# ctest: slow
# replay.sh — live meets simulated (issue 16): a `pitstop run --policy cost` on
# a heterogeneous pair of local nodes (local-1 priced 10 x local-0.4, so the
# policy resizes whatever the machine's load) is recorded, then
# `pitstop simulate --replay` drives the same policy over the run's own records:
# the same resize decisions at the same steps, and a cost within 5% of the one
# the node records measured. The replay under other bounds (--nnodes 2:2) must
# NOT agree (the check can fail). Bad events files (truncated, no iteration, a
# type the catalog lacks) give one message naming the file and a non-zero exit.
set -u
. "${PIT_SOURCE_DIR:?}/tests/sim/common.bash"
. "$SRC/tests/dist/common.bash"
unset OPENBLAS_CORETYPE

cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s  boot_s
local-1    1      1     -          0.50     1          0      0
local-0.4  1      1     40%        0.05     1          0      0
CAT
"$P" run --quiet --catalog "$T/cat.tsv" --run rp --checkpoint-dir "$T/r" --nodes local-1:1+local-0.4:1 \
  --nnodes 1:2 --policy cost --model cnn-wide --data synthetic --batch-size 64 --no-validation --max-iters 600 \
  > "$T/run.out" 2> "$T/run.err" || { bad "the live run failed: $(tail -5 "$T/run.err")"; exit 1; }
EV="$T/r/events.jsonl"

"$P" simulate --replay "$EV" --catalog "$T/cat.tsv" --nnodes 1:2 --format json > "$T/replay.json" \
  || bad "replay failed"
"$PY" - "$T/replay.json" "$EV" << 'PY' && ok "replay: same decisions, same steps, cost within 5%" || bad "replay: $(cat "$T/replay.json")"
import json, sys
j = json.load(open(sys.argv[1]))
# the live decisions, read here independently of the replay's reader
live = []
for l in open(sys.argv[2]):
    r = json.loads(l)
    d = r.get("detail")
    if r["type"] == "decision" and isinstance(d, dict) and d.get("action") == "resize":
        live.append((r["step"], d["from"], d["to"]))
assert len(live) >= 1, "the live run made no resize"
got = [(d["step"], d["from"], d["to"]) for d in j["live"]["decisions"]]
assert got == live, (got, live)
sim = [(d["step"], d["from"], d["to"]) for d in j["replay"]["decisions"]]
assert sim == live, (sim, live)
assert j["same_decisions"] is True and j["diverged"] is False
assert j["steps"] == 600
assert 0.95 <= j["replay"]["cost"] / j["live"]["cost"] <= 1.05, (j["replay"]["cost"], j["live"]["cost"])
print("live", live, "cost live %.6g replay %.6g" % (j["live"]["cost"], j["replay"]["cost"]))
PY

"$P" simulate --replay "$EV" --catalog "$T/cat.tsv" --nnodes 2:2 --format json \
  | "$PY" -c 'import json,sys; j=json.load(sys.stdin); assert j["same_decisions"] is False, j' \
  && ok "replay under --nnodes 2:2 differs from the run" || bad "replay under other bounds"

"$P" simulate --replay "$EV" --catalog "$T/cat.tsv" --nnodes 1:2 | grep -q "^same decisions at the same steps: yes" \
  && ok "table" || bad "table"

replay_fail() { # name file needle extra-args...
  local name=$1 f=$2 needle=$3
  shift 3
  expect_fail "$name" "$needle" "$P" simulate --replay "$f" --catalog "$T/cat.tsv" "$@"
}
head -c $(($(stat -c %s "$EV") / 2)) "$EV" > "$T/trunc.jsonl"
replay_fail "truncated events" "$T/trunc.jsonl" trunc.jsonl
grep -v '"type":"iter"' "$EV" > "$T/noiter.jsonl"
replay_fail "no iteration" "$T/noiter.jsonl" noiter.jsonl
replay_fail "type not in catalog" "$EV" cat.tsv --types local-1,no.such
exit $fail
