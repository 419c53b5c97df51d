#!/usr/bin/env bash
# python.sh — examples/python_pitstop.py (the PITSTOP line protocol from Python) prints records that
# `pitstop parse -` reads without a malformed line, and `pitstop summary` finds its 60 iterations in
# 3 epochs. Without `pitstop parse` in the build, the prefix is stripped with sed and the lines go
# straight to `pitstop summary --events` (noted in the output). Skipped (77) without python3.
set -u
P=${PITSTOP:?}
SRC=${PIT_SOURCE_DIR:?}
PY=$(command -v /usr/bin/python3 || command -v python3) || { echo "no python3: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-py-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
"$PY" "$SRC/examples/python_pitstop.py" >"$T/out.txt" || { echo "FAIL: the example failed"; exit 1; }
[ "$(grep -c '^PITSTOP {' "$T/out.txt")" = 65 ] || { echo "FAIL: expected 65 PITSTOP lines"; fail=1; }
if "$P" parse --help >/dev/null 2>&1; then
  "$P" parse - <"$T/out.txt" >"$T/rec.jsonl" 2>"$T/err" || { echo "FAIL: parse: $(cat "$T/err")"; exit 1; }
  grep -q " 0 malformed" "$T/err" || { echo "FAIL: parse reported malformed lines: $(cat "$T/err")"; fail=1; }
else
  echo "note: pitstop parse is not in this build; checking the lines with summary --events after stripping the prefix"
  sed -n 's/^PITSTOP //p' "$T/out.txt" >"$T/rec.jsonl"
fi
"$P" summary --events "$T/rec.jsonl" --format json >"$T/sum.json" 2>"$T/err" || { echo "FAIL: summary: $(cat "$T/err")"; exit 1; }
"$PY" - "$T/sum.json" <<'PYEOF' || fail=1
import json, sys
runs = [o for o in json.load(open(sys.argv[1])) if o["kind"] == "run"]
ok = len(runs) == 1 and runs[0]["name"] == "py-toy" and runs[0]["iters"] == 60 and runs[0]["epoch"]["n"] == 3 \
     and runs[0]["config"]["batch"] == 8 and runs[0]["tp"]["mean"] is not None and runs[0]["total_s"] > 0
print("ok: py-toy summarized" if ok else "FAIL: summary %s" % runs)
sys.exit(0 if ok else 1)
PYEOF
exit $fail
