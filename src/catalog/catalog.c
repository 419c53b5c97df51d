/* catalog.c — loading instance-type catalogs by their header's column names:
 * pitstop TSV, the old positional aws.tsv, SkyPilot's vms.csv (read with
 * libcsv). Formats and units in include/pitstop/catalog.h.
 *
 * Invariants: a loaded catalog has at least one type, no type twice, every
 * price_h > 0 and finite, billing_s > 0, min_s >= 0, spot_price_h NaN or > 0;
 * rows are checked only when they are used (a row of another region is
 * skipped unread); any error leaves the catalog empty and names file:line. */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/catalog.h"

enum col { C_ITYPE, C_VCPUS, C_MEM, C_GPUS, C_ACC, C_PRICE, C_SPOT, C_BILL, C_MIN, C_BOOT, C_CPUS, C_QUOTA, C_REGION, C_EGRESS, C_NET, NCOL };

enum kind { K_NAME, K_COUNT, K_PRICE, K_DUR, K_MEM, K_QUOTA };

/* Each known column: its pitstop name, its SkyPilot name, what it holds, and
 * whether a pitstop / SkyPilot file must have it. */
static const struct {
  const char *name, *sky;
  enum kind kind;
  int req, sky_req;
} cols[NCOL] = {
    [C_ITYPE] = {"itype", "InstanceType", K_NAME, 1, 1},
    [C_VCPUS] = {"vcpus", "vCPUs", K_COUNT, 1, 1},
    [C_MEM] = {"memory_gib", "MemoryGiB", K_MEM, 0, 0},
    [C_GPUS] = {"gpus", "AcceleratorCount", K_COUNT, 0, 0},
    [C_ACC] = {"accelerator", "AcceleratorName", K_NAME, 0, 0},
    [C_PRICE] = {"price_h", "Price", K_PRICE, 1, 1},
    [C_SPOT] = {"spot_price_h", "SpotPrice", K_PRICE, 0, 0},
    [C_BILL] = {"billing_s", NULL, K_DUR, 1, 0},
    [C_MIN] = {"min_s", NULL, K_DUR, 1, 0},
    [C_BOOT] = {"boot_s", NULL, K_DUR, 0, 0},
    [C_CPUS] = {"cpus", NULL, K_COUNT, 0, 0},
    [C_QUOTA] = {"cpu_quota", NULL, K_QUOTA, 0, 0},
    [C_REGION] = {"region", "Region", K_NAME, 0, 0},
    [C_EGRESS] = {"egress_usd_gb", NULL, K_PRICE, 0, 0},
    [C_NET] = {"net_gbps", NULL, K_PRICE, 0, 0},
};

struct loader {
  struct pit_catalog *c;
  const char *path, *region;
  size_t cap;              /* of c->types */
  int have_header, legacy, sky;
  int at[NCOL];            /* field index of each column, -1 absent */
  int nhead;               /* fields a row must have */
  long head_ln;
  char seen_region[PIT_NAME_MAX];
  long seen_region_ln;
  /* CSV: the fields of the row being read (owned) */
  char **f;
  int nf, row_done, oom;
  size_t fcap;
};

static const char *unit_list(enum kind k) {
  return k == K_DUR ? "s, min, h" : k == K_MEM ? "MiB, GiB, TiB" : "%";
}

/* Factor of a unit for kind k; 0 if unknown. */
static double unit_factor(enum kind k, const char *u) {
  if (k == K_DUR)
    return !strcmp(u, "s") ? 1 : !strcmp(u, "min") ? 60 : !strcmp(u, "h") ? 3600 : 0;
  if (k == K_MEM)
    return !strcmp(u, "GiB") ? 1 : !strcmp(u, "MiB") ? 1.0 / 1024 : !strcmp(u, "TiB") ? 1024 : 0;
  if (k == K_QUOTA)
    return !strcmp(u, "%") ? 0.01 : 0;
  return 0;
}

/* The number in s (with a unit where kind allows one) into *v. Messages name
 * the column and the text. lo: smallest value allowed; lo_open: lo itself is not. */
