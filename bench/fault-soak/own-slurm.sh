#!/usr/bin/env bash
# bench/fault-soak/own-slurm.sh — bench/fault-soak/own.py --slurm on a Slurm of its own on this machine
# (tests/control/slurm_up.bash: its own munged, slurmctld and two slurmd n1 and n2, one CPU each),
# each node of the run a one-node allocation (`pitstop run --provider slurm`), one torchrun per
# allocation as an srun step. The faults and checks are own.py's, with scancel and down beside the
# four. Needs root and Debian's slurmctld, slurmd, slurm-client, munge; its options are own.py's.
#   ./bench/fault-soak/own-slurm.sh --trials 10 --seed 100
#   ./bench/fault-soak/own-slurm.sh --kinds scancel --faults 3 --trials 4 --seed 300
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
if [[ $(id -u) -ne 0 ]]; then
  echo "own-slurm: needs root (slurmd, munged): skipped"
  exit 77
fi
. "$here/tests/control/slurm_up.bash"
missing=$(slurm_missing)
[ -z "$missing" ] || { echo "own-slurm: $missing not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'slurm_down "$tmp"; rm -rf "$tmp"' EXIT
slurm_up "$tmp" || { echo "own-slurm: the Slurm nodes are not idle" >&2; exit 1; }
export OMP_NUM_THREADS=1
/usr/bin/python3 "$here/bench/fault-soak/own.py" --slurm "$@"
