#!/usr/bin/env bash
# mixed_isa.sh — a job that moves between instance types of different instruction sets (issue 25
# deliver 4; docs/train.md "Checkpoints ... on any CPU"):
#  1. a mixed membership: 2 ranks under one mpirun (MPMD), rank 0 at the host's instruction set
#     (ONEDNN_MAX_CPU_ISA=ALL, or the level the caller's ONEDNN_MAX_CPU_ISA sets: an AVX2 host
#     emulated) and rank 1 at AVX2 (ONEDNN_MAX_CPU_ISA=AVX2, PIT_ISA=avx2),
#     --check-sync 1: both ranks hold bit-identical parameters after every step. oneDNN's verbose
#     lines show which instruction set each rank ran: rank 1 no AVX-512 kernel at all, rank 0
#     AVX-512 kernels when the host has them;
#  2. cross-ISA resume: a checkpoint written at one instruction set loads at the other with the
#     same parameters, bit for bit, and the next K steps there agree with K steps at the writer's
#     instruction set within TOL (derived below); both directions;
#  3. checkpoints hold plain layouts only: the fast backend's checkpoint, resumed by the
#     reference backend (plain NCHW/OIHW loops, no oneDNN), agrees within the same TOL.
# On a host without AVX-512 every run is at AVX2; the test then says so and checks the rest.
#
# TOL, from the algorithm. The runs compared start from the same parameters and see the same
# batches; they differ only in the order oneDNN's kernels (AVX-512 blocks of 16 against AVX2 blocks
# of 8, or the reference loops) add the terms of each sum. Two orders of a sum of n float32 terms
# differ by at most 2·γ_n·Σ|terms|, γ_n = n·u/(1−n·u), u = 2^-24 (Higham, Accuracy and Stability
# of Numerical Algorithms, §3.1); where the terms do not cancel, Σ|terms| is the sum's magnitude, so
# each gradient, and (SGD with momentum is linear in the gradients) each step's update, differs by at
# most 2·γ_n of itself. The longest sum in cnn is conv1's weight gradient: batch × 28 × 28 output
# positions = 32·784 = 25088 terms, 2·γ_n = 3.0e-3. Over K steps these add up to at most 2·γ_n times
# the path each parameter travelled, which is at most K times its largest step; a step here is at most
# the K steps' whole movement M = max|w_K − w_0| / max|w_K| (momentum 0.9 carried in the checkpoint and
# a constant learning rate: the steps keep their sign over K = 10). So
#     TOL = 2·γ_n · K · M        (K = 10: about 3% of M, a third of one step's movement).
# A run that lost or repeated a step, or read a blocked layout as a plain one, is off by a whole step
# or by O(1): far above TOL. The same-ISA baseline below must also be at most TOL; how far below TOL
# the measured differences fall is printed.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
pitstop_train_built || { echo "mixed_isa: pitstop train is not part of this build: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
HOST=${ONEDNN_MAX_CPU_ISA:-ALL} # the host's level: ALL, or an emulated host's
unset PIT_ISA ONEDNN_VERBOSE DNNL_VERBOSE ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA
K=10
common=(train --model cnn --data synthetic --batch-size 32 --threads 1 --seed 11 --lr 0.01
        --lr-schedule constant --quiet --no-validation --limit 640)

# isa LEVEL: what oneDNN says it runs at under ONEDNN_MAX_CPU_ISA=LEVEL (its first 'info,cpu,isa' line)
isa() {
  ONEDNN_VERBOSE=1 ONEDNN_MAX_CPU_ISA=$1 "$PITSTOP" "${common[@]}" --max-iters 1 2> /dev/null |
    sed -n 's/^onednn_verbose,info,cpu,isa://p' | head -1
}
host_isa=$(isa "$HOST")
avx2_isa=$(isa AVX2)
[ -n "$host_isa" ] && [ -n "$avx2_isa" ] || fail "oneDNN printed no 'info,cpu,isa' line (ONEDNN_VERBOSE=1)"
case $avx2_isa in *AVX-512*) fail "ONEDNN_MAX_CPU_ISA=AVX2 still ran '$avx2_isa'" ;; esac
case $host_isa in
  *AVX-512*) mixed=1; echo "host: '$host_isa'; capped: '$avx2_isa' (a mixed membership)" ;;
  *) mixed=0; echo "NOTE: this host has no AVX-512 ('$host_isa'): both ranks and every run below are at AVX2;" \
       "the test checks sync, resume and layouts, but no mix of instruction sets" ;;
esac

# ---- 1. the mixed membership
ASAN_OPTIONS="${asan_keep:+$asan_keep:}detect_leaks=0" "${MPIRUN[@]}" --tag-output \
  -np 1 -x ONEDNN_MAX_CPU_ISA="$HOST" -x ONEDNN_VERBOSE=1 "$PITSTOP" "${common[@]}" --max-iters 30 --check-sync 1 \
    --out "$T/mixed" : \
  -np 1 -x ONEDNN_MAX_CPU_ISA=AVX2 -x PIT_ISA=avx2 -x ONEDNN_VERBOSE=1 "$PITSTOP" "${common[@]}" --max-iters 30 \
    --check-sync 1 --out "$T/mixed" > "$T/mixed.out" 2> "$T/mixed.err" ||
  fail "the mixed membership failed (--check-sync 1): $(tail -5 "$T/mixed.err")"
