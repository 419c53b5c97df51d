#!/usr/bin/env bash
# run_foreign.sh — `pitstop run` on a program that knows nothing of pitstop: its log lines (the
# course DCGAN format) are read live through pitstop parse's readers, so it is measured (steps,
# t_p) while it runs; a schedule that would resize it only recommends (a decision record of kind
# "recommend"), and the report says it cannot be resized without losing work.
set -euo pipefail
PY=/usr/bin/python3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
cat > "$T/cat.tsv" << 'CAT'
itype      vcpus  cpus  cpu_quota  price_h  billing_s  min_s
local-1    1      1     -          0.10     1          0
CAT
"$PITSTOP" run --catalog "$T/cat.tsv" --checkpoint-dir "$T/r" --run tf --schedule 20:2 \
  -- "$PY" "$PIT_SOURCE_DIR/tests/control/fake/dcgan_log.py" 60 \
  > "$T/out.txt" 2> "$T/err.txt" || fail "the run failed: $(cat "$T/err.txt")"
grep -q "resized without losing work" "$T/out.txt" || fail "the report does not say it: $(cat "$T/out.txt")"
grep -q "only recommended" "$T/err.txt" || fail "no recommendation said: $(cat "$T/err.txt")"
"$PY" - "$T/r/events.jsonl" << 'PYEOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
its = [x for x in r if x["type"] == "iter"]
assert len(its) == 60 and {x["gen"] for x in its} == {0}, (len(its), {x["gen"] for x in its})
assert all(abs(x["step_s"] - 0.0101) < 1e-9 for x in its)
dec = [x for x in r if x["type"] == "decision"]
assert len(dec) == 1 and dec[0]["detail"]["what"] == "recommend", dec
assert dec[0]["detail"]["alternatives"][0]["membership"] == "local-1:2"
print("foreign workload: 60 steps measured from its log, one recommendation, never resized")
PYEOF
