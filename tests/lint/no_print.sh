#!/usr/bin/env bash
# no_print.sh — the library never prints: outside src/cli/ no source writes to
# stdout or stderr (printf, puts, putchar, perror, vprintf, or fprintf / fputs /
# fputc / putc / vfprintf / fwrite / fflush naming stdout or stderr).
# Writing to a FILE the caller gave (a gnuplot script, --help text) and
# snprintf into a buffer are fine. The test also checks that it catches a
# planted offender, so it cannot pass by matching nothing.
set -u
SRC=${PIT_SOURCE_DIR:?}
pat='(^|[^a-z_])(printf|puts|putchar|perror|vprintf)[[:space:]]*\(|(fprintf|vfprintf|fputs|fputc|putc|fwrite|fflush)[[:space:]]*\([^;]*\b(stdout|stderr)\b'
scan() { grep -rnHE --include='*.c' --include='*.h' "$pat" "$@" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)'; }
found=$(cd "$SRC" && scan src --exclude-dir=cli)
if [ -n "$found" ]; then
  echo "FAIL: the library writes to stdout/stderr (only src/cli/ may):"
  echo "$found"
  exit 1
fi
# the pattern catches each forbidden form and spares the allowed ones
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-noprint-XXXXXX")
trap 'rm -rf "$T"' EXIT
printf '%s\n' 'printf("x");' '  fprintf(stderr, "x");' 'fputs("x", stdout);' 'perror("x");' 'fputc(10, stderr);' \
  'puts("x");' 'fflush(stderr);' >"$T/bad.c"
printf '%s\n' 'snprintf(b, n, "x");' 'fprintf(f, "plot %s", x);' 'fputs(s, g->f);' '/* printf("x") in a comment */' >"$T/ok.c"
[ "$(scan "$T/bad.c" | wc -l)" = 7 ] || { echo "FAIL: planted offenders not all found: $(scan "$T/bad.c")"; exit 1; }
[ -z "$(scan "$T/ok.c")" ] || { echo "FAIL: allowed writes flagged: $(scan "$T/ok.c")"; exit 1; }
echo "ok: no printing outside src/cli/"
