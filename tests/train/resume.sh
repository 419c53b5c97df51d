#!/usr/bin/env bash
# ctest: slow
# resume.sh — the elastic protocol's invariant: a run checkpointed after 20
# iterations on 1 rank and resumed on 2 ranks (and one stopped by SIGUSR1 and
# resumed) ends with the parameters of the uninterrupted run (up to summation
# order), with the same sequence of global batches across epoch boundaries, and its
# records continue the step count in generation 1.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# 200 samples, batch 32: 7 batches per epoch (the last one short), so 45 iterations cross epochs
common=(train --model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01
        --lr-schedule cosine --quiet --no-validation --limit 200 --epochs 0)
# 1 rank for 20 iterations, then 2 ranks to 45. A cosine schedule follows the planned
# iterations (--max-iters), so this part uses a constant one; the SIGUSR1 part below
# keeps --max-iters and the cosine curve.
c2=(train --model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01
    --lr-schedule constant --quiet --no-validation --limit 200 --epochs 0)
"$PITSTOP" "${c2[@]}" --max-iters 45 --out "$T/u" > /dev/null
"$PITSTOP" "${c2[@]}" --max-iters 20 --out "$T/r" --events "$T/r.jsonl" --run elastic > /dev/null
cp "$T/r/checkpoint.pit" "$T/step20.pit"
mpirun_local 2 "$PITSTOP" "${c2[@]}" --max-iters 45 --out "$T/r" --events "$T/r.jsonl" \
  --resume "$T/step20.pit" --check-sync 1 > "$T/out2.txt"
grep -q "resumed" "$T/out2.txt" || fail "the resumed run does not say so: $(cat "$T/out2.txt")"
$CKPT compare "$T/u/checkpoint.pit" "$T/r/checkpoint.pit" 1e-4 || fail "resumed run differs from the uninterrupted one"
$PY - "$T/r.jsonl" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
its = [r for r in recs if r["type"] == "iter"]
steps = [r["step"] for r in its]
assert steps == list(range(45)), steps
assert all(r["run"] == "elastic" for r in recs)
g1 = [r for r in its if r["gen"] == 1]
assert len(g1) == 25 and all(len(r["compute_s"]) == 2 for r in g1), len(g1)
inits = [r for r in recs if r["type"] == "init"]
assert [i["gen"] for i in inits] == [0, 1] and inits[1]["ranks"] == 2
# epochs and batch sizes continue: 7 batches per epoch, the 7th holds 200-6*32 = 8 samples
for r in its:
    assert r["epoch"] == r["step"] // 7 and r["iter"] == r["step"] % 7, r
    assert r["batch"] == (8 if r["iter"] == 6 else 32), r
ts = [r["t"] for r in recs]
assert all(b >= a for a, b in zip(ts, ts[1:])), "record times go backwards across the resume"
# each end record's total_s is its own generation's time (t goes on across the
# resume; a run's total is the sum over generations): generation 1's is not
# the cumulative t, and the sum is within the last t plus generation 1's start
ends = [r for r in recs if r["type"] == "end"]
assert [r["gen"] for r in ends] == [0, 1], ends
assert abs(ends[0]["total_s"] - ends[0]["t"]) < 1e-6, ends[0]
# generation 1's clock starts at the checkpoint's t (written just before the
# checkpoint record at step 20): its total_s is its end's t less that, within
# the checkpoint's own write time
ck = [r for r in recs if r["type"] == "checkpoint" and r["gen"] == 0][-1]
assert abs(ends[1]["total_s"] - (ends[1]["t"] - ck["t"])) <= ck["ckpt_s"] + 1e-3, (ends, ck)
assert ends[1]["total_s"] < ends[1]["t"] - 0.5 * ends[0]["t"], (ends, ck)
print("records: 45 steps over generations 0 and 1, epochs and short batches as uninterrupted")
PYEOF

# wait_iters FILE TRIES: until FILE holds 3 iter records (or TRIES x 50 ms passed)
wait_iters() {
  local k
  for _ in $(seq 1 "$2"); do
    k=$(grep -c '"iter"' "$1" 2> /dev/null || true)
    [ "${k:-0}" -ge 3 ] && return 0
    sleep 0.05
  done
}

# SIGUSR1: stop at an agreed iteration boundary, checkpoint, exit 0, then resume to the end
"$PITSTOP" "${common[@]}" --max-iters 45 --out "$T/s" --events "$T/s.jsonl" --backend ref > "$T/s.txt" &
pid=$!
wait_iters "$T/s.jsonl" 200
kill -USR1 $pid
wait $pid || fail "the run stopped by SIGUSR1 exited non-zero"
grep -q "stopped on request" "$T/s.txt" || fail "no stop message: $(cat "$T/s.txt")"
n=$(grep -c '"iter"' "$T/s.jsonl")
[ "$n" -lt 45 ] || fail "SIGUSR1 did not stop the run ($n iterations)"
"$PITSTOP" "${common[@]}" --max-iters 45 --out "$T/s" --resume "$T/s/checkpoint.pit" --backend ref > /dev/null
"$PITSTOP" "${common[@]}" --max-iters 45 --out "$T/a2" --backend ref > /dev/null
$CKPT compare "$T/a2/checkpoint.pit" "$T/s/checkpoint.pit" 1e-5 || fail "stopped+resumed run differs from the uninterrupted one"
echo "stopped by SIGUSR1 after $n iterations, resumed to 45: same parameters"

# the same under mpirun: SIGUSR1 to mpirun is forwarded to both ranks, which agree on the
# step, checkpoint and exit 0; the run is finished on 1 rank with the uninterrupted result
(
  export ASAN_OPTIONS="${asan_keep:+$asan_keep:}detect_leaks=0"
  exec "${MPIRUN[@]}" -np 2 "$PITSTOP" "${common[@]}" --max-iters 45 --out "$T/m" --events "$T/m.jsonl" \
    --backend ref > "$T/m.txt" 2>&1
) & # exec: the signal goes to mpirun itself
mpid=$!
wait_iters "$T/m.jsonl" 400
kill -USR1 $mpid
wait $mpid || fail "mpirun stopped by SIGUSR1 exited non-zero: $(cat "$T/m.txt")"
grep -q "stopped on request" "$T/m.txt" || fail "no stop message under mpirun: $(cat "$T/m.txt")"
n=$(grep -c '"iter"' "$T/m.jsonl")
[ "$n" -lt 45 ] || fail "SIGUSR1 did not stop the MPI run ($n iterations)"
"$PITSTOP" "${common[@]}" --max-iters 45 --out "$T/m" --resume "$T/m/checkpoint.pit" --backend ref > /dev/null
$CKPT compare "$T/a2/checkpoint.pit" "$T/m/checkpoint.pit" 1e-4 || fail "2 ranks stopped by SIGUSR1 + 1 rank resumed differs"
echo "mpirun stopped by SIGUSR1 after $n iterations on 2 ranks, resumed on 1 to 45: same parameters"

# a corrupted checkpoint is refused with its name, and nothing is trained
printf 'garbage' | dd of="$T/step20.pit" bs=1 seek=100 conv=notrunc 2> /dev/null
if "$PITSTOP" "${c2[@]}" --max-iters 45 --resume "$T/step20.pit" 2> "$T/err.txt"; then
  fail "a corrupted checkpoint was accepted"
fi
grep -q "step20.pit" "$T/err.txt" || fail "error does not name the checkpoint: $(cat "$T/err.txt")"
echo "resume: ok"
