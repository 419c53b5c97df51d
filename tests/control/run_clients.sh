#!/usr/bin/env bash
# ctest: slow
# run_clients.sh — the unchanged PyTorch example scripts of ../shared/data/clients under `pitstop run`
# (issue 26 items 2, 4, 6): a program that prints only progress lines is measured by their arrival.
#  - the DCGAN example (--dataset fake, tiny: ngf/ndf 8, batch 64, 4 epochs of 16 iterations):
#  - the MNIST example on Fashion-MNIST (Debian's dataset-fashion-mnist, cut to 1280 training images
#    so it runs in a minute; a progress line every 10 batches, as it prints by default):
# for each: the controller's step times within 10% of the script's own time.perf_counter() at each
# line (tests/control/stamp_lines.py runs the script, unchanged, and writes its stamps), the status
# line with a predicted finish and cost, the run said finished (an end record "done" written by the
# controller: the script writes none), and `pitstop predict --db` on the stored run giving one
# epoch as the script's clock measured it (tests/control/clients_check.py). Skips (77) without
# Debian's python3-torch or the scripts.
set -euo pipefail
PY=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
C=$PIT_SOURCE_DIR/../shared/data/clients
"$PY" -c 'import torch, torchvision' 2> /dev/null && [ -f "$C/pytorch-examples-dcgan/main.py" ] || {
  echo "skipped: python3-torch, python3-torchvision or ../shared/data/clients missing"
  exit 77
}
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"' EXIT
export OMP_NUM_THREADS=1
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
STAMP=$PIT_SOURCE_DIR/tests/control/stamp_lines.py
CHECK=$PIT_SOURCE_DIR/tests/control/clients_check.py

# client NAME SHAPE [RUN OPTIONS] -- SCRIPT ARGS...: the run, its status lines, predict, the figures
client() {
  local name=$1 shape=$2
  shift 2
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  "$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/$name" --run "tc$name" --db "$T/$name.db" \
    "${opts[@]}" -- "$PY" "$STAMP" "$T/$name.stamps" "$@" > "$T/$name.out" 2> "$T/$name.err" ||
    fail "$name: the run failed: $(tail "$T/$name.err")"
  grep -q "finish in .* \[.*\], job \$[0-9.]* \[" "$T/$name.err" ||
    fail "$name: no status line with a predicted finish: $(cat "$T/$name.err")"
  echo "$name status: $(grep -m1 "finish in" "$T/$name.err")"
  # the script exited 0 and writes no end record: the controller's says the job is done
  "$PITSTOP" status "$T/$name" > "$T/$name.status" 2>&1 || fail "$name: status failed: $(cat "$T/$name.status")"
  grep -q "^run tc$name .*: finished$" "$T/$name.status" || fail "$name: not said finished: $(head -3 "$T/$name.status")"
  grep '"type":"end"' "$T/$name/events.jsonl" | tail -1 | grep -q '"status":"done"' ||
    fail "$name: no end record saying done"
  "$PY" - "$T/$name.err" << 'PYEOF' || fail "$name: a status line's finish outside its own interval"
import re, sys
unit = {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
q = r"([0-9.]+) (µs|ms|s|min)"
n = 0
for l in open(sys.argv[1], encoding="utf-8"):
    m = re.search(r"finish in " + q + r" \[" + q + ", " + q + r"\]", l)
    if m:
        x, lo, hi = (float(m[i]) * unit[m[i + 1]] for i in (1, 3, 5))
        assert lo * 0.999 <= x <= hi * 1.001, l  # the printed figures are rounded
        n += 1
print(f"  {n} status lines, each finish inside its interval")
PYEOF
  "$PITSTOP" predict --db "$T/$name.db" --format json > "$T/$name.pred.json" 2> "$T/$name.pred.err" ||
    fail "$name: predict --db failed: $(cat "$T/$name.pred.err")"
  "$PY" "$CHECK" "$T/$name/events.jsonl" "$T/$name.stamps" "$T/$name.pred.json" "$shape" || fail "$name: the figures"
}

mkdir -p "$T/dcgan-out"
client dcgan iters -- "$C/pytorch-examples-dcgan/main.py" --dataset fake --niter 4 --batchSize 64 --ngf 8 \
  --ndf 8 --workers 0 --manualSeed 1 --outf "$T/dcgan-out"

# MNIST reads ../data/MNIST/raw from its working directory: Fashion-MNIST's four files, gunzipped,
# under the names MNIST's have, cut to 1280 training and 200 test images (IDX headers rewritten)
mkdir -p "$T/data/MNIST/raw" "$T/work"
"$PY" - "$T/data/MNIST/raw" << 'PYEOF' || { echo "skipped: Debian's dataset-fashion-mnist is not installed"; exit 77; }
import gzip, struct, sys
src = "/usr/share/datasets/fashion-mnist/"
for name, n in (("train-images-idx3-ubyte", 1280), ("train-labels-idx1-ubyte", 1280),
                ("t10k-images-idx3-ubyte", 200), ("t10k-labels-idx1-ubyte", 200)):
    b = gzip.open(src + name + ".gz").read()
    ndim = struct.unpack(">I", b[:4])[0] & 0xff
    item = 1
    for d in struct.unpack(">" + "I" * ndim, b[4:4 + 4 * ndim])[1:]:
        item *= d
    hdr = 4 + 4 * ndim
    open(f"{sys.argv[1]}/{name}", "wb").write(b[:4] + struct.pack(">I", n) + b[8:hdr] + b[hdr:hdr + n * item])
PYEOF
(cd "$T/work" && client mnist samples --epochs 4 -- "$C/pytorch-examples-mnist/main.py" --epochs 4 --batch-size 16) ||
  exit 1 # fail() in the subshell ends only the subshell
echo "clients: DCGAN and MNIST measured by arrival, predicted, stored"
