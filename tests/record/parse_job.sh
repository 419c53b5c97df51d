#!/usr/bin/env bash
# parse_job.sh — `pitstop parse` on the per-rank logs of one job as a new user
# has them (issue 12.6): files of another course run's shape (the "Rank: r,
# Epoch: e, Epoch time" line, "[Rank: r] Epoch e took", blanks at line ends, no
# newline after the last line) in a directory named by the instance type;
# --job-per-dir makes one run of them, the init records carry the job context,
# a partial log's summary knows the whole epoch's length, and a timing line no
# format matches is named file:line.
set -euo pipefail
: "${PITSTOP:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

printf '# itype vcpus price_h billing_s min_s\nm4.xlarge 4 0.2 1 60\np2.8xlarge 32 7.2 1 60\n' > cat.tsv
mkdir -p job/m4.xlarge
for r in 0 1; do
  {
    printf 'Namespace(batch_size=64, beta1=0.5, cuda=False, num_epochs=1) \n'
    printf 'Rank: %d. World Size: 2 \nRank: %d, Initialize time: 3.5 s \nRank: %d, Epoch: 0, Training ... \n' $r $r $r
    for i in 0 1 2 3; do
      printf '[epoch: 0/1][iteration: %d/4][rank: %d] Loss_D: 1.0, Loss_G: 2.0, iteration time: 4.0%ds \n' $i $r $i
      printf 'Rank: %d, Epoch: 0, iteration: %d/4, It. time: 4.0%ds, Elapsed time: %d.5 s \n' $r $i $i $((4 * i + 8))
    done
    printf '[Rank: %d] Epoch 0 took: 16.1 seconds \n' $r
    printf 'Rank: %d, Epoch: 0, Epoch time: 16.1234s, Elapsed time: 24.5 s' $r   # no newline at the end
  } > job/m4.xlarge/rank$r.out
done

"$PITSTOP" parse --catalog cat.tsv --job-per-dir job/m4.xlarge/rank0.out job/m4.xlarge/rank1.out > out.jsonl 2> err.txt \
  || fail "parse: $(cat err.txt)"
test "$(grep -c '"run":"m4.xlarge"' out.jsonl)" -eq 12 || fail "12 records of run m4.xlarge: $(cat out.jsonl)"
test "$(grep -c '"type":"epoch"' out.jsonl)" -eq 2 || fail "2 epoch records"
grep -q '"type":"epoch","run":"m4.xlarge","gen":0,"t":24.5,"rank":1,"epoch":0,"epoch_s":16.1234}' out.jsonl \
  || fail "the last line (no newline) read: $(grep epoch out.jsonl)"
grep -q '"config":{"batch":128,"batch_per_rank":64,"ranks":2,"iters_per_epoch":4,"epochs":1,"itype":"m4.xlarge"}' out.jsonl \
  || fail "init config: $(grep init out.jsonl)"
grep -q 'rank0.out: 14 lines, 6 records, 0 skipped, 0 malformed' err.txt || fail "summary: $(cat err.txt)"
if grep -q unrecognised err.txt; then fail "no unrecognised lines expected: $(cat err.txt)"; fi
# into the store: both files one run
"$PITSTOP" parse --quiet --catalog cat.tsv --job-per-dir --db s.db job/m4.xlarge/rank0.out job/m4.xlarge/rank1.out \
  || fail "--job-per-dir --db"
test "$(sqlite3 s.db 'select count(*) from runs')" -eq 1 || fail "one run in the store"
test "$(sqlite3 s.db 'select count(*) from iterations')" -eq 8 || fail "8 iterations in the store"
# --run ID: the same, named
"$PITSTOP" parse --quiet --run jobA --db r.db job/m4.xlarge/rank0.out job/m4.xlarge/rank1.out || fail "--run --db"
test "$(sqlite3 r.db 'select name from runs')" = jobA || fail "--run: one run jobA"
# --itype overrides the path; seed 004's file names give the type too
"$PITSTOP" parse --quiet --itype c5.xlarge job/m4.xlarge/rank0.out | grep -q '"itype":"c5.xlarge"' || fail "--itype"
cp job/m4.xlarge/rank0.out result-p2-8-256-e0.txt
"$PITSTOP" parse --quiet --catalog cat.tsv result-p2-8-256-e0.txt | grep -q '"itype":"p2.8xlarge"' || fail "seed 004 name"
set +e
"$PITSTOP" parse --run a --job-per-dir job/m4.xlarge/rank0.out > /dev/null 2>&1; test $? -eq 2 || fail "--run with --job-per-dir: exit 2"
"$PITSTOP" parse --itype 'a"b' job/m4.xlarge/rank0.out > /dev/null 2> err.txt; test $? -ne 0 || fail "bad --itype accepted"
set -e
grep -q "only letters, digits" err.txt || fail "bad --itype message: $(cat err.txt)"

# a partial log (the first two iterations) predicts its whole epoch: iters_per_epoch 4
head -n 8 job/m4.xlarge/rank0.out > part.out
"$PITSTOP" parse --quiet --out part.jsonl part.out || fail "part.out"
"$PITSTOP" summary --events part.jsonl --format json > sum.json || fail "summary"
grep -q '"iters_per_epoch":4' sum.json || fail "iters_per_epoch from i/L: $(cat sum.json)"

# timing lines that match no format: counted, the first three named file:line (a clock with
# no iteration or epoch: the key/value reader reads 'Epoch 1 Time: 11.5', tests/record/test_parse_kv.c)
{ cat job/m4.xlarge/rank0.out; echo; for k in 1 2 3 4; do echo "wall time: 1$k.5"; done; } > odd.out
"$PITSTOP" parse --quiet odd.out > /dev/null 2> err.txt || fail "odd.out"
test "$(grep -c 'looks like a timing line but matches no format' err.txt)" -eq 3 || fail "3 named: $(cat err.txt)"
grep -q "pitstop: odd.out:15: looks like a timing line but matches no format: 'wall time: 11.5'" err.txt \
  || fail "file:line: $(cat err.txt)"
"$PITSTOP" parse odd.out 2>&1 > /dev/null | grep -q '0 malformed (14 known, 5 merged), 4 unrecognised timing lines' \
  || fail "summary count: $("$PITSTOP" parse odd.out 2>&1 > /dev/null)"
echo "parse_job: ok"
