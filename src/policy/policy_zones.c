/* policy_zones.c — `pitstop run` across zones, the policy's side apart from the
 * rule itself (pit_zone_decide, policy_fleet.c): a zone decision's inputs as a
 * JSON object (written in the decision record, read back), the decision in words,
 * and the replay of a run's zone decisions (pitstop simulate --replay).
 *
 * Invariants: pure but for pit_replay_zones, which only reads the events file
 * (through the run log's fold); pit_zone_in_parse(pit_zone_in_json(in)) gives in
 * back exactly (numbers printed with 17 significant digits), so a replay decides
 * on the very inputs the live run decided on; inputs without the count's keys
 * (nmin, nmax, tp_nodes, sigma, kappa: written before the count was chosen)
 * read as the job's count, fixed, on a linear fit, and inputs without
 * "reclaimed" (written before 2026-11-28) as no reclaim: such runs replay as before. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/policy.h"

static const char *zname(const struct pit_zone_in *in, int p) {
  return p >= 0 && p < in->nzones ? in->z[p].name : "?";
}

void pit_zone_reason(const struct pit_zone_in *in, struct pit_sim_member to, char *buf, size_t n) {
  size_t at = 0;
  const char *held = in->cur.spot + in->cur.od ? zname(in, in->cur.pool) : "none";
  at += (size_t)snprintf(buf + at, n - at, "zones: %s spot %d + on-demand %d → %s spot %d + on-demand %d",
                         held, in->cur.spot, in->cur.od, zname(in, to.pool), to.spot, to.od);
  if (in->reclaimed > 0 && at < n)
    at += (size_t)snprintf(buf + at, n - at, " after %d spot node%s reclaimed (the survivors held)", in->reclaimed,
                           in->reclaimed == 1 ? "" : "s");
  if (!in->measured)
    at += (size_t)snprintf(buf + at, n - at, "; nothing measured yet: spot first, as many as the zone gives");
  else {
    double left = (double)(in->total_steps - in->step) * in->tp_s;
    at += (size_t)snprintf(buf + at, n - at, "; work left %.1f s, time to the deadline %.1f s, restart %.1f s",
                           left, in->deadline_s - in->t_s, in->restart_s);
  }
  if (at < n && in->nmin < in->nmax && to.spot + to.od > 0 && to.pool >= 0 && to.pool < in->nzones) {
    /* the count chosen within the range: money per hour of the job's work (hours on `nodes`
     * nodes) on it, against the job's own count in the same zone, spot as far as it gives */
    const struct pit_zone_obs *z = &in->z[to.pool];
    int c = to.spot + to.od, N = in->nodes, gives = z->known ? z->cap : in->nmax;
    int fs = to.spot > 0 ? (gives < N ? gives : N) : 0;
    double r = pit_usl_share(in->sigma, in->kappa, c, N);
    double w = (to.spot * z->spot_price_h + to.od * z->price_h) / r;   /* forecast: per hour of work */
    double wn = fs * z->spot_price_h + (N - fs) * z->price_h;          /* forecast: per hour of work */
    at += (size_t)snprintf(buf + at, n - at, "; count %d of %d..%d (the job's %d%s)", c, in->nmin, in->nmax, N,
                           in->sigma > 0 || in->kappa > 0 ? ", USL fit" : ", linear scaling");
    if (at < n && !in->measured)
      at += (size_t)snprintf(buf + at, n - at, ": the job's own until measured");
    else if (at < n && c == N)
      at += (size_t)snprintf(buf + at, n - at, ": the job's own, $%.4f/h per hour of its work", w);
    else if (at < n)
      at += (size_t)snprintf(buf + at, n - at, ": $%.4f/h per hour of the job's work at %.2f of its pace, against "
                             "$%.4f/h on %d node%s here (%d spot + %d on-demand)", w, r, wn, N, N == 1 ? "" : "s", fs,
                             N - fs);
  }
  for (int p = 0; p < in->nzones && at < n; p++) {
    const struct pit_zone_obs *z = &in->z[p];
    at += (size_t)snprintf(buf + at, n - at, "; %s: ", z->name);
    if (at >= n)
      break;
    if (z->known)
      at += (size_t)snprintf(buf + at, n - at, "spot for %d node%s (seen)", z->cap, z->cap == 1 ? "" : "s");
    else
      at += (size_t)snprintf(buf + at, n - at, "spot not refused yet");
    if (at < n && z->nup)
      at += (size_t)snprintf(buf + at, n - at, ", held %.1f s in %d span%s", z->up_s, z->nup, z->nup == 1 ? "" : "s");
    if (at < n)
      at += (size_t)snprintf(buf + at, n - at, ", $%.4f/h spot, $%.4f/h on-demand", z->spot_price_h, z->price_h);
  }
}

