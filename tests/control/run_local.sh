#!/usr/bin/env bash
# ctest: slow
# run_local.sh — `pitstop run` on the local provider, as issue 13 asks:
#  1. nothing lost: a pitstop train job resized 1 → 2 (one of them a cgroup-quota node) → 1
#     by a schedule has contiguous steps, the uninterrupted run's sample digest at every
#     step (so each sample of each epoch is used exactly once) and its final parameters;
#     the removal (2 → 1) goes on in place as root (docs/run.md "In-place shrink");
#  2. a rank SIGKILLed mid-run: the generation restarts from the last checkpoint, the
#     stored steps stay contiguous, the parameters still match;
#  3. the controller SIGKILLed mid-generation and started again: it stops the orphaned
#     workload, adopts its nodes, never starts a node twice, and finishes the job;
#  3b. the same with the state file one checkpoint behind the events file (a kill between them);
#  4. bad input: one clear message, non-zero exit, no process or cgroup left behind.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/control/faults_common.bash"

# contiguous EVENTS N WHAT: the events file's iterations are steps 0..N-1, each once
contiguous() {
  $PY - "$@" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(int(sys.argv[2]))), f"steps not contiguous {sys.argv[3]} ({len(steps)})"
print(f"{len(steps)} contiguous steps {sys.argv[3]}, generations {sorted({x['gen'] for x in r})}")
PYEOF
}

T=$(mktemp -d)
leftovers() { # processes and cgroups of this test's runs
  { pgrep -af -- "--run tr[0-9]" || true; pgrep -af "sleep 1234" || true; ls /sys/fs/cgroup/cpu 2> /dev/null | grep "^pitstop\.tr[0-9]" || true; } | grep -v pgrep || true
}
cleanup() {
  pkill -9 -f -- "--run tr[0-9]" 2> /dev/null || true
  pkill -9 -f "sleep 1234" 2> /dev/null || true
  for d in /sys/fs/cgroup/cpu/pitstop.tr[0-9]*; do [ -d "$d" ] && rmdir "$d" 2> /dev/null; done || true
  rm -rf "$T"
}
trap cleanup EXIT
write_catalog "$T/cat.tsv" # and common=(train options), faults_common.bash
before=$(leftovers)

# ---- 1. resized 1 → 2 → 1 by a schedule
"$PITSTOP" train "${common[@]}" --max-iters 120 --out "$T/u" --events "$T/u.jsonl" --quiet > /dev/null
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r1" --run tr1 --quiet \
  --schedule 40:local-1:1+local-0.4:1,80:local-1:1 "${common[@]}" --max-iters 120 > "$T/r1.txt"
$PY - "$T/u.jsonl" "$T/r1/events.jsonl" 400 120 << 'PYEOF'
import json, sys
u = [json.loads(l) for l in open(sys.argv[1])]
r = [json.loads(l) for l in open(sys.argv[2])]
nsamples, niters = int(sys.argv[3]), int(sys.argv[4])
ui = {x["step"]: x for x in u if x["type"] == "iter"}
ri = [x for x in r if x["type"] == "iter"]
steps = [x["step"] for x in ri]
assert steps == list(range(niters)), f"steps not contiguous: {steps[:5]}...{steps[-5:]} ({len(steps)})"
for x in ri:
    assert x["samples_digest"] == ui[x["step"]]["samples_digest"], f"step {x['step']}: other samples than the uninterrupted run"
    assert x["run"] == "tr1"
# each epoch's digests add up to the whole dataset's (every sample exactly once)
M = (1 << 64) - 1
def mix(i):
    z = (i + 0x9e3779b97f4a7c15) & M
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
whole = sum(mix(i) for i in range(nsamples)) & M
by_epoch = {}
for x in ri:
    by_epoch.setdefault(x["epoch"], []).append(x)
full = 0
for ep, xs in by_epoch.items():
    if len(xs) == 13:
        full += 1
        assert sum(int(x["samples_digest"], 16) for x in xs) & M == whole, f"epoch {ep}: samples missing or repeated"
assert full >= 8, full
gens = sorted({x["gen"] for x in ri})
assert gens == [0, 1, 2], gens
assert all(len(x["compute_s"]) == 2 for x in ri if x["gen"] == 1)
assert all(len(x["compute_s"]) == 1 for x in ri if x["gen"] != 1)
# the init records count the membership's nodes (2 CPU sets of one host in gen 1), not host names
inits = {x["gen"]: x for x in r if x["type"] == "init"}
assert [(inits[g]["nodes"], inits[g]["config"]["nodes"]) for g in (0, 1, 2)] == [(1, 1), (2, 2), (1, 1)], inits
ck = [x for x in r if x["type"] == "checkpoint"]
dec = [x for x in r if x["type"] == "decision"]
assert len(dec) == 2, dec
nodes = [x for x in r if x["type"] == "node"]
starts = [x["node"] for x in nodes if x["action"] == "start"]
stops = [x["node"] for x in nodes if x["action"] == "stop"]
assert sorted(starts) == sorted(stops) and len(set(starts)) == len(starts), (starts, stops)
print(f"resize: {niters} contiguous steps over generations {gens}, the uninterrupted run's samples at every "
      f"step, {full} whole epochs each using every sample once, {len(starts)} nodes started and stopped")
