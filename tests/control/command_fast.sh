#!/usr/bin/env bash
# command_fast.sh — the command provider without a training job (fast, so the ASan build
# runs provider_command.c too): with the fake `aws`, nodes started for a workload that
# fails (`false`) are all terminated, tagged with the run, spot only where the config
# says, every call without a shell; a start that always fails, a list that prints
# garbage, a template placeholder without a value, a bad regex, no config: one clear
# message, non-zero exit, no node and no CLI process left; a start that always fails or
# always hangs is called 3 times (bounded retries); a node gone while it boots fails that attempt at
# once (clapp).
set -euo pipefail
RUNP=tcf
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
echo 0 > "$FAKE_CLOUD/boot_s"
cat > "$T/aws.json" << 'EOF2'
{"preset": "aws", "vars": {"image": "ami-0abc", "key": "a key; $(reboot)", "security_group": "sg-1"},
 "spot": ["m5.large"], "host": "localhost", "poll_s": 0.2, "retry_wait_s": 0.1, "start_timeout_s": 20}
EOF2
run=(run --provider command --provider-config "$T/aws.json" --catalog "$T/cat.tsv" --quiet --max-restarts 0)
before=$(leftovers)
bad "exited with status 1 before its first iteration" "${run[@]}" --nodes c5.large:1+m5.large:1 --run tcf1 \
  --checkpoint-dir "$T/r1" -- false
check_calls aws tcf1
$PY - "$FAKE_CLOUD/calls" << 'PYEOF'
import json, os, sys
d = sys.argv[1]
calls = [json.load(open(os.path.join(d, f)))["argv"][1:] for f in sorted(os.listdir(d))]
runs = [a for a in calls if a[1] == "run-instances"]
assert len(runs) == 2, runs
for a in runs:
    assert "ResourceType=instance,Tags=[{Key=pitstop-run,Value=tcf1}]" in a, a
    assert a[a.index("--key-name") + 1] == "a key; $(reboot)", a
    assert ("MarketType=spot" in a) == (a[a.index("--instance-type") + 1] == "m5.large"), a
assert len([a for a in calls if a[1] == "terminate-instances"]) == 2
print("2 run-instances tagged with the run (spot for m5.large only), the key as one argv entry, 2 terminated")
PYEOF
# A second run given the same --run in another directory while the first runs: the first's node is
# listed under the name (its tag) with no node file of the second's. The second refuses to start,
# names the node and --cleanup, and starts, adopts and terminates nothing; the first finishes with
# its node. Until 2026-11-29 the second terminated it as its own leftover.
"$PITSTOP" "${run[@]}" --nodes c5.large:1 --run tcf10 --checkpoint-dir "$T/r10a" -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/wait_log.py" "$T/go10" \
  > "$T/r10a.txt" 2> "$T/r10a.err" &
