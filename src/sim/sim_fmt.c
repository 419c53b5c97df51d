/* sim_fmt.c — a simulated study as `pitstop simulate` prints it: the terminal
 * table or one JSON object, for one node (pit_sim_report_write: the policy,
 * the baselines and the exact optimum) and for a fleet (pit_fleet_report_write:
 * the policy, the fleet baselines, the best fixed membership and the limit).
 *
 * Each result field is declared once, in fields[], for both kinds of result
 * (one node's, a fleet's): its JSON key, its table column (title, width,
 * decimals, and its place `col`; 0: JSON only) and where the value lives.
 * Both printers walk the same table, so a field added there reaches the
 * table and JSON at once. The job's own
 * fields (tick, hours, prices) are tables too (case_fields[], study_fields[]).
 * Invariants: nothing but f is written; non-finite numbers are JSON null; the
 * gap to the optimum (limit) is cost / optimum - 1, NaN (null) without one. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "pitstop/sim.h"

enum ftype {
  F_NUM,     /* double (non-finite: null) */
  F_INT,     /* int */
  F_I64,     /* int64_t */
  F_BOOL,    /* int: true/false, "yes"/"MISSED" in the table */
  F_GAP,     /* double cost: its gap to the reference (optimum, limit) */
  F_STR,     /* const char * */
  F_CHANGES, /* struct pit_sim_result's changes: [{t_h, to}] */
  F_COUNTS   /* struct pit_fleet_result's counts: [{nodes, hours}] */
};

/* A result field of one node's result (struct pit_sim_result, [0]) and of a
 * fleet's (struct pit_fleet_result, [1]): key NULL where that kind lacks it. */
struct field {
  const char *key[2];   /* JSON key */
  const char *title[2]; /* table column's title (col > 0) */
  int col[2];           /* its place in the table, 1.. (0: JSON only) */
  int width[2], prec;   /* the column's width, and decimals */
  enum ftype type;
  size_t off[2];        /* in the result's struct */
};
enum { ONE, FLEET };

#define R(m) offsetof(struct pit_sim_result, m)
#define F(m) offsetof(struct pit_fleet_result, m)
static const struct field fields[] = {
    {{"cost", "cost"}, {"cost", "cost"}, {1, 1}, {10, 10}, 4, F_NUM, {R(cost), F(cost)}},
    {{"finish_h", "finish_h"}, {"finish_h", "finish_h"}, {2, 2}, {9, 9}, 2, F_NUM, {R(finish_h), F(finish_h)}},
    {{"deadline_met", "deadline_met"}, {"met", "met"}, {3, 3}, {8, 7}, 0, F_BOOL, {R(deadline_met), F(deadline_met)}},
    {{"gap_to_optimum", "gap_to_limit"}, {"gap_to_opt", "gap_to_limit"}, {7, 8}, {10, 12}, 1, F_GAP,
     {R(cost), F(cost)}},
    {{"spot_h", "spot_node_h"}, {"spot_h", "spot_nh"}, {4, 4}, {9, 11}, 2, F_NUM, {R(spot_h), F(spot_h)}},
    {{"on_demand_h", "on_demand_node_h"}, {"od_h", "od_nh"}, {5, 5}, {9, 11}, 2, F_NUM, {R(od_h), F(od_h)}},
    {{"preemptions", "nodes_reclaimed"}, {"reclaims", "reclaims"}, {6, 6}, {7, 8}, 0, F_INT,
     {R(preemptions), F(reclaimed)}},
    {{"decisions", NULL}, {NULL, NULL}, {0, 0}, {0, 0}, 0, F_CHANGES, {0, 0}},
    {{NULL, "moves"}, {NULL, "moves"}, {0, 7}, {0, 6}, 0, F_INT, {0, F(moves)}},
    {{NULL, "egress_usd"}, {NULL, NULL}, {0, 0}, {0, 0}, 0, F_NUM, {0, F(egress_usd)}},
    {{NULL, "changes"}, {NULL, NULL}, {0, 0}, {0, 0}, 0, F_INT, {0, F(nchanges)}},
    {{NULL, "node_counts"}, {NULL, NULL}, {0, 0}, {0, 0}, 0, F_COUNTS, {0, 0}},
};
#undef R
#undef F

