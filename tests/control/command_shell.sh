#!/usr/bin/env bash
# ctest: slow
# command_shell.sh — the command provider with a remote-shell `wrap` (`["ssh", "{host}"]` in a
# user's config): a user's DDP script (examples/pytorch/ddp_snapshot.py) under torchrun, one per
# node of the fake `clapp` (tests/control/fake), reached through an `ssh` of this test that does
# what ssh does to a command: joins the words with blanks, runs them with a shell in a session of
# their own, so a signal to the local client ends only the client (the remote workload goes on).
#  1. resized 1 → 2 → 1 by restart (--resume-by-restart): each resize's SIGTERM reaches the
#     script through `pitstop node-check --signal` over the wrap, so every step is recorded once
#     with its time, none "done and saved unseen" by a workload the signal missed (before
#     2026-11-30 the command provider signalled the local client only), and nothing is left;
#  2. SIGINT to the controller mid-run: it ends, every node stopped, no process of the run left.
# The wrap's calls are in the run's provider.log. Skips (77) without Debian's python3-torch.
set -euo pipefail
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' 2> /dev/null || {
  echo "skipped: python3-torch with gloo is not installed"
  exit 77
}
RUNP=tcs
. "$PIT_SOURCE_DIR/tests/control/command_common.bash"
mkdir -p "$T/bin"
ln -s "$PIT_SOURCE_DIR/tests/control/fake/fake_ssh.py" "$T/bin/ssh" # what ssh does with a command, here
cat > "$T/clap.json" << EOF2
{"preset": "clap", "host": "localhost", "poll_s": 0.5, "retry_wait_s": 0.2, "start_timeout_s": 20, "grace_s": 30,
 "wrap": ["$T/bin/ssh", "{host}"]}
EOF2
export OMP_NUM_THREADS=1
# runcmd RUN [PITSTOP OPTIONS]: the command of run RUN in C (8 epochs, a snapshot after each)
runcmd() {
  local r=$1
  shift
  C=("$PITSTOP" run --provider command --provider-config "$T/clap.json" --catalog "$T/cat.tsv" --itype c5.large
     --launcher per-node --resume-by-restart --epochs 8 --checkpoint-dir "$T/$r" --run "$r" --quiet "$@"
     -- "$PY" -m torch.distributed.run '--nnodes=$PITSTOP_NUM_NODES' '--node_rank=$PITSTOP_NODE_RANK'
     --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR' '--master_port=$PITSTOP_MASTER_PORT' --redirects 2
     --tee 2 "$PIT_SOURCE_DIR/examples/pytorch/ddp_snapshot.py" --epochs 8 --save-every 1 --snapshot "$T/$r.pt"
     --step-sleep 0.02)
}
scripts() { { pgrep -af "ddp_snapshot.py .*$T/" || true; } | grep -v pgrep || true; }
before=$(leftovers)

# ---- 1. resized 1 → 2 → 1 by restart
runcmd tcs1 --nodes 1 --schedule 16:2,40:1
timeout 300 "${C[@]}" > "$T/r1.txt" 2> "$T/r1.err" || fail "the run failed: $(cat "$T/r1.err"; tail -20 "$T"/tcs1/gen-*.log)"
[ "$(grep -c "resize by restart" "$T/r1.err")" = 2 ] || fail "not resized twice: $(cat "$T/r1.err")"
! grep -q "unseen" "$T/r1.err" || fail "steps done that the controller did not see: $(grep unseen "$T/r1.err")"
grep -q -- "--- wrap: \[$T/bin/ssh\] \[localhost\] \['[^]]*pitstop'\] \['node-check'\] \['--release'\] \['tcs1'\] .*\['--signal'\] \['15'\]" \
  "$T/tcs1/provider.log" || fail "no node-check through the wrap: $(grep -A1 -- '--- wrap' "$T/tcs1/provider.log" | head)"
$PY - "$T/tcs1/events.jsonl" 256 << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
it = [x for x in r if x["type"] == "iter"]
steps = sorted(x["step"] for x in it)
assert steps == list(range(int(sys.argv[2]))), f"steps {steps[:3]}..{steps[-3:]} ({len(steps)}, {len(set(steps))} distinct)"
untimed = [x["step"] for x in it if x.get("step_s") is None]
assert not untimed, f"{len(untimed)} steps recorded without a time (unseen): {untimed[:5]}"
ends = [x.get("status") for x in r if x["type"] == "end"]
assert ends and ends[-1] == "done", ends
gens = sorted({x["gen"] for x in it})
print(f"resized by restart through the wrap: {len(steps)} steps once, each with its time, over generations {gens}")
PYEOF
[ -z "$(scripts)" ] || fail "scripts left running: $(scripts)"
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"

# ---- 2. SIGINT to the controller mid-run
runcmd tcs2 --nodes 2
("${C[@]}" > "$T/r2.txt" 2> "$T/r2.err") &
ctl=$!
wait_for "$T/tcs2/events.jsonl" '"checkpoint"' 1200
kill -INT $ctl
t0=$(date +%s)
wait $ctl || true
[ -z "$(scripts)" ] || fail "scripts left running $(($(date +%s) - t0)) s after the stop: $(scripts)"
[ -z "$(live_nodes)" ] || fail "nodes left running: $(live_nodes)"
echo "SIGINT mid-run: stopped in $(($(date +%s) - t0)) s, every node stopped, no script left"
[ "$(leftovers)" = "$before" ] || fail "processes left: $(leftovers)"
echo "nothing left behind"
