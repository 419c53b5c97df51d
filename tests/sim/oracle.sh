#!/usr/bin/env bash
# ctest: slow
# oracle.sh — bench-spot-scale --oracle (bench/spot-scale/oracle.c, docs/simulate.md "How far an
# online policy can get") on its quick grid of the held-out traces (10 h jobs, 72 single-node
# cases, about 15 s and 0.8 GB): the Bayes oracle runs on most cases and never misses a deadline
# (it keeps the safety rules), the safe optimum is never below the optimum, the oracle is never
# below the safe optimum on average (no policy that keeps the rules can be), and it is below
# uniform progress (it knows each trace's span statistics). Also in the model's world (--synth).
# Skipped (77) without ../shared's traces.
set -euo pipefail
TR=$PIT_SOURCE_DIR/../shared/data/skypilot-spot-traces
[ -d "$TR" ] || { echo "skipped: no $TR"; exit 77; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
for extra in "" "--synth 1"; do
  out=$("$PIT_BINARY_DIR/bench-spot-scale" "$TR" --set held_out --oracle --quick $extra 2> /dev/null) ||
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
