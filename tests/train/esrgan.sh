#!/usr/bin/env bash
# esrgan.sh — issue 17: `pitstop train --model esrgan` on real photos (python3-skimage's
# sample images, copied into a temporary folder): a small configuration trains through
# the pixel-only warm-up into the adversarial phase (records carry the named losses,
# the init record says the content loss was random-vgg), writes a sample grid PNG and
# prints validation PSNR; VGG19 weights load from a safetensors file; and bad input —
# a photo smaller than --hr-size, a weights file truncated or of the wrong shape, the
# VGG content loss without weights — gets one clear message and a non-zero exit.
set -uo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
. "$PIT_SOURCE_DIR/tests/train/photos.bash"
mkdir -p "$T/val" "$T/tiny"
cp "$SK/rocket.jpg" "$T/val/"
cp "$SK/astronaut.png" "$SK/block.png" "$T/tiny/" # block.png is 10x10
small=(--model esrgan --data images --data-dir "$T/photos" --image-size 96 --hr-size 32
       --residual-blocks 1 --filters 16 --batch-size 2 --threads 1 --seed 3)

# 1. trains: 2 warm-up iterations, then 2 adversarial ones
"$PITSTOP" train --quiet "${small[@]}" --val-dir "$T/val" --max-iters 4 --warmup-batches 2 \
  --content-loss random-vgg --events "$T/ev.jsonl" --out "$T/out" > "$T/stdout" || fail "training failed"
grep -qE "validation PSNR [0-9.]+ dB \(bicubic [0-9.]+ dB\)" "$T/stdout" || fail "no PSNR line: $(cat "$T/stdout")"
$PY - "$T/ev.jsonl" "$T/out/samples_final.png" <<'PYEOF' || fail "records or grid"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
init = [r for r in recs if r["type"] == "init"][0]
cfg = init["config"] if isinstance(init["config"], dict) else json.loads(init["config"])
assert cfg["model"] == "esrgan" and cfg["content_loss"] == "random-vgg", cfg
assert cfg["hr_size"] == 32 and cfg["residual_blocks"] == 1, cfg
its = [r for r in recs if r["type"] == "iter"]
assert len(its) == 4, len(its)
assert set(its[0]["loss"]) == {"g", "pixel"}, its[0]["loss"]
assert set(its[3]["loss"]) == {"d", "g", "content", "adv", "pixel"}, its[3]["loss"]
for r in its:
    assert all(v == v and abs(v) < 1e6 for v in r["loss"].values()), r
