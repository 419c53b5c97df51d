#!/usr/bin/env bash
# ctest: slow
# usr1.sh — the stop agreement under torchrun on two "nodes" (two torchruns on localhost, node
# ranks 0 and 1, PITSTOP_* as the per-node launcher sets them): SIGUSR1 to node 1's process group
# only; both ranks stop after the same step, rank 0 writes one checkpoint, everything exits 0.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
export PITSTOP_RUN=usr1 PITSTOP_GEN=0 PITSTOP_CHECKPOINT_DIR="$T/ck" PITSTOP_NUM_NODES=2
two_nodes_running
kill -USR1 -- "-$p1"
rc0=0 rc1=0
wait "$p0" || rc0=$?
wait "$p1" || rc1=$?
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "torchrun exit codes $rc0 $rc1, expected 0 0: $(tail -5 "$T/n0.err" "$T/n1.err")"
PYTHONPATH="$PYTHONPATH:$PIT_SOURCE_DIR/tests/protocol" "$PY" -m check stopped "$T/n0.out" SIGUSR1 "$T/n0.err" "$T/n1.err"
