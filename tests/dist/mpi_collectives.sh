#!/usr/bin/env bash
# mpi_collectives.sh — test_dist_collectives under `mpirun -np 2` and `-np 3`
# (bcast, bucketed gradient sums at bucket boundaries with rank-dependent
# grads_ready orders, timing exchange, checksums, small collectives), and
# forced through MPI without a launcher (PIT_DIST_MPI=1: an MPI singleton);
# -np 3 again with PIT_DIST_WAIT=sleep (waiting ranks leave their CPU).
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PIT_BINARY_DIR:?}"
source "$PIT_SOURCE_DIR/tests/dist/common.bash"
bin=$PIT_BINARY_DIR/test_dist_collectives
for np in 2 3; do
  out=$(timeout 60 "${MPIRUN[@]}" -np $np "$bin" 2>&1) || { echo "$out"; echo "FAIL: -np $np"; exit 1; }
  # every rank ran and agreed on one node with $np local ranks
  test "$(grep -c "^rank [0-9]/$np host .* node 0/1 local [0-9]/$np " <<<"$out")" -eq $np \
    || { echo "$out"; echo "FAIL: -np $np start-up lines"; exit 1; }
  test "$(grep -c "checks passed" <<<"$out")" -eq $np || { echo "$out"; exit 1; }
  echo "-np $np: ok"
done
# sleeping waits (PIT_DIST_WAIT=sleep): the same sums, and a waiting rank leaves its CPU
out=$(PIT_DIST_WAIT=sleep timeout 60 "${MPIRUN[@]}" -np 3 "$bin" 2>&1) || { echo "$out"; echo "FAIL: sleep"; exit 1; }
test "$(grep -c "checks passed" <<<"$out")" -eq 3 || { echo "$out"; exit 1; }
test "$(grep -c "cpu (sleep)" <<<"$out")" -eq 2 || { echo "$out"; echo "FAIL: sleep lines"; exit 1; }
echo "-np 3, PIT_DIST_WAIT=sleep: ok"
out=$(PIT_DIST_MPI=1 timeout 60 "$bin" 2>&1) || { echo "$out"; echo "FAIL: singleton"; exit 1; }
grep -q "^rank 0/1 " <<<"$out"
echo "singleton: ok"