static int number(struct loader *L, long ln, enum col col, const char *s, double lo, int lo_open, double *v,
                  struct pit_err *e) {
  enum kind k = cols[col].kind;
  const char *name = L->sky && cols[col].sky ? cols[col].sky : cols[col].name;
  const char *what = lo_open ? (lo == 0 ? "a positive number" : "a number above the minimum") : "a number >= 0";
  if (k == K_COUNT)
    what = lo_open || lo >= 1 ? "a positive integer" : "an integer >= 0";
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || errno || !isfinite(x))
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s '%s' is not %s", L->path, ln, name, s, what);
  while (*end == ' ')
    end++;
  if (*end) {
    double f = k == K_PRICE || k == K_COUNT || k == K_NAME ? 0 : unit_factor(k, end);
    if (f == 0 && (k == K_PRICE || k == K_COUNT))
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s '%s' is not %s", L->path, ln, name, s, what);
    if (f == 0)
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s '%s': unknown unit '%s' (known: %s)", L->path, ln, name, s, end,
                         unit_list(k));
    x *= f;
  }
  if (k == K_COUNT && !L->sky && x != floor(x))
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s '%s' is not %s", L->path, ln, name, s, what);
  if (x < lo || (lo_open && x == lo) || (k == K_QUOTA && x > 1))
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s '%s' is not %s%s", L->path, ln, name, s, what,
                       k == K_QUOTA ? " up to 1 (or 100%)" : "");
  *v = x;
  return 0;
}

/* Field of column col in f, or NULL when the column is absent or the cell is "" / "-". */
static const char *cell(const struct loader *L, char **f, enum col col) {
  int i = L->at[col];
  if (i < 0 || !f[i] || !f[i][0] || !strcmp(f[i], "-"))
    return NULL;
  return f[i];
}

static int text(struct loader *L, long ln, enum col col, const char *s, char *dst, struct pit_err *e) {
  if (strlen(s) >= PIT_NAME_MAX)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s '%s' is too long", L->path, ln, cols[col].name, s);
  snprintf(dst, PIT_NAME_MAX, "%s", s);
  return 0;
}

/* One optional numeric column into *v (left as is when absent). */
static int opt_num(struct loader *L, char **f, long ln, enum col col, double lo, int lo_open, double *v,
                   struct pit_err *e) {
  const char *s = cell(L, f, col);
  return s ? number(L, ln, col, s, lo, lo_open, v, e) : 0;
}

