#!/usr/bin/env bash
# one_accounting.sh — time becomes money in src/catalog only (issue 27): outside src/catalog/,
# no line of src/ multiplies a price by anything (price_h, spot_price_h, price, a price per
# second `price / 3600`, a product with a parenthesised price) unless it says why with a
# marker comment on the same line: `/* forecast: ... */` or `/* forecast */` (a simulated or predicted clock, raw
# seconds × price) or `/* rate: ... */` (a price per hour summed over nodes, no time in it).
# Money spent on real nodes goes through src/catalog/cost.c (pit_node_cost, pit_catalog_cost,
# pit_runlog_cost: billed seconds). Comments are not code: a price named in a comment is not
# flagged. The test also checks that it catches planted offenders, so it cannot pass by
# matching nothing.
set -u
SRC=${PIT_SOURCE_DIR:?}
id='([A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?(->|\.))*'
pat="price[A-Za-z_]*(\[[^]]*\])?\)* \* |\* \(?${id}[A-Za-z_]*price|\* \([^()]*price|price[A-Za-z_]*(\[[^]]*\])?\)* / 3600"
scan() { # FILE|DIR...: unmarked price products, comments stripped
  grep -rnHE --include='*.c' "$pat" "$@" | grep -vE '/\* (forecast|rate)[: ]' |
    while IFS= read -r hit; do
      code=${hit#*:*:}
      code=$(printf '%s' "$code" | sed -E 's#/\*.*\*/##g; s#//.*$##; s#^[[:space:]]*(/?\*).*$##')
      printf '%s' "$code" | grep -qE "$pat" && printf '%s\n' "$hit"
    done
}
found=$(cd "$SRC" && scan src | grep -v '^src/catalog/')
if [ -n "$found" ]; then
  echo "FAIL: time × price outside src/catalog (bill it through pit_node_cost/pit_runlog_cost, or mark a forecast):"
  echo "$found"
  exit 1
fi
echo "marked: $(cd "$SRC" && grep -rnE --include='*.c' '/\* (forecast|rate)[: ]' src | wc -l) lines ($(cd "$SRC" && grep -rlE --include='*.c' '/\* (forecast|rate)[: ]' src | tr '\n' ' '))"
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-money-XXXXXX")
trap 'rm -rf "$T"' EXIT
cat > "$T/bad.c" << 'C'
double a(void) { return n->price_h * secs / 3600.0; }
double b(void) { return secs * t->spot_price_h; }
double c(void) { return price / 3600.0 * rest_s; }
double d(void) { return rest_s / 3600 * (k ? in.price_h : in.spot_price_h); }
double e(void) { return span * (po - v->spot_price_h[p]) * x; }
double f(void) { return st->open[k].price * (r->t - st->open[k].t) / 3600.0; }
C
cat > "$T/ok.c" << 'C'
/* Σ nodes × price_h × seconds, in a comment */
 * price_h * secs in a comment block
double a(void) { return pit_node_cost(t, n->price_h, secs); }
double b(void) { return price * dt / 3600.0; /* forecast: simulated clock */ }
double c(void) { p += m->nodes * t->price_h; /* rate: $/h, no time */ }
double d(void) { return r->sps * 3600 / r->price_h; }
qsort(avail, (size_t)na, sizeof *avail, cmp_price); /* price first in the struct */
C
[ "$(scan "$T/bad.c" | wc -l)" = 6 ] || { echo "FAIL: planted offenders not all found: $(scan "$T/bad.c")"; exit 1; }
[ -z "$(scan "$T/ok.c")" ] || { echo "FAIL: allowed lines flagged: $(scan "$T/ok.c")"; exit 1; }
echo "ok: no time × price outside src/catalog except marked forecasts and rates"
