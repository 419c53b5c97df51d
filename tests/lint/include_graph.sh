#!/usr/bin/env bash
# include_graph.sh — docs/layout.md's drawn module graph is the code's include graph (issue 27 item
# 9; tests/lint/include_graph.py says how each is read). It also shows it can fail: a copy of the
# tree in which util includes record's header must be refused, naming the edge.
set -u
SRC=${PIT_SOURCE_DIR:?}
/usr/bin/python3 "$SRC/tests/lint/include_graph.py" "$SRC" || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-incgraph-XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src" "$T/include" "$T/docs"
cp -r "$SRC/src/." "$T/src/" && cp -r "$SRC/include/." "$T/include/" && cp "$SRC/docs/layout.md" "$T/docs/"
printf '#include "pitstop/record.h"\n' > "$T/src/util/planted.c"
out=$(/usr/bin/python3 "$SRC/tests/lint/include_graph.py" "$T" 2>&1) &&
  { echo "FAIL: a planted util → record include was not caught"; exit 1; }
case "$out" in
*"util includes record"*"not downwards"* | *"util includes record"*) ;;
*) echo "FAIL: the planted include was refused for another reason: $out"; exit 1 ;;
esac
echo "ok: a planted util → record include is refused: $(echo "$out" | sed -n 2p)"
# the seams of the elastic run (issue 27 item 4): a policy that includes the controller's header, and the
# same edge drawn, are refused too (the drawing's layers make it point upwards)
rm "$T/src/util/planted.c"
printf '#include "pitstop/control.h"\n' > "$T/src/policy/planted.c"
out=$(/usr/bin/python3 "$SRC/tests/lint/include_graph.py" "$T" 2>&1) &&
  { echo "FAIL: a planted policy → control include was not caught"; exit 1; }
case "$out" in
*"policy includes control"*) ;;
*) echo "FAIL: the planted policy → control include was refused for another reason: $out"; exit 1 ;;
esac
sed -i 's/^\(layer [0-9]*  policy .*\)$/\1 control/' "$T/docs/layout.md"
out=$(/usr/bin/python3 "$SRC/tests/lint/include_graph.py" "$T" 2>&1) &&
  { echo "FAIL: a drawn policy → control edge (upwards) was not refused"; exit 1; }
case "$out" in
*"policy (layer "*") uses control (layer "*"): not downwards"*) ;;
*) echo "FAIL: the drawn policy → control edge was refused for another reason: $out"; exit 1 ;;
esac
echo "ok: a planted policy → control include is refused, drawn or not: $(echo "$out" | sed -n 2p)"