/* A data row: fields f[0..nf-1] of line ln. */
static int row(struct loader *L, char **f, int nf, long ln, struct pit_err *e) {
  if (nf != L->nhead) {
    if (L->legacy)
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: expected 5 fields (itype vcpus price_h billing_s min_s), found %d",
                         L->path, ln, nf);
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: expected %d fields (as the header on line %ld), found %d", L->path, ln,
                       L->nhead, L->head_ln, nf);
  }
  const char *reg = cell(L, f, C_REGION);
  if (L->region && strcmp(reg ? reg : "", L->region) != 0)
    return 0;
  if (!L->region && reg) {
    if (!L->seen_region[0]) {
      snprintf(L->seen_region, sizeof L->seen_region, "%s", reg);
      L->seen_region_ln = ln;
    } else if (strcmp(reg, L->seen_region) != 0) {
      pit_err_set(e, PIT_EFORMAT, "%s:%ld: region '%s' after '%s' (line %ld): the catalog lists several regions",
                  L->path, ln, reg, L->seen_region, L->seen_region_ln);
      pit_err_hint(e, "choose one with --region NAME");
      return PIT_EFORMAT;
    }
  }
  if (L->sky && !cell(L, f, C_PRICE))
    return 0; /* not offered on demand here */
  struct pit_itype t;
  memset(&t, 0, sizeof t);
  t.memory_gib = t.spot_price_h = t.boot_s = t.cpu_quota = t.egress_usd_gb = t.net_gbps = NAN;
  t.gpus = L->at[C_GPUS] >= 0 ? 0 : -1;
  t.cpus = -1;
  t.billing_s = 1; /* SkyPilot files: per-second billing, 60 s minimum */
  t.min_s = 60;
  const char *name = cell(L, f, C_ITYPE);
  if (!name)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: no instance type name", L->path, ln);
  double vcpus = 0, gpus = t.gpus, cpus = -1;
  int rc;
  if ((rc = text(L, ln, C_ITYPE, name, t.name, e)))
    return rc;
  const char *s = cell(L, f, C_VCPUS);
  if ((rc = number(L, ln, C_VCPUS, s ? s : "-", L->sky ? 0 : 1, L->sky, &vcpus, e)))
    return rc;
  t.vcpus = (int)ceil(vcpus);
  s = cell(L, f, C_PRICE);
  if ((rc = number(L, ln, C_PRICE, s ? s : "-", 0, 1, &t.price_h, e)))
    return rc;
  if (!L->sky) {
    s = cell(L, f, C_BILL);
    if ((rc = number(L, ln, C_BILL, s ? s : "-", 0, 1, &t.billing_s, e)))
      return rc;
    s = cell(L, f, C_MIN);
    if ((rc = number(L, ln, C_MIN, s ? s : "-", 0, 0, &t.min_s, e)))
      return rc;
  }
  if ((rc = opt_num(L, f, ln, C_SPOT, 0, 1, &t.spot_price_h, e)) || (rc = opt_num(L, f, ln, C_MEM, 0, 0, &t.memory_gib, e)) ||
      (rc = opt_num(L, f, ln, C_GPUS, 0, 0, &gpus, e)) || (rc = opt_num(L, f, ln, C_BOOT, 0, 0, &t.boot_s, e)) ||
      (rc = opt_num(L, f, ln, C_CPUS, 1, 0, &cpus, e)) || (rc = opt_num(L, f, ln, C_QUOTA, 0, 1, &t.cpu_quota, e)) ||
      (rc = opt_num(L, f, ln, C_EGRESS, 0, 0, &t.egress_usd_gb, e)) || (rc = opt_num(L, f, ln, C_NET, 0, 1, &t.net_gbps, e)))
    return rc;
  t.gpus = (int)ceil(gpus);
  t.cpus = (int)cpus;
  if ((s = cell(L, f, C_ACC)) && (rc = text(L, ln, C_ACC, s, t.accelerator, e)))
    return rc;
  if (reg && (rc = text(L, ln, C_REGION, reg, t.region, e)))
    return rc;
  struct pit_itype *old = (struct pit_itype *)pit_catalog_find(L->c, t.name);
  if (old && L->sky && old->price_h == t.price_h) { /* another availability zone of the region */
    if (isnan(old->spot_price_h) || t.spot_price_h > old->spot_price_h)
      old->spot_price_h = t.spot_price_h;
    return 0;
  }
  if (old)
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: instance type '%s' listed twice%s", L->path, ln, t.name,
                       L->sky ? " with different prices" : "");
  if (PIT_GROW(L->c->types, L->c->n + 1, L->cap))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  L->c->types[L->c->n++] = t;
  return 0;
}

/* The header f[0..nf-1] on line ln: where each known column is. */
static int header(struct loader *L, char **f, int nf, long ln, struct pit_err *e) {
  L->have_header = 1;
  L->head_ln = ln;
  L->nhead = nf;
  for (int i = 0; i < nf; i++)
    if (!strcmp(f[i], "InstanceType"))
      L->sky = 1;
  for (int k = 0; k < NCOL; k++) {
    L->at[k] = -1;
    for (int i = 0; i < nf && L->at[k] < 0; i++)
      if (!strcmp(f[i], cols[k].name) || (cols[k].sky && !strcmp(f[i], cols[k].sky)))
        L->at[k] = i;
    if (L->at[k] < 0 && (L->sky ? cols[k].sky_req : cols[k].req))
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: no column '%s' in the header", L->path, ln,
                         L->sky ? cols[k].sky : cols[k].name);
  }
  if (L->region && L->at[C_REGION] < 0)
    return pit_err_set(e, PIT_EARG, "%s:%ld: a region was asked for ('%s') but the catalog has no region column",
                       L->path, ln, L->region);
  return 0;
}

