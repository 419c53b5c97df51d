/* study.c — a `pitstop simulate` study set up and run whole: the prices of a
 * one-node case (catalog, given, the trace's own, or the defaults), the
 * policy, the baselines and the optimum over it; and for a fleet, its study
 * file, its pools (every trace of every file, each with its zone, type and
 * prices) and every fleet policy with the best fixed membership and the limit.
 * The command only parses options and prints (src/cli/cmd_simulate.c).
 *
 * Invariants: nothing is printed; every error names the file (and line) it is
 * about; on error what was loaded is released and *nt is 0; a trace's own
 * spot prices (a CSV's, their mean) win over every other. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pitstop/sim.h"

double pit_trace_mean_spot(const struct pit_trace *t) {
  double sum = 0;
  int cnt = 0;
  for (int i = 0; t->spot_price_h && i < t->n; i++)
    if (isfinite(t->spot_price_h[i]))
      sum += t->spot_price_h[i], cnt++;
  return cnt ? sum / cnt : NAN;
}

int pit_sim_case_prices(const struct pit_trace *tr, const char *catalog, const char *installed, const char *itype,
                        double *price, double *spot, const char **from, struct pit_err *e) {
  *from = "--price-h/--spot-price-h";
  int rc = 0, inst = 0;
  if (!catalog && isnan(*price) && isnan(*spot) && *tr->itype && installed) {
    struct pit_catalog probe = {0};
    struct pit_err pe = {0};
    inst = 1; /* the installed catalog's row for the trace's type, if it has one */
    catalog = pit_catalog_load(&probe, installed, &pe) || !pit_catalog_find(&probe, tr->itype) ? NULL : installed;
    pit_catalog_release(&probe);
  }
  if (catalog) {
    struct pit_catalog cat = {0};
    if ((rc = pit_catalog_load(&cat, catalog, e)))
      return rc;
    const char *want = itype ? itype : tr->itype;
    const struct pit_itype *ty = *want ? pit_catalog_find(&cat, want) : NULL;
    if (!ty && *want)
      rc = pit_err_set(e, PIT_ENOTFOUND, "trace '%s': instance type '%s' is not in catalog '%s'", tr->path, want,
                       catalog);
    else if (!ty)
      rc = pit_err_set(e, PIT_EARG, "trace '%s' names no instance type: give --itype", tr->path);
    else {
      if (isnan(*price))
        *price = ty->price_h;
      if (isnan(*spot))
        *spot = ty->spot_price_h;
      *from = inst ? "installed catalog" : "catalog";
      if (inst && isnan(*spot))
        *spot = 0.3 * *price, *from = "installed catalog (on-demand; spot 0.3 x on-demand: the catalog has none)";
    }
    pit_catalog_release(&cat);
    if (rc)
      return rc;
  }
  double mean = pit_trace_mean_spot(tr);
  if (!isnan(mean))
    *spot = mean, *from = "trace (mean spot price)";
  if (isnan(*price))
    *price = 1, *from = "default (on-demand 1, spot 0.3)";
  if (isnan(*spot) && catalog)
    return pit_err_set(e, PIT_EARG, "catalog '%s' has no spot price for '%s': give --spot-price-h", catalog,
                       itype ? itype : tr->itype);
  if (isnan(*spot))
    *spot = 0.3 * *price;
  return 0;
}

int pit_sim_compare(const struct pit_sim_case *c, int keep, struct pit_sim_result res[PIT_SIM_NCOMPARE],
                    size_t *bytes, struct pit_err *e) {
  static const enum pit_spot_policy pols[PIT_SIM_NCOMPARE - 1] = {PIT_SPOT_PITSTOP, PIT_SPOT_ON_DEMAND,
                                                                  PIT_SPOT_GREEDY, PIT_SPOT_UNIFORM};
  int multi = c->nodes > 1, rc = 0;
  *bytes = 0;
  for (int i = 0; i < PIT_SIM_NCOMPARE - 1 && !rc; i++)
    rc = multi ? pit_sim_multi(c, pols[i], &res[i], i ? NULL : bytes, e) : pit_sim_run(c, pols[i], keep, &res[i], e);
  if (!rc && !multi)
    rc = pit_sim_optimum(c, keep, &res[PIT_SIM_NCOMPARE - 1], e);
  if (multi) /* the optimum (a single-node DP) is not computed */
    res[PIT_SIM_NCOMPARE - 1].cost = res[PIT_SIM_NCOMPARE - 1].finish_h = NAN;
  return rc;
}

