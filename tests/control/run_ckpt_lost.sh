#!/usr/bin/env bash
# ctest: slow
# run_ckpt_lost.sh — damaged and lost checkpoints under `pitstop run` (issue 28), each part a
# controller SIGKILLed after a checkpoint, its workload stopped, files damaged, the same
# command run again:
#  1. the checkpoint it resumes from truncated: the older valid one beside it is used, the
#     cause is said, no restart is spent on it, no node is set aside, and a rank killed after
#     that is restarted as any failure: every step once;
#  2. every checkpoint bit-flipped: each file is named with its reason and the run starts
#     again from step 0 (--on-lost-checkpoints restart, the default), the loss said, every
#     step once in the events file, the steps done again on the schedule's membership;
#  3. the same with --on-lost-checkpoints fail: one clear error naming the files, no restart;
#  4. --checkpoint-mirror: every checkpoint of the run directory gone, the mirror's copy used;
#  5. a run directory too small for two checkpoints (a 700 KiB tmpfs): a clear message that
#     says the disk is full, not only "the workload exited with status 1".
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/control/faults_common.bash"

T=$(mktemp -d)
leftovers() {
  { pgrep -af -- "--run tk[0-9]" || true; ls /sys/fs/cgroup/cpu 2> /dev/null | grep "^pitstop\.tk[0-9]" || true; } | grep -v pgrep || true
}
cleanup() {
  for p in $(pgrep -f -- "--run tk[0-9]"); do kill -9 "$p" 2> /dev/null || true; done
  for d in /sys/fs/cgroup/cpu/pitstop.tk[0-9]*; do [ -d "$d" ] && rmdir "$d" 2> /dev/null; done || true
  mountpoint -q "$T/small" 2> /dev/null && umount "$T/small"
  rm -rf "$T"
}
trap cleanup EXIT
write_catalog "$T/cat.tsv"
before=$(leftovers)

# start_kill N RUN DIR [OPTS...]: a run of N steps killed (controller and workload) at its
# second checkpoint; the command's arguments in the array cmd
start_kill() {
  local n=$1 run=$2 dir=$3
  shift 3
  cmd=(run --catalog "$T/cat.tsv" --checkpoint-dir "$dir" --run "$run" --quiet "${common[@]}" --max-iters "$n"
       --checkpoint-every 30 "$@")
  "$PITSTOP" "${cmd[@]}" > /dev/null 2> "$dir.first.err" &
  local ctl=$!
  wait_ckpt "$dir/events.jsonl" 60
  kill -9 $ctl
  wait $ctl 2> /dev/null || true
  freeze "$dir" "$run"
}

# ---- 1. the newest checkpoint truncated: the previous one is used
start_kill 150 tk1 "$T/r1"
target=$(resume_target "$T/r1")
damage truncate "$target"
"$PITSTOP" "${cmd[@]}" > "$T/r1.out" 2> "$T/r1.err" &
ctl=$!
# and a rank killed after the fallback: the failed generation is restarted (the run goes on to
# its last step; the controller once ended there with exit 0, steps missing)
wait_ckpt "$T/r1/events.jsonl" 90
victim=$(pgrep -f -- "train .*--run tk1" | tail -1)
[ -n "$victim" ] && kill -9 "$victim"
wait $ctl || fail "a truncated checkpoint ended the run: $(cat "$T/r1.err")"
grep -q "restart 1 of" "$T/r1.err" || fail "the killed rank's generation was not restarted: $(cat "$T/r1.err")"
grep -q "truncated checkpoint" "$T/r1.err" || fail "the cause was not said: $(cat "$T/r1.err")"
grep -q "using the previous checkpoint" "$T/r1.err" || fail "no fallback said: $(cat "$T/r1.err")"
! grep -q "set aside" "$T/r1.err" || fail "a healthy node was set aside: $(cat "$T/r1.err")"
[ "$(grep -c "restart [0-9]* of" "$T/r1.err")" = 1 ] || fail "restarts spent on a damaged checkpoint: $(cat "$T/r1.err")"
once "$T/r1/events.jsonl" 150 "after the resumed checkpoint was truncated"
echo "truncated: $(grep -m1 'truncated checkpoint' "$T/r1.err")"

