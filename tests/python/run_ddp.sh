#!/usr/bin/env bash
# ctest: slow
# run_ddp.sh — the PyTorch DDP tutorial's multigpu_torchrun.py (../shared/data/clients, unchanged)
# with examples/diffs/ddp-tutorial.diff (pitstop.Job, 6 lines) and, to run without a GPU,
# ddp-tutorial-cpu.diff (gloo, no .to(gpu)) applied to a copy, under `pitstop run` through
# torchrun, resized 1 → 2 → 1 ranks by --schedule: every step once, each step's global batch the
# sampler's, every sample once per epoch, a checkpoint at each change (check_run.py).
# 2048 samples, global batch 32: 64 steps an epoch, 3 epochs.
. "$PIT_SOURCE_DIR/tests/python/common.bash"
need_torch
patched_client pytorch-examples-ddp-tutorial ddp-tutorial.diff ddp-tutorial-cpu.diff
local_catalog
cmd=("$PY" -m torch.distributed.run --redirects 2 --tee 2 '--nnodes=$PITSTOP_NUM_NODES'
     '--node_rank=$PITSTOP_NODE_RANK' --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR'
     '--master_port=$PITSTOP_MASTER_PORT' "$T/pytorch-examples-ddp-tutorial/multigpu_torchrun.py" 3 1
     --batch_size 32)
(cd "$T" && "$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/run" --run ddp \
  --quiet --schedule 40:2,120:1 -- "${cmd[@]}" > "$T/run.txt" 2> "$T/run.err") ||
  fail "pitstop run failed: $(tail -n 20 "$T/run.err")"
"$PY" "$PIT_SOURCE_DIR/tests/python/check_run.py" "$T/run/events.jsonl" 1 2 1 ||
  fail "the resized DDP tutorial run: $(tail -n 5 "$T/run.err")"
