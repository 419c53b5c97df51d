#!/usr/bin/env bash
# isa_binary.sh — issue 25: the default build (PIT_NATIVE off) runs on any x86-64 CPU: no
# function of the pitstop binary holds a VEX/EVEX instruction (AVX, AVX2, FMA, AVX-512:
# mnemonics starting with "v") except the dispatched versions of src/nn/fast_pool.c and
# src/nn/fast_wino.c (and the OpenMP regions GCC outlines from them, `_omp_fn.N`), which
# run only where the CPU has their instruction set (src/nn/isa.c). objdump counts them
# per function. Skipped (77) for a -march=native build (PIT_NATIVE=ON: tuned for the
# building CPU on purpose) or without objdump.
set -euo pipefail
: "${PITSTOP:?}"
[[ "${PIT_NATIVE:-OFF}" == OFF ]] || { echo "PIT_NATIVE build: skipped"; exit 77; }
command -v objdump > /dev/null || { echo "no objdump: skipped"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
allowed='^<(fwd_plane16|bwd_plane16|fwd_plane_avx2|bwd_plane_avx2|in_filt_avx2|out_all_avx2)(\._omp_fn\.[0-9]+)?>:$'
counts=$(objdump -d --no-show-raw-insn "$PITSTOP" | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = $2; next }
  NF >= 2 { split($0, a, "\t"); m = a[2]; sub(/ .*/, "", m); if (m ~ /^v/) c[fn]++ }
  END { for (f in c) print c[f], f }')
[[ -n "$counts" ]] || fail "no vector instruction at all: the dispatched versions are missing"
bad=$(awk -v ok="$allowed" '$2 !~ ok' <<< "$counts")
[[ -z "$bad" ]] || fail "VEX/EVEX instructions outside the dispatched functions:
$(sort -rn <<< "$bad" | head -20)"
for f in fwd_plane16 bwd_plane16 fwd_plane_avx2 bwd_plane_avx2 in_filt_avx2._omp_fn.0 out_all_avx2._omp_fn.0; do
  grep -q "<$f>:" <<< "$counts" || fail "dispatched function $f has no vector instruction"
done
echo "dispatched functions only:"
sort -rn <<< "$counts"