/* a zone from a Can't Be Late path: the file name up to its first '_' ("us-west-2a_v100_1.json") */
static void zone_of_path(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t l = strcspn(b, "_.");
  snprintf(out, n, "%.*s", (int)l, b);
}

int pit_study_read(const char *file, struct pit_study_in *in, struct pit_err *e) {
  FILE *f = fopen(file, "r");
  if (!f)
    return pit_err_set(e, PIT_EIO, "cannot open study '%s'", file);
  char line[2048], dir[1024];
  snprintf(dir, sizeof dir, "%s", file);
  char *sl = strrchr(dir, '/');
  if (sl)
    sl[1] = 0;
  else
    dir[0] = 0;
  int ln = 0, rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    ln++;
    char *tok[4], *save = NULL;
    int nt = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < 4; t = strtok_r(NULL, " \t\r\n", &save))
      tok[nt++] = t;
    if (nt == 0 || tok[0][0] == '#')
      continue;
    if (nt > 3) {
      rc = pit_err_set(e, PIT_EFORMAT, "study '%s':%d: expected PATH [ZONE [ITYPE]]", file, ln);
      break;
    }
    if (in->n >= PIT_STUDY_MAX_TRACES) {
      rc = pit_err_set(e, PIT_EFORMAT, "study '%s':%d: more than %d traces", file, ln, PIT_STUDY_MAX_TRACES);
      break;
    }
    int k = in->n++;
    snprintf(in->path[k], sizeof in->path[k], "%s%s", tok[0][0] == '/' ? "" : dir, tok[0]);
    if (access(in->path[k], R_OK) != 0) {
      rc = pit_err_set(e, PIT_ENOTFOUND, "study '%s':%d: trace '%s' is missing (cannot read it)", file, ln,
                       in->path[k]);
      break;
    }
    snprintf(in->zone[k], sizeof in->zone[k], "%s", nt > 1 ? tok[1] : "");
    snprintf(in->itype[k], sizeof in->itype[k], "%s", nt > 2 ? tok[2] : "");
  }
  fclose(f);
  if (!rc && in->n == 0)
    rc = pit_err_set(e, PIT_EFORMAT, "study '%s': no trace", file);
  return rc;
}

/* Every file's traces (a CSV may hold a region: one trace per zone) into tr[0..*nt-1];
 * from[k]: the input it came from, nfrom[k]: how many that input held. */
static int load_traces(const struct pit_study_in *in, struct pit_trace *tr, int *nt, int *from, int *nfrom,
                       struct pit_err *e) {
  int rc = 0;
  for (int i = 0; i < in->n && !rc; i++) {
    struct pit_trace *arr;
    int m;
    if ((rc = pit_trace_load_all(in->path[i], &arr, &m, e)))
      break;
    for (int j = 0; j < m; j++) {
      if (*nt < PIT_STUDY_MAX_TRACES && !rc) {
        from[*nt] = i, nfrom[*nt] = m;
        tr[(*nt)++] = arr[j];
      } else {
        if (!rc)
          rc = pit_err_set(e, PIT_EARG, "trace '%s': more than %d zones in the study", in->path[i],
                           PIT_STUDY_MAX_TRACES);
        pit_trace_release(&arr[j]);
      }
    }
    free(arr);
  }
  return rc;
}