# ---- 2. every checkpoint damaged: step 0 again, the files named
start_kill 150 tk2 "$T/r2" --schedule 40:2
damage flip "$T"/r2/held-*.ckpt "$T"/r2/checkpoints/checkpoint-*.pit
"$PITSTOP" "${cmd[@]}" > "$T/r2.out" 2> "$T/r2.err" || fail "lost checkpoints ended the run: $(cat "$T/r2.err")"
grep -q "every checkpoint of run tk2 is damaged" "$T/r2.err" || fail "the loss was not said: $(cat "$T/r2.err")"
grep -q "checksum" "$T/r2.err" || fail "the reason was not said: $(cat "$T/r2.err")"
grep -q "from step 0" "$T/r2.err" || fail "the restart from step 0 was not said: $(cat "$T/r2.err")"
grep -Eq "\([1-9][0-9]* steps redone\)" "$T/r2.out" || fail "the steps redone were not counted: $(cat "$T/r2.out")"
once "$T/r2/events.jsonl" 150 "after every checkpoint was lost (started again from step 0)"
# the steps done again run on the schedule's membership for them (1 node before step 40), not on
# the 2 nodes the killed controller had: the same sums as the first time
$PY - "$T/r2/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
seq = [(x["gen"], x["nodes"]) for x in r if x["type"] == "init"]
assert len(seq) >= 4 and [n for _, n in seq[:4]] == [1, 2, 1, 2], f"generations (gen, nodes): {seq}"
print(f"started again on the schedule's membership: generations {seq}")
PYEOF

# ---- 3. the same, --on-lost-checkpoints fail
start_kill 150 tk3 "$T/r3" --on-lost-checkpoints fail
damage truncate "$T"/r3/held-*.ckpt "$T"/r3/checkpoints/checkpoint-*.pit
if "$PITSTOP" "${cmd[@]}" > "$T/r3.out" 2> "$T/r3.err"; then fail "lost checkpoints with --on-lost-checkpoints fail: exit 0"; fi
grep -q "every checkpoint of run tk3 is damaged" "$T/r3.err" || fail "no clear error: $(cat "$T/r3.err")"
grep -q "held-.*truncated checkpoint" "$T/r3.err" || fail "the files were not named: $(cat "$T/r3.err")"
! grep -q "max-restarts" "$T/r3.err" || fail "restarts were spent: $(cat "$T/r3.err")"
echo "fail: $(grep -m1 "every checkpoint" "$T/r3.err")"

# ---- 4. the mirror: the run directory's checkpoints all gone
start_kill 150 tk4 "$T/r4" --checkpoint-mirror "$T/m4"
ls "$T"/m4/checkpoint-*.pit > /dev/null || fail "nothing in the mirror"
rm -f "$T"/r4/held-*.ckpt "$T"/r4/checkpoints/checkpoint-*.pit
"$PITSTOP" "${cmd[@]}" > "$T/r4.out" 2> "$T/r4.err" || fail "the mirror did not save the run: $(cat "$T/r4.err")"
grep -q "the mirror's copy" "$T/r4.err" || fail "the mirror's use was not said: $(cat "$T/r4.err")"
# the steps redone are only those the killed generation did past the checkpoint (said as such:
# RUN_DIR/reached), none before it: the mirror held the checkpoint
ck4=$(sed -n 's/.*continues after a controller stop: generation [0-9]* from step \([0-9]*\)$/\1/p' "$T/r4.err")
[ -n "$ck4" ] || fail "no continuation said: $(cat "$T/r4.err")"
past=$(sed -n "s/.*had reached step [0-9]*: the \([0-9]*\) steps\? from step $ck4 are done again.*/\1/p" "$T/r4.err")
grep -Eq "\(${past:-0} steps redone\)" "$T/r4.out" ||
  fail "steps were redone though the mirror held the checkpoint at step $ck4: $(cat "$T/r4.err" "$T/r4.out")"
once "$T/r4/events.jsonl" 150 "resumed from the mirror"
[ "$(ls "$T"/m4/checkpoint-*.pit | wc -l)" -le 2 ] || fail "the mirror keeps more than two: $(ls "$T/m4")"

# ---- 5. a run directory too small for two checkpoints
mkdir -p "$T/small"
if mount -t tmpfs -o size=700k tmpfs "$T/small" 2> /dev/null; then
  if "$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/small/r5" --run tk5 --quiet "${common[@]}" \
    --max-iters 120 --checkpoint-every 30 > "$T/r5.out" 2> "$T/r5.err"; then
    fail "a full disk was not noticed"
  fi
  grep -q "No space left on device" "$T/r5.err" || fail "the full disk was not said: $(cat "$T/r5.err")"
  grep -q "two checkpoints" "$T/r5.err" || fail "no hint at the space two checkpoints need: $(cat "$T/r5.err")"
  echo "too small: $(grep "used up" "$T/r5.err")"; grep "hint" "$T/r5.err"
  umount "$T/small"
else
  echo "SKIP part 5: cannot mount a tmpfs here"
fi

after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind"
