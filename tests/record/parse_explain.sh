#!/usr/bin/env bash
# parse_explain.sh — `pitstop parse` on what real runs print besides the named
# formats (issue 26, "Any dialect"): two ranks' lines glued on one line keep
# both records, a line cut by another is named and counted (never dropped
# silently), a key/value dialect no named format knows is read exactly,
# --pattern reads a user's template, and --explain says for every line whether
# it was used, by which reader, as what, and why not.
set -euo pipefail
: "${PITSTOP:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

# glued: rank 1's line right after rank 0's, then a cut one
{
  printf '[epoch: 1/2][iteration: 3/40][rank: 0] Loss_D: 0.1201, Loss_G: 5.2861, iteration time: 0.2s'
  printf '[epoch: 1/2][iteration: 3/40][rank: 1] Loss_D: 0.13, Loss_G: 5.1, iteration time: 0.21s\n\n'
  printf '[epoch: 1/2][iteration: 4/40][rank: 0] Loss_D: 0.1[epoch: 1/2][iteration: 4/40][rank: 1] Loss_D: 0.1, iteration time: 0.25s\n'
} > glued.log
"$PITSTOP" parse glued.log > g.jsonl 2> err.txt || fail "glued.log: $(cat err.txt)"
test "$(wc -l < g.jsonl)" -eq 3 || fail "3 records expected: $(cat g.jsonl)"
grep -q '"rank":0,"epoch":1,"iter":3,"step":43,"step_s":0.2,' g.jsonl || fail "rank 0: $(cat g.jsonl)"
grep -q '"rank":1,"epoch":1,"iter":3,"step":43,"step_s":0.21,' g.jsonl || fail "rank 1 kept: $(cat g.jsonl)"
grep -q '"rank":1,"epoch":1,"iter":4,"step":44,"step_s":0.25' g.jsonl || fail "after the cut: $(cat g.jsonl)"
grep -q "pitstop: glued.log:3: part of a line with another line glued into it, not read: '\[epoch: 1/2\]\[iteration: 4/40\]\[rank: 0\] Loss_D: 0.1'" err.txt \
  || fail "cut part named: $(cat err.txt)"
grep -q '2 glued lines split, 1 cut' err.txt || fail "summary counts: $(cat err.txt)"

# a dialect of this test's own: key=value, | key value |, key: value, value unit
cat > mine.log <<'LOG'
starting job 7 on 2 workers
step=12/500 loss=0.3 step_time=45ms rank=1
| epoch 2 | iter 30/100 | time/it 0.12s |
| epoch 3 | step 120/500 | 45.1 ms/batch |
epoch: 4, iteration: 7, iter time: 1.5 sec, rank: 2
Epoch 2 took: 12.5 seconds
LOG
"$PITSTOP" parse mine.log > m.jsonl 2> err.txt || fail "mine.log: $(cat err.txt)"
cat > want.jsonl <<'J'
{"type":"iter","run":"mine","gen":0,"rank":1,"iter":12,"step":12,"step_s":0.045,"loss":0.3}
{"type":"iter","run":"mine","gen":0,"epoch":2,"iter":30,"step":230,"step_s":0.12}
{"type":"iter","run":"mine","gen":0,"epoch":3,"iter":120,"step":1620,"step_s":0.0451}
{"type":"iter","run":"mine","gen":0,"rank":2,"epoch":4,"iter":7,"step":2007,"step_s":1.5}
{"type":"epoch","run":"mine","gen":0,"epoch":2,"epoch_s":12.5}
J
cmp -s m.jsonl want.jsonl || fail "mine.log records: $(diff m.jsonl want.jsonl)"
grep -q 'mine.log: 6 lines, 5 records, 1 skipped, 0 malformed (5 known, 0 merged); 5 by the key/value reader' err.txt \
  || fail "mine.log summary: $(cat err.txt)"
# --format dcgan: the named readers alone read none of it
if "$PITSTOP" parse --format dcgan mine.log > /dev/null 2> err.txt; then fail "a named format read mine.log"; fi

# --explain: per line, then a summary; records are not printed
"$PITSTOP" parse --explain glued.log mine.log > ex.txt 2> err.txt || fail "--explain: $(cat err.txt)"
grep -q '^glued.log:1  dcgan     record  iter rank 0 epoch 1 iter 3 step 43 step_s 0.2 loss_d 0.1201 loss_g 5.2861$' ex.txt || fail "line 1: $(cat ex.txt)"
grep -q '^glued.log:1+  dcgan     record  iter rank 1 epoch 1 iter 3 step 43 step_s 0.21' ex.txt || fail "line 1+: $(cat ex.txt)"
grep -q '^glued.log:3  dcgan     CUT cut: another line is glued into it before its iteration time' ex.txt || fail "cut: $(cat ex.txt)"
grep -q "^mine.log:1  -         skipped no known key: 'starting job 7 on 2 workers'" ex.txt || fail "why: $(cat ex.txt)"
grep -q '^mine.log:6  kv        record  epoch epoch 2 epoch_s 12.5' ex.txt || fail "epoch: $(cat ex.txt)"
grep -q '^mine.log: 6 lines; used: kv 5 (5 records or merged, 0 context); skipped 1 (no known key 1); malformed 0; cut 0' ex.txt \
  || fail "summary: $(cat ex.txt)"
if grep -q '"type"' ex.txt; then fail "records printed with --explain"; fi

# --pattern
printf '12:00:01 worker#2 finished it 7/50 in 120ms (epoch 1)\nnoise\n' > pat.log
"$PITSTOP" parse --pattern 'worker#{rank} finished it {iter}/{iters} in {step_ms}ms (epoch {epoch})' pat.log > p.jsonl 2> err.txt \
  || fail "--pattern: $(cat err.txt)"
grep -q '{"type":"iter","run":"pat","gen":0,"rank":2,"epoch":1,"iter":7,"step":57,"step_s":0.12}' p.jsonl || fail "pattern record: $(cat p.jsonl)"
set +e
"$PITSTOP" parse --pattern 'it {iteration}' pat.log > /dev/null 2> err.txt; rc=$?
set -e
test "$rc" -eq 2 || fail "a bad template: exit $rc"
grep -q "unknown field {iteration}" err.txt || fail "bad template message: $(cat err.txt)"
echo "parse_explain: ok"