print(ck[-1]["path"])
PYEOF
last=$(grep '"checkpoint"' "$T/r1/events.jsonl" | tail -1 | $PY -c 'import json,sys; print(json.loads(sys.stdin.read())["path"])')
$CKPT compare "$T/u/checkpoint.pit" "$last" 1e-5 || fail "the resized run's parameters differ from the uninterrupted run's"
grep -q "gen 0 → 1" "$T/r1.txt" || fail "no resize in the report: $(cat "$T/r1.txt")"
# the removal at step 80 only removes a node: where the provider sees its nodes' processes (cgroups,
# as root), the rank on local-1 goes on in place — no third mpirun (hostfile.N is one per launch) —
# and the samples and parameters above are still the uninterrupted run's
if [ "$(id -u)" = 0 ]; then
  grep -q "gen 1 → 2 in place" "$T/r1.txt" || fail "the removal was not carried out in place: $(cat "$T/r1.txt")"
  [ -e "$T/r1/hostfile.1" ] && [ ! -e "$T/r1/hostfile.2" ] || fail "generation 2 was launched: $(ls "$T/r1")"
  [ ! -e "$T/r1/shrink" ] || fail "the shrink request was left behind"
  grep -q '"type":"iter"' "$T/r1/gen-2.log" || fail "generation 2's own log lacks its iterations"
  echo "the removal at step 80 went on in place (no launch of generation 2)"
fi

# ---- 2. a rank SIGKILLed mid-run (the same 2 nodes before and after: bit-identical parameters)
mpirun_local 2 "$PITSTOP" train "${common[@]}" --max-iters 600 --out "$T/u2" --quiet > /dev/null
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r2" --run tr2 --quiet --nodes 2 \
  "${common[@]}" --max-iters 600 --checkpoint-every 50 > "$T/r2.txt" 2> "$T/r2.err" &
ctl=$!
wait_for "$T/r2/events.jsonl" '"checkpoint"' 600
victim=$(pgrep -f -- "train .*--run tr2" | tail -1)
kill -9 "$victim"
wait $ctl || fail "the run did not survive a killed rank: $(cat "$T/r2.err")"
grep -q "restart 1 of" "$T/r2.err" || fail "no restart said: $(cat "$T/r2.err")"
contiguous "$T/r2/events.jsonl" 600 "after a killed rank"
last=$(grep '"checkpoint"' "$T/r2/events.jsonl" | tail -1 | $PY -c 'import json,sys; print(json.loads(sys.stdin.read())["path"])')
$CKPT same "$T/u2/checkpoint.pit" "$last" || fail "parameters differ after a killed rank (same membership: must be bit-identical)"
echo "killed rank: parameters bit-identical to the uninterrupted 2-rank run"

# ---- 3. the controller SIGKILLed mid-generation, then started again
run3=(run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r3" --run tr3 --quiet --nodes local-1:1+local-0.4:1
      "${common[@]}" --max-iters 600 --checkpoint-every 50)
"$PITSTOP" "${run3[@]}" > /dev/null 2> "$T/r3a.err" &
ctl=$!
wait_for "$T/r3/events.jsonl" '"checkpoint"' 600
kill -9 $ctl
wait $ctl 2> /dev/null || true
pgrep -f -- "train .*--run tr3" > /dev/null || fail "the workload did not outlive its controller (nothing to reconcile)"
"$PITSTOP" "${run3[@]}" > "$T/r3.txt" 2> "$T/r3b.err" || fail "the restarted controller failed: $(cat "$T/r3b.err")"
grep -q "adopted node" "$T/r3b.err" || fail "the restarted controller adopted no node: $(cat "$T/r3b.err")"
grep -q "stopped the workload" "$T/r3b.err" || fail "the orphaned workload was not stopped: $(cat "$T/r3b.err")"
$PY - "$T/r3/events.jsonl" 600 << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(int(sys.argv[2]))), f"steps not contiguous after a controller crash ({len(steps)})"
live = set()
for x in r:
    if x["type"] != "node":
        continue
    if x["action"] == "start":
        assert x["node"] not in live, f"node {x['node']} started twice"
        live.add(x["node"])
    elif x["action"] in ("stop", "lost"):
        live.discard(x["node"])
