#!/usr/bin/env bash
# shrink.sh — pitstop train's side of the in-place shrink (src/train/shrink.c, docs/protocol.md):
#  1. two ranks stopped by SIGUSR1 with a request keeping rank 1: rank 0 leaves (exit 0 without
#     MPI_Finalize), rank 1 goes on as generation 1 from the checkpoint at the agreed step, in the
#     same process; the steps are contiguous, every step's samples are the uninterrupted run's, the
#     final parameters are those of a relaunch at the same step, bit for bit; mpirun exits 0;
#  2. a request keeping rank 0: the same with the other rank;
#  3. a request for another world size is no request: the job ends stopped, as before;
#  4. a malformed request: one message naming the file, a non-zero exit.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
c=(train --model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --lr-schedule constant
   --quiet --no-validation --limit 400 --epochs 0 --max-iters 60 --backend ref)
"$PITSTOP" "${c[@]}" --out "$T/u" --events "$T/u.jsonl" > /dev/null

# run NAME REQUEST: two ranks, SIGUSR1 after 12 iterations with REQUEST in PITSTOP_SHRINK ("" none)
run() {
  export PITSTOP_SHRINK="$T/$1.req"
  # mpirun itself in the background (not mpirun_local, a function: $! would be a subshell)
  ASAN_OPTIONS="${asan_keep:+$asan_keep:}detect_leaks=0" "${MPIRUN[@]}" -np 2 -x PITSTOP_SHRINK \
    --mca orte_allowed_exit_without_sync 1 "$PITSTOP" "${c[@]}" --out "$T/$1" --events - > "$T/$1.jsonl" \
    2> "$T/$1.err" &
  local pid=$!
  for _ in $(seq 1 600); do
    [ "$(grep -c '"type":"iter"' "$T/$1.jsonl" 2> /dev/null)" -ge 12 ] && break
    sleep 0.05
  done
  [ -n "$2" ] && printf '%s\n' "$2" > "$T/$1.req"
  kill -USR1 "$pid"
  # a hang (mpirun waiting on a rank that left: MPI_Finalize's fence did once) fails, not waits for ever
  local err="$T/$1.err"
  (for _ in $(seq 1 1200); do kill -0 "$pid" 2> /dev/null || exit 0; sleep 0.1; done
   kill -9 "$pid" && echo "mpirun hung: killed after 120 s" >> "$err") > /dev/null 2>&1 &
  set +e
  wait "$pid"
  echo $? > "$T/$1.rc"
  set -e
}

# check NAME: generation 0 on 2 ranks stopped, generation 1 on 1 rank in the same run to step 60,
# the uninterrupted run's samples at every step and its parameters
check() {
  [ "$(cat "$T/$1.rc")" = 0 ] || fail "$1: mpirun exited $(cat "$T/$1.rc"): $(tail -5 "$T/$1.err")"
  $PY - "$T/u.jsonl" "$T/$1.jsonl" "$1" << 'PYEOF'
import json, sys
u = {x["step"]: x for x in map(json.loads, open(sys.argv[1])) if x["type"] == "iter"}
r = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
its = [x for x in r if x["type"] == "iter"]
assert [x["step"] for x in its] == list(range(60)), [x["step"] for x in its]
assert all(x["samples_digest"] == u[x["step"]]["samples_digest"] for x in its), "other samples"
ends = [x for x in r if x["type"] == "end"]
assert [(e["gen"], e["status"]) for e in ends] == [(0, "stopped"), (1, "done")], ends
inits = [x for x in r if x["type"] == "init"]
assert [(i["gen"], i["ranks"]) for i in inits] == [(0, 2), (1, 1)], inits
stop = ends[0]["step"]
assert all(len(x["compute_s"]) == (2 if x["step"] < stop else 1) for x in its)
print(f"{sys.argv[3]}: 2 ranks to step {stop}, then 1 rank in place to 60, the uninterrupted run's samples, "
      f"set-up {inits[1]['init_s']:.3f} s")
PYEOF
  # the same arithmetic as a relaunch: 2 ranks to the stop step, then 1 rank resumed from its checkpoint
  local stop
  stop=$(grep '"type":"end"' "$T/$1.jsonl" | head -1 | $PY -c 'import json,sys; print(json.loads(sys.stdin.read())["step"])')
  # (the later --max-iters wins; with a constant learning rate the steps are the same)
  mpirun_local 2 "$PITSTOP" "${c[@]}" --max-iters "$stop" --out "$T/$1-ref" > /dev/null
  "$PITSTOP" "${c[@]}" --out "$T/$1-ref" --resume "$T/$1-ref/checkpoint.pit" > /dev/null
  $CKPT compare "$T/$1-ref/checkpoint.pit" "$T/$1/checkpoint.pit" 0 ||
    fail "$1: parameters differ from a relaunch's (2 ranks to step $stop, then 1 resumed)"
  echo "$1: the parameters of a relaunch at step $stop, bit for bit"
}

run k1 "size=2 keep=1"
check k1
run k0 "size=2 keep=0"
check k0

run other "size=3 keep=0,2"
[ "$(cat "$T/other.rc")" = 0 ] || fail "a request for 3 ranks ended the job with $(cat "$T/other.rc")"
grep -q '"status":"stopped"' "$T/other.jsonl" || fail "a request for 3 ranks: not stopped"
[ "$(grep -c '"type":"init"' "$T/other.jsonl")" = 1 ] || fail "a request for 3 ranks was taken"
echo "a request for another world size: stopped, as without one"

run bad "size=2 keep=1,0"
[ "$(cat "$T/bad.rc")" != 0 ] || fail "a malformed request was accepted"
grep -q "pitstop: .*$T/bad.req: bad rank list" "$T/bad.err" || fail "no message naming the request: $(cat "$T/bad.err")"
echo "a malformed request: $(grep -o "pitstop: .*bad rank list[^;]*" "$T/bad.err" | head -1)"
