#!/usr/bin/env bash
# ctest: slow
# run_stop.sh — stopping `pitstop run` the way a user does (issue 26 item 1, issue 28): Ctrl-C
# (SIGINT), SIGTERM and a double Ctrl-C, each in the start, steady and checkpoint phases of a
# workload that speaks the protocol (tests/control/fake/proto_slow.py): exit 130 or 143, the
# report printed (how the workload stopped, where the run continues), and nothing left: no
# process of the run, no node file, no cgroup, no held lock (listed before and after). In the
# steady phase the same command again is refused, naming the running controller's pid. Then a
# program that speaks no protocol (SIGTERM, and one that ignores it: killed after --grace), and
# pitstop train under mpirun stopped by Ctrl-C and continued by the same command to the end.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
. "$PIT_SOURCE_DIR/tests/control/run_procs.bash"
T=$(mktemp -d)
FAKE=$PIT_SOURCE_DIR/tests/control/fake/proto_slow.py
cleanup() {
  for r in "$T"/*/; do
    [ -d "$r" ] || continue
    for p in $(grep -lzx "PITSTOP_RUN=ts$(basename "$r")" /proc/[0-9]*/environ 2> /dev/null); do
      p=${p#/proc/}
      kill -9 "${p%/environ}" 2> /dev/null || true
    done
  done
  for d in /sys/fs/cgroup/cpu/pitstop.ts*; do [ -d "$d" ] && rmdir "$d" 2> /dev/null; done || true
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT

# what a run left: its processes (tagged PITSTOP_RUN), node files, cgroups, and whether its lock is held
left() { # NAME
  local run=ts$1 dir=$T/$1
  run_procs "$run" | summary
  ls "$dir/nodes" 2> /dev/null || true
  ls /sys/fs/cgroup/cpu 2> /dev/null | grep "^pitstop\.$run\." || true
  if [ -e "$dir/lock" ] && ! flock -n "$dir/lock" true; then echo "lock $dir/lock held"; fi
}

# stop NAME PHASE SIG [RUN OPTIONS...] -- COMMAND: starts the run, sends SIG (INT, TERM or INT2:
# two SIGINTs) in PHASE, checks the exit status, the report and that nothing is left
stop_case() {
  local name=$1 phase=$2 sig=$3
  shift 3
  local dir=$T/$name log=$T/$name/gen-0.log
  mkdir -p "$dir"
  "$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$dir" --run "ts$name" --quiet "$@" \
    > "$T/$name.out" 2> "$T/$name.err" &
  local ctl=$!
  case $phase in
    start) wait_for "$log" "starting" 300 ;;
    steady) wait_for "$log" "step 5$" 300 ;;
    checkpoint) wait_for "$log" "checkpointing at 10" 300 ;;
  esac
  if [ "$phase" = steady ]; then # the same command again, while this one runs: refused, naming its pid
    local rc2=0 second
    second=$("$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$dir" --run "ts$name" --quiet "$@" 2>&1) || rc2=$?
    [ "$rc2" != 0 ] && [[ "$second" == *"being controlled by another pitstop (pid $ctl)"* ]] ||
      fail "$name: a second controller of the run was not refused with its pid (exit $rc2): $second"
  fi
  local during
  during=$(left "$name")
  [ -n "$during" ] || fail "$name: the run holds nothing while it runs (the leftover check could not fail)"
  case $sig in
    INT) kill -INT $ctl ;;
    TERM) kill -TERM $ctl ;;
    INT2) kill -INT $ctl && sleep 0.3 && kill -INT $ctl ;;
  esac
  local rc=0
  wait $ctl || rc=$?
  local want=130
  [ "$sig" = TERM ] && want=143
  [ "$rc" = "$want" ] || fail "$name: exit $rc, not $want: $(cat "$T/$name.err")"
  grep -q "stopped by SIG" "$T/$name.out" || fail "$name: no report: $(cat "$T/$name.out")"
  local after
  after=$(left "$name")
  [ -z "$after" ] || fail "$name: left behind: $after"
  echo "$name ($phase, $sig): exit $rc; while running: $(echo $during | head -c 120); after: nothing;" \
    "$(grep -o 'stopped by .*signal' "$T/$name.out")"
}
expect() { # NAME PATTERN: the report says it
  grep -q -- "$2" "$T/$1.out" || fail "$1: the report does not say '$2': $(cat "$T/$1.out")"
}

