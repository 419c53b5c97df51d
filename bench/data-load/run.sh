#!/usr/bin/env bash
# bench/data-load/run.sh [REPS] — Fashion-MNIST load + preprocessing, pitstop vs a PyTorch
# reference (ref.py, 1 thread), alternated REPS times (default 5) per configuration; prints
# the medians, the ratio torch/pitstop (>1: pitstop faster) and both sides' mean/sd (equal
# when the preprocessing is the same). Needs the bench-data-load target:
#   cmake --build build --target bench-data-load
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BENCH_BIN:-$here/../../build/bench-data-load}
reps=${1:-5}
[ -x "$bin" ] || { echo "run.sh: build bench-data-load first ($bin)" >&2; exit 1; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
printf '%-34s %10s %10s %7s  %s\n' configuration pitstop_s torch_s ratio "mean/sd pitstop | torch"
for cfg in "" "--train 0" "--image-size 32 --gan" "--image-size 64 --gan" \
           "--image-size 32 --channels 3 --gan"; do
  p=(); t=()
  for ((r = 0; r < reps; r++)); do
    pl=$("$bin" $cfg); tl=$(/usr/bin/python3 "$here/ref.py" $cfg)
    p+=("$(echo "$pl" | field load_s)"); t+=("$(echo "$tl" | field load_s)")
  done
  pm=$(printf '%s\n' "${p[@]}" | median); tm=$(printf '%s\n' "${t[@]}" | median)
  printf '%-34s %10.3f %10.3f %7.2f  %s/%s | %s/%s\n' "${cfg:-native}" "$pm" "$tm" \
    "$(awk -v a="$tm" -v b="$pm" 'BEGIN{print a/b}')" \
    "$(echo "$pl" | field mean)" "$(echo "$pl" | field sd)" \
    "$(echo "$tl" | field mean)" "$(echo "$tl" | field sd)"
done
