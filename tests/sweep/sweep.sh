#!/usr/bin/env bash
# sweep.sh — `pitstop sweep` without MPI: --dry-run prints one argv per cell (run ids, order,
# quoting); a sweep through tests/sweep/fake-mpirun + fake-train (which stores records with
# `pitstop parse --db`) stores every cell, reports a failing cell and goes on (exit 1);
# --export seed002-csv writes seed 002's CSV shape with the expected numbers; bad options fail.
# Skipped (77) while `pitstop parse` is not part of the build.
set -u
P=${PITSTOP:?}
SRC=${PIT_SOURCE_DIR:?}
"$P" parse --help >/dev/null 2>&1 || { echo "pitstop parse missing: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-sweep-XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
MPI="$SRC/tests/sweep/fake-mpirun"
TR="$SRC/tests/sweep/fake-train"
export FAKE_PROG=$TR PITSTOP=$P

# dry run: 2 ranks x 2 batches x 2 repeats, repeat-major, argv quoted for a shell
"$P" sweep --ranks 1,2 --batch-size 16,64 --model cnn --data synthetic --max-iters 20 --repeat 2 --id dr \
  --db "my db.db" --hostfile hosts --mpirun-arg --oversubscribe --train-arg --lr --train-arg 0.1 \
  --train-cmd /bin/pitstop --dry-run >dry.txt 2>err.txt || bad "dry run: $(cat err.txt)"
[ "$(wc -l <dry.txt)" = 8 ] && ok "dry run: 8 commands" || bad "dry run lines: $(cat dry.txt)"
first="mpirun -np 1 --hostfile hosts --oversubscribe /bin/pitstop train --model cnn --data synthetic --batch-size 16 --max-iters 20 --db 'my db.db' --run dr-r1-b16-0 --quiet --lr 0.1"
[ "$(head -1 dry.txt)" = "$first" ] && ok "dry run: first command" || bad "first command: $(head -1 dry.txt)"
[ "$(sed -n 5p dry.txt | grep -o -- '--run [^ ]*')" = "--run dr-r1-b16-1" ] && ok "repeat-major order" || bad "order: $(sed -n 5p dry.txt)"
[ ! -e "my db.db" ] && ok "dry run stores nothing" || bad "dry run created the store"

# a sweep with one failing cell
FAKE_LOG=$T/argv.log FAKE_FAIL_RUN=t1-r2-b16-0 "$P" sweep --ranks 1,2 --batch-size 16,64 --model cnn --data synthetic \
  --max-iters 20 --repeat 2 --id t1 --db s.db --mpirun "$MPI" --train-cmd "$TR" >out.txt 2>err.txt
rc=$?
[ $rc = 1 ] && ok "exit status 1 with a failed cell" || bad "exit status $rc"
grep -q "t1-r2-b16-0: FAILED (exit status 3" err.txt && grep -q "1 of 8 runs failed: t1-r2-b16-0" err.txt \
  && ok "failure reported" || bad "failure report: $(cat err.txt)"
[ "$(grep -c ': ok (' err.txt)" = 7 ] && ok "the sweep went on after the failure" || bad "ok lines: $(cat err.txt)"
n=$("$P" summary --db s.db --format csv | grep -c '^run,t1-')
[ "$n" = 7 ] && ok "7 runs stored" || bad "stored runs: $n"
grep -qx -- "-np" argv.log && grep -qx "t1-r2-b64-1" argv.log && ok "launcher got argv entries" || bad "argv log"

# export: one file per configuration, seed 002's shape, numbers from the records
mkdir exp
"$P" sweep --export seed002-csv --db s.db --id t1 --out exp 2>err.txt || bad "export: $(cat err.txt)"
[ "$(ls exp | wc -l)" = 4 ] && ok "4 CSV files" || bad "files: $(ls exp)"
f=exp/nnode-1_nproc-2_batch_size-64.csv
# fake-train: step i = s(1 + 0.01 (i mod 3)), s = 0.001 + 0.0001 B / ranks; epoch 0 = 10 steps; total = 0.5 + 20 steps + 0.25
if [ -f "$f" ] && [ "$(cat "$f")" = "$(printf 'total,t0,t1\n0.834798,0.042378,0.042378\n0.834798,0.042378,0.042378')" ]; then
  ok "seed 002 CSV content"
else bad "CSV $f: $(cat "$f" 2>&1)"; fi
[ "$(wc -l <exp/nnode-1_nproc-2_batch_size-16.csv)" = 2 ] && ok "failed run absent from its CSV" || bad "r2-b16 rows"
"$P" sweep --export seed002-csv --db s.db --id t1 --out one.csv 2>err.txt
[ $? = 1 ] && grep -q "4 configurations" err.txt && [ ! -e one.csv ] && ok "several configurations need a directory" || bad "file export: $(cat err.txt)"
FAKE_LOG= "$P" sweep --ranks 2 --batch-size 32 --model cnn --data synthetic --epochs 1 --id t2 --db s.db --mpirun "$MPI" --train-cmd "$TR" 2>/dev/null \
  && "$P" sweep --export seed002-csv --db s.db --id t2 --out one.csv 2>err.txt && [ "$(head -1 one.csv)" = "total,t0,t1" ] && [ "$(wc -l <one.csv)" = 2 ] \
  && ok "one configuration to a file" || bad "one-config export: $(cat err.txt)"
"$P" sweep --export seed002-csv --db s.db --id nope --out exp 2>err.txt
[ $? = 1 ] && grep -q "no run of sweep 'nope'" err.txt && ok "unknown sweep id" || bad "unknown id: $(cat err.txt)"

# the same id again is refused; --skip-done completes the sweep and leaves an interrupted run alone
FAKE_PARTIAL_RUN=t3-r2-b16-0 "$P" sweep --ranks 1,2 --batch-size 16 --model cnn --data synthetic --max-iters 20 --id t3 \
  --db s.db --mpirun "$MPI" --train-cmd "$TR" 2>err.txt
[ $? = 1 ] && grep -q "t3-r2-b16-0: FAILED (exit status 4" err.txt && ok "interrupted run reported" || bad "partial: $(cat err.txt)"
"$P" sweep --ranks 1,2,4 --batch-size 16 --model cnn --data synthetic --max-iters 20 --id t3 --db s.db --mpirun "$MPI" --train-cmd "$TR" 2>err.txt
[ $? = 1 ] && grep -q "run t3-r1-b16-0 is already in 's.db'" err.txt && ok "same id refused" || bad "same id: $(cat err.txt)"
"$P" sweep --ranks 1,2,4 --batch-size 16 --model cnn --data synthetic --max-iters 20 --id t3 --db s.db --mpirun "$MPI" --train-cmd "$TR" --skip-done 2>err.txt
rc=$?
if [ $rc = 1 ] && grep -q "t3-r1-b16-0: already stored, skipped" err.txt && grep -q "t3-r2-b16-0: FAILED: an interrupted earlier attempt" err.txt \
   && grep -q "t3-r4-b16-0: ok" err.txt; then ok "--skip-done"; else bad "--skip-done rc=$rc: $(cat err.txt)"; fi
[ "$("$P" summary --db s.db --format csv | grep -c '^run,t3-')" = 3 ] && ok "3 runs of t3" || bad "t3 runs"

# bad options and a missing launcher
"$P" sweep --batch-size 16 --model cnn --data synthetic --max-iters 5 --dry-run 2>err.txt
[ $? = 2 ] && grep -q -- "--ranks" err.txt && ok "missing --ranks" || bad "missing ranks: $(cat err.txt)"
"$P" sweep --ranks 1 --batch-size 16 --model cnn --data synthetic --max-iters 5 --epochs 1 --dry-run 2>err.txt
[ $? = 2 ] && grep -q "exactly one of --epochs" err.txt && ok "epochs xor max-iters" || bad "epochs/max-iters: $(cat err.txt)"
"$P" sweep --ranks 1,x --batch-size 16 --model cnn --data synthetic --max-iters 5 --dry-run 2>err.txt
[ $? = 2 ] && grep -q "'x' is not a positive integer" err.txt && ok "bad list" || bad "bad list: $(cat err.txt)"
"$P" sweep --ranks 1 --batch-size 16 --model cnn --data synthetic --max-iters 5 --db s.db --mpirun /nonexistent/mpirun 2>err.txt
[ $? = 1 ] && grep -q "cannot run '/nonexistent/mpirun'" err.txt && ok "missing launcher" || bad "missing launcher: $(cat err.txt)"
exit $fail
