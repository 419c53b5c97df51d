#!/usr/bin/env bash
# ctest: slow
# run_torch.sh — `pitstop run` driving a user's PyTorch script: the seeds' distributed DCGAN
# (examples/pytorch/dist_dcgan.py, docs/protocol.md) under torchrun through the per-node
# launcher, resized 1 → 2 → 1 nodes by a schedule, against the same job on one node without a
# resize: contiguous steps, one checkpoint per change, the same samples at every step, the same
# losses; torchrun without --redirects (failing on Debian's torch 1.13 under Python 3.11): the
# exception quoted and a hint naming the cure. Skips (77) without Debian's python3-torch.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/protocol/common.bash"
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
# the command as a user writes it: $PITSTOP_* placeholders are filled in per node by the
# launcher (single quotes: no shell is involved, the values reach torchrun as argv)
cmd=("$PY" -m torch.distributed.run --redirects 2 --tee 2 '--nnodes=$PITSTOP_NUM_NODES'
     '--node_rank=$PITSTOP_NODE_RANK' --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR'
     '--master_port=$PITSTOP_MASTER_PORT' "$DCGAN" "${TINY[@]}" --epochs 2)
"$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/u" --run tu --quiet \
  -- "${cmd[@]}" > "$T/u.txt" 2> "$T/u.err" || fail "the 1-node run failed: $(cat "$T/u.err")"
"$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/r" --run tr --quiet \
  --schedule 8:2,20:1 -- "${cmd[@]}" > "$T/r.txt" 2> "$T/r.err" || fail "the resized run failed: $(cat "$T/r.err")"
"$PY" - "$T/u/events.jsonl" "$T/r/events.jsonl" << 'PYEOF'
import json, sys
u = [json.loads(l) for l in open(sys.argv[1])]
r = [json.loads(l) for l in open(sys.argv[2])]
ui = {x["step"]: x for x in u if x["type"] == "iter"}
ri = [x for x in r if x["type"] == "iter"]
steps = [x["step"] for x in ri]
assert steps == list(range(40)), f"steps: {steps}"
assert sorted(ui) == steps
gens = sorted({x["gen"] for x in ri})
assert gens == [0, 1, 2], gens
worst = 0.0
for x in ri:
    y = ui[x["step"]]
    assert x["samples_digest"] == y["samples_digest"], f"step {x['step']}: other samples"
    for k in ("d", "g"):
        a, b = x["loss"][k], y["loss"][k]
        worst = max(worst, abs(a - b) / max(abs(b), 1e-12))
assert worst <= 1e-5, f"loss trajectory differs: worst relative difference {worst:.3g}"
stops = [x for x in r if x["type"] == "end" and x.get("status") == "stopped"]
assert len(stops) == 2, f"{len(stops)} stopped generations, expected 2"
ck_per_gen = {}
for x in r:
    if x["type"] == "checkpoint":
        ck_per_gen[x["gen"]] = ck_per_gen.get(x["gen"], 0) + 1
assert ck_per_gen.get(0) == 1 and ck_per_gen.get(1) == 1, ck_per_gen
nodes2 = {x["node"] for x in r if x["type"] == "node" and x["action"] == "start"}
print(f"torch DCGAN under pitstop run: 40 contiguous steps over generations {gens} on 1, 2, 1 nodes "
      f"({len(nodes2)} nodes started), one checkpoint per change, the same samples at every step, "
      f"losses within {worst:.2g} of the 1-node run")
PYEOF

# torchrun as many users write it, without --redirects: on Debian's torch 1.13 under Python 3.11
# it fails before its first step (AttributeError in to_map): one message quoting that, and a hint
# naming the cure; a torch without the bug runs it
plain=("${cmd[@]:0:3}" "${cmd[@]:7}") # cmd without its "--redirects 2 --tee 2"
[ "${cmd[3]} ${cmd[5]}" = "--redirects --tee" ] || fail "cmd changed: ${cmd[*]}"
if "$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/p" --run tp --quiet \
  -- "${plain[@]}" > "$T/p.txt" 2> "$T/p.err"; then
  echo "torchrun without --redirects runs with this torch"
else
  grep -q "before its first iteration; the workload said: AttributeError: 'NoneType' object has no attribute 'get'" \
    "$T/p.err" || fail "the failure not quoted: $(cat "$T/p.err")"
  grep -q "^pitstop: hint: torchrun's default --redirects 0 fails .*give torchrun --redirects 2 --tee 2" "$T/p.err" ||
    fail "no hint: $(cat "$T/p.err")"
  echo "torchrun without --redirects: $(tail -1 "$T/p.err")"
fi

# the rendezvous port taken on node 0's host between pitstop's choice and torch's bind (another
# program took it): torch fails before its first step ("failed to bind to [::]:PORT (errno: 98 -
# Address already in use)"). Generation 0 is started again with another port, no restart spent,
# and the job finishes (until 2026-11-30 the run ended there: "failed before its first iteration").
# hold.py takes the port in generation 0 (a child that keeps it listening), then runs torchrun.
cat > "$T/hold.py" << 'PYEOF'
import os, socket, sys, time
port, gen = int(sys.argv[1]), sys.argv[2]
if gen == "0":
    r, w = os.pipe()
    if os.fork() == 0:
        s = socket.socket(socket.AF_INET6)
        s.bind(("::", port))
        s.listen()
        null = os.open(os.devnull, os.O_RDWR)
        for f in (0, 1, 2):
            os.dup2(null, f)
        os.write(w, b"1")
        time.sleep(20)
        os._exit(0)
    os.read(r, 1)
os.execv(sys.argv[3], sys.argv[3:])
PYEOF
"$PITSTOP" run --catalog "$T/cat.tsv" --launcher per-node --checkpoint-dir "$T/k" --run tk --max-restarts 0 \
  --quiet -- "$PY" "$T/hold.py" '$PITSTOP_MASTER_PORT' '$PITSTOP_GEN' "${cmd[@]}" > "$T/k.txt" 2> "$T/k.err" ||
  fail "the run whose port was taken failed: $(cat "$T/k.err")"
grep -q "^pitstop: generation 0 failed (.*): its rendezvous port [0-9]* was taken on node .* host before torch could listen on it (Address already in use); it starts again with another port, not counted against --max-restarts" \
  "$T/k.err" || fail "the taken port not said: $(cat "$T/k.err")"
grep -q "failed to bind to .*Address already in use" "$T/k/gen-0.log" || fail "torch's bind did not fail: $(tail -5 "$T/k/gen-0.log")"
"$PY" - "$T/k/events.jsonl" << 'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in ev if x["type"] == "iter"]
assert steps == list(range(40)), f"steps: {steps}"
gens = sorted({x["gen"] for x in ev if x["type"] == "iter"})
assert gens == [1], gens
PYEOF
pgrep -f "$T/hold.py" > /dev/null && fail "hold.py left running"
echo "rendezvous port taken: $(grep -o 'its rendezvous port [0-9]* was taken[^;]*' "$T/k.err"); 40 steps once, in generation 1"