/* Pool k of trace tr from input i: its zone, type and prices. */
static int price_pool(const struct pit_study_in *in, int i, int alone, const struct pit_fleet_prices *fp,
                      const struct pit_trace *tr, struct pit_sim_pool *p, struct pit_err *e) {
  p->trace = tr;
  if (*in->zone[i] && alone)
    snprintf(p->zone, sizeof p->zone, "%s", in->zone[i]);
  else if (*tr->zone)
    snprintf(p->zone, sizeof p->zone, "%s", tr->zone);
  else
    zone_of_path(in->path[i], p->zone, sizeof p->zone);
  const char *want = *in->itype[i] ? in->itype[i] : fp->itype ? fp->itype : tr->itype;
  const struct pit_itype *ty = fp->catpath && *want ? pit_catalog_find(fp->cat, want) : NULL;
  p->price_h = fp->price_h;
  p->spot_price_h = fp->spot_price_h;
  if (ty) {
    p->itype = ty;
    if (isnan(p->price_h))
      p->price_h = ty->price_h;
    if (isnan(p->spot_price_h))
      p->spot_price_h = ty->spot_price_h;
    p->egress_usd_gb = isfinite(ty->egress_usd_gb) ? ty->egress_usd_gb : 0;
    p->net_gbps = isfinite(ty->net_gbps) ? ty->net_gbps : 0;
  } else if (fp->catalog && *want) {
    return pit_err_set(e, PIT_ENOTFOUND, "trace '%s' (zone %s): instance type '%s' is not in catalog '%s'",
                       in->path[i], p->zone, want, fp->catalog);
  }
  double mean = pit_trace_mean_spot(tr); /* the CSV's own spot prices, their mean */
  if (!isnan(mean))
    p->spot_price_h = mean;
  /* as the one-trace form: without --catalog, a type the installed catalog prices on-demand
   * only (its GPU types), or --price-h alone, gets spot at 0.3 x on-demand, said as assumed;
   * a catalog the user named without a spot price is refused */
  if (isnan(p->spot_price_h) && !isnan(p->price_h) && !fp->catalog) {
    p->spot_price_h = 0.3 * p->price_h; /* rate: the assumed spot price, a share of on-demand's */
    p->spot_assumed = 1;
  }
  if (isnan(p->price_h) || isnan(p->spot_price_h))
    return pit_err_set(e, PIT_EARG, "trace '%s' (zone %s): no %s price for type '%s'%s%s%s: give --price-h/--spot-price-h",
                       in->path[i], p->zone, isnan(p->price_h) ? "on-demand" : "spot", *want ? want : "?",
                       fp->catpath ? " in catalog '" : "", fp->catpath ? fp->catpath : "", fp->catpath ? "'" : "");
  return 0;
}

int pit_fleet_pools(const struct pit_study_in *in, const struct pit_fleet_prices *fp, struct pit_trace *tr,
                    struct pit_sim_pool *pool, int *nt, struct pit_err *e) {
  int from[PIT_STUDY_MAX_TRACES], nfrom[PIT_STUDY_MAX_TRACES];
  *nt = 0;
  memset(pool, 0, PIT_STUDY_MAX_TRACES * sizeof *pool);
  int rc = load_traces(in, tr, nt, from, nfrom, e);
  for (int k = 0; k < *nt && !rc; k++)
    rc = price_pool(in, from[k], nfrom[k] == 1, fp, &tr[k], &pool[k], e);
  if (rc) {
    for (int k = 0; k < *nt; k++)
      pit_trace_release(&tr[k]);
    *nt = 0;
  }
  return rc;
}

int pit_fleet_compare(const struct pit_sim_study *st, struct pit_fleet_report *r,
                      struct pit_fleet_result res[PIT_FLEET_NCOMPARE], struct pit_err *e) {
  static const enum pit_fleet_policy pols[PIT_FLEET_NCOMPARE - 1] = {
      PIT_FLEET_PITSTOP, PIT_FLEET_ON_DEMAND, PIT_FLEET_GREEDY, PIT_FLEET_UNIFORM, PIT_FLEET_SKYNOMAD, PIT_FLEET_ROSS};
  r->s = st;
  r->res = res;
  r->n = PIT_FLEET_NCOMPARE;
  r->fixed_pool = -1, r->fixed_spot = 0;
  r->limit = NAN;
  r->limit_kind = "bound";
  int rc = pit_fleet_check(st, e);
  for (int i = 0; i < PIT_FLEET_NCOMPARE - 1 && !rc; i++)
    rc = pit_fleet_run(st, pols[i], -1, 0, 0, &res[i], e);
  if (!rc)
    rc = pit_fleet_best_fixed(st, &res[PIT_FLEET_NCOMPARE - 1], &r->fixed_pool, &r->fixed_spot, e);
  if (!rc)
    rc = pit_fleet_limit(st, 4e6, &r->limit, &r->limit_kind, e);
  return rc;
}
