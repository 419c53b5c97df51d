#!/usr/bin/env bash
# ctest: slow
# run_prior.sh — `pitstop run --policy cost --db DB` starting from what earlier runs measured: the
# store holds a fixed run of local-1:1 and one of local-0.2:1+local-1:1 (the same model and batch);
# a cost run asked for the pair under --nnodes 1:2 weighs the memberships before any node starts
# (one decision record at step 0 that says so, the switch priced at nothing), and generation 0
# runs the membership it chose, with only that membership's nodes started. Under the local
# provider's cgroup quota (root) local-0.2 (a type of this test's own catalog) computes at 20%: the
# pair, priced alike, costs more per step than local-1 alone, so the choice must be local-1:1. (With
# local-0.4 the CI's parallel load once left local-1 little more than 40% of its CPU, the pair measured
# about as cheap per step, and the cautious rule rightly kept it: 20% leaves a margin under any load
# where local-1 gets at least a fifth of a CPU.) A store that never measured the pair
# gives no decision at the start: the run starts on the pair. The job is given in epochs, so its
# length comes from the earlier runs' plan (the reason says so). `pitstop profile --from-db DB -- CMD`
# ranks a command's runs per step. A user's own command is matched by
# its argv, and weighed per step (its length unknown before it runs); a controller killed and run
# again continues on the membership chosen. Nothing is left behind.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash" # fail()
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
# --epochs, not --max-iters: the job's length is known to the controller only from the workload's init
# record, so the choice at the start takes it from the earlier runs' plan (synthetic: 50000 samples)
job=(--model cnn --data synthetic --batch-size 256 --threads 1 --seed 3 --no-validation --epochs 1)
{ grep -v '^local-0' "$PIT_SOURCE_DIR/catalogs/local.tsv"; printf 'local-0.2\t1\t1\t20%%\t0.05\t1\t0\t0\n'; } > cat.tsv
fixed() { # $1 run name, $2 membership, $3 store
  "$PITSTOP" run --quiet --catalog cat.tsv --run "$1" --checkpoint-dir "$1" --nodes "$2" --policy fixed --db "$3" "${job[@]}" \
    > "$1.out" 2> "$1.err" || fail "fixed $2 failed: $(cat "$1.err")"
}
fixed one local-1:1 p.db
fixed pair local-0.2:1+local-1:1 p.db
"$PITSTOP" run --catalog cat.tsv --run pol --checkpoint-dir pol --nodes local-0.2:1+local-1:1 --nnodes 1:2 --policy cost --db p.db \
  "${job[@]}" > pol.out 2> pol.err || fail "the cost run failed: $(cat pol.err)"
grep -q "policy cost: 2 memberships measured before" pol.err || fail "the store's prior is not said: $(cat pol.err)"
/usr/bin/python3 - pol/events.jsonl "$(grep -c 'full speed' pair.err || true)" << 'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
quota = sys.argv[2] == "0"
dec = [r for r in recs if r["type"] == "decision"]
assert dec, "no decision record"
d0 = dec[0]
det = d0["detail"] if isinstance(d0["detail"], dict) else json.loads(d0["detail"])
why = det.get("why", det.get("reason", ""))
assert d0["step"] == 0 and "at the start, before any node, from 2 memberships" in why, (d0["step"], why)
assert "the job's length as an earlier run of its model, data and batch planned it" in why, why
first_iter = min(r["t"] for r in recs if r["type"] == "iter")
assert d0["t"] <= first_iter, "the start decision came after the first step"
starts = [r for r in recs if r["type"] == "node" and r["action"] == "start" and r["gen"] == 0]
types = sorted(r["itype"] for r in starts)
if det.get("action") == "resize":
    assert "nothing started yet" in why, why
    assert types == ["local-1"], ("generation 0 started", types, "after", why)
else:
    assert types == ["local-0.2", "local-1"], types
if quota:  # local-0.2 at 20% of a CPU, priced as local-1: the pair is dearer per step
    assert det.get("action") == "resize" and types == ["local-1"], ("kept the pair", why)
print("start decision:", det.get("action"), types, "|", why[:160])
EOF
# a store without the pair: nothing is weighed at the start, the run starts on what was asked
fixed one2 local-1:1 q.db
"$PITSTOP" run --catalog cat.tsv --run pol2 --checkpoint-dir pol2 --nodes local-0.2:1+local-1:1 --nnodes 1:2 --policy cost --db q.db \
  "${job[@]}" > pol2.out 2> pol2.err || fail "the second cost run failed: $(cat pol2.err)"
