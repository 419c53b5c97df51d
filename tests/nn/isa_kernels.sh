#!/usr/bin/env bash
# isa_kernels.sh — issue 25: on a CPU oneDNN runs at AVX2 (ONEDNN_MAX_CPU_ISA=AVX2 here; an
# AVX2-only host is the same), one training step of every model (cnn, cnn-wide, dcgan,
# esrgan with its VGG content loss) runs no oneDNN reference kernel: ONEDNN_VERBOSE
# lists every executed primitive with its implementation, and no `ref:` line may appear
# (ESRGAN's RRDB convolutions ran `ref:any` on nChw16c before: ~1000x slower). Under
# PIT_FAST_STRICT=1 a reference kernel would fail the net's creation instead. The init
# record says which instruction sets ran (config.isa: pitstop's own dispatch and
# oneDNN's), and `pitstop train --version` says the same. Skipped (77) on a CPU
# without AVX2.
set -euo pipefail
: "${PITSTOP:?}"
grep -qw avx2 /proc/cpuinfo || { echo "no AVX2 on this CPU: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export ONEDNN_MAX_CPU_ISA=AVX2 ONEDNN_VERBOSE=1 PIT_FAST_STRICT=0
ver=$("$PITSTOP" train --version)
[[ "$ver" == *"isa: pitstop avx2, oneDNN avx2"* ]] || fail "train --version under AVX2: $ver"
run() { # name, options...
  local name=$1
  shift
  "$PITSTOP" train --quiet --data synthetic --batch-size 2 --threads 1 --max-iters 1 \
    --events "$tmp/$name.jsonl" "$@" > "$tmp/$name.log" 2>&1 || { tail -5 "$tmp/$name.log"; fail "$name: train failed"; }
  local total refs
  total=$(grep -c '^onednn_verbose,exec,cpu,' "$tmp/$name.log" || true)
  refs=$(grep '^onednn_verbose,exec,cpu,[a-z_]*,ref:' "$tmp/$name.log" | cut -d, -f4-6 | sort | uniq -c || true)
  [[ $total -gt 0 ]] || fail "$name: no ONEDNN_VERBOSE exec lines (is oneDNN verbose off?)"
  [[ -z "$refs" ]] || fail "$name: oneDNN reference kernels under AVX2 (of $total primitives run):
$refs"
  /usr/bin/python3 - "$tmp/$name.jsonl" "$name" <<'PYEOF' || fail "$name: init record"
import json, sys
init = next(r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "init")
c = init["config"]
assert c["isa"] == {"pitstop": "avx2", "onednn": "avx2"}, c["isa"]
assert "kernel_warning" not in c, c["kernel_warning"]
PYEOF
  echo "$name: $total oneDNN primitives run at AVX2, none a reference kernel"
}
run cnn --model cnn
run cnn-wide --model cnn-wide
run dcgan --model dcgan
run dcgan32 --model dcgan --image-size 32
# the adversarial step (warm-up 0): generator, discriminator and the VGG19 content loss
run esrgan --model esrgan --residual-blocks 1 --filters 16 --hr-size 32 --content-loss random-vgg \
  --warmup-batches 0
echo "isa kernels ok"
