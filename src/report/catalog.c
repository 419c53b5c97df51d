/* catalog.c — instance-type price catalogs (catalogs/aws.tsv and the like): one type per
 * line, "itype vcpus price_h billing_s min_s", '#' comment lines. Invariant: a
 * loaded catalog has at least one type, every price is > 0 and finite,
 * billing_s > 0, min_s >= 0, and no type appears twice. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/report.h"

static int parse_line(struct pit_itype *t, char *line, const char *path, long ln, struct pit_err *e) {
  char *f[6];
  int nf = 0;
  for (char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
    if (nf == 6)
      break;
    f[nf++] = tok;
  }
  if (nf != 5)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: expected 5 fields (itype vcpus price_h billing_s min_s), found %d",
                       path, ln, nf);
  int64_t vcpus;
  if (strlen(f[0]) >= sizeof t->name)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: instance type name too long", path, ln);
  snprintf(t->name, sizeof t->name, "%s", f[0]);
  if (pit_parse_i64(f[1], &vcpus) || vcpus < 1 || vcpus > 1 << 20)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: vcpus '%s' is not a positive integer", path, ln, f[1]);
  t->vcpus = (int)vcpus;
  if (pit_parse_f64(f[2], &t->price_h) || !isfinite(t->price_h) || t->price_h <= 0)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: price_h '%s' is not a positive number", path, ln, f[2]);
  if (pit_parse_f64(f[3], &t->billing_s) || !isfinite(t->billing_s) || t->billing_s <= 0)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: billing_s '%s' is not a positive number", path, ln, f[3]);
  if (pit_parse_f64(f[4], &t->min_s) || !isfinite(t->min_s) || t->min_s < 0)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: min_s '%s' is not a number >= 0", path, ln, f[4]);
  return 0;
}

int pit_catalog_load(struct pit_catalog *c, const char *path, struct pit_err *e) {
  memset(c, 0, sizeof *c);
  FILE *f = fopen(path, "r");
  if (!f)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open catalog '%s'", path);
  char *line = NULL;
  size_t cap = 0;
  long ln = 0;
  int rc = 0, ntypes_cap = 0;
  while (!rc && getline(&line, &cap, f) >= 0) {
    ln++;
    char *p = line + strspn(line, " \t\r\n");
    if (*p == '\0' || *p == '#')
      continue;
    if (c->n == ntypes_cap) {
      ntypes_cap = ntypes_cap ? 2 * ntypes_cap : 32;
      struct pit_itype *t = realloc(c->types, sizeof *t * (size_t)ntypes_cap);
      if (!t) {
        rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
        break;
      }
      c->types = t;
    }
    rc = parse_line(&c->types[c->n], p, path, ln, e);
    if (!rc && pit_catalog_find(c, c->types[c->n].name))
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%ld: instance type '%s' listed twice", path, ln, c->types[c->n].name);
    if (!rc)
      c->n++;
  }
  if (!rc && ferror(f))
    rc = pit_err_errno(e, PIT_EIO, "cannot read catalog '%s'", path);
  if (!rc && c->n == 0)
    rc = pit_err_set(e, PIT_EFORMAT, "catalog '%s' lists no instance type", path);
  free(line);
  fclose(f);
  if (rc)
    pit_catalog_release(c);
  return rc;
}

const struct pit_itype *pit_catalog_find(const struct pit_catalog *c, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->types[i].name, name) == 0)
      return &c->types[i];
  return NULL;
}

void pit_catalog_release(struct pit_catalog *c) {
  free(c->types);
  memset(c, 0, sizeof *c);
}

double pit_itype_billed_s(const struct pit_itype *t, double secs) {
  double s = secs < t->min_s ? t->min_s : secs;
  return ceil(s / t->billing_s - 1e-9) * t->billing_s;
}