$PY - "$T/mixed.out" "$mixed" << 'PYEOF'
import re, sys
isa, impls = {}, {0: set(), 1: set()}
for line in open(sys.argv[1]):
    m = re.match(r"\[\d+,(\d+)\]<stdout>:onednn_verbose,(.*)", line)
    if not m:
        continue
    rank, rest = int(m.group(1)), m.group(2).split(",")
    if rest[:2] == ["info", "cpu"] and rest[2].startswith("isa:"):
        isa.setdefault(rank, rest[2][4:])
    elif rest[0] == "exec" and len(rest) > 4:
        impls[rank].add(rest[2] + " " + rest[3])
assert set(isa) == {0, 1}, f"not both ranks said their instruction set: {isa}"
assert "AVX-512" not in isa[1] and not any("avx512" in i for i in impls[1]), \
    f"rank 1 ran AVX-512: {isa[1]} {sorted(i for i in impls[1] if 'avx512' in i)}"
if sys.argv[2] == "1":
    assert any("avx512" in i for i in impls[0]), f"rank 0 ran no AVX-512 kernel: {sorted(impls[0])}"
conv = lambda r: sorted({i.split()[1] for i in impls[r] if i.startswith("convolution")})
print(f"ok: mixed membership in sync for 30 steps: rank 0 '{isa[0]}' (convolutions {conv(0)}), "
      f"rank 1 '{isa[1]}' (convolutions {conv(1)})")
PYEOF

# ---- 2. cross-ISA resume, 3. plain layouts
# at LEVEL ARGS...: one rank at instruction set LEVEL ($HOST or AVX2)
at() {
  local level=$1
  shift
  local extra=()
  [ "$level" = AVX2 ] && extra=(PIT_ISA=avx2)
  env ONEDNN_MAX_CPU_ISA="$level" "${extra[@]}" "$PITSTOP" "${common[@]}" "$@" > /dev/null ||
    fail "pitstop train at $level failed: $*"
}
# tol A0 AK: TOL = 2·γ_n·K·M for the movement from checkpoint A0 to AK
tol() {
  $PY - "$1" "$2" "$K" << 'PYEOF'
import sys
sys.path.insert(0, __import__("os").environ["PIT_SOURCE_DIR"] + "/tests/train")
from ckpt import read
import numpy as np
(_, a), (_, b), k = read(sys.argv[1]), read(sys.argv[2]), int(sys.argv[3])
m = max(float(np.max(np.abs(pb.astype(np.float64) - pa))) / float(np.max(np.abs(pb))) for (pa, _), (pb, _) in zip(a, b))
n, u = 32 * 28 * 28, 2.0 ** -24
print(f"{2 * n * u / (1 - n * u) * k * m:.3e}")
PYEOF
}
levels=("$HOST")
[ "$HOST" = AVX2 ] || levels+=(AVX2)
for w in "${levels[@]}"; do
  o=$([ "$w" = AVX2 ] && echo "$HOST" || echo AVX2)
  at "$w" --max-iters 20 --out "$T/w$w"
  # loads at the other instruction set with the same parameters (no step taken: written back as read)
  at "$o" --max-iters 20 --resume "$T/w$w/checkpoint.pit" --out "$T/w$w-load$o"
  $CKPT same "$T/w$w/checkpoint.pit" "$T/w$w-load$o/checkpoint.pit" ||
    fail "a checkpoint written at $w did not load bit for bit at $o"
  at "$w" --max-iters $((20 + K)) --resume "$T/w$w/checkpoint.pit" --out "$T/w$w-on$w"
  at "$o" --max-iters $((20 + K)) --resume "$T/w$w/checkpoint.pit" --out "$T/w$w-on$o"
  env ONEDNN_MAX_CPU_ISA="$w" "$PITSTOP" "${common[@]}" --max-iters $((20 + K)) --backend ref \
    --resume "$T/w$w/checkpoint.pit" --out "$T/w$w-ref" > /dev/null || fail "the reference backend's resume failed"
  t=$(tol "$T/w$w/checkpoint.pit" "$T/w$w-on$w/checkpoint.pit")
  echo "written at $w: TOL = $t (K = $K steps after the resume)"
  $CKPT compare "$T/w$w-on$w/checkpoint.pit" "$T/w$w-on$o/checkpoint.pit" "$t" ||
    fail "resumed at $o, the next $K steps differ from those at $w by more than $t"
  $CKPT compare "$T/w$w-on$w/checkpoint.pit" "$T/w$w-ref/checkpoint.pit" "$t" ||
    fail "the reference backend read the fast backend's checkpoint differently (not a plain layout?)"
  # not vacuous: the movement of the K steps itself is far above TOL
  if $CKPT compare "$T/w$w-on$w/checkpoint.pit" "$T/w$w/checkpoint.pit" "$t" > /dev/null; then
    fail "K steps moved the parameters by less than TOL: the comparison cannot fail"
  fi
done
echo "mixed_isa: ok"