int pit_zone_in_json(const struct pit_zone_in *in, char *buf, size_t n, struct pit_err *e) {
  size_t at = 0;
#define PUT(...) at += (size_t)snprintf(at < n ? buf + at : NULL, at < n ? n - at : 0, __VA_ARGS__)
  PUT("{\"t_s\":%.17g,\"deadline_s\":%.17g,\"tp_s\":%.17g,\"restart_s\":%.17g,\"tick_s\":%.17g,"
      "\"step\":%lld,\"total_steps\":%lld,\"measured\":%d,\"running\":%d,\"any_seen\":%.17g,\"nodes\":%d,"
      "\"nmin\":%d,\"nmax\":%d,\"tp_nodes\":%d,\"sigma\":%.17g,\"kappa\":%.17g,"
      "\"cur\":[%d,%d,%d],\"ckpt_zone\":%d,\"reclaimed\":%d,\"zones\":[",
      in->t_s, in->deadline_s, in->tp_s, in->restart_s, in->tick_s, (long long)in->step, (long long)in->total_steps,
      in->measured, in->running, in->any_seen, in->nodes, in->nmin, in->nmax, in->tp_nodes, in->sigma, in->kappa,
      in->cur.pool, in->cur.spot, in->cur.od, in->ckpt_zone, in->reclaimed);
  for (int p = 0; p < in->nzones; p++) {
    const struct pit_zone_obs *z = &in->z[p];
    PUT("%s{\"name\":\"%s\",\"known\":%d,\"cap\":%d,\"up_s\":%.17g,\"nup\":%d,\"price_h\":%.17g,"
        "\"spot_price_h\":%.17g}",
        p ? "," : "", z->name, z->known, z->cap, z->up_s, z->nup, z->price_h, z->spot_price_h);
  }
  PUT("]}");
#undef PUT
  if (at >= n)
    return pit_err_set(e, PIT_EARG, "a zone decision's inputs do not fit in %zu bytes", n);
  int finite = isfinite(in->t_s) && isfinite(in->deadline_s) && isfinite(in->tp_s) && isfinite(in->restart_s) &&
               isfinite(in->tick_s) && isfinite(in->any_seen) && isfinite(in->sigma) &&
               isfinite(in->kappa); /* NaN and infinities are not JSON */
  for (int p = 0; p < in->nzones; p++)
    finite &= isfinite(in->z[p].up_s) && isfinite(in->z[p].price_h) && isfinite(in->z[p].spot_price_h) &&
              !strpbrk(in->z[p].name, "\"\\");
  if (!finite)
    return pit_err_set(e, PIT_EARG, "a zone decision's inputs hold a number that is not finite or a name with "
                                    "quotes: %s", buf);
  return 0;
}

static int num(const cJSON *o, const char *key, double *v, struct pit_err *e) {
  *v = 0;
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(x))
    return pit_err_set(e, PIT_EFORMAT, "zone decision inputs: \"%s\" is not a number", key);
  *v = x->valuedouble;
  return 0;
}

static int inum(const cJSON *o, const char *key, int *v, struct pit_err *e) {
  double d = 0;
  int rc = num(o, key, &d, e);
  *v = (int)d;
  return rc;
}