png = open(sys.argv[2], "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
assert w == 4 * (32 + 2) + 2 and h == 1 * (32 + 2) + 2, (w, h) # LR|bicubic|output|HR, one val photo
print("trained: losses", its[3]["loss"], "grid", w, "x", h)
PYEOF

# 1b. --global-skip bicubic: G learns the residual over bicubic upscaling, its last conv
# starts at 0.1x, so the (practically) untrained model is within 0.5 dB of bicubic; the
# original (none) starts far below it
psnr() { grep -oE "validation PSNR [0-9.]+ dB \(bicubic [0-9.]+ dB\)" "$1" | tr -d '()' | awk '{print $3, $6}'; }
for s in none bicubic; do
  "$PITSTOP" train --quiet "${small[@]}" --val-dir "$T/val" --max-iters 1 --lr 1e-30 --content-loss none \
    --global-skip $s --events "$T/ev-$s.jsonl" > "$T/skip-$s" || fail "--global-skip $s failed"
done
read -r m b < <(psnr "$T/skip-bicubic")
awk -v m="$m" -v b="$b" 'BEGIN { exit !(m > b - 0.5 && m < b + 0.5) }' || fail "skip bicubic: model $m dB, bicubic $b dB"
read -r m0 b0 < <(psnr "$T/skip-none")
awk -v m="$m0" -v b="$b0" 'BEGIN { exit !(m < b - 3) }' || fail "no skip: model $m0 dB not far below bicubic $b0 dB"
grep -q '"global_skip":"bicubic"' "$T/ev-bicubic.jsonl" || fail "init record does not say global_skip bicubic"
echo "global skip: untrained model $m dB, bicubic $b dB (without: $m0 dB)"

# 2. VGG19 weights from safetensors (random numbers in torchvision's names and shapes),
# then the same file truncated, and with one tensor of the wrong shape
$PY - "$T" <<'PYEOF' || fail "weights fixture"
import json, struct, sys
import numpy as np
t = sys.argv[1]
cfg = [(64, 2), (128, 2), (256, 4), (512, 4), (512, 4)]
names, shapes, i, cin = [], [], 0, 3
for s, (f, n) in enumerate(cfg):
    for k in range(n):
        names += [f"features.{i}.weight", f"features.{i}.bias"]
        shapes += [[f, cin, 3, 3], [f]]
        cin = f
        i += 1 if (s == 4 and k == n - 1) else 2
    i += 1 if s < 4 else 0
def write(path, shapes, cut=0):
    hdr, off, blobs = {}, 0, []
    rng = np.random.default_rng(1)
    for nm, sh in zip(names, shapes):
        a = (rng.standard_normal(int(np.prod(sh))) * 0.02).astype("<f4").tobytes()
        hdr[nm] = {"dtype": "F32", "shape": sh, "data_offsets": [off, off + len(a)]}
        off += len(a)
        blobs.append(a)
    h = json.dumps(hdr).encode()
    data = struct.pack("<Q", len(h)) + h + b"".join(blobs)
    open(path, "wb").write(data[: len(data) - cut] if cut else data)
assert names[-1] == "features.34.bias", names[-2:]
write(f"{t}/vgg.safetensors", shapes)
write(f"{t}/cut.safetensors", shapes, cut=1000)
bad = [list(s) for s in shapes]
bad[2] = [64, 32, 3, 3]
write(f"{t}/shape.safetensors", bad)
PYEOF
"$PITSTOP" train --quiet "${small[@]}" --max-iters 2 --warmup-batches 1 --vgg-weights "$T/vgg.safetensors" \
  --events "$T/ev2.jsonl" > /dev/null || fail "training with VGG weights failed"
grep -q '"content_loss":"vgg"' "$T/ev2.jsonl" || fail "init record does not say content_loss vgg"

n=0
expect() { # expect NAME PATTERN -- args...: non-zero exit, one message matching PATTERN
  local name=$1 pat=$2
  shift 3
  n=$((n + 1))
  "$PITSTOP" train --quiet "$@" > "$T/o" 2> "$T/err"
  local rc=$?
  [ $rc -ne 0 ] || fail "$name: exit 0"
  [ $rc -lt 128 ] || fail "$name: crashed (status $rc): $(cat "$T/err")"
  grep -q "^pitstop: " "$T/err" || fail "$name: no 'pitstop:' message: $(cat "$T/err")"
  grep -qE "$pat" "$T/err" || fail "$name: message does not match '$pat': $(cat "$T/err")"
  echo "ok $name: $(head -n 1 "$T/err")"
}
expect small-photo "block.png' is 10x10, smaller than 32x32" -- "${small[@]}" --data-dir "$T/tiny" \
  --max-iters 1 --content-loss none
expect truncated-weights "cut.safetensors' is truncated" -- "${small[@]}" --max-iters 1 --vgg-weights "$T/cut.safetensors"
expect wrong-shape "shape.safetensors': tensor 'features.2.weight' has shape \[64, 32, 3, 3\], the model wants \[64, 64, 3, 3\]" \
  -- "${small[@]}" --max-iters 1 --vgg-weights "$T/shape.safetensors"
expect no-weights "content loss needs VGG19 weights" -- "${small[@]}" --max-iters 1
expect global-skip "unknown global-skip 'cubic'" -- "${small[@]}" --max-iters 1 --content-loss none --global-skip cubic
expect hr-size "multiple of 16" -- "${small[@]}" --max-iters 1 --content-loss none --hr-size 40
echo "esrgan: trained, weights loaded, $n bad-input cases ok"