/* one node: the job's fields, from the case (c) or the report (r) */
enum { IN_CASE, IN_REPORT, IN_STUDY };
struct jfield {
  const char *key;
  int in;
  enum ftype type;
  size_t off;
};
#define C(m) IN_CASE, F_NUM, offsetof(struct pit_sim_case, m)
#define P(t, m) IN_REPORT, t, offsetof(struct pit_sim_report, m)
static const struct jfield case_fields[] = {
    {"trace", P(F_STR, trace)},           {"itype", P(F_STR, itype)},
    {"tick_s", P(F_NUM, tick_s)},         {"job_h", C(job_h)},
    {"deadline_h", C(deadline_h)},        {"restart_h", C(restart_h)},
    {"restart_ticks", P(F_I64, restart_ticks)},
    {"offset_ticks", IN_CASE, F_INT, offsetof(struct pit_sim_case, offset)},
    {"nodes", IN_CASE, F_INT, offsetof(struct pit_sim_case, nodes)},
    {"price_h", C(price_h)},              {"spot_price_h", C(spot_price_h)},
    {"prices_from", P(F_STR, prices_from)},
};
#undef C
#undef P
#define S(t, m) IN_STUDY, t, offsetof(struct pit_sim_study, m)
static const struct jfield study_fields[] = {
    {"job_h", S(F_NUM, job_h)},     {"deadline_h", S(F_NUM, deadline_h)}, {"restart_h", S(F_NUM, restart_h)},
    {"nodes", S(F_INT, nodes)},     {"nnodes_min", S(F_INT, nmin)},        {"nnodes_max", S(F_INT, nmax)},
    {"usl_sigma", S(F_NUM, sigma)}, {"usl_kappa", S(F_NUM, kappa)},        {"ckpt_gb", S(F_NUM, ckpt_gb)},
};
#undef S
#define NF(t) ((int)(sizeof(t) / sizeof((t)[0])))

static double gap_to(double cost, double ref) { return isfinite(cost) && ref > 0 ? cost / ref - 1 : NAN; }

#define AT(base, off, type) (*(const type *)((const char *)(base) + (off)))

static void add_value(cJSON *o, const char *key, enum ftype t, const void *base, size_t off, double ref) {
  switch (t) {
  case F_NUM: cJSON_AddNumberToObject(o, key, AT(base, off, double)); break;
  case F_INT: cJSON_AddNumberToObject(o, key, AT(base, off, int)); break;
  case F_I64: cJSON_AddNumberToObject(o, key, (double)AT(base, off, int64_t)); break;
  case F_BOOL: cJSON_AddBoolToObject(o, key, AT(base, off, int)); break;
  case F_GAP: cJSON_AddNumberToObject(o, key, gap_to(AT(base, off, double), ref)); break;
  case F_STR: cJSON_AddStringToObject(o, key, AT(base, off, const char *)); break;
  case F_CHANGES: {
    const struct pit_sim_result *r = base;
    cJSON *d = cJSON_AddArrayToObject(o, key);
    for (int i = 0; i < r->nchanges; i++) {
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "t_h", r->changes[i].t_h);
      cJSON_AddStringToObject(x, "to", pit_spot_mode_name(r->changes[i].to));
      cJSON_AddItemToArray(d, x);
    }
    break;
  }
  case F_COUNTS: {
    const struct pit_fleet_result *r = base;
    cJSON *d = cJSON_AddArrayToObject(o, key);
    for (int i = 0; i < r->ncounts; i++) {
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "nodes", r->counts[i].nodes);
      cJSON_AddNumberToObject(x, "hours", r->counts[i].h);
      cJSON_AddItemToArray(d, x);
    }
    break;
  }
  }
}

/* One result of kind k as a JSON object: its fields in table order. */
static cJSON *row_json(int k, const void *row, double ref) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; i < NF(fields); i++)
    if (fields[i].key[k])
      add_value(o, fields[i].key[k], fields[i].type, row, fields[i].off[k], ref);
  return o;
}

static void add_job(cJSON *o, const struct jfield *t, int n, const void *const bases[3]) {
  for (int i = 0; i < n; i++)
    add_value(o, t[i].key, t[i].type, bases[t[i].in], t[i].off, NAN);
}

