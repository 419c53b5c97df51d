#!/usr/bin/env bash
# local_cgroup.sh — the local provider puts EVERY node in a cgroup of its own, a full-speed
# type too (issue 15: a full node outside any cgroup competes with the whole machine while a
# quota node gets its share, so under load the emulated speeds invert): a local-1 node's
# cgroup has a CPU limit of its cpus × 100% and the raised weight, a local-0.4 node's 40%;
# the workload's process is inside it, pinned to the node's CPU; every cgroup is gone after
# the run. Skipped (77) without root or a cgroup v1 cpu controller.
set -euo pipefail
. "$PIT_SOURCE_DIR/tests/train/mpi_env.bash" # fail(), PY
CG=/sys/fs/cgroup/cpu
if [ "$(id -u)" != 0 ] || [ ! -w "$CG/cgroup.procs" ] || [ ! -e "$CG/cpu.cfs_quota_us" ]; then
  echo "skipped: needs root and a cgroup v1 cpu controller"
  exit 77
fi
T=$(mktemp -d)
trap 'for d in $CG/pitstop.tcg*; do [ -d "$d" ] && rmdir "$d" 2> /dev/null; done; rm -rf "$T"' EXIT
for ty in local-1 local-0.4; do
  id=tcg${ty//./_}
  "$PITSTOP" run --catalog "$PIT_SOURCE_DIR/catalogs/local.tsv" --checkpoint-dir "$T/$ty" --run "$id" --nodes "$ty:1" --quiet \
    -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" 5 "$T/$ty.txt" > "$T/$ty.out" 2> "$T/$ty.err" || fail "$ty: the run failed: $(cat "$T/$ty.err")"
  read -r cg quota period shares cpus < "$T/$ty.txt"
  case "$cg" in /pitstop.$id.*) ;; *) fail "$ty: the workload ran in cgroup '$cg', not the node's" ;; esac
  want=$([ "$ty" = local-1 ] && echo 10000 || echo 4000)
  [ "$period" = 10000 ] && [ "$quota" = "$want" ] || fail "$ty: CPU limit $quota/$period, expected $want/10000 (a 10 ms period)"
  [ "$shares" = 4096 ] || fail "$ty: cpu.shares $shares, expected 4096 (docs/run.md)"
  [ "$(echo "$cpus" | tr ',' '\n' | wc -l)" = 1 ] || fail "$ty: pinned to CPUs $cpus, expected one"
  [ ! -d "$CG$cg" ] || fail "$ty: the cgroup $CG$cg is left behind"
  echo "$ty: cgroup $cg, limit $quota/$period, shares $shares, CPU $cpus; removed after the run"
done
