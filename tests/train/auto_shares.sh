#!/usr/bin/env bash
# ctest: slow
# auto_shares.sh — --batch-shares auto with one rank held to half a core by a
# cgroup v1 CPU quota (2 ms period; cnn-wide, so a step spans many periods):
# under equal shares the iter records name rank 1 slow and no decision record
# is written; under auto, every decision record follows from the one before
# (its `previous` shares are the shares then in force, the first is equal),
# sums to the global batch and predicts a shorter step; rank 1's median share
# over the decisions is well under half. The step times of both are printed,
# not asserted (tests assert behaviour, not wall-clock time; bench/hetero
# measures the gain). Parameters stay identical across ranks (--check-sync).
# Runs alone (RUN_SERIAL): other tests' ranks would slow rank 0 as well. Needs root and the cgroup v1 cpu controller with CFS
# bandwidth control; exit 77 (skipped) otherwise.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
cg=/sys/fs/cgroup/cpu
if [[ $(id -u) -ne 0 || ! -w $cg || ! -e $cg/cpu.cfs_quota_us ]]; then
  echo "auto_shares: needs root and a writable cgroup v1 cpu controller with CFS quotas ($cg): skipped"
  exit 77
fi
grp=$cg/pit-auto-$$
T=$(mktemp -d)
cleanup() {
  rm -rf "$T"
  [[ -d $grp ]] || return 0
  local pid
  while read -r pid; do echo "$pid" > "$cg/cgroup.procs" 2>/dev/null || true; done < "$grp/cgroup.procs"
  rmdir "$grp" 2>/dev/null || echo "auto_shares: warning: cannot remove $grp" >&2
}
trap cleanup EXIT
mkdir "$grp"
echo 2000 > "$grp/cpu.cfs_period_us"
echo 1000 > "$grp/cpu.cfs_quota_us"
slow_rank1=(/bin/sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then echo $$ > "$0/cgroup.procs"; fi; exec "$@"' "$grp")
common=(train --model cnn-wide --data synthetic --batch-size 64 --max-iters 80 --threads 1 --quiet
        --no-validation --check-sync 5 --rebalance-every 10)
for shares in equal auto; do
  mpirun_local 2 "${slow_rank1[@]}" "$PITSTOP" "${common[@]}" --batch-shares $shares \
    --events "$T/$shares.jsonl" > /dev/null || fail "training with --batch-shares $shares failed"
done
$PY - "$T/equal.jsonl" "$T/auto.jsonl" <<'PY' || fail "auto shares: see above"
import json, sys
def load(p):
    return [json.loads(l) for l in open(p)]
eq, au = load(sys.argv[1]), load(sys.argv[2])
def check(cond, msg):
    if not cond:
        print("auto_shares:", msg, file=sys.stderr)
        sys.exit(1)
it = [r for r in eq if r["type"] == "iter"][20:]
check(len(it) == 60, "equal: expected 80 iter records")
c = [sum(r["compute_s"][k] for r in it) for k in range(2)]
w = [sum(r["wait_s"][k] for r in it) for k in range(2)]
# half a core computes about 2x; 1.25x with the wait the other way round still names rank 1 (a clean-clone
# CI of 2026-11-28 saw 1.46x while another session's tests loaded this 2-core machine, wait 0.47 s vs 0.02 s)
check(c[1] > 1.25 * c[0] and w[0] > w[1], "equal: records do not name rank 1 slow: compute %s wait %s" % (c, w))
check(not [r for r in eq if r["type"] == "decision"], "equal: a decision record was written")
dec = [r["detail"] for r in au if r["type"] == "decision"]
check(dec, "auto: no decision record")
shares, prev_step = [32, 32], 0
for d in dec:
    check(d["what"] == "batch_shares" and sum(d["shares"]) == 64, "auto: shares do not sum to 64: %s" % d)
    check(d["previous"] == shares, "auto: decision's previous shares %s, in force were %s" % (d["previous"], shares))
    check(d["predicted_step_s"] < 0.97 * d["previous_predicted_step_s"], "auto: a change without gain: %s" % d)
    check(d["step"] > prev_step, "auto: decision steps out of order")
    shares, prev_step = d["shares"], d["step"]
r1 = sorted(d["shares"][1] for d in dec)
check(r1[len(r1) // 2] < 0.45 * 64, "auto: rank 1's median share %s of 64 (decisions: %s)" % (r1[len(r1) // 2], r1))
ai = [r for r in au if r["type"] == "iter"]
check(len(ai) == 80, "auto: expected 80 iter records")
step = lambda recs: sum(r["step_s"] for r in recs[40:]) / len(recs[40:])
eq_it = [r for r in eq if r["type"] == "iter"]
print("auto_shares: %d decision(s), rank 1 shares %s of 64, steps %.1f ms (auto) vs %.1f ms (equal)"
      % (len(dec), r1, 1e3 * step(ai), 1e3 * step(eq_it)))
PY
echo "auto_shares: ok"
