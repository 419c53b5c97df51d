#!/usr/bin/env bash
# profile_course.sh — `pitstop profile --from-db` on a real course run (issue 15's must-show, the
# part the stored logs allow): the delucca DCGAN ativ-7 m5.large job (two ranks' logs, batch 32 a
# rank) parsed into a store; its row must agree with the arithmetic done by hand in docs/decide.md
# ("Measured"): t_p the mean of the steady iteration times (and the course's own summary,
# normalized/iteration-time.csv: 1.3615 s), samples/s = 64 / t_p, samples per dollar = samples/s ×
# 3600 / $0.096 (catalogs/aws.tsv). Skipped (77) when ../shared/data is not beside the source tree.
set -euo pipefail
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
D=$PIT_SOURCE_DIR/../shared/data/delucca-workspaces-Distributed-DCGAN/ativ-7-exp-1
if [ ! -d "$D/m5.large" ]; then
  echo "skipped: no course data at $D"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CAT=$PIT_SOURCE_DIR/catalogs/aws.tsv
"$PITSTOP" parse --quiet --job-per-dir --catalog "$CAT" --db "$T/course.db" "$D"/m5.large/*.out
"$PITSTOP" parse --quiet --job-per-dir --catalog "$CAT" "$D"/m5.large/*.out > "$T/course.jsonl"
out=$("$PITSTOP" profile --from-db "$T/course.db" --catalog "$CAT" --epochs 1)
echo "$out"
row=$(echo "$out" | grep '^\* m5\.large') || fail "no chosen m5.large row"
python3 - "$row" "$T/course.jsonl" "$D/normalized/iteration-time.csv" << 'PYEOF'
import csv, json, re, statistics, sys
row, recs, summary = sys.argv[1], sys.argv[2], sys.argv[3]
f = row.split()
tp, sps, spd = float(f[2]), float(f[6]), float(f[7])
# by hand: the course's own average iteration time of m5.large, and ours from the records
course = [float(r["average"]) for r in csv.DictReader(open(summary)) if r["instance_type"] == "m5.large"][0]
times = [r["step_s"] for r in map(json.loads, open(recs)) if r["type"] == "iter" and r.get("rank", 0) == 0]
mean = statistics.mean(times[len(times) // 10:])  # the warm-up, generously, left out
assert abs(tp - course) / course < 0.005, f"t_p {tp} s, the course's own average {course} s"
assert abs(tp - mean) / mean < 0.01, f"t_p {tp} s, the mean of the records' iteration times {mean} s"
assert abs(sps - 64 / tp) / sps < 0.002, f"samples/s {sps}, 64 / t_p = {64 / tp}"
assert abs(spd - sps * 3600 / 0.096) / spd < 0.002, f"samples per dollar {spd}, by hand {sps * 3600 / 0.096}"
print(f"m5.large: t_p {tp} s (course average {course:.4f}, records' mean {mean:.4f}), {sps} samples/s = 64 / t_p, "
      f"{spd:.4g} samples/$ = that x 3600 / $0.096: the docs' hand arithmetic holds")
PYEOF
