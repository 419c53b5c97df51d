#!/usr/bin/env bash
# ctest: slow
# run_slurm.sh — `pitstop run --provider slurm` on a Slurm started by the test on this machine:
# its own munged (own socket), slurmctld and two slurmd (n1, n2) from a temporary slurm.conf.
#  1. a pitstop train job resized 1 → 2 → 1 nodes (allocations) by a schedule: contiguous
#     steps, the uninterrupted run's samples at every step, parameters equal within tolerance;
#  2. `scancel` of one allocation mid-run: the controller restarts from the last checkpoint on a
#     new allocation, steps stay contiguous, parameters bit-identical to an uninterrupted 2-rank run;
#  3. the controller SIGKILLed mid-generation and started again: mid-generation 1, squeue lists
#     exactly the killed controller's two allocations (adopted, none started again) and no job
#     step and no process of the killed generation; it finishes with contiguous steps, the events
#     file and the store agree on the node records, and Slurm lists no allocation of the run;
#     the same under the per-node launcher with a workload that outlives its srun: its steps
#     killed before the allocations are adopted, generation 1's workload once per node;
#  3c. a user's torch script (examples/pytorch/ddp_snapshot.py) under torchrun per allocation:
#     resized 1 → 2 → 1 by restart, every step once; one of two allocations scancelled after a
#     snapshot: the lost allocation said as the cause, the restart not held against
#     --max-restarts, every step once, nothing left (skipped without Debian's python3-torch);
#  3d. the Slurm node of an allocation set DOWN under a per-node workload (its srun exits 0):
#     the provider's poll names the allocation gone within seconds, the run restarts and ends;
#  4. bad input: more nodes than Slurm has (salloc --immediate refused), a partition Slurm does
#     not have: one message, bounded time, non-zero exit, no allocation, salloc or node file left.
# Needs root and Debian's slurmctld, slurmd, slurm-client, munge: exit 77 (skipped) otherwise.
# Every daemon it starts is stopped on exit.
set -euo pipefail
: "${PIT_SOURCE_DIR:?}" "${PITSTOP:?}"
if [[ $(id -u) -ne 0 ]]; then
  echo "run_slurm: needs root (slurmd, munged): skipped"
  exit 77
fi
. "$PIT_SOURCE_DIR/tests/control/slurm_up.bash"
for t in $(slurm_missing) mpirun; do
  command -v "$t" > /dev/null || { echo "run_slurm: $t not installed: skipped"; exit 77; }
done
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
T=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  slurm_down "$T"
  for p in "${pids[@]}"; do
    for _ in $(seq 30); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$p" 2> /dev/null || true
  done
  rm -rf "$T"
}
trap cleanup EXIT

# ---- munge (own socket), slurmctld, slurmd n1 and n2
slurm_up "$T" || fail "Slurm nodes not idle"
echo "slurm up: $(sinfo -h -o '%P %D %t')"

cat > "$T/cat.tsv" << 'CAT'
itype   vcpus  price_h  billing_s  min_s
node    1      0.10     1          0
CAT
common=(--model cnn --data synthetic --batch-size 32 --threads 1 --seed 5 --lr 0.01 --lr-schedule constant
        --no-validation --limit 400 --epochs 0 --backend ref)
left() { squeue -h -o '%i %j' | grep pitstop- || true; }

# ---- 1. resized 1 → 2 → 1 allocations
"$PITSTOP" train "${common[@]}" --max-iters 120 --out "$T/u" --events "$T/u.jsonl" --quiet > /dev/null
timeout 300 "$PITSTOP" run --provider slurm --catalog "$T/cat.tsv" --itype node --checkpoint-dir "$T/r1" --run tsl1 \
  --quiet --schedule 40:2,80:1 "${common[@]}" --max-iters 120 > "$T/r1.txt" 2> "$T/r1.err" \
  || { cat "$T/r1.err" "$T"/r1/gen-*.log; fail "the slurm run failed"; }
