#!/usr/bin/env bash
# ctest: slow
# fallback.sh — a damaged newest checkpoint (truncated, then bit-flipped) is reported with its
# path and reason and the previous one is used; with no valid checkpoint left the workload says so
# and exits 2 without training. One rank, no torchrun (the checkpoint code is the same); the
# resumed runs write no checkpoint (PITSTOP_CHECKPOINT_DIR empty), so the damaged files stay.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
export PITSTOP_RUN=fb PITSTOP_CHECKPOINT_DIR="$T/ck"
run() { "$PY" "$DCGAN" "${TINY[@]}" --epochs 5 --checkpoint-every 5 "$@"; }
PITSTOP_GEN=0 run --max-steps 12 > "$T/g0.out" 2> "$T/g0.err" || fail "generation 0: $(cat "$T/g0.err")"
[ "$(ls "$T/ck")" = "$(printf 'LATEST\nckpt-0000000010.pt\nckpt-0000000012.pt')" ] || fail "kept: $(ls "$T/ck")"
cp "$T/ck/ckpt-0000000012.pt" "$T/good12"
first_step() { grep -o '"type":"iter".*"step":[0-9]*' "$1" | head -1 | sed 's/.*"step"://'; }
# truncated
head -c 100000 "$T/good12" > "$T/ck/ckpt-0000000012.pt"
PITSTOP_CHECKPOINT_DIR= PITSTOP_GEN=1 PITSTOP_RESUME="$T/ck/ckpt-0000000012.pt" run --max-steps 11 > "$T/g1.out" 2> "$T/g1.err" || fail "$(cat "$T/g1.err")"
grep -q "checkpoint '$T/ck/ckpt-0000000012.pt': truncated" "$T/g1.err" || fail "no truncation message: $(cat "$T/g1.err")"
grep -q "resuming from '$T/ck/ckpt-0000000010.pt'" "$T/g1.err" || fail "did not resume from step 10: $(cat "$T/g1.err")"
[ "$(first_step "$T/g1.out")" = 10 ] || fail "generation 1 starts at step $(first_step "$T/g1.out")"
# one bit flipped in the payload (the checkpoint directory as PITSTOP_RESUME: its newest valid one)
"$PY" - "$T/good12" "$T/ck/ckpt-0000000012.pt" <<'PYEOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0x10
open(sys.argv[2], "wb").write(b)
PYEOF
PITSTOP_CHECKPOINT_DIR= PITSTOP_GEN=1 PITSTOP_RESUME="$T/ck" run --max-steps 11 > "$T/g2.out" 2> "$T/g2.err" || fail "$(cat "$T/g2.err")"
grep -q "checkpoint '$T/ck/ckpt-0000000012.pt': checksum mismatch" "$T/g2.err" || fail "no checksum message: $(cat "$T/g2.err")"
[ "$(first_step "$T/g2.out")" = 10 ] || fail "after a bit flip, generation 1 starts at step $(first_step "$T/g2.out")"
# nothing valid left: exit 2, a message, no record of an iteration
head -c 10 "$T/good12" > "$T/ck/ckpt-0000000010.pt"
rc=0
PITSTOP_CHECKPOINT_DIR= PITSTOP_GEN=1 PITSTOP_RESUME="$T/ck/ckpt-0000000012.pt" run > "$T/g3.out" 2> "$T/g3.err" || rc=$?
[ "$rc" = 2 ] || fail "exit $rc with no valid checkpoint, expected 2"
grep -q "unusable" "$T/g3.err" || fail "no message: $(cat "$T/g3.err")"
! grep -q '"type":"iter"' "$T/g3.out" || fail "trained without a checkpoint"
echo "truncated and bit-flipped newest checkpoints detected, step 10 used; none valid: exit 2"