! grep -q "at the start, before any node" pol2/events.jsonl || fail "decided at the start without the pair measured"
n=$(grep '"type":"node"' pol2/events.jsonl | grep '"action":"start"' | grep -c '"gen":0') || true
[ "$n" = 2 ] || fail "generation 0 started $n nodes, not the pair"
# a user's own command (the course DCGAN log format, 10 ms a step on any node): its runs are keyed by
# its argv ("command" in the init config); two fixed runs, then the cost run on the pair starts on
# local-1:1 alone, weighed per step (the command's length is unknown before it runs)
S=(/usr/bin/python3 "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" 60)
for m in local-1:1 local-0.4:1+local-1:1; do
  "$PITSTOP" run --quiet --run "c${#m}" --checkpoint-dir "c${#m}" --nodes "$m" --policy fixed --db c.db -- "${S[@]}" \
    > /dev/null 2> cmd.err || fail "fixed $m of the command failed: $(cat cmd.err)"
done
"$PITSTOP" run --run cpol --checkpoint-dir cpol --nodes local-0.4:1+local-1:1 --nnodes 1:2 --policy cost --db c.db \
  -- "${S[@]}" > cpol.out 2> cpol.err || fail "the command's cost run failed: $(cat cpol.err)"
grep -q '"type":"decision".*"step":0.*at the start, before any node, from 2 memberships.*over 1000 steps' \
  cpol/events.jsonl || fail "the command's run did not weigh its earlier runs at the start: $(cat cpol.err)"
n=$(grep '"type":"node"' cpol/events.jsonl | grep '"action":"start"' | grep -c '"itype":"local-1"') || true
m=$(grep '"type":"node"' cpol/events.jsonl | grep -c '"action":"start"') || true
[ "$n" = 1 ] && [ "$m" = 1 ] || fail "the command's run started $m nodes ($n local-1), not local-1 alone"
# the same runs ranked by pitstop profile --from-db -- COMMAND (matched by argv, per step: the batch is
# unknown): local-1:1 chosen (half the pair's price per step at the same pace); another argv: none, said
"$PITSTOP" profile --from-db c.db --iters 1000 -- "${S[@]}" > prof.out 2> prof.err || fail "profile -- CMD: $(cat prof.err)"
grep -qF 'steps/$' prof.out && grep -q "^\* local-1:1 " prof.out && grep -q "^  local-0.4:1+local-1:1 " prof.out ||
  fail "profile --from-db -- CMD did not rank local-1:1 first per step: $(cat prof.out prof.err)"
rc=0
"$PITSTOP" profile --from-db c.db -- "${S[@]:0:2}" 40 > /dev/null 2> prof2.err || rc=$?
[ $rc != 0 ] && grep -q "holds no run of this command" prof2.err || fail "another argv ranked (exit $rc): $(cat prof2.err)"
# a command whose length is an option: runs of it with --niter 60 --outf o1 are the profile of the same
# script with --niter 30 and no --outf (its length and output only; before 2026-11-29 only the exact argv
# matched, and the shorter run started from nothing); another option keeps them apart unless --vary names it
V=(/usr/bin/python3 "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" --niter)
for m in local-1:1 local-0.4:1+local-1:1; do
  "$PITSTOP" run --quiet --run "v${#m}" --checkpoint-dir "v${#m}" --nodes "$m" --policy fixed --db v.db \
    -- "${V[@]}" 60 --outf o1 > /dev/null 2> v.err || fail "fixed $m of --niter 60 failed: $(cat v.err)"
done
"$PITSTOP" profile --from-db v.db -- "${V[@]}" 30 > vprof.out 2> vprof.err || fail "profile of --niter 30: $(cat vprof.err)"
grep -q "^\* local-1:1 .*(run v9: other --niter, --outf)" vprof.out ||
  fail "profile --from-db did not take the --niter 60 runs as --niter 30's, saying so: $(cat vprof.out vprof.err)"
rc=0
"$PITSTOP" profile --from-db v.db -- "${V[@]}" 30 --lr 2 > /dev/null 2> vprof2.err || rc=$?
[ $rc = 1 ] && grep -q "holds no run of this command" vprof2.err || fail "--lr 2 matched (exit $rc): $(cat vprof2.err)"
"$PITSTOP" profile --from-db v.db --vary --lr -- "${V[@]}" 30 --lr 2 > vprof3.out 2> vprof3.err ||
  fail "--vary --lr: $(cat vprof3.err)"