last=$($PY "$PIT_SOURCE_DIR/tests/control/resize_check.py" "$T/u.jsonl" "$T/r1/events.jsonl" 400 120 tsl1 3 2 1 \
  | tee /dev/stderr | tail -1) || fail "resize check"
$CKPT compare "$T/u/checkpoint.pit" "$last" 1e-5 || fail "the resized run's parameters differ from the uninterrupted run's"
echo "slurm resize: final parameters equal the uninterrupted run's within 1e-5"
[ -z "$(left)" ] || fail "allocations left: $(left)"
[ -z "$(ls "$T/r1/nodes")" ] || fail "node files left: $(ls "$T/r1/nodes")"

# ---- 2. scancel of one allocation mid-run
mpirun_local 2 "$PITSTOP" train "${common[@]}" --max-iters 200 --out "$T/u2" --quiet > /dev/null
"$PITSTOP" run --provider slurm --catalog "$T/cat.tsv" --itype node --checkpoint-dir "$T/r2" --run tsl2 --quiet \
  --nodes 2 "${common[@]}" --max-iters 200 --checkpoint-every 50 > "$T/r2.txt" 2> "$T/r2.err" &
ctl=$!
pids+=("$ctl")
# scancel_after RUN DIR: once DIR's events hold a checkpoint, RUN's last allocation scancelled (its id in victim)
scancel_after() {
  for _ in $(seq 1200); do grep -q '"checkpoint"' "$2/events.jsonl" 2> /dev/null && break; sleep 0.1; done
  victim=$(squeue -h -o '%i %j' | awk -v r="$1" '$2 ~ "^pitstop-" r "-[0-9a-f]+$" { print $1 }' | tail -1)
  [ -n "$victim" ] || fail "no allocation of run $1"
  scancel "$victim"
  echo "scancel $victim"
}
scancel_after tsl2 "$T/r2"
wait $ctl || { cat "$T/r2.err"; fail "the run did not survive the scancel of an allocation"; }
grep -q "node tsl2.j$victim \(lost\|is gone\).*not counted against --max-restarts" "$T/r2.err" || fail "no restart said: $(cat "$T/r2.err")"
grep -q "allocation $victim is gone" "$T/r2.err" || fail "the lost allocation is not named: $(cat "$T/r2.err")"
$PY - "$T/r2/events.jsonl" 200 "$victim" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = [x["step"] for x in r if x["type"] == "iter"]
assert steps == list(range(int(sys.argv[2]))), f"steps not contiguous after a scancel ({len(steps)})"
lost = [x["node"] for x in r if x["type"] == "node" and x["action"] == "lost"]
assert any(n.endswith(".j" + sys.argv[3]) for n in lost), f"lost nodes {lost}"
starts = [x["node"] for x in r if x["type"] == "node" and x["action"] == "start"]
assert len(starts) == 3 and len(set(starts)) == 3, starts
print(f"scancel: {len(steps)} contiguous steps, generations {sorted({x['gen'] for x in r})}, node lost {lost}, "
      f"allocations {starts}")
PYEOF
last=$(grep '"checkpoint"' "$T/r2/events.jsonl" | tail -1 | $PY -c 'import json,sys; print(json.loads(sys.stdin.read())["path"])')
$CKPT same "$T/u2/checkpoint.pit" "$last" || fail "parameters differ after a scancel (same membership: must be bit-identical)"
echo "scancel: parameters bit-identical to the uninterrupted 2-rank run"
[ -z "$(left)" ] || fail "allocations left: $(left)"

# ---- 3. the controller SIGKILLed mid-generation, then started again
. "$PIT_SOURCE_DIR/tests/control/run_procs.bash"
# the run's Slurm job name: pitstop-RUN-TAG, TAG the CRC-32 of its directory's real path (two runs of
# one name in two directories never list each other's allocations)
jobname() { "$PY" -c 'import os, sys, zlib; print("pitstop-%s-%08x" % (sys.argv[1], zlib.crc32(os.path.realpath(sys.argv[2]).encode())))' "$1" "$2"; }
allocs() { squeue -h --name="$(jobname "$1" "$2")" -o '%i %T' | sort | xargs; }    # the run's allocations
steps() { squeue -h -s --name="$(jobname "$1" "$2")" -o '%i' | sort | xargs; }     # their job steps
procs() { run_procs "$1"; }                                                   # the run's processes here
run3=(run --provider slurm --catalog "$T/cat.tsv" --itype node --checkpoint-dir "$T/r3" --run tsl5 --quiet --nodes 2
      --db "$T/r3.db" "${common[@]}" --max-iters 120 --checkpoint-every 20)
