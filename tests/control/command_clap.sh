#!/usr/bin/env bash
# ctest: slow
# command_clap.sh — the command provider's clap preset against a fake `clapp`
# (tests/control/fake): a pitstop train job on two nodes survives a node reclaimed with
# notice (the list shows it "reclaiming"): checkpoint within the grace period, contiguous
# steps, every sample once, every node stopped; and one gone without notice (a failed
# generation restarted from the last checkpoint on a replacement); the calls show no shell and every node
# tagged with the run id; the controller SIGKILLed mid-generation and started again: the fake
# cloud runs exactly the killed controller's nodes (adopted, none started again) and no process
# of the killed generation, the run finishes with contiguous steps, the store agrees, every node
# stopped; a start that always fails, and a list that prints garbage, end with one clear
# message, non-zero, nothing left.
set -euo pipefail
RUNP=tcc
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
cat > "$T/clap.json" << 'EOF2'
{"preset": "clap", "host": "localhost", "poll_s": 0.5, "retry_wait_s": 0.2, "start_timeout_s": 20, "grace_s": 30}
EOF2
run=(run --provider command --provider-config "$T/clap.json" --catalog "$T/cat.tsv" --quiet)
before=$(leftovers)

# ---- 1. a node reclaimed with notice
"$PITSTOP" "${run[@]}" --nodes 2 --itype c5.large --run tcc1 --checkpoint-dir "$T/r1" "${common[@]}" \
  --max-iters 80 --checkpoint-every 10 > "$T/r1.txt" 2> "$T/r1.err" &
ctl=$!
wait_for "$T/r1/events.jsonl" '"checkpoint"' 1200
touch "$FAKE_CLOUD/reclaim"
wait $ctl || fail "the run did not survive the reclaim: $(cat "$T/r1.err")"
check_run "$T/r1/events.jsonl" 80 tcc1 30
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"
check_calls clapp tcc1
$PY - "$FAKE_CLOUD/calls" << 'PYEOF'
import json, os, sys
d = sys.argv[1]
calls = [json.load(open(os.path.join(d, f)))["argv"][1:] for f in sorted(os.listdir(d))]
starts = [a for a in calls if a[:2] == ["node", "start"]]
tags = [a for a in calls if a[:2] == ["node", "add-tag"]]
stops = [a for a in calls if a[:2] == ["node", "stop"]]
assert len(starts) == 3 and all(a[2] == "c5.large:1" for a in starts), starts
assert len(tags) == 3 and all(a[3:] == ["--tag", "pitstop-run=tcc1"] for a in tags), tags
assert sorted(a[2] for a in tags) == sorted(a[2] for a in stops), (tags, stops)
print(f"clapp calls: {len(starts)} node start c5.large:1, each node tagged pitstop-run=tcc1, the same {len(stops)} stopped")
PYEOF

# ---- 2. nodes gone without notice, one at a time: each generation fails and restarts on a
# replacement; a node lost after a checkpoint of its generation is not held against
# --max-restarts (1 here: before, the second node lost ended the run)
rm -rf "$FAKE_CLOUD/calls"
"$PITSTOP" "${run[@]}" --nodes 2 --itype c5.large --run tcc5 --checkpoint-dir "$T/r5" "${common[@]}" \
  --max-iters 300 --checkpoint-every 10 --max-restarts 1 > "$T/r5.txt" 2> "$T/r5.err" &
ctl=$!
wait_for "$T/r5/events.jsonl" '"checkpoint"' 1200
touch "$FAKE_CLOUD/vanish"
wait_for "$T/r5/events.jsonl" '"type":"checkpoint".*"gen":1,\|"gen":1,.*"type":"checkpoint"' 1200
touch "$FAKE_CLOUD/vanish"
wait $ctl || fail "the run did not survive two nodes gone: $(cat "$T/r5.err")"
[ "$(grep -c "is gone.*not counted against --max-restarts (0 of 1 used)" "$T/r5.err")" = 2 ] ||
  fail "the two restarts not said: $(cat "$T/r5.err")"
grep -q "^300 steps .*, 2 restarts (2 after a node lost)" "$T/r5.txt" || fail "the summary: $(cat "$T/r5.txt")"
check_run "$T/r5/events.jsonl" 300 tcc5 0 2
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"

