#!/usr/bin/env bash
# ctest: slow
# resize.sh — the DCGAN example resized 1 → 2 → 1 nodes under torchrun, each change a SIGUSR1
# and a restart with PITSTOP_RESUME and the next PITSTOP_GEN, against an uninterrupted 1-node run:
# steps contiguous, one checkpoint per generation, every sample of each epoch used once (from the
# samples_digest fields), the same batches, losses and final parameters within tolerance.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
export PITSTOP_RUN=resize PITSTOP_NODE_IPS=127.0.0.1
STEPS=(--epochs 2)  # 40 steps
# the uninterrupted run: one node, its own checkpoint directory
PITSTOP_GEN=0 PITSTOP_NUM_NODES=1 PITSTOP_CHECKPOINT_DIR="$T/u" PITSTOP_MASTER_PORT=$(free_port) \
  launch_node 0 "$T/u" "${TINY[@]}" "${STEPS[@]}"
wait "$LAUNCHED" || fail "uninterrupted run failed: $(tail "$T/u.err")"
export PITSTOP_CHECKPOINT_DIR="$T/ck"
# gen NODES: start generation $g on NODES nodes resuming from the newest checkpoint, stop it with
# SIGUSR1 (to every node's process group) after 6 of its steps unless LAST is set
g=0
gen() {
  local n=$1 k ps=() out
  export PITSTOP_GEN=$g PITSTOP_NUM_NODES=$n PITSTOP_MASTER_PORT=$(free_port)
  export PITSTOP_NODE_IPS=$(printf '127.0.0.1,%.0s' $(seq "$n") | sed 's/,$//')
  if [ "$g" = 0 ]; then export PITSTOP_RESUME=; else export PITSTOP_RESUME="$T/ck/$(cat "$T/ck/LATEST")"; fi
  for k in $(seq 0 $((n - 1))); do
    launch_node "$k" "$T/g$g.n$k" "${TINY[@]}" "${STEPS[@]}"
    ps+=("$LAUNCHED")
  done
  out="$T/g$g.n0.out"
  if [ -z "${LAST:-}" ]; then
    wait_iters "$out" 6
    for k in "${ps[@]}"; do kill -USR1 -- "-$k"; done
  fi
  for k in "${ps[@]}"; do wait "$k" || fail "generation $g: a torchrun failed: $(tail "$T"/g$g.n*.err)"; done
  g=$((g + 1))
}
gen 1
gen 2
LAST=1 gen 1
PYTHONPATH="$PYTHONPATH:$PIT_SOURCE_DIR/tests/protocol" \
  "$PY" -m check resize 320 0 "$T/u.out" "$T/g0.n0.out" "$T/g1.n0.out" "$T/g2.n0.out"