ctl=$!
for _ in $(seq 600); do pgrep -f "^$PY $PIT_SOURCE_DIR/tests/control/fake/wait_log.py $T/go10" > /dev/null && break; sleep 0.1; done
pgrep -f "^$PY $PIT_SOURCE_DIR/tests/control/fake/wait_log.py $T/go10" > /dev/null || fail "the first run's workload did not start: $(cat "$T/r10a.err")"
nstarts=$(aws_starts tcf10)
nterm=$(grep -l '"terminate-instances"' "$FAKE_CLOUD"/calls/*.json 2> /dev/null | wc -l)
if "$PITSTOP" "${run[@]}" --nodes c5.large:1 --run tcf10 --checkpoint-dir "$T/r10b" -- false > "$T/r10b.txt" \
  2> "$T/r10b.err"; then fail "a second run of one name started beside the first"; fi
grep -q "may belong to another live run given the same name" "$T/r10b.err" || fail "not said: $(cat "$T/r10b.err")"
grep -q -- "--cleanup tcf10 --checkpoint-dir $T/r10b" "$T/r10b.err" || fail "no --cleanup hint: $(cat "$T/r10b.err")"
[ "$(aws_starts tcf10)" = "$nstarts" ] || fail "the second run started a node"
[ "$(grep -l '"terminate-instances"' "$FAKE_CLOUD"/calls/*.json 2> /dev/null | wc -l)" = "$nterm" ] ||
  fail "the second run terminated a node"
touch "$T/go10"
wait $ctl || fail "the first run failed: $(cat "$T/r10a.err")"
grep -Eq "steps in [0-9.]+ s, 0 restarts" "$T/r10a.txt" || fail "the first run: $(tail -2 "$T/r10a.txt")"
echo "one --run in two directories: the second refused ($(grep -m1 "may belong" "$T/r10b.err" | cut -c1-90)...)," \
  "the first finished with its node"
echo 99 > "$FAKE_CLOUD/fail_start"
bad "cannot start a c5.large node: 3 attempts failed" "${run[@]}" --nodes c5.large:1 --run tcf2 \
  --checkpoint-dir "$T/r2" -- false
[ "$(aws_starts tcf2)" = 3 ] || fail "a start that always fails was called $(aws_starts tcf2) times, not 3"
echo "a start that always fails: 3 run-instances calls (2 retries), then the run stopped"
echo 0 > "$FAKE_CLOUD/fail_start"
echo 9 > "$FAKE_CLOUD/hang_start"
sed 's/"start_timeout_s": 20/"start_timeout_s": 3/' "$T/aws.json" > "$T/hang.json"
bad "3 attempts failed; the last: aws (start c5.large) did not answer within 3 s" run --provider command --provider-config "$T/hang.json" --catalog "$T/cat.tsv" \
  --nodes c5.large:1 --run tcf3 --checkpoint-dir "$T/r3" -- false
grep -q "billed seconds were wasted" "$T/bad.err" || fail "no waste said: $(cat "$T/bad.err")"
[ "$(aws_starts tcf3)" = 3 ] || fail "a start that always hangs was called $(aws_starts tcf3) times, not 3"
echo "a start that always hangs: 3 run-instances calls, each killed after 3 s, no aws process left, its nodes terminated"
echo 0 > "$FAKE_CLOUD/hang_start"
touch "$FAKE_CLOUD/garbage_list"
bad "(list):1: not valid JSON" "${run[@]}" --nodes c5.large:1 --run tcf4 --checkpoint-dir "$T/r4" -- false
rm "$FAKE_CLOUD/garbage_list"
echo '{"preset": "aws", "vars": {"image": "ami-1", "security_group": "sg"}}' > "$T/c1.json"
bad "the start template names {key}, which has no value" run --provider command --provider-config "$T/c1.json" \
  --catalog "$T/cat.tsv" --nodes c5.large:1 --run tcf5 --checkpoint-dir "$T/r5" -- false
echo '{"preset": "clap", "list_output": {"regex": "([a-z", "fields": ["id"]}}' > "$T/c2.json"
bad "is not an extended regular expression" run --provider command --provider-config "$T/c2.json" \
  --catalog "$T/cat.tsv" --nodes c5.large:1 --run tcf6 --checkpoint-dir "$T/r6" -- false
echo '{"preset": "gcp"' > "$T/c3.json"
bad "c3.json:1: not valid JSON" run --provider command --provider-config "$T/c3.json" \
  --catalog "$T/cat.tsv" --nodes c5.large:1 --run tcf7 --checkpoint-dir "$T/r7" -- false
echo '{"preset": "gcp"}' > "$T/c4.json"
bad "unknown preset 'gcp'" run --provider command --provider-config "$T/c4.json" \
  --catalog "$T/cat.tsv" --nodes c5.large:1 --run tcf8 --checkpoint-dir "$T/r8" -- false
bad "needs --provider-config" run --provider command --catalog "$T/cat.tsv" --nodes c5.large:1 --run tcf9 \
  --checkpoint-dir "$T/r9" -- false
# A node that goes while it boots (listed as started, then no longer listed, as clapp drops a gone
# node): that start attempt fails at once and the next one starts another node. Until 2026-11-30
# the attempt waited for it until boot_timeout_s (600 s): found by a fault soak (own.py --cloud)
echo 1 > "$FAKE_CLOUD/boot_s"
echo '{"preset": "clap", "host": "localhost", "poll_s": 0.2, "retry_wait_s": 0.1, "start_timeout_s": 20}' > "$T/clap.json"
nid=$($PY -c 'import json, sys; print("i-%08x" % (0xf00 + json.load(open(sys.argv[1]))["next"] + 1))' "$FAKE_CLOUD/nodes.json")
echo "$nid" > "$FAKE_CLOUD/vanish"
t0=$(date +%s)
bad "exited with status 1 before its first iteration" run --provider command --provider-config "$T/clap.json" \
  --catalog "$T/cat.tsv" --nodes c5.large:1 --run tcf11 --checkpoint-dir "$T/r11" --max-restarts 0 -- false
grep -q "start of a c5.large node failed (attempt 1 of 3): node $nid was listed, then no longer, while it booted (gone)" \
  "$T/bad.err" || fail "the node gone while it booted not said: $(cat "$T/bad.err")"
(($(date +%s) - t0 < 60)) || fail "a node gone while it booted took $(($(date +%s) - t0)) s"
echo "a node gone while it booted: that attempt failed at once, the next started another ($(($(date +%s) - t0)) s)"
echo 0 > "$FAKE_CLOUD/boot_s"

after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind (processes, nodes)"