assert not live, f"nodes never stopped: {live}"
print(f"controller crash: {len(steps)} contiguous steps, no node started twice, every node stopped")
PYEOF
# the report's row of an adopted node starts where its start record (the killed controller's) does: it
# is billed from there (before 2026-11-29 the row said the adoption's time)
$PY - "$T/r3/events.jsonl" "$T/r3.txt" << 'PYEOF'
import json, re, sys
starts = {x["node"]: x["t"] for x in map(json.loads, open(sys.argv[1])) if x["type"] == "node" and x["action"] == "start"}
rows = [l.split() for l in open(sys.argv[2]) if l.startswith("  ") and re.search(r"adopted|previous controller", l)]
assert rows, "no adopted node's row in the report:\n" + open(sys.argv[2]).read()
for r in rows:
    t = float(r[3].rstrip("s"))
    assert abs(t - starts[r[0]]) < 0.06, f"adopted {r[0]}: row starts at {t} s, its start record at {starts[r[0]]:.2f} s"
print(f"adopted nodes' rows start at their start records: {[(r[0], r[3]) for r in rows]}")
# the adoption's ready record (each adopted node's last) carries the generation the new controller
# starts, that of the next iteration record (it said 0 before 2026-11-29)
recs = [json.loads(l) for l in open(sys.argv[1])]
later = []
for node in {r[0] for r in rows}:
    i = max(k for k, x in enumerate(recs) if x["type"] == "node" and x["node"] == node and x["action"] == "ready")
    nxt = [y["gen"] for y in recs[i:] if y["type"] == "iter"]
    assert nxt and recs[i]["gen"] == nxt[0] > 0, (node, recs[i], nxt[:1])
    later.append(recs[i])
print(f"adopted nodes' ready records in generation {sorted({x['gen'] for x in later})}, its iterations' too")
PYEOF
[ -z "$(ls "$T/r3/nodes")" ] || fail "the provider still lists nodes: $(ls "$T/r3/nodes")"

# ---- 3b. killed between the events file's flush of a checkpoint and the state's write: the
# state still says "step 0, no checkpoint" (as the generation's launch wrote it) while the
# events file holds the checkpoint and every step before it; the restarted controller must
# resume from the events file's checkpoint (else it redoes those steps: 650 records for 600)
run3b=(run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r3b" --run tr3b --quiet --nodes local-1:1
       "${common[@]}" --max-iters 600 --checkpoint-every 50)
"$PITSTOP" "${run3b[@]}" > /dev/null 2> "$T/r3ba.err" &
ctl=$!
wait_for "$T/r3b/events.jsonl" '"checkpoint"' 600
kill -9 $ctl
wait $ctl 2> /dev/null || true
sed -i 's/^step .*/step 0/; s/^ckpt .*/ckpt -/' "$T/r3b/state"
"$PITSTOP" "${run3b[@]}" > /dev/null 2> "$T/r3bb.err" || fail "the restarted controller failed: $(cat "$T/r3bb.err")"
contiguous "$T/r3b/events.jsonl" 600 "when the state lags the events file (resumed from its checkpoint)"

# ---- 4. bad input
bad() { # expected-message args...
  local want=$1
  shift
  if "$PITSTOP" "$@" > "$T/bad.out" 2> "$T/bad.err"; then fail "accepted: $*"; fi
  grep -q -- "$want" "$T/bad.err" || fail "'$*' said: $(cat "$T/bad.err") (wanted: $want)"
  echo "bad input ok: $(grep -m1 -- "$want" "$T/bad.err")"
}
bad "unknown provider 'cloud9'" run --provider cloud9 --run tr4 --checkpoint-dir "$T/b" "${common[@]}" --max-iters 10
bad "MIN 3 is above MAX 2" run --nnodes 3:2 --catalog "$T/cat.tsv" --run tr4 --checkpoint-dir "$T/b" "${common[@]}" --max-iters 10
bad "beyond the job's 50 iterations" run --catalog "$T/cat.tsv" --run tr4 --checkpoint-dir "$T/b" \
  --schedule 60:2 "${common[@]}" --max-iters 50
bad "'local-9' is not in the catalog" run --catalog "$T/cat.tsv" --nodes local-9:1 --run tr4 --checkpoint-dir "$T/b" "${common[@]}" --max-iters 10
bad "needs 1 CPU(s)" run --catalog "$T/cat.tsv" --nodes 64 --run tr4 --checkpoint-dir "$T/b" "${common[@]}" --max-iters 10
bad "exited with status 1 before its first iteration" run --catalog "$T/cat.tsv" --run tr5 --checkpoint-dir "$T/b5" -- false
# a command that does not exist: its own error line, not mpirun's report after it
bad "before its first iteration; the workload said: pitstop: node-exec: cannot run '/nonexistent/train.py'" \
  run --catalog "$T/cat.tsv" --run tr7 --checkpoint-dir "$T/b7" -- /nonexistent/train.py
bad "no iteration within 2 s" run --catalog "$T/cat.tsv" --run tr6 --checkpoint-dir "$T/b6" --start-timeout 2 \
  --max-restarts 0 -- sleep 1234
after=$(leftovers)
[ "$before" = "$after" ] || fail "left behind: $after"
[ -z "$(ls "$T/b6/nodes")" ] || fail "nodes left: $(ls "$T/b6/nodes")"
echo "nothing left behind (processes, cgroups, nodes)"
