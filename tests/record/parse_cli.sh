#!/usr/bin/env bash
# parse_cli.sh — `pitstop parse` as a user runs it: output to stdout / --out / --db,
# and bad input: truncated JSON line, non-numeric time, a 10 MB line, a binary file,
# an empty file, a missing file (clear message naming file(:line), non-zero exit
# when nothing usable), --out and --db writing nothing on failure, a store of a
# newer schema refused untouched, a run already in the store refused.
set -euo pipefail
: "${PITSTOP:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > dcgan.out <<'EOF'
Namespace(batch_size=32, beta1=0.5, cuda=False)
Rank: 0. World Size: 2
Rank,0,Initialization Time: 18.00586771965027
Rank: 0, Epoch: 0, Training ...
[epoch: 0/1][iteration: 0/3][rank: 0] Loss_D: 1.4536, Loss_G: 4.1686, D(x): 0.5879, D(G(z)): 0.5917 / 0.0163, iteration time: 2.5775s
Rank,0,Epoch,0,Iteration,0,It. time,2.577510118484497,Elapsed time,2.8365161418914795
[epoch: 0/1][iteration: 1/3][rank: 0] Loss_D: 0.9402, Loss_G: 3.3680, D(x): 0.5804, D(G(z)): 0.3051 / 0.0356, iteration time: 1.3920s
Rank,0,Epoch,0,Iteration,1,It. time,1.3920483589172363,Elapsed time,4.513862609863281
[epoch: 0/1][iteration: 2/3][rank: 0] Loss_D: 0.9231, Loss_G: 4.0368, D(x): 0.6769, D(G(z)): 0.3597 / 0.0181, iteration time: 1.3577s
Rank,0,Epoch,0,Iteration,2,It. time,1.3577296733856201,Elapsed time,5.872102737426758
[rank: 0] Epoch 0 took: 5.8900 seconds
some other line
EOF

# stdout: 1 init + 3 iter + 1 epoch, summary on stderr
"$PITSTOP" parse dcgan.out > out.jsonl 2> err.txt || fail "parse dcgan.out: $(cat err.txt)"
test "$(wc -l < out.jsonl)" -eq 5 || fail "5 records expected: $(cat out.jsonl)"
test "$(grep -c '"type":"iter"' out.jsonl)" -eq 3 || fail "3 iters"
grep -q '"run":"dcgan","gen":0,"t":2.83651614,"rank":0,"epoch":0,"iter":0,"step":0,"batch":64,"step_s":2.57751012,"loss":{"d":1.4536,"g":4.1686}' out.jsonl \
  || fail "first iteration record: $(sed -n 2p out.jsonl)"
grep -q 'dcgan.out: 12 lines, 5 records, 1 skipped, 0 malformed' err.txt || fail "summary: $(cat err.txt)"
# --out gives the same bytes, --run renames
"$PITSTOP" parse --quiet --out o.jsonl dcgan.out 2> err.txt || fail "--out"
cmp -s o.jsonl out.jsonl || fail "--out differs from stdout"
test ! -s err.txt || fail "--quiet printed: $(cat err.txt)"
"$PITSTOP" parse --quiet --run exp7 dcgan.out | grep -q '"run":"exp7"' || fail "--run"
# stdin
"$PITSTOP" parse --quiet - < dcgan.out | grep -q '"run":"stdin"' || fail "stdin"

# truncated JSON line: reported with file:line, the good record kept, exit 0
printf '{"type":"iter","run":"a","gen":0,"t":1,"step":0,"step_s":0.5}\n{"type":"iter","run":"a","gen":0,"t":3.\n' > trunc.jsonl
"$PITSTOP" parse trunc.jsonl > t.out 2> err.txt || fail "trunc.jsonl should be usable: $(cat err.txt)"
grep -q "pitstop: trunc.jsonl:2: not valid JSON" err.txt || fail "truncated JSON message: $(cat err.txt)"
test "$(wc -l < t.out)" -eq 1 || fail "one record from trunc.jsonl"

# non-numeric time: all known lines malformed -> non-zero, file:line named
printf 'Rank,0,Epoch,0,Iteration,1,It. time,abc,Elapsed time,1\nRank: 0, Epoch: 0, iteration: 1/2, It. time: x s\n' > nan.log
if "$PITSTOP" parse nan.log > /dev/null 2> err.txt; then fail "nan.log should fail"; fi
grep -q "pitstop: nan.log:1: bad It. time: 'abc,Elapsed time,1'" err.txt || fail "nan.log:1 message: $(cat err.txt)"
grep -q "pitstop: nan.log:2: bad It. time" err.txt || fail "nan.log:2 message: $(cat err.txt)"
grep -q "'nan.log': no records: 2 malformed lines" err.txt || fail "nan.log summary: $(cat err.txt)"

