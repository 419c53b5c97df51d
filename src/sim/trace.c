/* trace.c — spot availability traces: the Can't Be Late JSON files read as
 * they are, and a CSV for users' own traces (docs/simulate.md):
 *   time_s,itype,zone,available,spot_price_h      (header line required)
 *   0,p3.2xlarge,us-east-1a,1,0.918
 *   600,p3.2xlarge,us-east-1a,0,0.918
 * Times rise by one constant gap (the first difference); spot_price_h may be
 * empty. pit_trace_load_all reads a CSV of several zones (or types) as one
 * trace each, every series with its own constant gap.
 * Invariant: a loaded trace has n >= 1, gap_s > 0, every count >= 0;
 * on error the trace is left empty and the message names the file (:line).
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/sim.h"

void pit_trace_init(struct pit_trace *t) { memset(t, 0, sizeof *t); }

void pit_trace_release(struct pit_trace *t) {
  free(t->count);
  free(t->spot_price_h);
  pit_trace_init(t);
}

const char *pit_trace_kind_itype(const char *path) {
  static const struct { const char *kind, *itype; } kinds[] = {
      {"v100_1", "p3.2xlarge"}, {"v100_8", "p3.16xlarge"}, {"k80_1", "p2.xlarge"},
      {"k80_8", "p2.8xlarge"},  {"intel_64", "r5.16xlarge"}, {"c3-88", "c3-highcpu-88"}};
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strstr(base, kinds[i].kind))
      return kinds[i].itype;
  return NULL;
}

int pit_trace_max(const struct pit_trace *t) {
  int m = 0;
  for (int i = 0; i < t->n; i++)
    if (t->count[i] > m)
      m = t->count[i];
  return m;
}

int pit_trace_scale(struct pit_trace *t, int mul, int div, struct pit_err *e) {
  if (mul < 1 || div < 1)
    return pit_err_set(e, PIT_EARG, "trace '%s': a count scale of %d / %d (both must be >= 1)", t->path, mul, div);
  if ((int64_t)pit_trace_max(t) * mul / div > 1000000)
    return pit_err_set(e, PIT_EARG, "trace '%s': its counts x %d pass 10^6 nodes", t->path, mul);
  for (int i = 0; i < t->n; i++)
    t->count[i] = (int)((int64_t)t->count[i] * mul / div);
  return 0;
}

void pit_trace_stats(const struct pit_trace *t, double *mean, double *avail_frac) {
  double s = 0, a = 0;
  for (int i = 0; i < t->n; i++) {
    s += t->count[i];
    a += t->count[i] > 0;
  }
  *mean = t->n ? s / t->n : 0;
  *avail_frac = t->n ? a / t->n : 0;
}

static char *slurp(const char *path, size_t *len, struct pit_err *e) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    pit_err_errno(e, PIT_EIO, "cannot open trace '%s'", path);
    return NULL;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (PIT_GROW(buf, n + 65536 + 1, cap)) {
      free(buf);
      fclose(f);
      pit_err_set(e, PIT_ENOMEM, "out of memory reading trace '%s'", path);
      return NULL;
    }
    size_t k = fread(buf + n, 1, 65536, f);
    n += k;
    if (k == 0)
      break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    pit_err_set(e, PIT_EIO, "cannot read trace '%s'", path);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

static int load_json(struct pit_trace *t, const char *path, const char *text, struct pit_err *e) {
  cJSON *j = cJSON_Parse(text);
  if (!j)
    return pit_err_set(e, PIT_EFORMAT, "trace '%s': not valid JSON (truncated?) near byte %ld", path,
                       (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : 0));
  int rc = 0;
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
  cJSON *gap = meta ? cJSON_GetObjectItemCaseSensitive(meta, "gap_seconds") : NULL;
  cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
  if (!cJSON_IsNumber(gap))
    rc = pit_err_set(e, PIT_EFORMAT, "trace '%s': no number metadata.gap_seconds", path);
  else if (!(gap->valuedouble > 0) || !isfinite(gap->valuedouble))
    rc = pit_err_set(e, PIT_EFORMAT, "trace '%s': metadata.gap_seconds is %g (must be > 0)", path,
                     gap->valuedouble);
  else if (!cJSON_IsArray(data) || cJSON_GetArraySize(data) == 0)
    rc = pit_err_set(e, PIT_EFORMAT, "trace '%s': no ticks (\"data\" must be a non-empty array)", path);
  if (!rc) {
    t->gap_s = gap->valuedouble;
    t->n = cJSON_GetArraySize(data);
    t->count = malloc((size_t)t->n * sizeof *t->count);
    if (!t->count)
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory reading trace '%s'", path);
    int i = 0;
    for (cJSON *x = data->child; x && !rc; x = x->next, i++) {
      double v = cJSON_IsNumber(x) ? x->valuedouble : NAN;
      if (!(v >= 0) || v != floor(v) || v > 1e9)
        rc = pit_err_set(e, PIT_EFORMAT, "trace '%s': data[%d] is %s (counts are integers >= 0)", path, i,
                         cJSON_IsNumber(x) ? (v < 0 ? "negative" : "not an integer") : "not a number");
      else
        t->count[i] = (int)v;
    }
  }
  cJSON_Delete(j);
  const char *it = pit_trace_kind_itype(path);
  if (!rc && it)
    snprintf(t->itype, sizeof t->itype, "%s", it);
  return rc;
}

/* Splits line at commas into at most max fields (in place); returns the count. */
static int split_csv(char *line, char **f, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    if (n < max)
      f[n] = p;
    n++;
    char *c = strchr(p, ',');
    if (!c)
      break;
    *c = '\0';
    p = c + 1;
  }
  for (int i = 0; i < n && i < max; i++) { /* trim */
    while (isspace((unsigned char)*f[i]))
      f[i]++;
    size_t l = strlen(f[i]);
    while (l && isspace((unsigned char)f[i][l - 1]))
      f[i][--l] = '\0';
  }
  return n;
}

