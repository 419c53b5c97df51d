#!/usr/bin/env bash
# ctest: slow
# own_faults.sh — a user's PyTorch script under torchrun, unchanged, through faults at random moments
# (bench/fault-soak/own.py, docs/own-script.md "When it fails"): two seeded trials of
# examples/pytorch/ddp_snapshot.py on 2 local nodes with --resume-by-restart, whose plans fire one
# node's script SIGKILLed (seed 22) and one node's torchrun SIGKILLed (seed 41). Each must finish with every epoch in the snapshot, every step recorded once,
# nothing left behind, and the failure's message quoting torchrun's root cause (the killed rank)
# or, for a killed torchrun, nothing of the survivor's after-effects. Then one trial on nodes of the
# fake cloud reached through a user's ssh wrap (own.py --cloud, seed 110): a node vanishes without
# notice after a snapshot (named as the cause, its restart not held against --max-restarts), then
# another gets a reclaim notice. Then one trial on allocations of a Slurm of its own
# (bench/fault-soak/own-slurm.sh, seed 210; skipped, the rest kept, without root or Slurm): the
# Slurm node of one allocation set DOWN mid-run (the allocation named as the cause, its restart not
# held against --max-restarts), then the controller killed and run again (it adopts the
# allocations). Skips (77) without Debian's python3-torch.
set -euo pipefail
/usr/bin/python3 -c "import torch" 2> /dev/null || { echo "skipped: no python3-torch"; exit 77; }
soak() {
  /usr/bin/python3 "$PIT_SOURCE_DIR/bench/fault-soak/own.py" --replay "$1" --build-dir "$PIT_BINARY_DIR"
}
out=$(soak 22) || { echo "FAIL: $out" >&2; exit 1; }
echo "$out"
grep -q "^ok   seed 22: kill-worker;" <<< "$out" || { echo "FAIL: seed 22 fired other faults" >&2; exit 1; }
grep -q "the workload said: torchrun: rank [01] (local_rank: 0) exited with code -9 (pid: [0-9]*): Signal 9 (SIGKILL)" \
  <<< "$out" || { echo "FAIL: the killed rank is not the quoted cause" >&2; exit 1; }
out=$(soak 41) || { echo "FAIL: $out" >&2; exit 1; }
echo "$out"
grep -q "^ok   seed 41: kill-agent[;,]" <<< "$out" || { echo "FAIL: seed 41 did not kill a torchrun first" >&2; exit 1; }
grep -A1 "^ok   seed 41" <<< "$out" | grep -q "killed by signal 9): it restarts from the checkpoint at step [0-9]* ([^)]*), 0 steps since it redone; restart 1 of 3$" \
  || { echo "FAIL: a killed torchrun's message quotes more than its cause" >&2; exit 1; }
out=$(/usr/bin/python3 "$PIT_SOURCE_DIR/bench/fault-soak/own.py" --cloud --replay 110 --build-dir "$PIT_BINARY_DIR") ||
  { echo "FAIL: $out" >&2; exit 1; }
echo "$out"
grep -q "^ok   seed 110: vanish,reclaim;" <<< "$out" || { echo "FAIL: seed 110 did not fire a vanish, then a reclaim" >&2; exit 1; }
grep -A1 "^ok   seed 110" <<< "$out" | grep -q "failed (node i-[0-9a-f]* is gone): .*not counted against --max-restarts (0 of 3 used)" ||
  { echo "FAIL: the vanished node not said as the cause, or its restart counted" >&2; exit 1; }
rc=0
out=$(bash "$PIT_SOURCE_DIR/bench/fault-soak/own-slurm.sh" --replay 210 --build-dir "$PIT_BINARY_DIR") || rc=$?
echo "$out"
if [ $rc = 77 ]; then
  echo "own-slurm: skipped"
else
  [ $rc = 0 ] || { echo "FAIL: own-slurm.sh seed 210 (exit $rc)" >&2; exit 1; }
  grep -q "^ok   seed 210: down,kill-controller;" <<< "$out" ||
    { echo "FAIL: seed 210 did not set a node DOWN, then kill the controller" >&2; exit 1; }
  grep -A1 "^ok   seed 210" <<< "$out" |
    grep -q "failed (node own210.j[0-9]* \(is gone\|lost, then\).*not counted against --max-restarts (0 of 3 used)" ||
    { echo "FAIL: the lost allocation not said as the cause, or its restart counted" >&2; exit 1; }
fi
