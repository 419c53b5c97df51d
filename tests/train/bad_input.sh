#!/usr/bin/env bash
# bad_input.sh — issue 2: bad input gets one clear line naming the file and the
# problem, a non-zero exit, no crash and no output file left behind.
set -uo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# fixtures: a valid small Fashion-MNIST-format directory, then broken copies
$PY - "$T" <<'PYEOF'
import gzip, os, struct, sys
t = sys.argv[1]
def idx(path, magic, dims, payload):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload)
def make(d, n=64, size=28, magic=0x803, truncate=0):
    os.makedirs(d, exist_ok=True)
    for split in ("train", "t10k"):
        img = bytes((i * 7) % 256 for i in range(n * size * size))
        if truncate:
            img = img[:-truncate]
        idx(f"{d}/{split}-images-idx3-ubyte.gz", magic, [n, size, size], img)
        idx(f"{d}/{split}-labels-idx1-ubyte.gz", 0x801, [n], bytes(i % 10 for i in range(n)))
make(f"{t}/good")
make(f"{t}/trunc", truncate=100)
make(f"{t}/magic", magic=0x1234)
make(f"{t}/small", size=8)
os.makedirs(f"{t}/missing")
# a gzip stream cut in the middle
make(f"{t}/cutgz")
p = f"{t}/cutgz/train-images-idx3-ubyte.gz"
b = open(p, "rb").read()
open(p, "wb").write(b[: len(b) // 2])
PYEOF
[ -d "$T/good" ] || fail "fixtures not written"

n=0
expect() { # expect NAME PATTERN -- args...: non-zero exit, one message matching PATTERN, no events file
  local name=$1 pat=$2
  shift 3
  n=$((n + 1))
  rm -f "$T/ev.jsonl"
  "$PITSTOP" train --quiet --events "$T/ev.jsonl" "$@" > "$T/out" 2> "$T/err"
  local rc=$?
  [ $rc -ne 0 ] || fail "$name: exit 0"
  [ $rc -lt 128 ] || fail "$name: crashed (status $rc): $(cat "$T/err")"
  grep -q "^pitstop: " "$T/err" || fail "$name: no 'pitstop:' message: $(cat "$T/err")"
  grep -qE "$pat" "$T/err" || fail "$name: message does not match '$pat': $(cat "$T/err")"
  [ ! -e "$T/ev.jsonl" ] || fail "$name: left an events file behind"
  ! ls "$T"/ev.jsonl.tmp* > /dev/null 2>&1 || fail "$name: left a temporary file behind"
  echo "ok $name: $(head -n 1 "$T/err")"
}
ok=(--model cnn --data fashion-mnist --max-iters 2 --batch-size 8)
# the valid fixture trains (the test of the broken ones cannot pass by accident)
"$PITSTOP" train --quiet "${ok[@]}" --data-dir "$T/good" --events "$T/ev.jsonl" > /dev/null || fail "valid fixture failed"
rm -f "$T/ev.jsonl"
expect missing "missing/train-(images|labels)-idx[13]-ubyte.gz.*No such file" -- "${ok[@]}" --data-dir "$T/missing"
expect truncated "trunc/train-images-idx3-ubyte.gz.*(truncated|short|bytes)" -- "${ok[@]}" --data-dir "$T/trunc"
expect cut-gzip "cutgz/train-images-idx3-ubyte.gz" -- "${ok[@]}" --data-dir "$T/cutgz"
expect magic "magic/train-images-idx3-ubyte.gz.*magic" -- "${ok[@]}" --data-dir "$T/magic"
expect small-images "cannot take 8x8" -- "${ok[@]}" --data-dir "$T/small"
expect dcgan-size "dcgan.*64x64 or 32x32" -- --model dcgan --data fashion-mnist --data-dir "$T/good" --image-size 48 --max-iters 1
expect unknown-model "unknown model 'resnet'" -- --model resnet --data synthetic --max-iters 1
expect zero-batch "batch-size must be a positive number" -- --model cnn --data synthetic --batch-size 0
expect negative-batch "batch-size must be a positive number" -- --model cnn --data synthetic --batch-size -4
expect bad-number "expects a whole number, not '12x'" -- --model cnn --data synthetic --max-iters 12x
touch "$T/afile"
expect unwritable-out "afile" -- --model cnn --data synthetic --max-iters 1 --out "$T/afile/sub"
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$T/ro" && chmod 555 "$T/ro"
  expect readonly-out "ro" -- --model cnn --data synthetic --max-iters 1 --out "$T/ro/x"
fi
expect unknown-option "unknown option '--bogus'" -- --bogus
expect shares-count "3 weight\(s\) for 1 rank" -- --model cnn --data synthetic --max-iters 1 --batch-shares 1,2,3
expect images-no-dir "needs --data-dir" -- --model dcgan --data images
expect resume-missing "nope.pit" -- --model cnn --data synthetic --max-iters 1 --resume "$T/nope.pit"
echo "bad input: $n cases ok"
