#!/usr/bin/env bash
# ctest: slow
# profile_cmd.sh — `pitstop profile --db DB --candidates ... -- CMD`: a user's own command measured on
# each candidate membership, each run stopped by the controller once its pace is steady (ctl_measure.c;
# a command cannot be told --until-steady), stored, and ranked per step. The command burns CPU (a fixed
# amount of Python work a step, its time printed in the course DCGAN's line shape), so under the local
# provider's cgroup quota local-0.2 (a type of this test's own catalog, at 20% of a CPU) is about 5× slower
# than local-1 at the same price: local-1:1 must be chosen (local-0.4 was too close under CI's load: a
# full node given under half a CPU measured about as fast). Each candidate's line says why it stopped; the runs stop long before the command's 100000
# steps; nothing is left running. Then the same store ranked by --from-db -- CMD chooses the same, and a
# train option given with a command is refused. --launcher mpi starts a candidate under mpirun.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash" # fail(), $PY
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
cat > burn.py << 'PYEOF'
import os, sys, time
n = int(sys.argv[1])
if len(sys.argv) > 2:  # where it was started from: mpirun's rank count, or "-"
    open(sys.argv[2], "a").write(os.environ.get("OMPI_COMM_WORLD_SIZE", "-") + "\n")
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
{ grep -v '^local-0' "$PIT_SOURCE_DIR/catalogs/local.tsv"; printf 'local-0.2\t1\t1\t20%%\t0.05\t1\t0\t0\n'; } > cat.tsv
"$PITSTOP" profile --catalog cat.tsv --db p.db --candidates local-1:1,local-0.2:1 --until-steady 0.05 --cap 400 -- "${CMD[@]}" \
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
"$PITSTOP" profile --catalog cat.tsv --from-db p.db -- "${CMD[@]}" > db.out 2> db.err || fail "--from-db -- CMD: $(cat db.err)"
grep -q "^\* local-1:1 " db.out || fail "--from-db -- CMD did not choose local-1:1: $(cat db.out)"
rc=0
"$PITSTOP" profile --db p.db --max-iters 5 -- "${CMD[@]}" > /dev/null 2> bad.err || rc=$?
[ $rc = 2 ] && grep -q "does not apply to a command" bad.err || fail "a train option with a command: exit $rc, $(cat bad.err)"
# --launcher mpi: the candidate starts under one mpirun (the command sees its rank count); without it, not
"$PITSTOP" profile --db m.db --candidates local-1:1 --cap 60 --launcher mpi -- /usr/bin/python3 "$T/burn.py" 100000 \
  "$T/how.txt" > mpi.out 2> mpi.err || fail "profile --launcher mpi: $(cat mpi.out mpi.err)"
grep -q "^measured local-1:1: " mpi.out && [ "$(cat how.txt)" = 1 ] ||
  fail "--launcher mpi: the candidate did not run under mpirun ($(cat how.txt)): $(cat mpi.out mpi.err)"
rm how.txt
"$PITSTOP" profile --db m.db --candidates local-1:1 --cap 60 -- /usr/bin/python3 "$T/burn.py" 100000 "$T/how.txt" \
  > pn.out 2> pn.err || fail "profile per node: $(cat pn.out pn.err)"
[ "$(cat how.txt)" = - ] || fail "without --launcher the candidate ran under mpirun: $(cat how.txt)"
for bad in "--launcher ssh -- ${CMD[*]}" "--launcher mpi --from-db p.db -- ${CMD[*]}" "--launcher mpi"; do
  rc=0
  # shellcheck disable=SC2086
  "$PITSTOP" profile --db m.db $bad > /dev/null 2> bad.err || rc=$?
  [ $rc = 2 ] && grep -q "launcher" bad.err || fail "profile $bad: exit $rc, $(cat bad.err)"
done
left=$(pgrep -f "$T/burn.py" || true)
[ -z "$left" ] || fail "left running after --launcher: $left"
echo "profile -- CMD: both candidates measured and stopped, local-1:1 chosen, the same from the store; --launcher mpi"

