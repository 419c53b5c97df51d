#!/usr/bin/env bash
# bench/data-load/init_ab.sh BEFORE AFTER [REPS] [DATA [DATA_DIR]] — two pitstop binaries
# (e.g. main's build and a branch's) side by side on `train --model cnn --data DATA`
# (default fashion-mnist; --data-dir DATA_DIR when given), runs alternated:
#   1. REPS (default 5) one-iteration runs each: the init record's init_s and
#      /usr/bin/time's wall, user, sys and max RSS; then the medians;
#   2. one 200-iteration run each (alternated, twice): median step_s and data_s (the
#      gather of the batch) of the iteration records.
# IDLE=S (environment): sleep S seconds before each one-iteration run (on a VM that hands
# memory idle for a few seconds back to the host, touching fresh pages is then slow).
# Prints `uptime` first: compare only figures taken under the same load.
set -euo pipefail
before=${1:?usage: init_ab.sh BEFORE_PITSTOP AFTER_PITSTOP [REPS] [DATA]}
after=${2:?usage: init_ab.sh BEFORE_PITSTOP AFTER_PITSTOP [REPS] [DATA]}
reps=${3:-5}
data=${4:-fashion-mnist}
datadir=()
[ -n "${5:-}" ] && datadir=(--data-dir "$5")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
common=(train --model cnn --data "$data" "${datadir[@]}" --batch-size 64 --no-validation --quiet)
uptime
printf '%-6s %3s %8s %8s %8s %8s %9s\n' side run init_s wall_s user_s sys_s maxrss_kb
for ((r = 0; r < reps; r++)); do
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    ev=$tmp/$side-$r.jsonl
    sleep "${IDLE:-0}"
    /usr/bin/time -o "$tmp/time" -f "%e %U %S %M" "$bin" "${common[@]}" --max-iters 1 \
      --events "$ev" > /dev/null
    init=$(jq -r 'select(.type == "init") | .init_s' "$ev")
    read -r wall user sys rss < "$tmp/time"
    printf '%-6s %3d %8.3f %8.2f %8.2f %8.2f %9d\n' "$side" "$r" "$init" "$wall" "$user" "$sys" "$rss"
    echo "$init $wall $user $sys $rss" >> "$tmp/$side.tsv"
  done
done
for side in before after; do
  printf '%-6s med %8.3f %8.2f %8.2f %8.2f %9d\n' "$side" \
    "$(cut -d' ' -f1 "$tmp/$side.tsv" | median)" "$(cut -d' ' -f2 "$tmp/$side.tsv" | median)" \
    "$(cut -d' ' -f3 "$tmp/$side.tsv" | median)" "$(cut -d' ' -f4 "$tmp/$side.tsv" | median)" \
    "$(cut -d' ' -f5 "$tmp/$side.tsv" | median)"
done
uptime
printf '%-6s %3s %12s %12s  (200 iterations, medians)\n' side run step_s data_s
for r in 0 1; do
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    ev=$tmp/$side-steps-$r.jsonl
    "$bin" "${common[@]}" --max-iters 200 --events "$ev" > /dev/null
    printf '%-6s %3d %12.6f %12.6f\n' "$side" "$r" \
      "$(jq -r 'select(.type == "iter") | .step_s' "$ev" | median)" \
      "$(jq -r 'select(.type == "iter") | .data_s' "$ev" | median)"
  done
done
uptime