/* One CSV holding several (itype, zone) series: each becomes a trace, in the
 * order first seen; each series' times rise by its own constant gap. */
struct series {
  struct pit_trace t;
  double t0, tprev;
  size_t cap, pcap;
};

static int load_csv_all(const char *path, char *text, struct pit_trace **out, int *nout, struct pit_err *e) {
  struct series *g = NULL;
  size_t gcap = 0;
  int ng = 0, line = 0, rc = 0, header = 0;
  int ended_nl = strlen(text) > 0 && text[strlen(text) - 1] == '\n';
  for (char *ln = text, *next; ln && *ln && !rc; ln = next) {
    line++;
    next = strchr(ln, '\n');
    if (next)
      *next++ = '\0';
    size_t l = strlen(ln);
    if (l && ln[l - 1] == '\r')
      ln[--l] = '\0';
    if (l == 0 || ln[0] == '#')
      continue;
    char *f[6];
    int nf = split_csv(ln, f, 6);
    if (!header) {
      header = 1;
      if (nf < 4 || strcmp(f[0], "time_s") != 0 || strcmp(f[1], "itype") != 0 || strcmp(f[2], "zone") != 0 ||
          strcmp(f[3], "available") != 0 || (nf >= 5 && strcmp(f[4], "spot_price_h") != 0))
        rc = pit_err_set(e, PIT_EFORMAT,
                         "%s:%d: the header must be time_s,itype,zone,available[,spot_price_h]", path, line);
      continue;
    }
    double ts, cnt, price = NAN;
    if (nf < 4 || nf > 5)
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: %d fields, expected 4 or 5 (truncated?)", path, line, nf);
    else if (pit_parse_f64(f[0], &ts) || !isfinite(ts))
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: time_s '%s' is not a number", path, line, f[0]);
    else if (pit_parse_f64(f[3], &cnt) || cnt != floor(cnt) || cnt > 1e9)
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: available '%s' is not an integer", path, line, f[3]);
    else if (cnt < 0)
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: available is negative (%s)", path, line, f[3]);
    else if (nf == 5 && *f[4] && (pit_parse_f64(f[4], &price) || !(price >= 0) || !isfinite(price)))
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: spot_price_h '%s' is not a price >= 0", path, line, f[4]);
    else if (!*f[1])
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: no itype", path, line);
    if (rc)
      break;
    int k = 0;
    while (k < ng && (strcmp(g[k].t.itype, f[1]) != 0 || strcmp(g[k].t.zone, f[2]) != 0))
      k++;
    if (k == ng) {
      if (PIT_GROW(g, ng + 1, gcap)) {
        rc = pit_err_set(e, PIT_ENOMEM, "out of memory reading trace '%s'", path);
        break;
      }
      memset(&g[ng], 0, sizeof g[ng]);
      pit_trace_init(&g[ng].t);
      snprintf(g[ng].t.path, sizeof g[ng].t.path, "%s", path);
      snprintf(g[ng].t.itype, sizeof g[ng].t.itype, "%s", f[1]);
      snprintf(g[ng].t.zone, sizeof g[ng].t.zone, "%s", f[2]);
      g[ng].t0 = ts;
      ng++;
    } else {
      struct pit_trace *t = &g[k].t;
      double gap = ts - g[k].tprev;
      if (t->n == 1)
        t->gap_s = gap;
      if (!(gap > 0))
        rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: time_s %g does not rise in zone '%s' (gap %g s; gaps must be > 0)",
                         path, line, ts, t->zone, gap);
      else if (fabs(ts - g[k].t0 - t->gap_s * t->n) > 1e-6 * t->gap_s + 1e-9)
        rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: time_s %g is off zone '%s''s gap of %g s", path, line, ts, t->zone,
                         t->gap_s);
      if (rc)
        break;
    }
    struct series *q = &g[k];
    q->tprev = ts;
    if (PIT_GROW(q->t.count, q->t.n + 1, q->cap) || PIT_GROW(q->t.spot_price_h, q->t.n + 1, q->pcap)) {
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory reading trace '%s'", path);
      break;
    }
    q->t.count[q->t.n] = (int)cnt;
    q->t.spot_price_h[q->t.n] = price;
    q->t.n++;
  }
  if (!rc && !ended_nl && ng > 0)
    rc = pit_err_set(e, PIT_EFORMAT, "%s:%d: the last line has no newline (truncated?)", path, line);
  if (!rc && ng == 0)
    rc = pit_err_set(e, PIT_EFORMAT, "trace '%s': no ticks", path);
  for (int k = 0; k < ng && !rc; k++)
    if (!(g[k].t.n > 1 && g[k].t.gap_s > 0))
      rc = pit_err_set(e, PIT_EFORMAT, "trace '%s': zone '%s' has one tick, no gap (at least two rows)", path,
                       g[k].t.zone);
  struct pit_trace *ts_out = rc ? NULL : malloc((size_t)(ng > 0 ? ng : 1) * sizeof *ts_out);
  if (!rc && !ts_out)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory reading trace '%s'", path);
  for (int k = 0; k < ng; k++) {
    if (rc)
      pit_trace_release(&g[k].t);
    else
      ts_out[k] = g[k].t;
  }
  free(g);
  if (rc)
    return rc;
  *out = ts_out;
  *nout = ng;
  return 0;
}

