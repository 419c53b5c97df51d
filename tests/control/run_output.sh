#!/usr/bin/env bash
# run_output.sh — what `pitstop run` keeps of a command's output and says of its failures (issue 26
# item 7): stdout and stderr both in gen-N.log, each line tagged with its node; a failed generation
# names its cause, says there is no checkpoint and that the job starts again from step 0, and counts
# the steps redone once per step (two ranks' lines are one step each); a command that prints no
# progress is reported as such, not as done.
set -euo pipefail
PY=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
# 1. two ranks' lines, a failure after 20 steps in generation 0, then the whole job
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r" --run to1 --quiet \
  -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/two_ranks_fail.py" 50 20 > "$T/out.txt" 2> "$T/err.txt" ||
  fail "the run failed: $(cat "$T/err.txt")"
grep -q "^\[to1.0 out\] Rank: 1, Epoch: 0, iteration: 3/50" "$T/r/gen-0.log" || fail "no stdout line in gen-0.log: $(head "$T/r/gen-0.log")"
grep -q "^\[to1.0 err\] out of memory (on purpose)" "$T/r/gen-0.log" || fail "no stderr line in gen-0.log: $(cat "$T/r/gen-0.log")"
grep -q "generation 0 failed (the workload exited with status 1): there is no checkpoint or snapshot, so the job starts again from step 0 (20 steps redone)" "$T/err.txt" ||
  fail "the failure is not told as it is: $(cat "$T/err.txt")"
grep -q "(20 steps redone)" "$T/out.txt" || fail "the report counts the steps redone otherwise: $(cat "$T/out.txt")"
echo "failure: $(grep -o 'generation 0 failed.*redone)' "$T/err.txt")"
# 2. a command that prints no progress
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/q" --run to2 --quiet -- /bin/echo hello > "$T/q.txt" 2> "$T/q.err" ||
  fail "echo failed: $(cat "$T/q.err")"
grep -q "^no progress: the command exited 0" "$T/q.txt" || fail "not told: $(cat "$T/q.txt")"
grep -q "none of its 1 line of output" "$T/q.txt" || fail "$(cat "$T/q.txt")"
if grep -q "done" "$T/q.txt"; then fail "a command that printed no progress is called done: $(cat "$T/q.txt")"; fi
grep -q "^\[to2.0 out\] hello$" "$T/q/gen-0.log" || fail "its output is not in gen-0.log"
echo "$(grep "^no progress" "$T/q.txt")"
# 3. a foreign program's job sized on the command line (--iters): the cost policy weighs it (decision
#    records with the rest of the job's predicted time and cost), rather than "the job's length is unknown"
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/c" --run to3 --quiet --policy cost --deadline 3600 \
  --iters 60 -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/foreign_slow.py" 60 > "$T/c.txt" 2> "$T/c.err" ||
  fail "the sized run failed: $(cat "$T/c.err")"
"$PY" - "$T/c/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
dec = [x["detail"] for x in r if x["type"] == "decision"]
assert dec, "no decision"
assert all("unknown" not in d["why"] for d in dec), dec[0]["why"]
alt = dec[-1]["alternatives"][0]
assert alt["predicted_s"] > 0 and alt["cost"] > 0, alt
init = [x for x in r if x["type"] == "init"]
assert init and init[0]["config"]["planned_iters"] == 60, init
print(f"sized foreign job: {len(dec)} cost decisions, the last predicting {alt['predicted_s']:.2f} s and ${alt['cost']:.6f} for the rest")
PYEOF