# N EVERY CKPT_S STEP_S START_S: a 4 s start-up (the start phase), no checkpoint before step 40 (steady)
# or every 10 steps (a checkpoint phase), each taking 3 s
for sig in INT TERM INT2; do
  stop_case "start-$sig" start "$sig" -- /usr/bin/python3 "$FAKE" 200 40 3 0.05 4
  stop_case "steady-$sig" steady "$sig" -- /usr/bin/python3 "$FAKE" 200 40 3
  stop_case "ckpt-$sig" checkpoint "$sig" -- /usr/bin/python3 "$FAKE" 200 10 3
done
# the start phase: nothing to checkpoint yet, SIGTERM (the fake stops at its first step boundary)
expect start-INT "sent SIGTERM and exited"
expect start-TERM "sent SIGTERM and exited"
# steady: an agreed checkpoint, and the run continues from it
expect steady-INT "checkpointed at a step its ranks agreed on"
expect steady-INT "continues it from its checkpoint at step"
expect steady-TERM "checkpointed at a step its ranks agreed on"
# during a checkpoint: it is finished (step 10), then the agreed stop's (step 11)
expect ckpt-INT "checkpointed at a step its ranks agreed on"
expect ckpt-INT "checkpoint at step 11"
expect ckpt-TERM "checkpoint at step 11"
# a second Ctrl-C: killed at once, in every phase
for ph in start steady ckpt; do expect "$ph-INT2" "killed (SIGKILL)"; done
expect ckpt-INT2 "No checkpoint: the job starts again from step 0" # the first checkpoint was cut short: none holds

# the agreed stop's checkpoint is a record, and the kept iterations stop there
$PY - "$T/steady-INT/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
ck = [x for x in r if x["type"] == "checkpoint"]
its = [x["step"] for x in r if x["type"] == "iter"]
assert ck and its == list(range(ck[-1]["step"])), (ck, its)
print(f"steady SIGINT: checkpoint at step {ck[-1]['step']}, iterations 0..{its[-1]} kept")
PYEOF

# a program that speaks no protocol: SIGTERM; one that ignores SIGTERM: SIGKILL after --grace
F=$PIT_SOURCE_DIR/tests/control/fake/foreign_slow.py
stop_case foreign-INT steady INT -- /usr/bin/python3 "$F" 100000
expect foreign-INT "sent SIGTERM and exited"
stop_case foreign-deaf steady TERM --grace 1 -- /usr/bin/python3 "$F" 100000 ignore-term
expect foreign-deaf "killed (SIGKILL)"
grep -q "the grace period ended" "$T/foreign-deaf.err" || fail "no word of the grace: $(cat "$T/foreign-deaf.err")"
$PY - "$T/foreign-INT/events.jsonl" << 'PYEOF'
import json, sys
its = [json.loads(l) for l in open(sys.argv[1])]
its = [x for x in its if x["type"] == "iter"]
assert len(its) >= 5, len(its)
print(f"foreign program stopped by SIGINT: its {len(its)} measured steps kept")
PYEOF

# pitstop train under mpirun, Ctrl-C in steady state: an agreed checkpoint; the same command
# then continues from it and finishes with every step once
common=(--model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --no-validation
        --limit 400 --epochs 0 --backend ref --max-iters 300)
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/train" --run tstrain --quiet "${common[@]}" \
  > "$T/train.out" 2> "$T/train.err" &
ctl=$!
wait_for "$T/train/gen-0.log" '"type":"iter"' 600 # the records are in the generation's log too
kill -INT $ctl
rc=0
wait $ctl || rc=$?
[ $rc = 130 ] || fail "pitstop train run: exit $rc after SIGINT: $(cat "$T/train.err")"
grep -q "checkpointed at a step its ranks agreed on" "$T/train.out" || fail "train: $(cat "$T/train.out")"
[ -z "$(run_procs tstrain)" ] || fail "train: processes left: $(run_procs tstrain)"
at=$(grep -o "checkpoint at step [0-9]*" "$T/train.out" | grep -o "[0-9]*$")
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/train" --run tstrain --quiet "${common[@]}" \
  > "$T/train2.out" 2> "$T/train2.err" || fail "the continued run failed: $(cat "$T/train2.err")"
$PY - "$T/train/events.jsonl" 300 << 'PYEOF'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in steps if x["type"] == "iter"]
assert steps == list(range(int(sys.argv[2]))), f"steps not contiguous after a Ctrl-C and a second run ({len(steps)})"
PYEOF
echo "pitstop train: Ctrl-C at step $at (agreed checkpoint), the same command finished: 300 steps, each once"
echo "all stop cases passed"