/* A whitespace-separated line (TSV or the old format). */
static int tsv_line(struct loader *L, char *line, long ln, struct pit_err *e) {
  char *f[64];
  int nf = 0;
  for (char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
    if (nf == 64)
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: more than 64 fields", L->path, ln);
    f[nf++] = tok;
  }
  if (!L->have_header && !L->legacy) {
    for (int i = 0; i < nf; i++) /* a header names the itype column somewhere */
      if (!strcmp(f[i], "itype"))
        return header(L, f, nf, ln, e);
    L->legacy = 1; /* the old positional format */
    L->nhead = 5;
    for (int k = 0; k < NCOL; k++)
      L->at[k] = -1;
    L->at[C_ITYPE] = 0, L->at[C_VCPUS] = 1, L->at[C_PRICE] = 2, L->at[C_BILL] = 3, L->at[C_MIN] = 4;
  }
  return row(L, f, nf, ln, e);
}

static void csv_field(void *s, size_t len, void *data) {
  struct loader *L = data;
  if (PIT_GROW(L->f, L->nf + 1, L->fcap)) {
    L->oom = 1;
    return;
  }
  char *v = malloc(len + 1);
  if (!v) {
    L->oom = 1;
    return;
  }
  memcpy(v, s ? s : "", s ? len : 0);
  v[s ? len : 0] = '\0';
  L->f[L->nf++] = v;
}

static void csv_row(int c, void *data) {
  (void)c;
  ((struct loader *)data)->row_done = 1;
}

static void csv_clear_row(struct loader *L) {
  for (int i = 0; i < L->nf; i++)
    free(L->f[i]);
  L->nf = 0;
  L->row_done = 0;
}

/* After feeding a CSV line: the row it completed, if any. */
static int csv_take(struct loader *L, long ln, struct pit_err *e) {
  int rc = 0;
  if (L->oom)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  else if (L->row_done)
    rc = L->have_header ? row(L, L->f, L->nf, ln, e) : header(L, L->f, L->nf, ln, e);
  if (L->row_done || rc)
    csv_clear_row(L);
  return rc;
}

int pit_catalog_load_region(struct pit_catalog *c, const char *path, const char *region, struct pit_err *e) {
  memset(c, 0, sizeof *c);
  struct loader L = {.c = c, .path = path, .region = region};
  FILE *f = fopen(path, "r");
  if (!f)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open catalog '%s'", path);
  struct csv_parser p;
  int csv = -1; /* decided by the first line that is not blank or a comment */
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long ln = 0;
  int rc = 0;
  if (csv_init(&p, CSV_APPEND_NULL) != 0) {
    fclose(f);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  while (!rc && (len = getline(&line, &cap, f)) >= 0) {
    ln++;
    char *s = line + strspn(line, " \t\r\n");
    if ((*s == '\0' || *s == '#') && L.nf == 0)
      continue;
    if (csv < 0)
      csv = strchr(s, ',') != NULL;
    if (!csv) {
      rc = tsv_line(&L, s, ln, e);
      continue;
    }
    if (csv_parse(&p, line, (size_t)len, csv_field, csv_row, &L) != (size_t)len)
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s", path, ln, csv_strerror(csv_error(&p)));
    else
      rc = csv_take(&L, ln, e);
  }
  if (!rc && csv > 0) {
    csv_fini(&p, csv_field, csv_row, &L);
    rc = csv_take(&L, ln, e);
  }
  csv_clear_row(&L);
  free(L.f);
  csv_free(&p);
  if (!rc && ferror(f))
    rc = pit_err_errno(e, PIT_EIO, "cannot read catalog '%s'", path);
  if (!rc && c->n == 0)
    rc = region ? pit_err_set(e, PIT_EFORMAT, "catalog '%s' lists no instance type in region '%s'", path, region)
                : pit_err_set(e, PIT_EFORMAT, "catalog '%s' lists no instance type", path);
  free(line);
  fclose(f);
  if (rc)
    pit_catalog_release(c);
  return rc;
}

int pit_catalog_load(struct pit_catalog *c, const char *path, struct pit_err *e) {
  return pit_catalog_load_region(c, path, NULL, e);
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
