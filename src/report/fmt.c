/* fmt.c — the report module's private value printers (fmt_impl.h): one
 * spelling of numbers, text cells and absent values for every printer.
 * Invariant: nothing but the FILE given is written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/record.h"
#include "report/fmt_impl.h"

void pit__jstr(FILE *f, const char *s) {
  char *q = s ? pit_json_quote(s) : NULL;
  fputs(q ? q : "null", f);
  free(q);
}

void pit__jdbl(FILE *f, double v) {
  if (isnan(v) || isinf(v))
    fputs("null", f);
  else
    fprintf(f, "%.17g", v);
}

void pit__csv_text(FILE *f, const char *s) {
  int quote = strpbrk(s, ",\"\n") != NULL;
  fputs(quote ? "\"" : "", f);
  for (; *s; s++)
    fputs(*s == '"' ? "\"\"" : (char[2]){*s, '\0'}, f);
  fputs(quote ? "\"" : "", f);
}

void pit__cdbl(FILE *f, double v) {
  if (!isnan(v) && !isinf(v))
    fprintf(f, "%.9g", v);
}

void pit__jkey(FILE *f, const char **open, int *first, const char *obj, const char *key) {
  if (*open && (!obj || strcmp(obj, *open) != 0)) {
    fputc('}', f);
    *open = NULL;
  }
  if (obj && !*open) {
    fprintf(f, "%s\"%s\":{", *first ? "" : ",", obj);
    *open = obj;
    *first = 1;
  }
  fprintf(f, "%s\"%s\":", *first ? "" : ",", key);
  *first = 0;
}

void pit__jclose(FILE *f, const char *open) { fputs(open ? "}}" : "}", f); }

const char *pit__secs(char *buf, size_t n, double v) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else if (v != 0 && fabs(v) < 0.1)
    snprintf(buf, n, "%.4gms", v * 1e3);
  else
    snprintf(buf, n, "%.4gs", v);
  return buf;
}
