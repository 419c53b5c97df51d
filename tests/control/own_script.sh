#!/usr/bin/env bash
# ctest: slow
# own_script.sh — docs/own-script.md's command, as written there (the block after the marker
# "own-script: the command the test runs"), run by a shell as a user would: only `pitstop` is
# given this build's path, its catalog and a run directory, `torchrun` is Debian's, and
# examples/ is the source tree's. It must end with the job done, resized 1 -> 2 by restart right
# after a snapshot, its steps each recorded once. Skips (77) without Debian's python3-torch.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
cmd=$(awk '/own-script: the command the test runs/ {on = 1; next} on && /^```sh/ {inb = 1; next}
           inb && /^```/ {exit} inb {print}' "$PIT_SOURCE_DIR/docs/own-script.md")
[ -n "$cmd" ] || fail "no command found in docs/own-script.md"
case $cmd in *"'--nnodes=\$PITSTOP_NUM_NODES'"*"'--node_rank=\$PITSTOP_NODE_RANK'"*"'--master_addr=\$PITSTOP_MASTER_ADDR'"*"--redirects 2 --tee 2"*) ;;
  *) fail "the documented torchrun line lost its quoting, node rank, master address or redirects: $cmd" ;; esac
tr=torchrun
command -v torchrun > /dev/null || tr="$PY -m torch.distributed.run"
run=${cmd/pitstop run /\"\$PITSTOP\" run --catalog \"\$T/cat.tsv\" --checkpoint-dir \"\$T/r\" --run tos }
run=${run/ torchrun / $tr }
run=${run//examples\//$PIT_SOURCE_DIR/examples/}
echo "running: $run"
export T PITSTOP
(cd "$T" && bash -c "$run") > "$T/out.txt" 2> "$T/err.txt" || fail "the documented command failed: $(tail "$T/err.txt")"
grep -q "Resized by restart" "$T/out.txt" || fail "$(cat "$T/out.txt")"
"$PY" - "$T/r/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
its = [x for x in r if x["type"] == "iter"]
assert [x["step"] for x in its] == list(range(128)), f"{len(its)} steps"
nodes = {x["gen"]: x["config"]["nodes"] for x in r if x["type"] == "init"}
assert nodes == {0: 1, 1: 2}, nodes
print(f"docs/own-script.md's command: 128 steps each once, generations on {nodes[0]} then {nodes[1]} nodes")
PYEOF
