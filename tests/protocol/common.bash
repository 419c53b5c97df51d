# common.bash — sourced by tests/protocol/*.sh: the PyTorch DCGAN example under torchrun as the
# per-node launcher will start it (docs/protocol.md). Skips (77) without Debian's python3-torch.
# launch_node NODE_RANK PREFIX ARGS...: one "node" = one torchrun in its own session and process
#   group (pid = pgid, so `kill -SIG -- -$pid` is the launcher's signal), SIGUSR1 ignored by
#   torchrun itself, stdout → PREFIX.out, stderr → PREFIX.err. Reads PITSTOP_* from the caller.
# wait_iters FILE N: until FILE holds N iter records (fails after ~60 s).
# check PYCODE ARGS...: run a Python check with pitstop.py importable.
set -euo pipefail
PY=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
"$PY" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' 2> /dev/null || {
  echo "skipped: python3-torch with gloo is not installed"
  exit 77
}
T=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2> /dev/null || true; done
  [ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
export PYTHONPATH="$PIT_SOURCE_DIR/python" OMP_NUM_THREADS=1
export PITSTOP_MASTER_ADDR=127.0.0.1
DCGAN="$PIT_SOURCE_DIR/examples/pytorch/dist_dcgan.py"
# tiny model, 320 images, global batch 16: 20 steps per epoch
TINY=(--limit 320 --batch-size 16 --ngf 8 --ndf 8 --nz 16 --bn-groups 4 --seed 3)
if [ ! -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  TINY+=(--data synthetic)
fi
free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# torchrun's own --redirects/--tee defaults crash on Python 3.11 (torch 1.13's Std.from_str("0")
# returns None); "2" keeps stdout untouched and tees stderr with a [default0]: prefix.
launch_node() {
  local rank=$1 out=$2
  shift 2
  (
    trap '' USR1
    exec setsid env PITSTOP_NODE_RANK="$rank" "$PY" -m torch.distributed.run --redirects 2 --tee 2 \
      --nnodes="$PITSTOP_NUM_NODES" --node_rank="$rank" --nproc_per_node=1 \
      --master_addr="$PITSTOP_MASTER_ADDR" --master_port="$PITSTOP_MASTER_PORT" "$DCGAN" "$@" \
      > "$out.out" 2> "$out.err"
  ) &
  LAUNCHED=$!
  pids+=("$LAUNCHED")
}
wait_iters() {
  local k
  for _ in $(seq 1 600); do
    k=$(grep -c '"type":"iter"' "$1" 2> /dev/null || true)
    [ "${k:-0}" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "$1 holds fewer than $2 iter records after 60 s"
}
check() {
  local code=$1
  shift
  "$PY" -c "$code" "$@"
}
# wait_end OUT PID: the generation is over once rank 0's end record is in OUT; torchrun may still
# sit in its exit barrier (300 s in torch 1.13) waiting for an agent that was stopped, so after
# 10 s the launcher's process group is killed, as the controller does (docs/protocol.md).
# Sets END_RC to the launcher's exit code, or "killed".
wait_end() {
  local out=$1 pid=$2
  for _ in $(seq 1 600); do
    grep -q '"type":"end"' "$out" 2> /dev/null && break
    sleep 0.1
  done
  grep -q '"type":"end"' "$out" || fail "$out: no end record after 60 s"
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  END_RC=killed
  if kill -0 "$pid" 2> /dev/null; then
    kill -KILL -- "-$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
  else
    END_RC=0
    wait "$pid" || END_RC=$?
  fi
}
# two_nodes_running: run generation 0 on two nodes (pids p0, p1; outputs $T/n0.*, $T/n1.*) for
# 50 epochs and return once node 0 printed 5 iter records.
two_nodes_running() {
  export PITSTOP_NODE_IPS=127.0.0.1,127.0.0.1 PITSTOP_MASTER_PORT=$(free_port)
  launch_node 0 "$T/n0" "${TINY[@]}" --epochs 50
  p0=$LAUNCHED
  launch_node 1 "$T/n1" "${TINY[@]}" --epochs 50
  p1=$LAUNCHED
  wait_iters "$T/n0.out" 5
}
