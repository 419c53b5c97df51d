#!/usr/bin/env bash
# ctest: slow
# command_aws.sh — the command provider's aws preset against a fake AWS CLI
# (tests/control/fake), as issue 14 asks: a pitstop train job on an on-demand and a spot
# node survives a spot reclaim with notice (checkpoint within the grace period, contiguous
# steps, every sample once), every node is terminated at the end; the recorded calls show
# no shell, values as single argv entries and the run-id tag; a start that fails is
# retried (bounded), one that hangs is killed and what it created terminated and counted
# as waste; a start that always fails and a list that prints garbage end with one clear
# message, non-zero, nothing left; a list that prints garbage while the workload runs is said
# once, the run goes on and finishes; --cleanup terminates what a killed controller left.
set -euo pipefail
RUNP=tca
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
cat > "$T/aws.json" << 'EOF2'
{"preset": "aws", "vars": {"image": "ami-0abc", "key": "my key; rm -rf /tmp/x", "security_group": "sg-1"},
 "spot": ["m5.large"], "host": "localhost", "poll_s": 0.5, "retry_wait_s": 0.2, "start_timeout_s": 20,
 "grace_s": 30}
EOF2
run=(run --provider command --provider-config "$T/aws.json" --catalog "$T/cat.tsv" --quiet)
before=$(leftovers)

# ---- 1. a spot reclaim with notice
"$PITSTOP" "${run[@]}" --nodes c5.large:1+m5.large:1 --run tca1 --checkpoint-dir "$T/r1" "${common[@]}" \
  --max-iters 80 --checkpoint-every 10 > "$T/r1.txt" 2> "$T/r1.err" &
ctl=$!
wait_for "$T/r1/events.jsonl" '"checkpoint"' 1200
touch "$FAKE_CLOUD/reclaim"
wait $ctl || fail "the run did not survive the reclaim: $(cat "$T/r1.err")"
grep -q "will be reclaimed" "$T/r1.err" || fail "no notice said: $(cat "$T/r1.err")"
check_run "$T/r1/events.jsonl" 80 tca1 30
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"
grep -q "spot .*reclaimed with 30 s notice: replaced; stop" "$T/r1.txt" || fail "the report lacks the replacement: $(cat "$T/r1.txt")"
check_calls aws tca1
$PY - "$FAKE_CLOUD/calls" << 'PYEOF'
import json, os, sys
d = sys.argv[1]
calls = [json.load(open(os.path.join(d, f)))["argv"][1:] for f in sorted(os.listdir(d))]
runs = [a for a in calls if a[1] == "run-instances"]
assert len(runs) == 3, len(runs)  # c5 on demand, m5 spot, its replacement
for a in runs:
    assert "ResourceType=instance,Tags=[{Key=pitstop-run,Value=tca1}]" in a, a
    assert a[a.index("--key-name") + 1] == "my key; rm -rf /tmp/x", a
    spot = a[a.index("--instance-type") + 1] == "m5.large"
    assert ("MarketType=spot" in a) == spot, a
lists = [a for a in calls if a[1] in ("describe-instances", "describe-spot-instance-requests")]
assert lists and all(a[a.index("--filters") + 1] == "Name=tag:pitstop-run,Values=tca1" for a in lists)
terms = [a for a in calls if a[1] == "terminate-instances"]
assert len(terms) == 3, terms
print(f"aws calls: {len(runs)} run-instances tagged pitstop-run=tca1 (spot only for m5.large), the key name "
      f"as one argv entry, {len(terms)} terminate-instances, every list filtered by the run tag")
PYEOF
echo "cost report:"
grep -A5 "^nodes" "$T/r1.txt"

# ---- 2. two failed starts, then one that hangs: retried, the hung one's node terminated and billed as waste
rm -rf "$FAKE_CLOUD/calls" "$FAKE_CLOUD/nodes.json"
echo 2 > "$FAKE_CLOUD/fail_start"
"$PITSTOP" "${run[@]}" --nodes c5.large:1 --run tca2 --checkpoint-dir "$T/r2" "${common[@]}" --max-iters 20 \
  > "$T/r2.txt" 2> "$T/r2.err" || fail "two failed starts were not retried: $(cat "$T/r2.err")"
grep -q "attempt 2 of 3" "$T/r2.err" || fail "no retry said: $(cat "$T/r2.err")"
echo 1 > "$FAKE_CLOUD/hang_start"
sed 's/"start_timeout_s": 20/"start_timeout_s": 3/' "$T/aws.json" > "$T/hang.json"
"$PITSTOP" run --provider command --provider-config "$T/hang.json" --catalog "$T/cat.tsv" --quiet \
  --nodes c5.large:1 --run tca3 --checkpoint-dir "$T/r3" "${common[@]}" --max-iters 20 \
  > "$T/r3.txt" 2> "$T/r3.err" || fail "a hung start was not retried: $(cat "$T/r3.err")"
