#!/usr/bin/env bash
# ctest: slow
# command_torch.sh — a reclaim notice under the per-node launcher: the PyTorch DCGAN under
# torchrun on two nodes of the fake `clapp` (tests/control/fake); one node is reclaimed with
# notice, the controller sends SIGTERM to that node's processes (docs/protocol.md: checkpoint
# within the grace period), the job continues on a replacement: contiguous steps, every node
# stopped. Skips (77) without Debian's python3-torch.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
RUNP=tct
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
cat > "$T/clap.json" << 'EOF2'
{"preset": "clap", "host": "localhost", "poll_s": 0.5, "retry_wait_s": 0.2, "start_timeout_s": 20, "grace_s": 60}
EOF2
cmd=("$PY" -m torch.distributed.run --redirects 2 --tee 2 '--nnodes=$PITSTOP_NUM_NODES'
     '--node_rank=$PITSTOP_NODE_RANK' --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR'
     '--master_port=$PITSTOP_MASTER_PORT' "$DCGAN" "${TINY[@]}" --epochs 2 --checkpoint-every 5)
"$PITSTOP" run --provider command --provider-config "$T/clap.json" --catalog "$T/cat.tsv" --nodes 2 \
  --itype c5.large --launcher per-node --checkpoint-dir "$T/r" --run tct1 --quiet -- "${cmd[@]}" \
  > "$T/r.txt" 2> "$T/r.err" &
ctl=$!
wait_for "$T/r/events.jsonl" '"checkpoint"' 1800
touch "$FAKE_CLOUD/reclaim"
wait $ctl || fail "the run did not survive the reclaim: $(cat "$T/r.err")"
grep -q "will be reclaimed" "$T/r.err" || fail "no notice said: $(cat "$T/r.err")"
grep -q "SIGTERM to [0-9]* process.* of node" "$T/r.err" || fail "no SIGTERM to the reclaimed node: $(cat "$T/r.err")"
"$PY" - "$T/r/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(40)), f"steps: {steps}"
nodes = [x for x in r if x["type"] == "node"]
starts = [x["node"] for x in nodes if x["action"] == "start"]
ends = [x["node"] for x in nodes if x["action"] in ("stop", "lost")]
assert sorted(starts) == sorted(ends) and len(starts) == 3, (starts, ends)
print(f"per-node reclaim: SIGTERM to the reclaimed node, {len(steps)} contiguous steps, 3 nodes started and stopped")
PYEOF
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"