int pit_zone_in_parse(struct pit_zone_in *in, const char *json, struct pit_err *e) {
  memset(in, 0, sizeof *in);
  cJSON *o = cJSON_Parse(json ? json : "");
  double step = 0, total = 0;
  int rc = cJSON_IsObject(o) ? 0 : pit_err_set(e, PIT_EFORMAT, "zone decision inputs are not a JSON object");
  if (rc == 0)
    (void)((rc = num(o, "t_s", &in->t_s, e)) < 0 || (rc = num(o, "deadline_s", &in->deadline_s, e)) < 0 ||
           (rc = num(o, "tp_s", &in->tp_s, e)) < 0 || (rc = num(o, "restart_s", &in->restart_s, e)) < 0 ||
           (rc = num(o, "tick_s", &in->tick_s, e)) < 0 || (rc = num(o, "step", &step, e)) < 0 ||
           (rc = num(o, "total_steps", &total, e)) < 0 || (rc = inum(o, "measured", &in->measured, e)) < 0 ||
           (rc = inum(o, "running", &in->running, e)) < 0 || (rc = num(o, "any_seen", &in->any_seen, e)) < 0 ||
           (rc = inum(o, "nodes", &in->nodes, e)) < 0 || (rc = inum(o, "ckpt_zone", &in->ckpt_zone, e)) < 0);
  in->step = (int64_t)step;
  in->total_steps = (int64_t)total;
  /* the count's keys (absent in the records written before the count was chosen: the job's count,
   * linear) and the reclaim's (absent before it was an input: none), each a number when present */
  const char *opt[] = {"nmin", "nmax", "tp_nodes", "sigma", "kappa", "reclaimed"};
  double optv[6] = {in->nodes, in->nodes, in->nodes, 0, 0, 0}; /* reclaimed: absent before 2026-11-28 */
  for (int k = 0; rc == 0 && k < 6; k++)
    if (cJSON_GetObjectItemCaseSensitive(o, opt[k]))
      rc = num(o, opt[k], &optv[k], e);
  in->nmin = (int)optv[0];
  in->nmax = (int)optv[1];
  in->tp_nodes = (int)optv[2];
  in->sigma = optv[3];
  in->kappa = optv[4];
  in->reclaimed = (int)optv[5];
  const cJSON *cur = rc == 0 ? cJSON_GetObjectItemCaseSensitive(o, "cur") : NULL;
  if (rc == 0 && !(cJSON_IsArray(cur) && cJSON_GetArraySize(cur) == 3))
    rc = pit_err_set(e, PIT_EFORMAT, "zone decision inputs: \"cur\" is not [zone, spot, on-demand]");
  if (rc == 0) {
    in->cur.pool = (int)cJSON_GetArrayItem(cur, 0)->valuedouble;
    in->cur.spot = (int)cJSON_GetArrayItem(cur, 1)->valuedouble;
    in->cur.od = (int)cJSON_GetArrayItem(cur, 2)->valuedouble;
  }
  const cJSON *zs = rc == 0 ? cJSON_GetObjectItemCaseSensitive(o, "zones") : NULL, *z;
  if (rc == 0 && !(cJSON_IsArray(zs) && cJSON_GetArraySize(zs) >= 1 && cJSON_GetArraySize(zs) <= PIT_ZONES_MAX))
    rc = pit_err_set(e, PIT_EFORMAT, "zone decision inputs: \"zones\" is not a list of 1 to %d zones", PIT_ZONES_MAX);
  if (rc < 0)
    zs = NULL;
  cJSON_ArrayForEach(z, zs) {
    struct pit_zone_obs *x = &in->z[in->nzones++];
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(z, "name"));
    if (!name || strlen(name) >= sizeof x->name) {
      rc = pit_err_set(e, PIT_EFORMAT, "zone decision inputs: zone %d has no name", in->nzones);
      break;
    }
    snprintf(x->name, sizeof x->name, "%s", name);
    if ((rc = inum(z, "known", &x->known, e)) < 0 || (rc = inum(z, "cap", &x->cap, e)) < 0 ||
        (rc = num(z, "up_s", &x->up_s, e)) < 0 || (rc = inum(z, "nup", &x->nup, e)) < 0 ||
        (rc = num(z, "price_h", &x->price_h, e)) < 0 || (rc = num(z, "spot_price_h", &x->spot_price_h, e)) < 0)
      break;
  }
  cJSON_Delete(o);
  return rc;
}

/* The spot and on-demand nodes of a decision's membership (every entry one type). */
static void split(const struct pit_membership *m, int *spot, int *od) {
  *spot = *od = 0;
  for (int i = 0; i < m->n; i++)
    *(m->m[i].market == PIT_MARKET_SPOT ? spot : od) += m->m[i].nodes;
}

int pit_replay_zones(const char *events, int *n, int *same, char *first, size_t nfirst, struct pit_err *e) {
  *n = *same = 0;
  if (nfirst)
    first[0] = 0;
  struct pit_runlog log;
  pit_runlog_init(&log);
  int rc = pit_runlog_load(&log, events, e);
  for (int i = 0; rc == 0 && i < log.ndec; i++) {
    const struct pit_decision *d = &log.dec[i].d;
    if (strcmp(d->policy, "zones") != 0 || !d->inputs)
      continue;
    struct pit_zone_in in;
    struct pit_err sub = {0};
    if (pit_zone_in_parse(&in, d->inputs, &sub) < 0) {
      rc = pit_err_set(e, PIT_EFORMAT, "%s: the zone decision at step %lld: %s", events, (long long)d->step, sub.msg);
      break;
    }
    struct pit_sim_member r = pit_zone_decide(&in);
    int spot, od;
    split(&d->to, &spot, &od);
    int ok = r.spot == spot && r.od == od && (r.spot + r.od == 0 || strcmp(zname(&in, r.pool), d->zone) == 0);
    (*n)++;
    *same += ok;
    if (!ok && nfirst && !first[0])
      snprintf(first, nfirst, "at %.1f s (step %lld) the run chose %s spot %d + on-demand %d, the replay %s spot %d + "
               "on-demand %d", log.dec[i].t, (long long)d->step, d->zone[0] ? d->zone : "-", spot, od,
               zname(&in, r.pool), r.spot, r.od);
  }
  pit_runlog_release(&log);
  return rc;
}
