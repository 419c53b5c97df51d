#!/usr/bin/env bash
# train_roundtrip.sh — the round trip of issue 4 with real records:
# `pitstop train --events F --db D` → `pitstop summary --db D --format json`,
# checked against the statistics tests/store/summary_check.py computes
# independently (Python stdlib) from F; and summary from F itself must print
# the same JSON. Exit 77 (skipped) only while `pitstop train` is not built.
set -euo pipefail
: "${PITSTOP:?}" "${PIT_SOURCE_DIR:?}"
unset OPENBLAS_CORETYPE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
help=$("$PITSTOP" train --help 2>&1 || true)
if [[ "$help" == *"not part of this build"* ]]; then
  echo "pitstop train is not part of this build: skipped"
  exit 77
fi
"$PITSTOP" train --model cnn --data synthetic --max-iters 60 --events "$tmp/ev.jsonl" --db "$tmp/d.db" \
  > "$tmp/train.out" 2> "$tmp/train.err" || { cat "$tmp/train.err"; exit 1; }
test "$(grep -cE '"type" *: *"iter"' "$tmp/ev.jsonl")" -eq 60
"$PITSTOP" summary --db "$tmp/d.db" --format json > "$tmp/db.json"
"$PITSTOP" summary --events "$tmp/ev.jsonl" --format json > "$tmp/ev.json"
# the file holds times to 9 significant digits, the store what train measured
/usr/bin/python3 "$PIT_SOURCE_DIR/tests/store/summary_check.py" --rel 1e-6 "$tmp/ev.jsonl" "$tmp/db.json"
/usr/bin/python3 "$PIT_SOURCE_DIR/tests/store/summary_check.py" "$tmp/ev.jsonl" "$tmp/ev.json"
# the run is listed with its configuration
/usr/bin/python3 - "$tmp/db.json" <<'PY'
import json, sys
runs = [o for o in json.load(open(sys.argv[1])) if o["kind"] == "run"]
assert len(runs) == 1, runs
r = runs[0]
assert r["iters"] == 60 and r["config"]["model"] == "cnn", r["config"]
assert r["tp"]["mean"] is not None and r["tp"]["mean"] > 0
print("train round trip: t_p = %.6g s [%.6g, %.6g], warm-up %d, slowest rank %s" % (
    r["tp"]["mean"], r["tp"]["lo"] or float("nan"), r["tp"]["hi"] or float("nan"), r["warmup"], r["slow_rank"]))
PY
echo "train_roundtrip: ok"