"$PITSTOP" "${run3[@]}" > /dev/null 2> "$T/r3a.err" &
ctl=$!
pids+=("$ctl")
wait_for "$T/r3/events.jsonl" '"checkpoint"' 600
kill -9 $ctl
wait $ctl 2> /dev/null || true
a0=$(allocs tsl5 "$T/r3") s0=$(steps tsl5 "$T/r3")
[ "$(wc -w <<< "$a0")" = 4 ] || fail "the killed controller held allocations '$a0', not two running"
files=$(cat "$T"/r3/nodes/*.node | cut -d' ' -f2 | sort | xargs)
[ "$(cut -d' ' -f1,3 <<< "$a0")" = "$files" ] || fail "squeue lists '$a0', the node files '$files'"
echo "controller killed mid-generation 0: squeue lists the run's allocations $a0 (the node files' $files), steps $s0;" \
  "left here: $(procs tsl5 | summary)"
"$PITSTOP" "${run3[@]}" > "$T/r3.txt" 2> "$T/r3b.err" &
ctl=$!
pids+=("$ctl")
for _ in $(seq 1200); do grep -q '"gen":1.*"checkpoint"\|"checkpoint".*"gen":1' "$T/r3/events.jsonl" && break; sleep 0.1; done
grep -q '"gen":1.*"checkpoint"\|"checkpoint".*"gen":1' "$T/r3/events.jsonl" \
  || fail "the restarted controller reached no checkpoint: $(cat "$T/r3b.err")"
# Slurm's view mid-generation 1: the same two allocations, none of the killed generation's steps
a1=$(allocs tsl5 "$T/r3") s1=$(steps tsl5 "$T/r3") p1=$(procs tsl5)
[ "$a1" = "$a0" ] || fail "squeue lists '$a1' mid-generation 1, not the killed controller's '$a0'"
for st in $s0; do [[ " $s1 " == *" $st "* ]] && fail "step $st of the killed generation still runs ($s1)"; done
[ -n "$s1" ] || fail "no job step mid-generation 1"
old=$(grep -v '^1 ' <<< "$p1" || true)
[ -z "$old" ] || fail "processes of the killed generation still run: $old"
echo "restarted controller mid-generation 1: squeue lists the same allocations ($a1), steps $s1 (none of the" \
  "killed generation's); processes: $(summary <<< "$p1")"
wait $ctl || fail "the restarted controller failed: $(cat "$T/r3b.err")"
[ "$(grep -c "adopted node" "$T/r3b.err")" = 2 ] || fail "not both allocations adopted: $(cat "$T/r3b.err")"
$PY "$PIT_SOURCE_DIR/tests/control/crash_check.py" "$T/r3/events.jsonl" 120 tsl5 "$T/r3.db" 2 || fail "crash check"
[ -z "$(left)" ] || fail "allocations left: $(left)"
[ -z "$(ls "$T/r3/nodes")" ] || fail "node files left: $(ls "$T/r3/nodes")"
[ -z "$(procs tsl5)" ] || fail "processes left: $(procs tsl5)"
echo "controller crash: no allocation, node file or process of the run left"

# the same under the per-node launcher (each node's command an srun step), killed before any
# checkpoint, with a workload that outlives its srun (it ignores SIGPIPE and SIGHUP; node 0 logs
# its iterations in the course DCGAN format): its steps are killed before the allocations are
# adopted (Slurm ends a killed srun's steps itself, but under load not before generation 1 starts)
pyprocs() { procs "$1" | grep ' python3$' | summary; }
run4=(run --provider slurm --catalog "$T/cat.tsv" --itype node --checkpoint-dir "$T/r4" --run tsl6 --quiet --nodes 2
      --launcher per-node --db "$T/r4.db" -- "$PY" "$PIT_SOURCE_DIR/tests/control/survivor.py" "$T/go")
"$PITSTOP" "${run4[@]}" > /dev/null 2> "$T/r4a.err" &
ctl=$!
pids+=("$ctl")
for _ in $(seq 600); do [ "$(pyprocs tsl6)" = "2 0 python3" ] && break; sleep 0.1; done
[ "$(pyprocs tsl6)" = "2 0 python3" ] || fail "the per-node workload did not start: $(cat "$T/r4a.err")"
kill -9 $ctl
wait $ctl 2> /dev/null || true
sleep 0.5 # what dies with its srun has died by now; the survivors stay
a0=$(allocs tsl6 "$T/r4") s0=$(steps tsl6 "$T/r4")
[ "$(pyprocs tsl6)" = "2 0 python3" ] || fail "the workload did not outlive its controller: $(procs tsl6)"
echo "per-node: controller killed; allocations $a0, steps $s0; its workload outlives it: $(pyprocs tsl6)"
"$PITSTOP" "${run4[@]}" > /dev/null 2> "$T/r4b.err" &
ctl=$!
pids+=("$ctl")
for _ in $(seq 300); do [[ "$(pyprocs tsl6)" == *"2 1 python3"* ]] && break; sleep 0.1; done
a1=$(allocs tsl6 "$T/r4") p1=$(pyprocs tsl6)
[ "$a1" = "$a0" ] || fail "squeue lists '$a1' mid-generation 1, not the killed controller's '$a0'"
[ "$p1" = "2 1 python3" ] || fail "mid-generation 1 the run's workload processes are '$p1', not generation 1's once per node"
echo "per-node: restarted controller: allocations $a1, steps $(steps tsl6 "$T/r4"); workload: $p1 (the killed generation's steps killed)"
touch "$T/go"
wait $ctl || fail "the restarted controller failed: $(cat "$T/r4b.err")"
[ "$(grep -c "adopted node" "$T/r4b.err")" = 2 ] || fail "not both allocations adopted: $(cat "$T/r4b.err")"
$PY "$PIT_SOURCE_DIR/tests/control/crash_check.py" "$T/r4/events.jsonl" 0 tsl6 "$T/r4.db" 2 || fail "crash check"
[ -z "$(allocs tsl6 "$T/r4")$(procs tsl6)" ] || fail "left: $(allocs tsl6 "$T/r4") $(procs tsl6)"
echo "per-node controller crash: no allocation or process of the run left"

# slurm_left RUN DIR: allocations of RUN, node files, salloc/srun processes naming it
slurm_left() {
  { squeue -h -o '%i %j %T' | awk -v p="pitstop-$1-" 'index($2, p) == 1'; find "$T/$2" -name "*.node" 2> /dev/null
    pgrep -af "pitstop-$1" | grep -v pgrep; } || true
}
# ---- 3c. a user's own torch script (examples/pytorch/ddp_snapshot.py) under torchrun, one per
# allocation (--launcher per-node, --resume-by-restart): resized 1 -> 2 -> 1 and every step recorded
# once; then on 2 allocations, one scancelled after the first snapshot: the lost allocation named as
# the cause, the restart not held against --max-restarts 1 (a node lost after a snapshot of its
# generation), every step once, nothing left
if $PY -c 'import torch' 2> /dev/null; then
  torch_run() { # RUN [PITSTOP OPTIONS]: the command, in T8
    local r=$1
    shift
    T8=("$PITSTOP" run --provider slurm --catalog "$T/cat.tsv" --itype node --launcher per-node --resume-by-restart
        --epochs 8 --checkpoint-dir "$T/$r" --run "$r" --quiet "$@"
        -- "$PY" -m torch.distributed.run '--nnodes=$PITSTOP_NUM_NODES' '--node_rank=$PITSTOP_NODE_RANK'
        --nproc_per_node=1 '--master_addr=$PITSTOP_MASTER_ADDR' '--master_port=$PITSTOP_MASTER_PORT' --redirects 2 --tee 2
        "$PIT_SOURCE_DIR/examples/pytorch/ddp_snapshot.py" --epochs 8 --save-every 1 --snapshot "$T/$r.pt"
        --step-sleep 0.04)
  }
  torch_steps() { # EVENTS TOTAL: every step once, the run done
    $PY - "$1" "$2" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
steps = sorted(x["step"] for x in r if x["type"] == "iter")
assert steps == list(range(int(sys.argv[2]))), f"steps {steps[:3]}..{steps[-3:]} ({len(steps)}, {len(set(steps))} distinct)"
ends = [x.get("status") for x in r if x["type"] == "end"]
assert ends and ends[-1] == "done", ends
gens = sorted({x["gen"] for x in r if x["type"] == "iter"})
print(f"{len(steps)} steps once over generations {gens}")
PYEOF
  }
  torch_run tsl7 --nodes 1 --schedule 16:2,40:1
  OMP_NUM_THREADS=1 timeout 300 "${T8[@]}" > /dev/null 2> "$T/r7.err" ||
    fail "the torch run failed: $(cat "$T/r7.err"; tail -20 "$T"/tsl7/gen-*.log)"
  torch_steps "$T/tsl7/events.jsonl" 256 > "$T/r7.steps" || fail "steps"
  echo "torch per-node, resized by restart: $(cat "$T/r7.steps")"
  # the rendezvous port was asked on node 0's allocation (node-check --free-port as a job step there)
  ! grep -h "was not asked for a free port" "$T"/tsl7/gen-*.log || fail "node 0 not asked for its port"
  [ "$(grep -c "resize by restart" "$T/r7.err")" = 2 ] || fail "not resized twice: $(cat "$T/r7.err")"
  torch_run tsl8 --nodes 2 --max-restarts 1
  (OMP_NUM_THREADS=1 exec "${T8[@]}") > /dev/null 2> "$T/r8.err" &
  ctl=$!
  pids+=("$ctl")
  scancel_after tsl8 "$T/tsl8" > /dev/null
  wait $ctl || fail "the torch run did not survive a scancel: $(cat "$T/r8.err")"
  grep -q "failed (node tsl8.j$victim \(lost, then .*\|is gone\)): .*not counted against --max-restarts (0 of 1 used)" \
    "$T/r8.err" ||
    fail "the lost allocation not said as the cause: $(cat "$T/r8.err")"
  torch_steps "$T/tsl8/events.jsonl" 128 > "$T/r8.steps" || fail "steps" # 16 steps an epoch on 2 nodes
  echo "torch per-node, allocation $victim scancelled: $(cat "$T/r8.steps")"
  [ -z "$(slurm_left tsl8 tsl8)$(pgrep -f "ddp_snapshot.py .*$T/tsl" || true)" ] ||
    fail "left: $(slurm_left tsl8 tsl8) $(pgrep -af "ddp_snapshot.py .*$T/tsl")"
else
  echo "torch per-node: skipped (Debian's python3-torch not installed)"
fi

# ---- 3d. the Slurm node of one of two allocations set DOWN while the per-node workload runs: Slurm
# ends that allocation (NODE_FAIL), its srun says "Node failure" and exits 0, and the other node's
# workload goes on (as a torchrun at its exit barrier does, 300 s): only Slurm knows the node is
# lost. The provider's poll says so within seconds: the generation fails naming the allocation and
# restarts on a new one (before, the controller waited on the survivor: own-slurm.sh, seed 102)
run9=(run --provider slurm --catalog "$T/cat.tsv" --itype node --checkpoint-dir "$T/r9" --run tsl9 --quiet --nodes 2
      --launcher per-node -- "$PY" "$PIT_SOURCE_DIR/tests/control/survivor.py" "$T/go9")
"$PITSTOP" "${run9[@]}" > /dev/null 2> "$T/r9.err" &
ctl=$!
pids+=("$ctl")
for _ in $(seq 600); do [ "$(pyprocs tsl9)" = "2 0 python3" ] && break; sleep 0.1; done
[ "$(pyprocs tsl9)" = "2 0 python3" ] || fail "the per-node workload did not start: $(cat "$T/r9.err")"
read -r victim vnode <<< "$(squeue -h --name="$(jobname tsl9 "$T/r9")" -o '%i %N' | sort -n | tail -1)"
scontrol update nodename="$vnode" state=down reason=run_slurm
t0=$(date +%s.%N)
for _ in $(seq 150); do grep -q "failed (node tsl9.j$victim is gone)" "$T/r9.err" && break; sleep 0.1; done
t1=$(date +%s.%N)
touch "$T/go9"
scontrol update nodename="$vnode" state=resume 2> /dev/null || true # ReturnToService=2 may have taken it back
grep -q "failed (node tsl9.j$victim is gone)" "$T/r9.err" ||
  fail "allocation $victim's node $vnode set DOWN: no failure said within 15 s: $(cat "$T/r9.err")"
wait $ctl || fail "the run did not survive a node set DOWN: $(cat "$T/r9.err")"
echo "node $vnode set DOWN: allocation $victim said gone after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s:" \
  "$(grep -m1 -o "failed (node tsl9.j$victim is gone)" "$T/r9.err")"
[ -z "$(slurm_left tsl9 r9)$(procs tsl9)" ] || fail "left: $(slurm_left tsl9 r9) $(procs tsl9)"

# ---- 4. bad input: three nodes of a partition that has two; a partition Slurm does not have
t0=$(date +%s)
if "$PITSTOP" run --provider slurm --catalog "$T/cat.tsv" --itype node --checkpoint-dir "$T/b" --run tsl3 --quiet \
  --nodes 3 "${common[@]}" --max-iters 10 > /dev/null 2> "$T/b.err"; then
  fail "three nodes from a two-node Slurm accepted"
fi
t1=$(date +%s)
grep -q "Slurm cannot give a node of type node now in partition node" "$T/b.err" || fail "unclear: $(cat "$T/b.err")"
((t1 - t0 < 60)) || fail "three nodes of two took $((t1 - t0)) s to refuse"
echo "bad input ok ($((t1 - t0)) s): $(grep -m1 "cannot give" "$T/b.err")"
$PY - "$T/b/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
act = [(x["action"], x["node"]) for x in r if x["type"] == "node"]
starts = [n for a, n in act if a == "start"]
stops = [n for a, n in act if a == "stop"]
assert len(starts) == 2 and sorted(starts) == sorted(stops), act
assert not [x for x in r if x["type"] == "iter"], "iterations without the third node"
print(f"the two allocations granted before the refusal ({', '.join(starts)}) were cancelled; no iteration ran")
PYEOF
[ -z "$(slurm_left tsl3 b)" ] || fail "left behind: $(slurm_left tsl3 b)"
t0=$(date +%s)
if "$PITSTOP" run --provider slurm --partition nosuch --catalog "$T/cat.tsv" --itype node --checkpoint-dir "$T/b2" \
  --run tsl4 --quiet "${common[@]}" --max-iters 10 > /dev/null 2> "$T/b2.err"; then fail "unknown partition accepted"; fi
t1=$(date +%s)
grep -q "Slurm cannot give a node of type node now in partition nosuch.*Invalid partition name" "$T/b2.err" \
  || fail "unclear: $(cat "$T/b2.err")"
((t1 - t0 < 60)) || fail "an unknown partition took $((t1 - t0)) s to refuse"
echo "bad input ok ($((t1 - t0)) s): $(grep -m1 "cannot give" "$T/b2.err")"
[ -z "$(slurm_left tsl4 b2)" ] || fail "left behind: $(slurm_left tsl4 b2)"
[ -z "$(left)" ] || fail "allocations left: $(left)"
echo "nothing left behind (allocations, node files, salloc or srun)"
