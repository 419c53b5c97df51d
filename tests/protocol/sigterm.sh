#!/usr/bin/env bash
# ctest: slow
# sigterm.sh — a spot reclaim notice: SIGTERM to node 1's process group (its torchrun forwards it
# to its worker); both ranks agree on a step, checkpoint and exit 0 within PITSTOP_GRACE_S (no
# rank reports being past it), and the checkpoint resumes on one node.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
export PITSTOP_RUN=term PITSTOP_GEN=0 PITSTOP_CHECKPOINT_DIR="$T/ck" PITSTOP_NUM_NODES=2 PITSTOP_GRACE_S=30
two_nodes_running
kill -TERM -- "-$p1"
rc1=0
wait "$p1" || rc1=$?
wait_end "$T/n0.out" "$p0"
# node 1's torchrun exits non-zero after a SIGTERM of its own (torch 1.13 re-raises it) and node
# 0's then waits in its exit barrier for it: the launchers' exit codes say nothing about the
# workload. Its workers' do: torchrun reports a worker that failed as ChildFailedError.
echo "torchrun exit codes: node 0 $END_RC, node 1 $rc1"
! grep -q ChildFailedError "$T/n0.err" "$T/n1.err" || fail "a worker failed: $(tail -20 "$T/n0.err" "$T/n1.err")"
PYTHONPATH="$PYTHONPATH:$PIT_SOURCE_DIR/tests/protocol" "$PY" -m check stopped "$T/n0.out" SIGTERM "$T/n0.err" "$T/n1.err"
# the checkpoint continues on one node (generation 1) for two more steps
S=$(sed 's/.*ckpt-0*\([0-9]*\)\.pt/\1/' "$T/ck/LATEST")
PITSTOP_GEN=1 PITSTOP_NUM_NODES=1 PITSTOP_NODE_IPS=127.0.0.1 PITSTOP_RESUME="$T/ck" \
  "$PY" "$DCGAN" "${TINY[@]}" --epochs 50 --max-steps $((S + 2)) > "$T/g1.out" 2> "$T/g1.err" \
  || fail "resume after SIGTERM failed: $(cat "$T/g1.err")"
got=$(grep -o '"type":"iter".*"step":[0-9]*' "$T/g1.out" | sed 's/.*"step"://' | tr '\n' ' ')
[ "$got" = "$S $((S + 1)) " ] || fail "generation 1 ran steps '$got', expected '$S $((S + 1)) '"
echo "resumed on one node at step $S"