/* The field of kind k's column col, or NULL. */
static const struct field *column(int k, int col) {
  for (int i = 0; i < NF(fields); i++)
    if (fields[i].col[k] == col)
      return &fields[i];
  return NULL;
}

static void table_head(FILE *f, int k) {
  fprintf(f, "%-17s", "policy");
  const struct field *c;
  for (int col = 1; (c = column(k, col)) != NULL; col++)
    fprintf(f, " %*s", c->width[k], c->title[k]);
  fputc('\n', f);
}

static void table_row(FILE *f, int k, const char *name, const void *row, double ref) {
  fprintf(f, "%-17s", name);
  const struct field *c;
  for (int col = 1; (c = column(k, col)) != NULL; col++) {
    int w = c->width[k];
    size_t off = c->off[k];
    switch (c->type) {
    case F_NUM: fprintf(f, " %*.*f", w, c->prec, AT(row, off, double)); break;
    case F_INT: fprintf(f, " %*d", w, AT(row, off, int)); break;
    case F_BOOL: fprintf(f, " %*s", w, AT(row, off, int) ? "yes" : "MISSED"); break;
    case F_GAP: fprintf(f, " %*.*f%%", w - 1, c->prec, 100 * gap_to(AT(row, off, double), ref)); break;
    default: break;
    }
  }
  fputc('\n', f);
}

/* The object printed on one line; 0, or PIT_EIO when f cannot take it. */
static int put_json(FILE *f, cJSON *j, struct pit_err *e) {
  char *txt = pit_json_print(j);
  int rc = !txt || fprintf(f, "%s\n", txt) < 0 ? pit_err_set(e, PIT_EIO, "cannot write to standard output") : 0;
  free(txt);
  cJSON_Delete(j);
  return rc;
}

int pit_sim_report_write(FILE *f, const struct pit_sim_report *r, int json, struct pit_err *e) {
  const struct pit_sim_case *c = r->c;
  int nrow = r->n - r->multi; /* several nodes: no optimum */
  double opt = r->res[r->n - 1].cost;
  if (json) {
    cJSON *j = cJSON_CreateObject();
    const void *const bases[3] = {c, r, NULL};
    add_job(j, case_fields, NF(case_fields), bases);
    cJSON_AddItemToObject(j, "policy", row_json(ONE, &r->res[0], opt));
    cJSON *b = cJSON_AddObjectToObject(j, "baselines");
    for (int i = 1; i < nrow; i++)
      cJSON_AddItemToObject(b, r->names[i], row_json(ONE, &r->res[i], opt));
    cJSON *lim = cJSON_AddObjectToObject(j, "limit"); /* one node: the DP optimum is exact */
    cJSON_AddNumberToObject(lim, "cost", opt);
    cJSON_AddStringToObject(lim, "kind", r->multi ? "none" : "exact");
    return put_json(f, j, e);
  }
  fprintf(f, "trace %s (%s, %g s ticks), job %g h, deadline %g h, restart %g h; on-demand %g $/h, spot %g $/h (%s)\n",
          r->trace, *r->itype ? r->itype : "type unknown", r->tick_s, c->job_h, c->deadline_h, c->restart_h,
          c->price_h, c->spot_price_h, r->prices_from);
  table_head(f, ONE);
  for (int i = 0; i < nrow; i++)
    table_row(f, ONE, r->names[i], &r->res[i], opt);
  return 0;
}

