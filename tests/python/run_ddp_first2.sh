#!/usr/bin/env bash
# ctest: slow
# run_ddp_first2.sh — the DDP tutorial client (as run_ddp.sh: pitstop.Job, gloo) under `pitstop run`
# through torchrun, its FIRST generation on two nodes (2 → 1 at step 600 by --schedule; 3 epochs of 256 steps, so the resize comes after the 3 s), with node 0's output held
# back 3 s from its first line in generation 0 (its stdout into a process substitution that reads a
# line, sleeps 3 s, then passes it and the rest on; the command itself is exec'd as before), so that node 1's own progress
# print ("[GPU0] Epoch 0 | Batchsize: ...") reaches the controller before node 0's first PITSTOP record.
# Whether a workload speaks the protocol is node 0's to say: before, the controller read node 1's
# print as a script without records and wrote its own init record beside the workload's (init records
# in generations [0, 0, 1]; the race seen in CI in the 2-node generation of run_ddp.sh). check_run.py:
# one init record per generation, every step once, each sample once per epoch.
. "$PIT_SOURCE_DIR/tests/python/common.bash"
need_torch
patched_client pytorch-examples-ddp-tutorial ddp-tutorial.diff ddp-tutorial-cpu.diff
local_catalog
cat > "$T/late0.sh" << 'SH'
#!/bin/bash
# node 0 of generation 0: its stdout from its first line on 3 s late (in order); every other node as it is
if [ "$PITSTOP_NODE_RANK" = 0 ] && [ "$PITSTOP_GEN" = 0 ]; then
  exec > >(IFS= read -r first; sleep 3; printf '%s\n' "$first"; exec cat)
fi
exec "$@"
SH
chmod +x "$T/late0.sh"
cmd=("$T/late0.sh" "$PY" -m torch.distributed.run --redirects 2 --tee 2 '--nnodes=$PITSTOP_NUM_NODES'
     '--node_rank=$PITSTOP_NODE_RANK' --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR'
     '--master_port=$PITSTOP_MASTER_PORT' "$T/pytorch-examples-ddp-tutorial/multigpu_torchrun.py" 3 1
     --batch_size 8)
(cd "$T" && "$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/run" --run ddp2 \
  --quiet --nodes 2 --schedule 600:1 -- "${cmd[@]}" > "$T/run.txt" 2> "$T/run.err") ||
  fail "pitstop run failed: $(tail -n 20 "$T/run.err")"
grep -q 'Epoch 0 | Batchsize' "$T/run/gen-0.log" || fail "node 1's progress print is not in gen-0.log"
"$PY" "$PIT_SOURCE_DIR/tests/python/check_run.py" "$T/run/events.jsonl" 2 1 ||
  fail "the DDP tutorial run whose first generation has two nodes: $(tail -n 5 "$T/run.err")"
echo "ok: first generation on two nodes, node 0 late: one init record a generation, every step and sample once"
