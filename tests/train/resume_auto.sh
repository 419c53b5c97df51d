#!/usr/bin/env bash
# resume_auto.sh — `--resume auto`: the newest valid checkpoint in --out; when the
# newest is corrupted, a warning names it and why, and the previous one is used (the
# run still ends with the uninterrupted run's parameters); with none there, a fresh
# start; without --out, a usage error. A stale temp file of a dead process is swept.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
c=(train --model cnn --data synthetic --batch-size 16 --threads 1 --seed 3 --lr 0.01
   --lr-schedule constant --quiet --no-validation --limit 200 --epochs 0 --backend ref)
"$PITSTOP" "${c[@]}" --max-iters 40 --out "$T/u" > /dev/null
"$PITSTOP" "${c[@]}" --max-iters 30 --checkpoint-every 10 --out "$T/r" > /dev/null
[ "$(cat "$T/r/checkpoint.latest")" = "checkpoint-000000000030.pit" ] || fail "pointer: $(cat "$T/r/checkpoint.latest")"
ls "$T/r"/checkpoint-*.pit | wc -l | grep -qx 2 || fail "not two rotated checkpoints: $(ls "$T/r")"
# the newest corrupted (one byte of its parameters), and a temp file of a dead process
printf 'X' | dd of="$T/r/checkpoint-000000000030.pit" bs=1 seek=3000 conv=notrunc 2> /dev/null
sh -c 'exit 0' & dead=$!
wait $dead
touch "$T/r/checkpoint-000000000040.pit.tmp.$dead"
"$PITSTOP" "${c[@]}" --max-iters 40 --out "$T/r" --resume auto > "$T/out.txt" 2> "$T/err.txt"
grep -q "warning: .*checkpoint-000000000030.pit.*checksum" "$T/err.txt" || fail "no warning naming the corrupted checkpoint: $(cat "$T/err.txt")"
grep -q "resumed" "$T/out.txt" || fail "did not resume: $(cat "$T/out.txt")"
[ ! -e "$T/r/checkpoint-000000000040.pit.tmp.$dead" ] || fail "the dead process's temp file was not swept"
$CKPT compare "$T/u/checkpoint.pit" "$T/r/checkpoint.pit" 1e-5 || fail "resumed from step 20 differs from the uninterrupted run"
[ "$(cd "$T/r" && echo checkpoint-*.pit)" = "checkpoint-000000000020.pit checkpoint-000000000040.pit" ] \
  || fail "rotation after resuming from 20 should keep 20 and 40: $(ls "$T/r")"
# nothing there yet: a fresh start (generation 0)
"$PITSTOP" "${c[@]}" --max-iters 5 --out "$T/new" --resume auto > "$T/out.txt"
! grep -q "resumed" "$T/out.txt" || fail "resumed from nothing: $(cat "$T/out.txt")"
# every checkpoint corrupted: an error, not a silent fresh start
printf 'X' | dd of="$T/new/checkpoint-000000000005.pit" bs=1 seek=3000 conv=notrunc 2> /dev/null
if "$PITSTOP" "${c[@]}" --max-iters 10 --out "$T/new" --resume auto > /dev/null 2> "$T/err.txt"; then
  fail "started although every checkpoint is corrupted"
fi
grep -q "no valid checkpoint in '$T/new'" "$T/err.txt" || fail "$(cat "$T/err.txt")"
if "$PITSTOP" "${c[@]}" --max-iters 5 --resume auto 2> "$T/err.txt"; then
  fail "--resume auto without --out was accepted"
fi
grep -q "needs --out" "$T/err.txt" || fail "$(cat "$T/err.txt")"
echo "resume auto: ok"