int pit_fleet_report_write(FILE *f, const struct pit_fleet_report *r, int json, struct pit_err *e) {
  const struct pit_sim_study *s = r->s;
  const struct pit_sim_pool *pool = s->pools;
  int nt = s->npools;
  if (json) {
    cJSON *j = cJSON_CreateObject();
    cJSON *ta = cJSON_AddArrayToObject(j, "traces");
    for (int i = 0; i < nt; i++) {
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "path", pool[i].trace->path);
      cJSON_AddStringToObject(x, "zone", pool[i].zone);
      cJSON_AddStringToObject(x, "itype", pool[i].itype ? pool[i].itype->name : pool[i].trace->itype);
      cJSON_AddNumberToObject(x, "price_h", pool[i].price_h);
      cJSON_AddNumberToObject(x, "spot_price_h", pool[i].spot_price_h);
      cJSON_AddBoolToObject(x, "spot_assumed", pool[i].spot_assumed);
      cJSON_AddNumberToObject(x, "count_scale", pool[i].count_scale > 1 ? pool[i].count_scale : 1);
      cJSON_AddItemToArray(ta, x);
    }
    cJSON_AddNumberToObject(j, "tick_s", pool[0].trace->gap_s);
    const void *const bases[3] = {NULL, NULL, s};
    add_job(j, study_fields, NF(study_fields), bases);
    cJSON *l = cJSON_AddObjectToObject(j, "limit");
    cJSON_AddNumberToObject(l, "cost", r->limit);
    cJSON_AddStringToObject(l, "kind", r->limit_kind);
    cJSON_AddItemToObject(j, "policy", row_json(FLEET, &r->res[0], r->limit));
    cJSON *b = cJSON_AddObjectToObject(j, "baselines");
    cJSON *bf = NULL;
    for (int i = 1; i < r->n; i++)
      cJSON_AddItemToObject(b, r->names[i], bf = row_json(FLEET, &r->res[i], r->limit));
    if (bf) { /* the last: the best fixed membership, and which it is */
      cJSON_AddStringToObject(bf, "zone", r->fixed_pool >= 0 ? pool[r->fixed_pool].zone : "");
      cJSON_AddNumberToObject(bf, "spot_nodes", r->fixed_spot);
    }
    return put_json(f, j, e);
  }
  fprintf(f, "%d trace(s), %g s ticks; job %g h on %d nodes (%d:%d, USL %g,%g), deadline %g h, restart %g h, "
             "checkpoint %g GB\n",
          nt, pool[0].trace->gap_s, s->job_h, s->nodes, s->nmin, s->nmax, s->sigma, s->kappa, s->deadline_h,
          s->restart_h, s->ckpt_gb);
  for (int i = 0; i < nt; i++) {
    fprintf(f, "  %-14s %-14s on-demand %g $/h, spot %g $/h%s", pool[i].zone,
            pool[i].itype ? pool[i].itype->name : pool[i].trace->itype, pool[i].price_h, pool[i].spot_price_h,
            pool[i].spot_assumed ? " (assumed 0.3 x on-demand: no spot price given or in the catalog)" : "");
    if (pool[i].count_scale > 1)
      fprintf(f, ", counts x %d (assumed)", pool[i].count_scale);
    fprintf(f, "  (%s)\n", pool[i].trace->path);
  }
  fprintf(f, "limit: %.4f (%s)\n", r->limit, r->limit_kind);
  table_head(f, FLEET);
  for (int i = 0; i < r->n; i++)
    table_row(f, FLEET, r->names[i], &r->res[i], r->limit);
  if (s->nmin < s->nmax) { /* what the policy made of the range: hours (node-hours) per count, its changes */
    const struct pit_fleet_result *p = &r->res[0];
    fprintf(f, "%s, hours held per node count:", r->names[0]);
    for (int i = 0; i < p->ncounts; i++)
      fprintf(f, "%s %d nodes %.2f h (%.1f node-h)", i ? "," : "", p->counts[i].nodes, p->counts[i].h,
              p->counts[i].nodes * p->counts[i].h);
    fprintf(f, "%s\n%s, memberships over time (hour: spot + on-demand nodes, zone):", p->ncounts ? "" : " none",
            r->names[0]);
    for (int i = 0; i < p->nchanges; i++) {
      const struct pit_fleet_change *c = &p->changes[i];
      if (i == 12 && p->nchanges > 16) { /* the first 12 and the last 4 */
        fprintf(f, " ... (%d more)", p->nchanges - 16);
        i = p->nchanges - 5;
        continue;
      }
      fprintf(f, "%s %.2f: %d + %d %s%s", i ? "," : "", c->t_h, c->to.spot, c->to.od,
              c->to.spot + c->to.od ? pool[c->to.pool].zone : "idle", c->reclaimed ? " (after a reclaim)" : "");
    }
    fputc('\n', f);
  }
  return 0;
}
