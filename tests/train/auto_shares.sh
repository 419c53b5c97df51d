#!/usr/bin/env bash
# ctest: slow
# auto_shares.sh — --batch-shares auto with one rank held to 0.3 core by a
# cgroup v1 CPU quota (5 ms period): the iter records name rank 1 slow under
# equal shares and no decision record is written; under auto, decision records
# move samples to rank 0 (every one with shares summing to the global batch and
# a shorter predicted step), the last leaves rank 1 under 40% of the batch, and
# the run trains to the end with --check-sync. Parameters stay identical across
# ranks whatever the shares (checked every 5 iterations). Needs root and the
# cgroup v1 cpu controller; exit 77 (skipped) otherwise.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash"
cg=/sys/fs/cgroup/cpu
if [[ $(id -u) -ne 0 || ! -w $cg ]]; then
  echo "auto_shares: needs root and a writable cgroup v1 cpu controller ($cg): skipped"
  exit 77
fi
grp=$cg/pit-auto-$$
T=$(mktemp -d)
cleanup() {
  rm -rf "$T"
  rmdir "$grp" 2>/dev/null || true
}
trap cleanup EXIT
mkdir "$grp"
echo 5000 > "$grp/cpu.cfs_period_us"
echo 1500 > "$grp/cpu.cfs_quota_us"  # 0.3 core (a quota is at least 1 ms)
slow_rank1=(/bin/sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then echo $$ > "$0/cgroup.procs"; fi; exec "$@"' "$grp")
common=(train --model cnn --data synthetic --batch-size 64 --max-iters 80 --threads 1 --quiet
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
check(c[1] > 1.5 * c[0] and w[0] > w[1], "equal: records do not name rank 1 slow: compute %s wait %s" % (c, w))
check(not [r for r in eq if r["type"] == "decision"], "equal: a decision record was written")
dec = [r["detail"] for r in au if r["type"] == "decision"]
check(dec, "auto: no decision record")
prev_step = 0
for d in dec:
    check(d["what"] == "batch_shares" and sum(d["shares"]) == 64 and sum(d["previous"]) == 64,
          "auto: shares do not sum to the global batch: %s" % d)
    check(d["predicted_step_s"] < 0.97 * d["previous_predicted_step_s"], "auto: a change without gain: %s" % d)
    check(d["step"] > prev_step, "auto: decision steps out of order")
    prev_step = d["step"]
check(dec[0]["previous"] == [32, 32], "auto: did not start equal: %s" % dec[0])
check(dec[-1]["shares"][1] < 0.4 * 64, "auto: the slow rank still has %s of 64" % dec[-1]["shares"][1])
check(len([r for r in au if r["type"] == "iter"]) == 80, "auto: expected 80 iter records")
print("auto_shares: %d decision(s), last shares %s, speeds %s samples/s"
      % (len(dec), dec[-1]["shares"], dec[-1]["speed_sps"]))
PY
echo "auto_shares: ok"
