/* parse_json.c — the JSON family of `pitstop parse`: pitstop's own JSON Lines
 * ({...} at the line start) and `PITSTOP {json}` lines inside any program's
 * output. The object is read by pit_record_parse (docs/records.md).
 *
 * Invariant: a marked line or a bare object naming a "type" that fails to parse
 * is malformed; a bare {...} line without "type" is someone else's JSON (unknown).
 */
#include <stdio.h>
#include <string.h>

#include "record/parse_impl.h"

static int names_type(const char *s, const char *end) {
  return PL_FIND(s, end, "\"type\"") != NULL;
}

int pit_pl_json(struct pit_parser *p, const char *s, const char *end, int marked, struct pit_err *e) {
  while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  struct pit_err le;
  pit_err_clear(&le);
  if (pit_record_parse(&p->json, s, (size_t)(end - s), &le) != 0) {
    if (!marked && !names_type(s, end))
      return PL_UNKNOWN;
    snprintf(p->reason, sizeof p->reason, "%.200s", le.msg);
    return PL_BAD;
  }
  if (p->force_run || !p->json.run[0])
    memcpy(p->json.run, p->run, sizeof p->run);
  int rc = pit_pl_flush(p, e);
  if (!rc)
    rc = pit_pl_emit(p, &p->json, e);
  pit_record_release(&p->json);
  return rc ? rc : PL_RECORD;
}