# ---- 3. the controller SIGKILLed mid-generation, then started again
. "$PIT_SOURCE_DIR/tests/control/run_procs.bash"
# run_nodes RUN: the nodes the fake cloud runs tagged with RUN (its own state, not the CLI's list)
run_nodes() {
  $PY - "$FAKE_CLOUD/nodes.json" "$1" << 'PYEOF'
import json, sys, time
now = time.time()
print(" ".join(sorted(n["id"] for n in json.load(open(sys.argv[1]))["nodes"]
                      if n["tags"].get("pitstop-run") == sys.argv[2] and not (n.get("gone_at") and n["gone_at"] <= now))))
PYEOF
}
nstarts() { grep -l '"node", "start"' "$FAKE_CLOUD"/calls/*.json | wc -l; }
rm -rf "$FAKE_CLOUD/calls"
run6=("${run[@]}" --nodes 2 --itype c5.large --run tcc6 --checkpoint-dir "$T/r6" --db "$T/r6.db" "${common[@]}"
      --max-iters 80 --checkpoint-every 10)
"$PITSTOP" "${run6[@]}" > /dev/null 2> "$T/r6a.err" &
ctl=$!
wait_for "$T/r6/events.jsonl" '"checkpoint"' 1200
kill -9 $ctl
wait $ctl 2> /dev/null || true
n0=$(run_nodes tcc6)
[ "$(wc -w <<< "$n0")" = 2 ] && [ "$(nstarts)" = 2 ] || fail "the killed controller's nodes: '$n0' after $(nstarts) starts"
echo "controller killed mid-generation 0: the cloud runs the run's nodes $n0; left here: $(run_procs tcc6 | summary)"
"$PITSTOP" "${run6[@]}" > "$T/r6.txt" 2> "$T/r6b.err" &
ctl=$!
for _ in $(seq 1200); do grep -q '"gen":1.*"checkpoint"\|"checkpoint".*"gen":1' "$T/r6/events.jsonl" && break; sleep 0.1; done
grep -q '"gen":1.*"checkpoint"\|"checkpoint".*"gen":1' "$T/r6/events.jsonl" \
  || fail "the restarted controller reached no checkpoint: $(cat "$T/r6b.err")"
n1=$(run_nodes tcc6) p1=$(run_procs tcc6)
[ "$n1" = "$n0" ] || fail "the cloud runs '$n1' mid-generation 1, not the killed controller's '$n0'"
[ "$(nstarts)" = 2 ] || fail "the restarted controller started nodes: $(nstarts) starts in all"
old=$(grep -v '^1 ' <<< "$p1" || true)
[ -z "$old" ] || fail "processes of the killed generation still run: $old"
echo "restarted controller mid-generation 1: the cloud runs the same nodes ($n1), no node start called;" \
  "processes: $(summary <<< "$p1")"
wait $ctl || fail "the restarted controller failed: $(cat "$T/r6b.err")"
[ "$(grep -c "adopted node" "$T/r6b.err")" = 2 ] || fail "not both nodes adopted: $(cat "$T/r6b.err")"
$PY "$PIT_SOURCE_DIR/tests/control/crash_check.py" "$T/r6/events.jsonl" 80 tcc6 "$T/r6.db" 2 || fail "crash check"
[ -z "$(run_nodes tcc6)" ] || fail "nodes left running: $(run_nodes tcc6)"
[ -z "$(run_procs tcc6)" ] || fail "processes left: $(run_procs tcc6)"
echo "controller crash: the cloud runs no node of the run afterwards, no process left"

# ---- 4. bad input
echo 99 > "$FAKE_CLOUD/fail_start"
bad "cannot start a c5.large node: 3 attempts failed" "${run[@]}" --nodes c5.large:1 --run tcc2 \
  --checkpoint-dir "$T/r2" "${common[@]}" --max-iters 20
rm "$FAKE_CLOUD/fail_start"
touch "$FAKE_CLOUD/garbage_list"
bad "a line this provider cannot read: 'Traceback" "${run[@]}" --nodes c5.large:1 --run tcc3 \
  --checkpoint-dir "$T/r3" "${common[@]}" --max-iters 20
rm "$FAKE_CLOUD/garbage_list"
echo '{"preset": "clap", "list_output": {"regex": "([a-z", "fields": ["id"]}}' > "$T/badre.json"
bad "is not an extended regular expression" run --provider command --provider-config "$T/badre.json" \
  --catalog "$T/cat.tsv" --run tcc4 --checkpoint-dir "$T/r4" --nodes c5.large:1 "${common[@]}" --max-iters 20
after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
echo "nothing left behind (processes, nodes)"
