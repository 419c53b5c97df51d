#!/usr/bin/env bash
# no_static_state.sh — no function-local static state in the library (issue 27): outside src/cli/,
# no `static` variable is declared inside a function body (an indented `static` that is not
# `static const` data or a `static inline` function), so that pit_run, pit_elastic_run,
# pit_replay_events and the rest are reentrant. File-scope statics (functions, tables) are fine.
# The test also checks that it catches a planted offender, so it cannot pass by matching nothing.
set -u
SRC=${PIT_SOURCE_DIR:?}
scan() { grep -rnHE --include='*.c' '^[[:space:]]+static[[:space:]]' "$@" | grep -vE ':[[:space:]]+static[[:space:]]+(const|inline)[[:space:]]'; }
found=$(cd "$SRC" && scan src --exclude-dir=cli)
if [ -n "$found" ]; then
  echo "FAIL: function-local static state in the library (make it automatic, a field, or the caller's buffer):"
  echo "$found"
  exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-nostatic-XXXXXX")
trap 'rm -rf "$T"' EXIT
printf '%s\n' 'int f(void) {' '  static struct big b; /* large */' '  static char buf[64];' '	static int n;' '}' > "$T/bad.c"
printf '%s\n' 'static int g(void);' 'int f(void) {' '  static const char *const names[] = {"a"};' '}' > "$T/ok.c"
[ "$(scan "$T/bad.c" | wc -l)" = 3 ] || { echo "FAIL: planted offenders not all found: $(scan "$T/bad.c")"; exit 1; }
[ -z "$(scan "$T/ok.c")" ] || { echo "FAIL: allowed statics flagged: $(scan "$T/ok.c")"; exit 1; }
echo "ok: no function-local static state outside src/cli/"