# a 10 MB line between good lines
{ sed -n 5p dcgan.out; head -c 10485760 /dev/zero | tr '\0' 'a'; echo; sed -n 7p dcgan.out; } > big.log
"$PITSTOP" parse big.log > b.out 2> err.txt || fail "big.log: $(cat err.txt)"
test "$(wc -l < b.out)" -eq 2 || fail "big.log records"
grep -q 'big.log: 3 lines, 2 records, 1 skipped, 0 malformed' err.txt || fail "big.log summary: $(cat err.txt)"

# binary, empty, missing
# random bytes: 40 files from fixed seeds (one in about 60 random files once had
# a line whose bytes spelled '6/1', read as progress, before binary lines were skipped)
for seed in $(seq 1 40); do
  /usr/bin/python3 -c "import random,sys; random.seed($seed); sys.stdout.buffer.write(random.randbytes(200000))" > blob.bin
  if "$PITSTOP" parse blob.bin > /dev/null 2> err.txt; then fail "blob.bin (seed $seed) should fail: $(cat err.txt)"; fi
  grep -q "pitstop: 'blob.bin' looks like a binary file" err.txt || fail "binary message (seed $seed): $(cat err.txt)"
done
# a line of random bytes holding '6/1' between good lines: skipped as binary, the rest read
{ sed -n 5p dcgan.out; printf '\x8f\x03\xc36/1\x85XQ\x90\x96\xfd\x00\xbd\xc6fA\n'; sed -n 7p dcgan.out; } > mixed.log
"$PITSTOP" parse --explain mixed.log > x.txt 2>&1 || fail "mixed.log: $(cat x.txt)"
grep -q 'mixed.log:2 .*skipped.*binary bytes' x.txt || fail "mixed.log:2 binary: $(cat x.txt)"
"$PITSTOP" parse mixed.log 2> err.txt | grep -c '"type":"iter"' | grep -qx 2 || fail "mixed.log: 2 iters"
grep -q 'mixed.log: 3 lines, 2 records, 1 skipped' err.txt || fail "mixed.log summary: $(cat err.txt)"
# NUL padding before a line, as a crash leaves in a log: dropped, the line read
# (and after a line cut short by the crash)
{ sed -n 5p dcgan.out; printf '[epoch: 0/1][iterat'; head -c 4096 /dev/zero; sed -n 7p dcgan.out; } > padded.log
"$PITSTOP" parse padded.log 2> err.txt | grep -c '"type":"iter"' | grep -qx 2 || fail "padded.log: 2 iters: $(cat err.txt)"
: > empty.log
if "$PITSTOP" parse empty.log > /dev/null 2> err.txt; then fail "empty.log should fail"; fi
grep -q "pitstop: 'empty.log' is empty" err.txt || fail "empty message: $(cat err.txt)"
if "$PITSTOP" parse missing.log > /dev/null 2> err.txt; then fail "missing.log should fail"; fi
grep -q "pitstop: cannot open 'missing.log': No such file or directory" err.txt || fail "missing message: $(cat err.txt)"
# usage errors
set +e
"$PITSTOP" parse > /dev/null 2>&1; test $? -eq 2 || fail "no file: exit 2"
"$PITSTOP" parse --format regex dcgan.out > /dev/null 2>&1; test $? -eq 2 || fail "bad format: exit 2"
set -e

# --out with a failing input writes nothing
if "$PITSTOP" parse --out none.jsonl dcgan.out missing.log 2> err.txt; then fail "--out with missing should fail"; fi
test ! -e none.jsonl || fail "--out written despite failure"
test -z "$(ls none.jsonl.tmp.* 2>/dev/null)" || fail "temp file left"

