#!/usr/bin/env bash
# sigkill.sh — a rank killed with SIGKILL ends the whole job: mpirun exits
# non-zero within 10 s with a message naming the rank and its host, whether the
# survivors are busy in reductions (--loop) or blocked in one waiting for the
# dead rank (--stall); and a rank exiting with an error without MPI_Finalize
# (--exit) ends the job too. Runs `pitstop train` when it is built, and always the
# small test program.
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PIT_BINARY_DIR:?}"
source "$PIT_SOURCE_DIR/tests/dist/common.bash"
tmp=$(mktemp -d)
mpid=
cleanup() {
  [[ -n "$mpid" ]] && kill -9 -- "-$mpid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
host=$(hostname)

# rank_pid MPIRUN_PID R: PID of the child of mpirun that is world rank R
rank_pid() {
  local c
  for c in $(ps --ppid "$1" -o pid= 2>/dev/null); do
    if tr '\0' '\n' < "/proc/$c/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

# case NAME READY_FILE READY_REGEX CMD...: start CMD under mpirun -np 2, wait
# until READY_REGEX appears in READY_FILE, kill rank 1, check the outcome.
run_case() {
  local name=$1 ready=$2 regex=$3
  shift 3
  setsid "${MPIRUN[@]}" -np 2 "$@" > "$tmp/$name.out" 2>&1 &
  mpid=$!
  local i
  for ((i = 0; i < 600; i++)); do
    grep -qE "$regex" "$ready" 2>/dev/null && break
    kill -0 "$mpid" 2>/dev/null || { cat "$tmp/$name.out"; echo "FAIL $name: ended early"; exit 1; }
    sleep 0.1
  done
  local victim
  victim=$(rank_pid "$mpid" 1) || { cat "$tmp/$name.out"; echo "FAIL $name: no rank 1"; exit 1; }
  local t0=$SECONDS
  kill -9 "$victim"
  local ended=0
  for ((i = 0; i < 100; i++)); do   # 10 s
    if ! kill -0 "$mpid" 2>/dev/null; then ended=1; break; fi
    sleep 0.1
  done
  if ((!ended)); then
    cat "$tmp/$name.out"
    echo "FAIL $name: job still running 10 s after rank 1 was killed"
    exit 1
  fi
  local rc=0
  wait "$mpid" || rc=$?
  mpid=
  if ((rc == 0)); then cat "$tmp/$name.out"; echo "FAIL $name: exit status 0"; exit 1; fi
  if ! grep -qE "rank 1 .*node $host|rank 1 .*host $host" "$tmp/$name.out"; then
    cat "$tmp/$name.out"
    echo "FAIL $name: no message naming rank 1 and host $host"
    exit 1
  fi
  echo "$name: exit $rc after $((SECONDS - t0)) s (whole seconds); $(grep -v looping "$tmp/$name.out" | grep -m1 -E 'rank 1 ')"
}

bin=$PIT_BINARY_DIR/test_dist_collectives
run_case loop "$tmp/loop.out" "looping rank 1" "$bin" --loop
run_case stall "$tmp/stall.out" "looping rank 1" "$bin" --stall
# a rank that exits with an error without MPI_Finalize (what `pitstop train`
# does on an error) also ends the job, while rank 0 is in a reduction
rc=0
timeout 10 "${MPIRUN[@]}" -np 2 "$bin" --exit > "$tmp/exit.out" 2>&1 || rc=$?
if ((rc == 0 || rc == 124)); then
  cat "$tmp/exit.out"; echo "FAIL exit: status $rc (124: still running after 10 s)"; exit 1
fi
grep -qE "Exit code: +3" "$tmp/exit.out" || { cat "$tmp/exit.out"; echo "FAIL exit: no exit code 3 reported"; exit 1; }
echo "exit: rank 1 exit(3) without MPI_Finalize ends the job with status $rc"

if pitstop_train_built; then
  run_case train "$tmp/ev.jsonl" '"type" *: *"iter"' "$PITSTOP" train --model cnn --data synthetic \
    --max-iters 1000000 --batch-size 32 --quiet --events "$tmp/ev.jsonl"
else
  echo "pitstop train not built: train case skipped"
fi
