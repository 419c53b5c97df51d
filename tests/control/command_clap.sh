#!/usr/bin/env bash
# ctest: slow
# command_clap.sh — the command provider's clap preset against a fake `clapp`
# (tests/control/fake): a pitstop train job on two nodes survives a node reclaimed with
# notice (the list shows it "reclaiming"): checkpoint within the grace period, contiguous
# steps, every sample once, every node stopped; and one gone without notice (a failed
# generation restarted from the last checkpoint on a replacement); the calls show no shell and every node
# tagged with the run id; a start that always fails, and a list that prints garbage, end
# with one clear message, non-zero, nothing left.
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

# ---- 2. a node gone without notice: the generation fails, restarts on a replacement
rm -rf "$FAKE_CLOUD/calls"
"$PITSTOP" "${run[@]}" --nodes 2 --itype c5.large --run tcc5 --checkpoint-dir "$T/r5" "${common[@]}" \
  --max-iters 60 --checkpoint-every 10 > "$T/r5.txt" 2> "$T/r5.err" &
ctl=$!
wait_for "$T/r5/events.jsonl" '"checkpoint"' 1200
touch "$FAKE_CLOUD/vanish"
wait $ctl || fail "the run did not survive a node gone: $(cat "$T/r5.err")"
grep -q "is gone.*restart 1 of" "$T/r5.err" || fail "no restart said: $(cat "$T/r5.err")"
check_run "$T/r5/events.jsonl" 60 tcc5 0
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"

# ---- 3. bad input
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