int pit_trace_load_all(const char *path, struct pit_trace **out, int *n, struct pit_err *e) {
  *out = NULL;
  *n = 0;
  size_t len = 0;
  char *text = slurp(path, &len, e);
  if (!text)
    return e ? e->code : PIT_EIO;
  if (strlen(text) != len) {
    free(text);
    return pit_err_set(e, PIT_EFORMAT, "trace '%s': a NUL byte (not a text file)", path);
  }
  const char *p = text;
  while (isspace((unsigned char)*p))
    p++;
  int rc;
  if (*p == '{') {
    struct pit_trace *t = malloc(sizeof *t);
    if (!t) {
      free(text);
      return pit_err_set(e, PIT_ENOMEM, "out of memory reading trace '%s'", path);
    }
    pit_trace_init(t);
    snprintf(t->path, sizeof t->path, "%s", path);
    rc = load_json(t, path, text, e);
    if (rc) {
      pit_trace_release(t);
      free(t);
    } else {
      *out = t;
      *n = 1;
    }
  } else {
    rc = load_csv_all(path, text, out, n, e);
  }
  free(text);
  return rc;
}

/* One trace: the file must hold exactly one (itype, zone) series. */
int pit_trace_load(struct pit_trace *t, const char *path, struct pit_err *e) {
  pit_trace_init(t);
  struct pit_trace *all = NULL;
  int n = 0;
  int rc = pit_trace_load_all(path, &all, &n, e);
  if (rc == 0 && n != 1)
    rc = pit_err_set(e, PIT_EFORMAT, "trace '%s': %d (itype, zone) series (%s %s, %s %s, ...): one trace per file "
                     "here (a region file goes to --trace of pitstop simulate's fleets)", path, n, all[0].itype,
                     all[0].zone, all[1].itype, all[1].zone);
  if (rc == 0)
    *t = all[0];
  else
    for (int k = 0; k < n; k++)
      pit_trace_release(&all[k]);
  free(all);
  return rc;
}
