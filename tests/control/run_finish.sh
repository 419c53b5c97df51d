#!/usr/bin/env bash
# ctest: slow
# run_finish.sh — the ends of a `pitstop run` under faults (issue 28):
#  1. the controller SIGKILLed right after the final end record is in the events file
#     (test hook PITSTOP_TEST_KILL=after-end), and again right after the state says done,
#     before its nodes are stopped (after-done-state): the same command again says the run
#     is already done, runs nothing (every step once in the events file) and leaves nothing
#     (processes, cgroups, node files); a third time, after a clean finish, the same;
#  2. `pitstop run --cleanup RUN` as docs/run.md writes it, for a run started with
#     --checkpoint-dir elsewhere, after a kill -9 of a per-node launcher job on 2 nodes: every
#     process and both cgroups gone; then the same with --checkpoint-dir given;
#  3. a controller killed while the schedule has 2 nodes starts again on 2, not on the
#     initial 1 (no node stopped and started again, no extra resize);
#  4. a controller killed after a checkpoint and started again on another membership, so it
#     adopts no node: its node records (the old node's stop, the new one's start and ready),
#     and only those, say "continued": true, which the timeline reads as generation 0's
#     controller stop, not a failure (docs/run.md; before 2026-11-29 nothing told them apart).
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/control/faults_common.bash"

T=$(mktemp -d)
export XDG_STATE_HOME=$T/xdg # where --cleanup RUN finds a run's directory
leftovers() {
  { pgrep -af -- "--run tf[0-9]" || true; pgrep -af "sleep 4321" || true
    ls /sys/fs/cgroup/cpu 2> /dev/null | grep "^pitstop\.tf[0-9]" || true; } | grep -v pgrep || true
}
cleanup() {
  for p in $(pgrep -f -- "--run tf[0-9]") $(pgrep -f "sleep 4321"); do kill -9 "$p" 2> /dev/null || true; done
  for d in /sys/fs/cgroup/cpu/pitstop.tf[0-9]*; do [ -d "$d" ] && rmdir "$d" 2> /dev/null; done || true
  rm -rf "$T"
}
trap cleanup EXIT
write_catalog "$T/cat.tsv"
before=$(leftovers)

# ---- 1. killed at the end
for point in after-end after-done-state; do
  run=(run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r1-$point" --run tf1 --quiet --nodes 2 "${common[@]}"
       --max-iters 60 --checkpoint-every 20)
  rc=0
  PITSTOP_TEST_KILL=$point "$PITSTOP" "${run[@]}" > /dev/null 2> "$T/r1a.err" || rc=$?
  "$PITSTOP" "${run[@]}" > "$T/r1.out" 2> "$T/r1.err" || fail "the run again after $point: $(cat "$T/r1.err")"
  once "$T/r1-$point/events.jsonl" 60 "after a kill $point and the same command again"
  grep -q "run tf1 is already done" "$T/r1.out" "$T/r1.err" || fail "not said done after $point: $(cat "$T/r1.out" "$T/r1.err")"
  [ $rc = 137 ] || fail "the test hook $point did not kill the controller (exit $rc): $(cat "$T/r1a.err")"
  [ -z "$(ls "$T/r1-$point/nodes")" ] || fail "node files left after $point: $(ls "$T/r1-$point/nodes")"
  [ "$before" = "$(leftovers)" ] || fail "left behind after $point: $(leftovers)"
done
"$PITSTOP" "${run[@]}" > "$T/r1.out" 2> "$T/r1.err" || fail "a third time: $(cat "$T/r1.err")"
grep -q "already done" "$T/r1.out" "$T/r1.err" || fail "a finished run not said done: $(cat "$T/r1.out" "$T/r1.err")"
once "$T/r1-after-done-state/events.jsonl" 60 "after the same command a third time"

