#!/usr/bin/env bash
# run_foreign.sh — `pitstop run` on a program that knows nothing of pitstop: its log lines (the
# course DCGAN format) are read live through pitstop parse's readers, so it is measured (steps,
# t_p) while it runs; a schedule that would resize it only recommends (a decision record of kind
# "recommend"), and the report says it cannot be resized without losing work.
# 2. the controller SIGKILLed while such a program runs (level 1 of docs/own-script.md: no
# checkpoint, its steps held until its end), then the same command again: the new controller stops
# the orphaned program, starts it again from step 0, and counts as redone the steps the killed
# generation had reached (RUN_DIR/reached), which no record of the events file keeps; every step
# is recorded once. Before 2026-11-28 the report said "0 steps redone". The report's last line names
# the controller stop the run was continued across ("0 restarts, continued after 1 controller stop
# (N steps redone)"; before, "0 restarts (N steps redone)" read as a contradiction), and part 1's
# run, one controller, says none ("0 restarts (0 steps redone)").
# 3. a command run once per node (below). 4. a log that gives the epoch's length alone (the PyTorch
# examples' MNIST shape): the unknown length said once, naming --epochs (2026-11-29, from a trial of
# that script, whose status line showed "? left" with no word why); with --epochs, counted.
set -euo pipefail
PY=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
T=$(mktemp -d)
ctl=
cleanup() {
  [ -n "$ctl" ] && kill -9 "$ctl" 2> /dev/null || true
  for p in $(pgrep -f -- "foreign_slow.py 60 $T" 2> /dev/null); do kill -9 "$p" 2> /dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r" --run tf --schedule 20:2 \
  -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" 60 \
  > "$T/out.txt" 2> "$T/err.txt" || fail "the run failed: $(cat "$T/err.txt")"
grep -q "resized without losing work" "$T/out.txt" || fail "the report does not say it: $(cat "$T/out.txt")"
grep -q "only recommended" "$T/err.txt" || fail "no recommendation said: $(cat "$T/err.txt")"
grep -Eq "^60 steps in [0-9.]+ s, 0 restarts \(0 steps redone\), cost " "$T/out.txt" ||
  fail "one controller's run: $(tail -2 "$T/out.txt")"
"$PY" - "$T/r/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
its = [x for x in r if x["type"] == "iter"]
assert len(its) == 60 and {x["gen"] for x in its} == {0}, (len(its), {x["gen"] for x in its})
assert all(abs(x["step_s"] - 0.0101) < 1e-9 for x in its)
dec = [x for x in r if x["type"] == "decision"]
assert len(dec) == 1 and dec[0]["detail"]["what"] == "recommend", dec
assert dec[0]["detail"]["alternatives"][0]["membership"] == "local-1:2"
print("foreign workload: 60 steps measured from its log, one recommendation, never resized")
PYEOF

# ---- 2. the controller SIGKILLed at step 10 of a level-1 script, then the same command again
# the script's second argument is a tag only (it ignores anything but ignore-term): it names this
# test's processes for the clean-up
cmd=(run --catalog "$T/cat.tsv" --checkpoint-dir "$T/k" --run tfk --quiet
     -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/foreign_slow.py" 60 "$T")
"$PITSTOP" "${cmd[@]}" > /dev/null 2> "$T/a.err" &
ctl=$!
# killed once the controller has read step 10 (RUN_DIR/reached: one past its last step read): waiting
# on the script's own log instead raced the controller's reading on a loaded machine (9 read of 10)
reached10() { [ -f "$T/k/reached" ] && [ "$(sed -n 's/^gen 0 step \([0-9]*\).*/\1/p' "$T/k/reached")" -ge 10 ] 2> /dev/null; }
for _ in $(seq 600); do
  reached10 && break
  sleep 0.05
done
reached10 || fail "the controller did not read step 10: $(cat "$T/a.err")"
kill -9 "$ctl"
wait "$ctl" 2> /dev/null || true
ctl=
# what the killed generation did: its progress lines (lines that reached the log but not the
# controller's reading when it died are the ones the count misses: it is a lower bound)
lines=$(grep -c "^\[tfk.0 out\] Rank: 0, Epoch: 0, iteration: " "$T/k/gen-0.log")
[ "$(grep -c '"type":"iter"' "$T/k/events.jsonl" || true)" = 0 ] ||
  fail "the killed generation's held steps reached the events file"
"$PITSTOP" "${cmd[@]}" > "$T/b.out" 2> "$T/b.err" || fail "the second controller failed: $(cat "$T/b.err")"
grep -q "stopped the workload" "$T/b.err" || fail "the orphaned script was not stopped: $(cat "$T/b.err")"
redone=$(sed -n 's/.*restarts\?, continued after 1 controller stop (\([0-9]*\) steps redone).*/\1/p' "$T/b.out")
[ -n "$redone" ] || fail "no steps-redone count after the controller stop in the report: $(cat "$T/b.out")"
grep -Eq "^60 steps in [0-9.]+ s, 0 restarts, continued after 1 controller stop \($redone steps redone\), cost " \
  "$T/b.out" || fail "the last line does not name the controller stop: $(tail -2 "$T/b.out")"
[ "$redone" -ge 10 ] && [ "$redone" -le "$lines" ] ||
  fail "the report says $redone steps redone; the killed generation printed $lines progress lines"
grep -q "generation 0 had reached step $redone: the $redone steps from step 0 are done again" "$T/b.err" ||
  fail "not said: $(cat "$T/b.err")"
"$PY" - "$T/k/events.jsonl" << 'PYEOF'
import json, sys
steps = [x["step"] for x in map(json.loads, open(sys.argv[1])) if x["type"] == "iter"]
assert steps == list(range(60)), f"steps not recorded once each: {len(steps)}"
PYEOF
# 3. a command run once per node on two nodes, naming no $PITSTOP_ variable: said that each copy may do
# the whole job; one that names one (torchrun's --node_rank) is not warned about
"$PITSTOP" run --quiet --catalog "$T/cat.tsv" --checkpoint-dir "$T/w" --run tw --nodes 2 \
  -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" 3 > /dev/null 2> "$T/w.err" || fail "$(cat "$T/w.err")"
grep -q "warning: the command runs once per node (up to 2 here), and none of its arguments names" "$T/w.err" ||
  fail "two copies of a plain script not said: $(cat "$T/w.err")"
"$PITSTOP" run --quiet --catalog "$T/cat.tsv" --checkpoint-dir "$T/w2" --run tw2 --nodes 2 \
  -- env 'RANK=$PITSTOP_NODE_RANK' "$PY" "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" 3 > /dev/null 2> "$T/w2.err" ||
  fail "$(cat "$T/w2.err")"
! grep -q "runs once per node" "$T/w2.err" || fail "warned about a command that names \$PITSTOP_NODE_RANK"
echo "controller killed at step $redone of a level-1 script ($lines lines in gen-0.log): report '$(grep -o '[0-9]* restarts\?, continued.*steps redone)' "$T/b.out")', 60 steps recorded once"

# 4. a log in the PyTorch examples' MNIST shape gives the epoch's length (30 lines) but not how many
# epochs: said once, with the options that give it, and no time left shown; with --epochs 1, not
# said, and the status line counts 30 steps
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/m1" --run tfm1 \
  -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/mnist_log.py" 30 > "$T/m1.out" 2> "$T/m1.err" || fail "$(cat "$T/m1.err")"
[ "$(grep -c "the job's length is not known: the workload's log gives 30 steps an epoch but not how many epochs" \
  "$T/m1.err")" = 1 ] || fail "the unknown length not said once: $(cat "$T/m1.err")"
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/m2" --run tfm2 --epochs 1 \
  -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/mnist_log.py" 30 > "$T/m2.out" 2> "$T/m2.err" || fail "$(cat "$T/m2.err")"
! grep -q "length is not known" "$T/m2.err" || fail "said with --epochs: $(cat "$T/m2.err")"
tr '\r' '\n' < "$T/m2.err" | grep -q "step 30/30" || fail "no step N/30 with --epochs 1: $(cat "$T/m2.err")"
echo "a log with the epoch's length alone: '$(grep -m1 "length is not known" "$T/m1.err" | cut -c1-70)...' once; with --epochs 1, 30/30"
