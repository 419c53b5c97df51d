#!/usr/bin/env bash
# ctest: slow
# oracle.sh — bench-spot-scale --oracle (bench/spot-scale/oracle.c, docs/simulate.md "How far an
# online policy can get") on its quick grid of the held-out traces (10 h jobs, 72 single-node
# cases, about 30 s and 0.8 GB): the Bayes oracle runs on most cases and never misses a deadline
# (it keeps the safety rules), the safe optimum is never below the optimum, the oracle is never
# below the safe optimum on average (no policy that keeps the rules can be), and it is below
# uniform progress (it knows each trace's span statistics). Also in the model's world (--synth),
# and with the oracle that also knows each span's dependence on the one before (--oracle-prev).
# With --oracle-gb 0.3 the larger cases' choices are recomputed from checkpoints of the values
# (oracle.c): the same cost in every case run both ways, and some case run that way.
# Skipped (77) without ../shared's traces.
set -euo pipefail
TR=$PIT_SOURCE_DIR/../shared/data/skypilot-spot-traces
[ -d "$TR" ] || { echo "skipped: no $TR"; exit 77; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for extra in "" "--synth 1" "--oracle-prev --deadline 1.1"; do
  out=$("$PIT_BINARY_DIR/bench-spot-scale" "$TR" --set held_out --oracle --quick --csv "$tmp/all${extra// /}.csv" $extra 2> /dev/null) ||
    fail "bench-spot-scale --oracle $extra failed"
  rows=$(echo "$out" | grep -E "^  held_out +[0-9.]+x +[0-9]+ ") || fail "no oracle rows ($extra): $out"
  echo "$rows" | while read -r set dl cases safe_all bar where safe bayes pitstop uniform missed; do
    p() { echo "${1%\%}"; }
    [ "$where" -ge $((cases / 2)) ] || fail "$dl: the oracle ran on $where of $cases cases"
    [ "$missed" = 0 ] || fail "$dl: the oracle missed $missed deadlines"
    awk -v s="$(p "$safe_all")" 'BEGIN { exit !(s >= 0) }' || fail "$dl: the safe optimum below the optimum ($safe_all)"
    awk -v b="$(p "$bayes")" -v s="$(p "$safe")" 'BEGIN { exit !(b >= s) }' ||
      fail "$dl: the oracle ($bayes) below the safe optimum ($safe) it must keep to"
    awk -v b="$(p "$bayes")" -v u="$(p "$uniform")" 'BEGIN { exit !(b < u) }' ||
      fail "$dl: the oracle ($bayes) not below uniform progress ($uniform)"
    echo "${extra:-real traces} $dl: $where of $cases cases, safe $safe, oracle $bayes, pitstop $pitstop, uniform $uniform, no miss"
  done
done
out=$("$PIT_BINARY_DIR/bench-spot-scale" "$TR" --set held_out --oracle --quick --oracle-gb 0.3 --csv "$tmp/ck.csv" 2> /dev/null) ||
  fail "bench-spot-scale --oracle --oracle-gb 0.3 failed"
n=$(echo "$out" | sed -n 's/.*from checkpoints (--oracle-gb) in \([0-9]*\) cases/\1/p')
[ "${n:-0}" -ge 1 ] || fail "no case recomputed from checkpoints with --oracle-gb 0.3: $out"
# bayes_cost is the third field from the end
same=$(paste "$tmp/all.csv" "$tmp/ck.csv" | awk -F'\t' 'NR > 1 {
  na = split($1, a, ","); nb = split($2, b, ",")
  if (b[nb - 2] == "") next
  if (a[na - 2] != b[nb - 2]) { print "differs: " $1 " / " b[nb - 2]; bad = 1 } else ok++
} END { if (bad) exit 1; print ok }') || fail "checkpointed oracle differs from the one-pass oracle: $same"
[ "$same" -ge "$n" ] || fail "only $same cases compared"
echo "checkpoints: $n cases recomputed from them, $same cases with the same cost both ways"
