#!/usr/bin/env bash
# threads_cpus.sh — `pitstop train` starts as many threads per rank as the
# CPUs it may run on (issue 12.7): bound to one CPU by taskset it starts 1 and
# its init record says "cpus":"0"; with more --threads than CPUs it warns; in a
# cgroup with a 40% CPU quota (as root, cgroup v1 or v2) the init record says
# "cpu_quota":0.4 and 1 thread. Skipped parts say so.
set -euo pipefail
: "${PITSTOP:?}"
tmp=$(mktemp -d)
cg=""
cleanup() {
  if [[ -n "$cg" && -d "$cg" ]]; then
    [[ -f "$cg/cgroup.procs" ]] && while read -r p; do echo "$p" > "${cg%/*}/cgroup.procs" 2>/dev/null || true; done < "$cg/cgroup.procs"
    rmdir "$cg" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
train() { "$PITSTOP" train --data synthetic --max-iters 2 --quiet --events "$tmp/ev.jsonl" "$@"; }
init_has() { grep '"type":"init"' "$tmp/ev.jsonl" | grep -q "$1" || fail "init record lacks $1: $(grep init "$tmp/ev.jsonl")"; }

if command -v taskset > /dev/null; then
  taskset -c 0 "$PITSTOP" train --data synthetic --max-iters 2 --quiet --events "$tmp/ev.jsonl" 2> "$tmp/err" \
    || fail "train under taskset: $(cat "$tmp/err")"
  init_has '"threads":1,'
  init_has '"cpus":"0"'
  test ! -s "$tmp/err" || fail "a warning with 1 thread on 1 CPU: $(cat "$tmp/err")"
  taskset -c 0 "$PITSTOP" train --data synthetic --max-iters 2 --quiet --threads 2 --events "$tmp/ev.jsonl" 2> "$tmp/err" \
    || fail "train --threads 2 under taskset"
  grep -q "warning: rank 0: 2 threads on 1 CPU" "$tmp/err" || fail "no warning for 2 threads on 1 CPU: $(cat "$tmp/err")"
else
  echo "skipped: taskset missing"
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the cgroup quota part needs root"
elif [[ -d /sys/fs/cgroup/cpu && -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]]; then
  cg=/sys/fs/cgroup/cpu/pit-test-$$
  mkdir "$cg" || { echo "skipped: cannot create $cg"; cg=""; }
  if [[ -n "$cg" ]]; then
    echo 100000 > "$cg/cpu.cfs_period_us"
    echo 40000 > "$cg/cpu.cfs_quota_us"
    bash -c "echo \$\$ > '$cg/cgroup.procs'; exec \"\$0\" train --data synthetic --max-iters 2 --quiet --events '$tmp/ev.jsonl'" \
      "$PITSTOP" || fail "train in the cgroup"
    init_has '"cpu_quota":0.4'
    init_has '"threads":1,'
  fi
elif [[ -f /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
  cg=/sys/fs/cgroup/pit-test-$$
  if mkdir "$cg" 2>/dev/null && echo "40000 100000" > "$cg/cpu.max" 2>/dev/null; then
    bash -c "echo \$\$ > '$cg/cgroup.procs'; exec \"\$0\" train --data synthetic --max-iters 2 --quiet --events '$tmp/ev.jsonl'" \
      "$PITSTOP" || fail "train in the cgroup"
    init_has '"cpu_quota":0.4'
    init_has '"threads":1,'
  else
    echo "skipped: cannot set cpu.max in $cg"
  fi
else
  echo "skipped: no cgroup cpu controller found"
fi
echo "threads_cpus: ok"
