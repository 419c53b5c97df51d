#!/usr/bin/env bash
# ctest: slow
# run_dcgan.sh — the PyTorch examples' DCGAN (../shared/data/clients, unchanged) with
# examples/diffs/dcgan.diff applied to a copy (7 lines: pitstop.Job), under `pitstop run`
# through torchrun, resized 1 → 2 → 1 ranks by --schedule: every step once, each step's global
# batch the sampler's, every sample once per epoch, a checkpoint at each change (check_run.py).
# Tiny: --dataset fake (1000 images), ngf = ndf = 4, nz 8, global batch 50: 20 steps an epoch, 2 epochs.
. "$PIT_SOURCE_DIR/tests/python/common.bash"
need_torch
"$PY" -c 'import torchvision' 2> /dev/null || {
  echo "skipped: python3-torchvision is not installed (scripts/setup)"
  exit 77
}
patched_client pytorch-examples-dcgan dcgan.diff
local_catalog
# the $PITSTOP_* placeholders are filled in per node by the launcher (no shell: single quotes)
cmd=("$PY" -m torch.distributed.run --redirects 2 --tee 2 '--nnodes=$PITSTOP_NUM_NODES'
     '--node_rank=$PITSTOP_NODE_RANK' --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR'
     '--master_port=$PITSTOP_MASTER_PORT' "$T/pytorch-examples-dcgan/main.py" --dataset fake
     --batchSize 50 --ngf 4 --ndf 4 --nz 8 --niter 2 --workers 0 --manualSeed 7 --outf "$T/out")
(cd "$T" && "$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/run" --run dcgan \
  --quiet --schedule 8:2,20:1 -- "${cmd[@]}" > "$T/run.txt" 2> "$T/run.err") ||
  fail "pitstop run failed: $(tail -n 20 "$T/run.err")"
"$PY" "$PIT_SOURCE_DIR/tests/python/check_run.py" "$T/run/events.jsonl" 1 2 1 ||
  fail "the resized DCGAN run: $(tail -n 5 "$T/run.err")"
