#!/usr/bin/env bash
# parse_dialects.sh — `pitstop parse` on the training logs of popular frameworks
# (docs/parse.md, "Any dialect", the table of frameworks): each
# tests/record/fixtures/dialects/NAME.log, in the shape its framework prints,
# gives exactly the records of NAME.jsonl. Megatron's step time and global batch,
# Keras' epochs (from `Epoch e/N` lines, counted from 1) and epoch times,
# DeepSpeed's two lines of one step and its timestamps, mmcv's `Epoch [e]`,
# fairseq's counts and Composer's counters were wrong or missing before; so were
# torchtune's "E|S|" prefix, mmengine's "Epoch(train)"/"Epoch(val)" and the HF
# Trainer's train_runtime/eval_runtime summaries (2026-11-30).
set -euo pipefail
: "${PITSTOP:?}" "${PIT_SOURCE_DIR:?}"
dir=$PIT_SOURCE_DIR/tests/record/fixtures/dialects
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for log in "$dir"/*.log; do
  name=$(basename "$log" .log)
  "$PITSTOP" parse --run r --quiet "$log" > "$tmp/$name.jsonl" 2> "$tmp/err.txt" \
    || { echo "FAIL: $name: $(cat "$tmp/err.txt")" >&2; exit 1; }
  diff -u "$dir/$name.jsonl" "$tmp/$name.jsonl" >&2 || { echo "FAIL: $name: records differ (above)" >&2; exit 1; }
  n=$((n + 1))
done
test "$n" -ge 17 || { echo "FAIL: only $n dialect fixtures in $dir" >&2; exit 1; }
echo "ok: $n dialects"