# --db: one run per file; a failure stores nothing; a run already there is refused
"$PITSTOP" parse --db s.db dcgan.out 2> err.txt || fail "--db: $(cat err.txt)"
test "$(sqlite3 s.db 'select count(*) from iterations')" -eq 3 || fail "3 iterations in the store"
test "$(sqlite3 s.db "select name from runs")" = dcgan || fail "run name in the store"
cp dcgan.out other.out
if "$PITSTOP" parse --db s.db other.out empty.log 2> err.txt; then fail "--db with empty.log should fail"; fi
grep -q "nothing stored in 's.db'" err.txt || fail "nothing stored message: $(cat err.txt)"
test "$(sqlite3 s.db 'select count(*) from runs')" -eq 1 || fail "the failed import left runs"
if "$PITSTOP" parse --db s.db dcgan.out 2> err.txt; then fail "same run twice should fail"; fi
grep -q "run 'dcgan' is already in the store" err.txt || fail "already-there message: $(cat err.txt)"
"$PITSTOP" parse --db s.db --run dcgan-2 dcgan.out 2> /dev/null || fail "--run into the store"
test "$(sqlite3 s.db 'select count(*) from iterations')" -eq 6 || fail "6 iterations after --run"

# a store of a newer schema is refused and left byte for byte as it was
sqlite3 new.db 'create table keep(x); insert into keep values (1); pragma user_version = 99;'
before=$(sha256sum new.db)
if "$PITSTOP" parse --db new.db dcgan.out 2> err.txt; then fail "newer schema should be refused"; fi
grep -q "schema version 99 is newer" err.txt || fail "newer schema message: $(cat err.txt)"
test "$(sha256sum new.db)" = "$before" || fail "newer-schema store modified"
test -z "$(ls new.db-* 2>/dev/null)" || fail "journal files left next to new.db"
# a full disk: the write error is reported, exit non-zero
if [[ -w /dev/full ]]; then
  if "$PITSTOP" parse big.log > /dev/full 2> err.txt; then fail "writing to /dev/full should fail"; fi
  grep -q "pitstop: cannot write" err.txt || fail "write error message: $(cat err.txt)"
fi
# many records through the output thread: order and content
for i in $(seq 1 3000); do sed -n 5,10p dcgan.out; done > many.out
"$PITSTOP" parse --quiet many.out > many.jsonl || fail "many.out"
test "$(wc -l < many.jsonl)" -eq 9000 || fail "many.out: 3 iterations x 3000 expected, got $(wc -l < many.jsonl)"
test "$(grep -c '"step_s":1.39204836' many.jsonl)" -eq 3000 || fail "many.out: merged twins"
awk -F'"iter":' '{ split($2, a, ","); if (a[1] != (NR - 1) % 3) { print "iter " a[1] " at " NR; exit 1 } }' many.jsonl \
  || fail "many.out: records out of order"
# several runs through the output thread (records travel to it in a slim form
# that carries its batch's run): JSON lines of runs r0, r1, r2 between DCGAN
# lines of the file's own run, then a second file, the first not a whole number
# of 1024-record batches: every record keeps its run and its values
for i in $(seq 0 2499); do
  echo "{\"type\":\"iter\",\"run\":\"r$((i % 3))\",\"gen\":0,\"step\":$i,\"step_s\":0.5,\"loss\":{\"d\":$((i % 7)).25}}"
  sed -n 5,6p dcgan.out
done > mixed.out
cp dcgan.out second.out
"$PITSTOP" parse --quiet mixed.out second.out > mixed.jsonl || fail "mixed.out second.out"
test "$(wc -l < mixed.jsonl)" -eq 5005 || fail "mixed: 2500 + 2500 + 5 records expected, got $(wc -l < mixed.jsonl)"
test "$(grep -c '"run":"mixed"' mixed.jsonl)" -eq 2500 || fail "mixed: records of the file's run"
test "$(grep -c '"run":"second"' mixed.jsonl)" -eq 5 || fail "mixed: records of the second file"
awk '/"run":"r[0-2]"/ {
       match($0, /"run":"r[0-2]"/); r = substr($0, RSTART + 8, 1)
       match($0, /"step":[0-9]+/); s = substr($0, RSTART + 7, RLENGTH - 7)
       match($0, /"d":[0-9.]+/); d = substr($0, RSTART + 4, RLENGTH - 4)
       if (s % 3 != r || d != (s % 7) ".25") { print "run r" r " step " s " d " d; exit 1 }
       n++ }
     END { if (n != 2500) { print n " JSON records"; exit 1 } }' mixed.jsonl || fail "mixed: a JSON record lost its run or values"
{ "$PITSTOP" parse --quiet mixed.out; "$PITSTOP" parse --quiet second.out; } > apart.jsonl
cmp -s mixed.jsonl apart.jsonl || fail "mixed: two files in one invocation differ from two invocations"
echo "parse_cli: ok"