grep -q "did not answer within 3 s" "$T/r3.err" || fail "the hang was not said: $(cat "$T/r3.err")"
grep -q "failed or hung starts billed 60 s" "$T/r3.txt" || fail "the hung start's node is not counted as waste: $(cat "$T/r3.txt")"
[ -z "$(live_nodes)" ] || fail "nodes left running after failed starts: $(live_nodes)"
echo "failed and hung starts: retried; the hung start's node terminated, 60 billed s counted as waste"

# ---- 3. the controller killed: --cleanup terminates its nodes
"$PITSTOP" "${run[@]}" --nodes 2 --itype c5.large --run tca4 --checkpoint-dir "$T/r4" "${common[@]}" \
  --max-iters 400 --checkpoint-every 10 > /dev/null 2> "$T/r4.err" &
ctl=$!
wait_for "$T/r4/events.jsonl" '"checkpoint"' 1200
kill -9 $ctl
wait $ctl 2> /dev/null || true
[ "$(live_nodes | wc -l)" = 2 ] || fail "expected the killed controller's 2 nodes: $(live_nodes)"
"$PITSTOP" run --provider command --provider-config "$T/aws.json" --cleanup tca4 --checkpoint-dir "$T/r4" \
  > "$T/r4.txt" || fail "cleanup failed"
grep -q "2 nodes stopped" "$T/r4.txt" || fail "cleanup said: $(cat "$T/r4.txt")"
[ -z "$(live_nodes)" ] || fail "nodes left after --cleanup: $(live_nodes)"
echo "cleanup: the killed controller's 2 nodes terminated"

# ---- 4. a list that prints garbage while the workload runs: said once, the run goes on
# (a workload that logs an iteration every 50 ms until the test creates $T/go)
lists() { grep -l '"describe-instances"' "$FAKE_CLOUD"/calls/*.json | wc -l; }
"$PITSTOP" "${run[@]}" --nodes c5.large:1 --run tca9 --checkpoint-dir "$T/r9" -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/wait_log.py" "$T/go" \
  > "$T/r9.txt" 2> "$T/r9.err" &
ctl=$!
for _ in $(seq 600); do pgrep -f "^$PY $PIT_SOURCE_DIR/tests/control/fake/wait_log.py $T/go" > /dev/null && break; sleep 0.1; done
pgrep -f "^$PY $PIT_SOURCE_DIR/tests/control/fake/wait_log.py $T/go" > /dev/null || fail "the workload did not start: $(cat "$T/r9.err")"
touch "$FAKE_CLOUD/garbage_list"
n0=$(lists)
for _ in $(seq 600); do (($(lists) >= n0 + 3)) && break; sleep 0.1; done
rm "$FAKE_CLOUD/garbage_list"
n1=$(lists)
for _ in $(seq 600); do (($(lists) >= n1 + 1)) && break; sleep 0.1; done
touch "$T/go"
wait $ctl || fail "the run did not go on through a list that printed garbage: $(cat "$T/r9.err")"
[ "$(grep -c "cannot ask the provider" "$T/r9.err")" = 1 ] || fail "not said once: $(cat "$T/r9.err")"
grep -q "the provider answers again" "$T/r9.err" || fail "recovery: $(cat "$T/r9.err")"
echo "garbage mid-run: $(grep -m1 "cannot ask" "$T/r9.err"); then $(grep -m1 "answers again" "$T/r9.err" | sed 's/^pitstop: //');" \
  "the run finished"
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"

# ---- 5. bad input
echo 99 > "$FAKE_CLOUD/fail_start"
bad "cannot start a c5.large node: 3 attempts failed" "${run[@]}" --nodes c5.large:1 --run tca5 \
  --checkpoint-dir "$T/r5" "${common[@]}" --max-iters 20
rm "$FAKE_CLOUD/fail_start"
touch "$FAKE_CLOUD/garbage_list"
bad "(list):1: not valid JSON" "${run[@]}" --nodes c5.large:1 --run tca6 --checkpoint-dir "$T/r6" \
  "${common[@]}" --max-iters 20
rm "$FAKE_CLOUD/garbage_list"
echo '{"preset": "aws", "vars": {"image": "ami-1"}}' > "$T/novars.json"
bad "names {key}, which has no value" run --provider command --provider-config "$T/novars.json" \
  --catalog "$T/cat.tsv" --run tca7 --checkpoint-dir "$T/r7" --nodes c5.large:1 "${common[@]}" --max-iters 20
bad "needs --provider-config" run --provider command --catalog "$T/cat.tsv" --run tca8 --checkpoint-dir "$T/r8" \
  --nodes c5.large:1 "${common[@]}" --max-iters 20
after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind (processes, nodes)"
