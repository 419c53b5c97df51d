# mpi_env.bash — sourced by the train tests: Open MPI's environment from
# tests/dist/common.bash, `mpirun_local N args...`, the checkpoint reader, fail(), wait_for().
# Leak checking stays on for single-process runs; only runs under mpirun turn it
# off (Open MPI's own allocations are not ours to report).
asan_keep=${ASAN_OPTIONS-}
. "$PIT_SOURCE_DIR/tests/dist/common.bash"
export ASAN_OPTIONS=$asan_keep
mpirun_local() {
  local n=$1
  shift
  ASAN_OPTIONS="${asan_keep:+$asan_keep:}detect_leaks=0" "${MPIRUN[@]}" -np "$n" "$@"
}
PY=/usr/bin/python3
CKPT="$PY $PIT_SOURCE_DIR/tests/train/ckpt.py"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# wait_for FILE PATTERN TRIES: until FILE holds a line matching PATTERN
wait_for() {
  for _ in $(seq 1 "$3"); do
    grep -q "$2" "$1" 2> /dev/null && return 0
    sleep 0.1
  done
  fail "timed out waiting for $2 in $1"
}
