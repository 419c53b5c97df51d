#!/usr/bin/env bash
# run_output.sh — what `pitstop run` keeps of a command's output and says of its failures (issue 26
# item 7): stdout and stderr both in gen-N.log, each line tagged with its node; a failed generation
# names its cause, says there is no checkpoint and that the job starts again from step 0, and counts
# the steps redone once per step (two ranks' lines are one step each), and its timeline shows the
# failed generation; a command that prints no progress is reported as such, not as done; a stored
# foreign run is predicted and priced with no options.
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
# the whole run on one page beside its records and timeline (as pitstop status --html)
if command -v gnuplot > /dev/null; then
  [ -s "$T/r/report.html" ] && grep -q "^report: $T/r/report.html$" "$T/out.txt" &&
    grep -q 'data:image/png;base64,' "$T/r/report.html" || fail "no report.html with its timeline beside the run's records"
  # written by pitstop run after its controller returned (its lock file still there, naming this process):
  # the run is no longer running, and finished (the script exited 0 and wrote no end record: the
  # controller's end says done; before 2026-11-28 the page said "stopped")
  grep -q '<p>finished, generation' "$T/r/report.html" ||
    fail "report.html says: $(grep -o '<p>[a-z]*, generation' "$T/r/report.html")"
fi
# its timeline draws the failed generation (whose steps were dropped: no iteration records) as a span
# from its launch to the next generation's first record, marked failed, and generation 1 unmarked
if command -v gnuplot > /dev/null; then
  "$PITSTOP" plot --kind timeline --events "$T/r/events.jsonl" --out "$T/tl.svg" 2> "$T/tl.err" ||
    fail "timeline: $(cat "$T/tl.err")"
  grep -q ">gen 0 local-1:1 failed<" "$T/tl.svg" && grep -q ">gen 1 local-1:1<" "$T/tl.svg" &&
    grep -q ">failed generation<" "$T/tl.svg" || fail "the timeline does not show the failed generation"
  echo "timeline: $(grep -o '>gen [0-9] [^<]*<' "$T/tl.svg" | tr -d '<>' | paste -sd ';')"
  # the same records with a resize decision in generation 0: it ended by the resize, not failed
  "$PY" - "$T/r/events.jsonl" "$T/rs.jsonl" << 'PYEOF'
import json, sys
out = []
for x in map(json.loads, open(sys.argv[1])):
    if x["type"] == "init" and x["gen"] == 1:
        out.append({"type": "decision", "run": x["run"], "gen": 0, "t": x["t"] - x["init_s"], "step": 0,
                    "detail": {"what": "resize", "step": 0, "alternatives": [{"membership": "local-1:1"}],
                               "why": "schedule", "policy": "schedule", "action": "resize"}})
    out.append(x)
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in out))
PYEOF
  "$PITSTOP" plot --kind timeline --events "$T/rs.jsonl" --out "$T/rs.svg" 2> "$T/tl.err" || fail "timeline: $(cat "$T/tl.err")"
  grep -q ">gen 0 local-1:1<" "$T/rs.svg" && ! grep -q "failed" "$T/rs.svg" || fail "a resized generation is drawn failed"
fi
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
# 4. a stored foreign run (3 epochs of 30 iterations, course-log lines) predicted with no options: the
#    cost from the installed catalog that holds its type (catalogs/local.tsv for local-1; no --catalog),
#    the job the 3 epochs it reached; --epochs 1, below what it did, is the run's first epoch: 30
#    iterations done, elapsed the run time of step 29's record, nothing remaining (not "0 done")
"$PITSTOP" run --checkpoint-dir "$T/e" --run to4 --db "$T/e.db" --quiet \
  -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/epochs_log.py" 3 30 > "$T/e.txt" 2> "$T/e.err" ||
  fail "the 3-epoch run failed: $(cat "$T/e.err")"
"$PITSTOP" predict --db "$T/e.db" --format json > "$T/e.all.json" 2> "$T/e.all.err" || fail "predict: $(cat "$T/e.all.err")"
"$PITSTOP" predict --db "$T/e.db" --epochs 1 --format json > "$T/e.one.json" 2> "$T/e.one.err" ||
  fail "predict --epochs 1: $(cat "$T/e.one.err")"
"$PY" - "$T/e/events.jsonl" "$T/e.all.json" "$T/e.one.json" "$PIT_SOURCE_DIR/catalogs/local.tsv" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
a, o = json.loads(open(sys.argv[2]).read()), json.loads(open(sys.argv[3]).read())
price = [float(l.split()[4]) for l in open(sys.argv[4]) if l.startswith("local-1\t") or l.startswith("local-1 ")][0]
assert a["inputs"]["itype"] == "local-1:1" and a["inputs"]["price_h"] == price, a["inputs"]
assert a["predicted_cost"] > 0 and a["remaining_cost"] == 0, a
assert a["inputs"]["size"] == 3 and a["inputs"]["done_iters"] == 90 and a["remaining_s"] == 0, a["inputs"]
t29 = max(x["t"] for x in r if x["type"] == "iter" and x["step"] == 29)
i = o["inputs"]
assert i["done_iters"] == 30 and abs(i["elapsed_s"] - t29) < 1e-6 and o["remaining_s"] == 0, (i, t29)
assert abs(o["predicted_s"] - t29) < 1e-6 and o["predicted_cost"] > 0, o
print(f"stored foreign run: 3 epochs {a['predicted_s']:.3f} s ${a['predicted_cost']:.3g} at {price} $/h "
      f"(no --catalog); --epochs 1: 30 done in {i['elapsed_s']:.3f} s, 0 remaining")
PYEOF
