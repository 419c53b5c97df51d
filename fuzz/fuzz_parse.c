/* fuzz_parse.c — libFuzzer harness for `pitstop parse` (docs/parse.md, "Fuzzing"):
 * arbitrary bytes go through the line parser (format auto, and one format chosen
 * by the first byte; "yaml" reads the bytes as one YAML timing document), through pit_record_parse as one JSON object, and through
 * the fast "%.9g". Differential checks abort on a mismatch: every record the
 * parser emits must format to the same bytes with pit_parse_json as with
 * pit_record_format, the fast JSON reader (pit_parse_json_record) must give
 * what pit_record_parse gives, and pit_parse_g9 must equal snprintf("%.9g").
 *
 * Built with -DPIT_FUZZ=ON under clang; tests/record/test_parse_corpus.c also
 * includes this file to replay fuzz/corpus in every build (under ASan in the
 * sanitizer build).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/parse.h"

struct fz {
  char *buf;
  size_t cap;
};

static void fz_check_format(struct fz *f, const struct pit_record *r) {
  int n = pit_record_format(r, &f->buf, &f->cap);
  size_t bound = pit_parse_json_bound(r);
  char *o = malloc(bound);
  if (!o)
    return;
  size_t m = pit_parse_json(r, o);
  if (n < 0 || m > bound || (size_t)n != m || memcmp(o, f->buf, m) != 0) {
    fprintf(stderr, "fuzz_parse: fast JSON differs:\n  %.*s  %.*s", n < 0 ? 0 : n, f->buf, (int)m, o);
    abort();
  }
  free(o);
}

static int fz_emit(void *ctx, const struct pit_record *r, struct pit_err *e) {
  (void)e;
  fz_check_format(ctx, r);
  return 0;
}

static void fz_warn(void *ctx, const struct pit_err *w) {
  (void)ctx;
  if (strncmp(w->msg, "fuzz:", 5) != 0) /* every message names the input */
    abort();
}

static void fz_lines(struct fz *f, enum pit_parse_format fmt, const uint8_t *data, size_t size) {
  struct pit_parser *p = NULL;
  struct pit_err e;
  if (pit_parser_new(&p, fmt, "fuzz", 0, "fuzz", fz_emit, fz_warn, f, &e))
    return;
  const char *s = (const char *)data, *end = s + size;
  if (fmt == PIT_PARSE_YAML) {
    pit_parser_yaml(p, s, size, &e);
    s = end;
  }
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    pit_parser_line(p, s, n, &e);
    s += n + (nl ? 1 : 0);
  }
  pit_parser_finish(p, &e);
  const struct pit_parse_stats *st = pit_parser_stats(p);
  if (st->known + st->skipped + st->malformed != st->lines)
    abort();
  pit_parser_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fz f = {0};
  fz_lines(&f, PIT_PARSE_AUTO, data, size);
  if (size > 0)
    fz_lines(&f, (enum pit_parse_format)(data[0] % PIT_PARSE_NFORMATS), data + 1, size - 1);

  /* the fast JSON reader must agree with pit_record_parse: same verdict, same record */
  struct pit_record r, q;
  struct pit_err e, e2;
  pit_record_init(&r);
  pit_record_init(&q);
  int a = pit_record_parse(&r, (const char *)data, size, &e);
  int b = pit_parse_json_record(&q, (const char *)data, size, &e2);
  if ((a == 0) != (b == 0))
    abort();
  if (a == 0) {
    fz_check_format(&f, &r);
    char *x = NULL, *y = NULL;
    size_t cx = 0, cy = 0;
    int nx = pit_record_format(&r, &x, &cx), ny = pit_record_format(&q, &y, &cy);
    if (nx != ny || memcmp(x, y, (size_t)(nx > 0 ? nx : 0)) != 0) {
      fprintf(stderr, "fuzz_parse: JSON readers differ:\n  %.*s  %.*s", nx, x, ny, y);
      abort();
    }
    free(x);
    free(y);
  }
  pit_record_release(&r);
  pit_record_release(&q);

  for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
    double v;
    memcpy(&v, data + i, sizeof v);
    char a[64], b[64];
    pit_parse_g9(v, a);
    snprintf(b, sizeof b, "%.9g", v);
    if (strcmp(a, b) != 0) {
      fprintf(stderr, "fuzz_parse: g9(%.17g) = %s, printf %s\n", v, a, b);
      abort();
    }
  }
  free(f.buf);
  return 0;
}
