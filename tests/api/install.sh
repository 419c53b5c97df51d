#!/usr/bin/env bash
# install.sh — libpitstop as a user gets it: `cmake --install` into a temporary prefix, then
# examples/c_pitstop.c compiled with `pkg-config --cflags --libs pitstop` against the installed
# header and libpitstop.so (relocatable pitstop.pc), run; the "PITSTOP {json}" lines it prints
# among its own output are read by `pitstop parse -` (or, without parse, stripped and read by
# `pitstop summary --events`) and summarized: 75 iterations in 3 epochs of run c-toy. Also with
# PITSTOP_EVENTS=file. The library exports only the API. Skipped (77) without cc or pkg-config.
set -u
P=${PITSTOP:?}
SRC=${PIT_SOURCE_DIR:?}
B=${PIT_BINARY_DIR:?}
command -v pkg-config >/dev/null || { echo "no pkg-config: skipped"; exit 77; }
CC=$(command -v cc || command -v gcc) || { echo "no C compiler: skipped"; exit 77; }
PY=$(command -v /usr/bin/python3 || command -v python3) || { echo "no python3: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-install-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
cmake --install "$B" --prefix "$T/prefix" >"$T/install.log" 2>&1 || { echo "FAIL: install: $(tail -5 "$T/install.log")"; exit 1; }
[ -f "$T/prefix/share/pitstop/catalogs/aws.tsv" ] || { echo "FAIL: price catalog not installed"; fail=1; }
pc=$(find "$T/prefix" -name pitstop.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no pitstop.pc installed"; exit 1; }
[ -f "$T/prefix/include/pitstop/pitstop.h" ] || { echo "FAIL: header not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir pitstop)
[ -e "$libdir/libpitstop.so" ] || { echo "FAIL: libpitstop.so not in pkg-config's libdir '$libdir'"; exit 1; }
extra=()
nm -D "$libdir/libpitstop.so" | grep -q ' U __asan' && extra=(-fsanitize=address,undefined)
"$CC" "${extra[@]}" -Wall -Werror "$SRC/examples/c_pitstop.c" $(pkg-config --cflags --libs pitstop) -Wl,-rpath,"$libdir" \
  -o "$T/c_pitstop" 2>"$T/cc.err" || { echo "FAIL: compile: $(cat "$T/cc.err")"; exit 1; }
exported=$(nm -D --defined-only "$libdir/libpitstop.so" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort | tr '\n' ' ')
[ "$exported" = "pit_checkpoint pit_epoch_end pit_finish pit_init pit_init_to pit_iter_begin pit_iter_data pit_iter_end pit_last_error pit_set_batch pit_set_rank pit_validation " ] \
  && echo "ok: exports only the API" || { echo "FAIL: exported: $exported"; fail=1; }

check_summary() { # jsonl
  "$P" summary --events "$1" --format json >"$T/sum.json" 2>"$T/err" || { echo "FAIL: summary: $(cat "$T/err")"; return 1; }
  "$PY" - "$T/sum.json" <<'PYEOF'
import json, sys
r = [o for o in json.load(open(sys.argv[1])) if o["kind"] == "run"]
ok = len(r) == 1 and r[0]["name"] == "c-toy" and r[0]["iters"] == 75 and r[0]["epoch"]["n"] == 3 \
     and r[0]["validation"]["n"] == 3 and r[0]["config"]["batch"] == 16 and r[0]["data"]["n"] == 75 \
     and r[0]["tp"]["mean"] > 0 and r[0]["total_s"] > 0
print("ok: c-toy summarized" if ok else "FAIL: summary %s" % r)
sys.exit(0 if ok else 1)
PYEOF
}
"$T/c_pitstop" >"$T/out.txt" 2>"$T/err" || { echo "FAIL: run: $(cat "$T/err")"; exit 1; }
grep -q "^epoch 2 done" "$T/out.txt" || { echo "FAIL: the program's own output is missing"; fail=1; }
[ "$(grep -c '^PITSTOP {' "$T/out.txt")" = 83 ] || { echo "FAIL: expected 83 PITSTOP lines, got $(grep -c '^PITSTOP {' "$T/out.txt")"; fail=1; }
if "$P" parse --help >/dev/null 2>&1; then
  "$P" parse - <"$T/out.txt" >"$T/rec.jsonl" 2>"$T/err" || { echo "FAIL: parse: $(cat "$T/err")"; exit 1; }
else
  echo "note: pitstop parse is not in this build; stripping the prefix for summary --events"
  sed -n 's/^PITSTOP //p' "$T/out.txt" >"$T/rec.jsonl"
fi
check_summary "$T/rec.jsonl" || fail=1
PITSTOP_EVENTS="$T/ev.jsonl" "$T/c_pitstop" >"$T/out2.txt" || { echo "FAIL: run with PITSTOP_EVENTS"; exit 1; }
! grep -q PITSTOP "$T/out2.txt" && check_summary "$T/ev.jsonl" || { echo "FAIL: PITSTOP_EVENTS file"; fail=1; }
exit $fail
