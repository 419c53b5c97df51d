#!/usr/bin/env bash
# ctest: slow
# profile_cmd.sh — `pitstop profile --db DB --candidates ... -- CMD`: a user's own command measured on
# each candidate membership, each run stopped by the controller once its pace is steady (ctl_measure.c;
# a command cannot be told --until-steady), stored, and ranked per step. The command burns CPU (a fixed
# amount of Python work a step, its time printed in the course DCGAN's line shape), so under the local
# provider's cgroup quota local-0.4 is about 2.5× slower than local-1 at the same price: local-1:1 must be
# chosen. Each candidate's line says why it stopped; the runs stop long before the command's 100000
# steps; nothing is left running. Then the same store ranked by --from-db -- CMD chooses the same, and a
# train option given with a command is refused.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash" # fail(), $PY
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
cat > burn.py << 'PYEOF'
import sys, time
n = int(sys.argv[1])
t0 = time.monotonic()
for i in range(n):
    s0 = time.monotonic()
    x = 0
    for k in range(30000):
        x += k * k
    print(f"Rank: 0, Epoch: 0, iteration: {i}/{n}, It. time: {time.monotonic() - s0:.5f}s, "
          f"Elapsed time: {time.monotonic() - t0:.4f} s", flush=True)
PYEOF
CMD=(/usr/bin/python3 "$T/burn.py" 100000)
"$PITSTOP" profile --db p.db --candidates local-1:1,local-0.4:1 --until-steady 0.05 --cap 400 -- "${CMD[@]}" \
  > prof.out 2> prof.err || fail "profile -- CMD failed: $(cat prof.out prof.err)"
cat prof.out
n=$(grep -c "^measured local-.*; stopped: \(steady\|the cap\)" prof.out) || true
[ "$n" = 2 ] || fail "not both candidates measured and stopped by the controller: $(cat prof.out prof.err)"
grep -q "^\* local-1:1 " prof.out || fail "local-1:1 not chosen: $(cat prof.out)"
# each stopped promptly: at most 25 steps past the verdict (started once per node, as pitstop run -- CMD
# starts a command, SIGTERM reaches it at once; under mpirun it came 1 s later: ~250 steps of this script)
while read -r run at; do
  k=$(grep -c '"type":"iter"' "runs/$run/events.jsonl") || true
  [ "$k" -ge 50 ] && [ "$k" -le $((at + 25)) ] || fail "$run: $k iterations recorded, the verdict at $at"
done < <(sed -n 's/^measured local-[^ ]* [0-9]* iterations, .*(run \([^)]*\)); stopped: .*\(after\|cap of\) \([0-9]*\) iterations.*/\1 \3/p' prof.out)
[ "$(sed -n 's/^measured local-[^ ]* [0-9]* iterations, .*(run \([^)]*\)); stopped: .*\(after\|cap of\) \([0-9]*\) iterations.*/\1 \3/p' prof.out | wc -l)" = 2 ] ||
  fail "the verdicts could not be read: $(cat prof.out)"
left=$(pgrep -f "$T/burn.py" || true)
[ -z "$left" ] || fail "left running: $left"
"$PITSTOP" profile --from-db p.db -- "${CMD[@]}" > db.out 2> db.err || fail "--from-db -- CMD: $(cat db.err)"
grep -q "^\* local-1:1 " db.out || fail "--from-db -- CMD did not choose local-1:1: $(cat db.out)"
rc=0
"$PITSTOP" profile --db p.db --max-iters 5 -- "${CMD[@]}" > /dev/null 2> bad.err || rc=$?
[ $rc = 2 ] && grep -q "does not apply to a command" bad.err || fail "a train option with a command: exit $rc, $(cat bad.err)"
echo "profile -- CMD: both candidates measured and stopped, local-1:1 chosen, the same from the store"