# ---- 2. --cleanup RUN of a run whose directory is elsewhere
mkdir -p "$T/cwd"
for how in bare with-dir; do
  "$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r2-$how" --run tf2 --quiet --nodes 2 \
    --launcher per-node --start-timeout 600 -- sleep 4321 > /dev/null 2>&1 &
  ctl=$!
  for _ in $(seq 1 300); do [ "$(pgrep -fc "sleep 4321")" -ge 2 ] && break; sleep 0.1; done
  [ "$(pgrep -fc "sleep 4321")" -ge 2 ] || fail "the per-node job did not start"
  kill -9 $ctl
  wait $ctl 2> /dev/null || true
  extra=()
  [ $how = with-dir ] && extra=(--checkpoint-dir "$T/r2-$how")
  (cd "$T/cwd" && "$PITSTOP" run --cleanup tf2 "${extra[@]}") > "$T/r2.out" 2> "$T/r2.err" ||
    fail "--cleanup tf2 ($how): $(cat "$T/r2.err")"
  grep -q "2 nodes stopped" "$T/r2.out" || fail "--cleanup ($how) said: $(cat "$T/r2.out" "$T/r2.err")"
  [ "$before" = "$(leftovers)" ] || fail "--cleanup ($how) left: $(leftovers)"
  [ ! -e "$T/cwd/runs" ] || fail "--cleanup ($how) made a run directory in the working directory"
  echo "cleanup ($how): $(cat "$T/r2.out")"
done

# ---- 3. restarted on the schedule's node count
run3=(run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r3" --run tf3 --quiet --schedule 30:2,150:1 "${common[@]}"
      --max-iters 180 --checkpoint-every 20)
# killed by the test hook right after the checkpoint at step 80 is recorded (a kill from here after
# polling the events file came after step 150 on a loaded machine: nothing left to test)
rc=0
PITSTOP_TEST_KILL=after-ckpt:80 "$PITSTOP" "${run3[@]}" > /dev/null 2> "$T/r3a.err" || rc=$?
[ $rc = 137 ] || fail "the test hook after-ckpt:80 did not kill the controller (exit $rc): $(cat "$T/r3a.err")"
"$PITSTOP" "${run3[@]}" > /dev/null 2> "$T/r3b.err" || fail "the restarted controller failed: $(cat "$T/r3b.err")"
$PY - "$T/r3/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(180)), f"steps not each once ({len(steps)})"
dec = [x for x in r if x["type"] == "decision"]
assert len(dec) == 2, f"{len(dec)} decisions, not the schedule's 2: {[(d['step'], d.get('to')) for d in dec]}"
inits = [x for x in r if x["type"] == "init"]
seq = [x["nodes"] for x in inits]
runs = [n for i, n in enumerate(seq) if i == 0 or seq[i - 1] != n]
assert len(inits) >= 4 and runs == [1, 2, 1], f"node counts of the generations: {seq} (the restart should go on with 2)"
print(f"restart on the schedule's count: generations {[(x['gen'], x['nodes']) for x in inits]}, {len(dec)} decisions")
PYEOF

# ---- 4. restarted on another membership: no node adopted, the restart said by "continued"
run4=(run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r4" --run tf4 --quiet "${common[@]}" --max-iters 60
      --checkpoint-every 20)
rc=0
PITSTOP_TEST_KILL=after-ckpt:20 "$PITSTOP" "${run4[@]}" --nodes local-1:1 > /dev/null 2> "$T/r4a.err" || rc=$?
[ $rc = 137 ] || fail "the test hook after-ckpt:20 did not kill the controller (exit $rc): $(cat "$T/r4a.err")"
"$PITSTOP" "${run4[@]}" --nodes local-0.4:1 > /dev/null 2> "$T/r4b.err" ||
  fail "the restarted controller failed: $(cat "$T/r4b.err")"
grep -q "adopted node" "$T/r4b.err" && fail "the restarted controller adopted a node: $(cat "$T/r4b.err")"
once "$T/r4/events.jsonl" 60 "after a restart on another membership"
$PY - "$T/r4/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
first = min(x["gen"] for x in r if x["type"] == "node" and x.get("continued"))
assert first > 0 and not any(x["type"] == "end" and x["gen"] == first - 1 for x in r), "the killed generation has an end"
nodes = [x for x in r if x["type"] == "node"]
marked = [(x["action"], x["itype"]) for x in nodes if x.get("continued")]
unmarked = {x["gen"] for x in nodes if not x.get("continued")}
assert all(x["gen"] == first for x in nodes if x.get("continued")), "a continued record outside its generation"
assert first not in unmarked, f"a node record of generation {first} without continued: {nodes}"
assert ("stop", "local-1") in marked and ("start", "local-0.4") in marked and ("ready", "local-0.4") in marked, marked
assert not any(x["action"] == "ready" and x["itype"] == "local-1" and x["gen"] == first for x in nodes), "adopted"
print(f"generation {first}, begun by the restarted controller: its node records {marked} say continued")
PYEOF
[ "$before" = "$(leftovers)" ] || fail "left behind: $(leftovers)"
echo "nothing left behind"
