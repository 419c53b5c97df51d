#!/usr/bin/env bash
# diffs.sh — the diffs of docs/python.md: each applies with `patch` to a copy of the unchanged client
# in ../shared/data/clients, the two that make a client resizable add at most 15 lines each
# (counted as `grep '^+'` less the `+++` header), the CPU adaptation is counted apart, and
# docs/python.md states the same counts. Needs no torch (skipped, 77, without the clients).
. "$PIT_SOURCE_DIR/tests/python/common.bash"
count() { grep '^+' "$DIFFS/$1" | grep -vc '^+++ '; }
patched_client pytorch-examples-dcgan dcgan.diff
patched_client pytorch-examples-ddp-tutorial ddp-tutorial.diff ddp-tutorial-cpu.diff
patched_client pytorch-examples-ddp-tutorial ddp-tutorial.diff
for f in "$T"/*/*.py; do "$PY" -m py_compile "$f" || fail "$f does not compile after the diffs"; done
doc="$PIT_SOURCE_DIR/docs/python.md"
for d in dcgan.diff ddp-tutorial.diff ddp-tutorial-cpu.diff; do
  k=$(count "$d")
  case $d in *-cpu.diff) ;; *) [ "$k" -le 15 ] || fail "$d adds $k lines (more than 15)" ;; esac
  grep -q "^| \`examples/diffs/$d\` | $k |" "$doc" || fail "docs/python.md does not say that $d adds $k lines"
  # the diff in the doc is the file itself
  "$PY" - "$doc" "$DIFFS/$d" << 'PYEOF' || fail "docs/python.md does not show $d as it is"
import sys
doc, diff = open(sys.argv[1]).read(), open(sys.argv[2]).read()
sys.exit(0 if "```diff\n" + diff + "```\n" in doc else 1)
PYEOF
  echo "$d: applies to the unchanged client, adds $k lines"
done