grep -q "^\* local-1:1 .*other --niter, --outf, --lr)" vprof3.out || fail "--vary --lr not matched: $(cat vprof3.out)"
rc=0
"$PITSTOP" profile --from-db v.db --vary --lr > /dev/null 2> vprof4.err || rc=$?
[ $rc = 2 ] && grep -q "give it after --" vprof4.err || fail "--vary without a command (exit $rc): $(cat vprof4.err)"
"$PITSTOP" run --run vpol --checkpoint-dir vpol --nodes local-0.4:1+local-1:1 --nnodes 1:2 --policy cost --db v.db \
  -- "${V[@]}" 30 > vpol.out 2> vpol.err || fail "the --niter 30 cost run failed: $(cat vpol.err)"
grep -q "policy cost: 2 memberships measured before (store v.db, runs of this command with other --niter, --outf)" \
  vpol.err || fail "the --niter 30 run did not say whose runs it weighed: $(cat vpol.err)"
n=$(grep '"type":"node"' vpol/events.jsonl | grep -c '"action":"start"') || true
grep -q '"type":"decision".*"step":0.*at the start, before any node' vpol/events.jsonl && [ "$n" = 1 ] ||
  fail "the --niter 30 run did not start on one node from the --niter 60 runs ($n started): $(cat vpol.err)"
grep -q "^  vpol.0 .*local-1 .* remove → local-1:1 at the start, from earlier runs (--db); stop" vpol.out ||
  fail "the report's node row does not say why it started: $(grep -A3 '^nodes' vpol.out)"
# the controller killed (kill -9) while the command runs on the membership chosen at the start, then
# the same command again: it continues on local-1:1, not on the --nodes asked (before 2026-11-28 it
# went back to local-0.4:1+local-1:1, the decision at the start forgotten)
S3=(/usr/bin/python3 "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" 300)
for m in local-1:1 local-0.4:1+local-1:1; do
  "$PITSTOP" run --quiet --run "k${#m}" --checkpoint-dir "k${#m}" --nodes "$m" --policy fixed --db k.db -- "${S3[@]}" \
    > /dev/null 2> k.err || fail "fixed $m of the longer command failed: $(cat k.err)"
done
kargs=(--run kpol --checkpoint-dir kpol --nodes local-0.4:1+local-1:1 --nnodes 1:2 --policy cost --db k.db -- "${S3[@]}")
"$PITSTOP" run "${kargs[@]}" > /dev/null 2>&1 &
ctl=$!
for _ in $(seq 200); do [ -s kpol/reached ] && break; sleep 0.02; done # a step read: RUN_DIR/reached
kill -9 "$ctl" 2> /dev/null || true
wait "$ctl" 2> /dev/null || true
"$PITSTOP" run "${kargs[@]}" > kpol.out 2> kpol.err || fail "the continued run failed: $(cat kpol.err)"
grep -q "continues after a controller stop" kpol.err || fail "not continued after the kill: $(cat kpol.err)"
ty=$(grep '"type":"node"' kpol/events.jsonl | grep '"action":"start"' | grep -o '"itype":"[^"]*"' | sort -u | tr '\n' ' ')
[ "$ty" = '"itype":"local-1" ' ] || fail "after the controller stop, nodes of $ty started (want local-1 only)"
# another command (other arguments) has no earlier runs: nothing weighed
"$PITSTOP" run --run cpol2 --checkpoint-dir cpol2 --nodes local-0.4:1+local-1:1 --nnodes 1:2 --policy cost --db c.db \
  -- "${S[@]:0:2}" 40 > cpol2.out 2> cpol2.err || fail "the other command's run failed: $(cat cpol2.err)"
grep -q "policy cost: 0 memberships measured before" cpol2.err || fail "another command took this one's runs: $(cat cpol2.err)"
left=$(find "$T" -path '*/nodes/*' 2> /dev/null; ls /sys/fs/cgroup/cpu 2> /dev/null | grep -E '^pitstop\.(pol|pol2|one|pair|one2|c[0-9]+|cpol|cpol2|k[0-9]+|kpol|v[0-9]+|vpol)\.' || true)
[ -z "$left" ] || fail "left behind: $left"
echo "run prior: the first membership chosen from the store before any node; none without the pair measured"
