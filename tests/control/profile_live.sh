#!/usr/bin/env bash
# profile_live.sh — `pitstop profile` measuring live on the local provider, issue 15's bad input
# that only a live profile meets: a candidate that fails to start (more CPUs than the machine has)
# is said once with what it asked, left out, and the others are measured (until steady, in one
# generation: not resumed up to the cap) and ranked; when every
# candidate fails it exits non-zero saying so; the candidates train the --model asked (not the
# default cnn); a candidate the measured ones show dominated by the catalog's speeds is skipped; no
# node, cgroup or process is left behind.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash" # fail()
T=$(mktemp -d)
leftovers() { # cgroups and node files of this test's profile runs (its own: other tests run profiles too)
  local r
  for r in "$T"/runs/*/; do
    [ -d "$r" ] || continue
    r=$(basename "$r")
    ls /sys/fs/cgroup/cpu 2> /dev/null | grep -F "pitstop.$r." || true
  done
  find "$T" -path '*/nodes/*' 2> /dev/null || true
}
trap 'rm -rf "$T"' EXIT
cd "$T"
train=(--data synthetic --threads 1 --seed 5 --no-validation)
# 1. one candidate cannot start, the other is measured and ranked
"$PITSTOP" profile --db p.db --candidates local-1:64,local-1:1 --until-steady 0.2 --cap 400 --iters 1000 \
  --model cnn-wide --batch-size 16 "${train[@]}" > o1 2> e1 || fail "a profile with one good candidate failed: $(cat e1)"
cat o1 e1
grep -q "candidate local-1:64 failed: .* are free (left out)" e1 || fail "the failed candidate is not said with what it asked: $(cat e1)"
[ "$(grep -c 'candidate .* failed' e1)" = 1 ] || fail "the failure is said more than once: $(cat e1)"
grep -q "^measured local-1:1" o1 || fail "local-1:1 not measured: $(cat o1)"
# measured until steady (20%: the 50-iteration floor, give or take), in one generation: the
# controller must not resume a candidate that stopped because it was steady
n=$(sed -n 's/^measured local-1:1: \([0-9]*\) iterations.*/\1/p' o1)
[ "$n" -lt 400 ] || fail "local-1:1 ran to the cap ($n iterations), not until steady"
gens=$(grep -h '"type":"iter"' runs/*/events.jsonl | grep -o '"gen":[0-9]*' | sort -u | tr '\n' ' ')
[ "$gens" = '"gen":0 ' ] || fail "the candidate was resumed after it was steady: generations $gens"
grep -q "(1 measured, 1 failed)" o1 || fail "the profiling line does not count the failure: $(cat o1)"
grep -q '^\* local-1:1 ' o1 || fail "local-1:1 not ranked and chosen: $(cat o1)"
sqlite3 p.db "select config from inits" | grep -q "\"model\":\"cnn-wide\"" || fail "the candidate did not train --model cnn-wide"
# 2. every candidate fails: non-zero, one message
if "$PITSTOP" profile --db p2.db --candidates local-1:64 --cap 60 --iters 1000 --model cnn "${train[@]}" \
  > o2 2> e2; then
  fail "a profile where nothing can run succeeded"
fi
grep -q "no candidate could be measured (1 failed)" e2 || fail "$(cat e2)"
# 3. given in the less promising order: local-1:1 is measured first (the catalog's speed per price), and
# local-0.4:1 (at most 2 x 0.4 of its samples per dollar at the same price) is skipped, never run
"$PITSTOP" profile --db p3.db --candidates local-0.4:1,local-1:1 --until-steady 0.2 --cap 200 --iters 1000 \
  --model cnn --batch-size 16 "${train[@]}" > o3 2> e3 || fail "profile 3 failed: $(cat e3)"
cat o3
[ "$(grep -m1 '^measured ' o3 | sed 's/^measured \([^ ]*\): .*/\1/')" = "local-1:1" ] || fail "local-1:1 not measured first: $(cat o3)"
grep -q "^skipped local-0.4:1: dominated by local-1:1 (by the catalog's speeds" o3 || fail "local-0.4:1 not skipped: $(cat o3)"
! grep -q "^measured local-0.4:1" o3 || fail "local-0.4:1 was run: $(cat o3)"
grep -q "(1 measured, 0 failed)" o3 || fail "$(cat o3)"
after=$(leftovers)
[ -n "$(ls "$T"/runs)" ] || fail "no profile run to check for leftovers"
[ -z "$after" ] || fail "left behind: $after"
echo "profile live: a failing candidate left out and said, the rest ranked; all failing: non-zero; nothing left behind"
